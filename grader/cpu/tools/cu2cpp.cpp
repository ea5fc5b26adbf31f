// cu2cpp: rewrites a CUDA source file into C++ for convlab's CPU backend.
//
//   cu2cpp INPUT.cu OUTPUT.cpp
//
// What it changes, keeping every line where it was (a `#line` directive points
// the compiler's messages at INPUT.cu, so errors name the student's own file
// and line):
//   kernel<<<grid, block[, shared[, stream]]>>>(args)
//       -> ::convlab_cpu::launch(::convlab_cpu::LaunchSite{"kernel", __FILE__, __LINE__, CONVLAB_CPU_COUNTED},
//                                kernel, ::convlab_cpu::LaunchConfig(grid, block, ...), args)
//   __shared__ T name[dims];      (in a function; several names allowed)
//       -> a reference to the running block's copy in its shared memory
//   extern __shared__ T name[];
//       -> T* name = ::convlab_cpu::dynamic_shared<T>();
//   __constant__ T name[dims];    (and __device__ variables)
//       -> the same, and an object that tells the runtime where `name` lives
//   #pragma unroll                -> removed (GCC does not know it)
// So the runtime can tell shared, constant and global memory apart when it counts a
// kernel's memory accesses (convlab_cpu/records.hpp). Everything else (__global__, __device__ functions,
// threadIdx, ...) is defined by convlab_cpu/prelude.hpp, which the output includes
// first. Features the backend cannot run correctly (__activemask, inline PTX, ...)
// and declarations it cannot read stop the build with a message naming the file,
// line and feature.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Unsupported {
  const char* token;
  const char* what;
};

// Matched as whole identifiers (or the literal text, for those with punctuation).
const Unsupported kUnsupported[] = {
    // The shuffles, votes and __syncwarp run (convlab_cpu/warp.hpp); which lanes are active
    // together is the GPU's scheduling, which the backend does not have.
    {"__activemask", "the lanes a GPU happens to run together; pass the full mask 0xffffffff"},
    {"__reduce_add_sync", "warp reductions"},
    {"__reduce_min_sync", "warp reductions"},
    {"__reduce_max_sync", "warp reductions"},
    {"__match_any_sync", "warp matches"},
    {"__match_all_sync", "warp matches"},
    {"cooperative_groups", "cooperative groups"},
    {"asm", "inline PTX"},
    {"__managed__", "managed memory"},
    {"cudaMallocManaged", "managed memory"},
    {"tex1Dfetch", "texture memory"},
    {"tex2D", "texture memory"},
    {"cudaCreateTextureObject", "texture memory"},
    {"surf2Dwrite", "surface memory"},
    {"__nanosleep", "__nanosleep"},
    {"clock64", "device clocks"},
    {"cuda::memcpy_async", "asynchronous copies through cuda::pipeline (the primitives of <cuda_pipeline.h> run)"},
    {"__half", "half precision"},
    {"__nv_bfloat16", "bfloat16"},
};

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The source with comments, and string and character literals unless
// `blank_literals` is false, blanked out (same length, newlines kept), so that
// searches never match inside them.
std::string code_only(const std::string& s, bool blank_literals = true) {
  std::string out = s;
  enum { code, line_comment, block_comment, str, chr } st = code;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (st) {
      case code:
        if (c == '/' && n == '/') st = line_comment, out[i] = ' ';
        else if (c == '/' && n == '*') st = block_comment, out[i] = ' ', out[i + 1] = ' ', ++i;
        else if (c == '"') st = str;
        else if (c == '\'') st = chr;
        break;
      case line_comment:
        if (c == '\n') st = code; else out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && n == '/') st = code, out[i] = ' ', out[i + 1] = ' ', ++i;
        else if (c != '\n') out[i] = ' ';
        break;
      case str:
      case chr:
        if (c == '\\') { if (blank_literals) { out[i] = ' '; if (n != '\n') out[i + 1] = ' '; } ++i; }
        else if ((st == str && c == '"') || (st == chr && c == '\'')) st = code;
        else if (c != '\n' && blank_literals) out[i] = ' ';
        break;
    }
  }
  return out;
}

int line_of(const std::string& s, std::size_t pos) {
  int line = 1;
  for (std::size_t i = 0; i < pos && i < s.size(); ++i) line += s[i] == '\n';
  return line;
}

int column_of(const std::string& s, std::size_t pos) {
  const std::size_t nl = s.rfind('\n', pos == 0 ? 0 : pos - 1);
  return static_cast<int>(nl == std::string::npos ? pos + 1 : pos - nl);
}

[[noreturn]] void fail(const std::string& path, const std::string& src, std::size_t pos, const std::string& msg) {
  std::cerr << path << ":" << line_of(src, pos) << ":" << column_of(src, pos) << ": error: " << msg << "\n";
  std::exit(1);
}

std::size_t count_newlines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Index of the bracket closing the one at `open` (same kind), in code-only text.
std::size_t matching(const std::string& code, std::size_t open, char o, char c) {
  int depth = 0;
  for (std::size_t i = open; i < code.size(); ++i) {
    if (code[i] == o) ++depth;
    else if (code[i] == c && --depth == 0) return i;
  }
  return std::string::npos;
}

// Splits "a, f(b, c), d" at top-level commas.
std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char ch : text) {
    if (ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == ')' || ch == ']' || ch == '}') --depth;
    if (ch == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty() || !out.empty()) out.push_back(cur);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// Marks the code that only a GPU compilation sees: the first branch of `#ifdef __CUDA_ARCH__` or of
// `#if defined(__CUDA_ARCH__)` (alone or and-ed with more: `&& __CUDA_ARCH__ >= 800`), up to its
// `#else`, `#elif` or `#endif`. The CPU backend compiles without __CUDA_ARCH__, so what is there
// never reaches its compiler, and a feature it lacks (inline PTX beside a portable fallback, say)
// may be used there. `code` has its comments blanked.
std::vector<char> device_only_mask(const std::string& code) {
  std::vector<char> mask(code.size(), 0);
  struct Branch {
    bool device_only;
  };
  std::vector<Branch> open;
  auto masked = [&] {
    for (const auto& b : open)
      if (b.device_only) return true;
    return false;
  };
  for (std::size_t line = 0; line < code.size();) {
    std::size_t eol = code.find('\n', line);
    if (eol == std::string::npos) eol = code.size();
    const std::size_t first = code.find_first_not_of(" \t", line);
    if (first < eol && code[first] == '#') {
      std::string d = code.substr(first + 1, eol - first - 1);
      d.erase(0, d.find_first_not_of(" \t"));
      d.erase(std::remove_if(d.begin(), d.end(), [](char c) { return c == ' ' || c == '\t'; }), d.end());
      auto starts = [&](const char* w) { return d.rfind(w, 0) == 0; };
      if (starts("ifdef") || starts("ifndef") || starts("if")) {
        bool device = d == "ifdef__CUDA_ARCH__";
        for (const char* form : {"ifdefined(__CUDA_ARCH__)", "ifdefined__CUDA_ARCH__"}) {
          const std::string f = form;
          if (d.rfind(f, 0) == 0) {
            const std::string rest = d.substr(f.size());
            device = device || ((rest.empty() || rest.rfind("&&", 0) == 0) && rest.find("||") == std::string::npos);
          }
        }
        open.push_back({device});
      } else if (starts("elif") || starts("else")) {
        if (!open.empty()) open.back().device_only = false;
      } else if (starts("endif")) {
        if (!open.empty()) open.pop_back();
      }
    } else if (masked()) {
      std::fill(mask.begin() + std::ptrdiff_t(line), mask.begin() + std::ptrdiff_t(eol), char(1));
    }
    line = eol + 1;
  }
  return mask;
}

void check_unsupported(const std::string& path, const std::string& src, const std::string& code) {
  const std::vector<char> device_only = device_only_mask(code);
  for (const auto& u : kUnsupported) {
    const std::string tok = u.token;
    for (std::size_t pos = code.find(tok); pos != std::string::npos; pos = code.find(tok, pos + 1)) {
      const bool starts = pos == 0 || !ident_char(code[pos - 1]);
      const bool ends = pos + tok.size() >= code.size() || !ident_char(code[pos + tok.size()]);
      if (starts && ends && !device_only[pos])
        fail(path, src, pos,
             "the convlab CPU backend does not support '" + tok + "' (" + u.what +
                 "); this code needs the CUDA backend (an NVIDIA GPU)");
    }
  }
}

// The CPU backend's own names: its runtime's namespace and the functions that count memory
// accesses (which instrumented code calls). A kernel file that named them could forge the
// records the graders read (convlab_cpu/records.hpp).
void check_reserved_names(const std::string& path, const std::string& src, const std::string& code) {
  static const char* const prefixes[] = {"__tsan_", "__asan_", "__sanitizer_", "__ubsan_"};
  for (std::size_t pos = 0; pos < code.size(); ++pos) {
    if (!ident_char(code[pos]) || (pos > 0 && ident_char(code[pos - 1]))) continue;
    std::size_t e = pos;
    while (e < code.size() && ident_char(code[e])) ++e;
    const std::string word = code.substr(pos, e - pos);
    bool reserved = word == "convlab_cpu";
    for (const char* p : prefixes) reserved = reserved || word.rfind(p, 0) == 0;
    if (reserved)
      fail(path, src, pos, "'" + word + "' belongs to the convlab CPU backend; a kernel file must not use it");
    pos = e - 1;
  }
}

// Rewrites every kernel launch; returns the new source.
std::string rewrite_launches(const std::string& path, const std::string& src) {
  std::string out;
  const std::string code = code_only(src);
  std::size_t copied = 0;
  for (std::size_t pos = code.find("<<<"); pos != std::string::npos; pos = code.find("<<<", pos + 3)) {
    // The callee: an identifier path, possibly with template arguments, before <<<.
    std::size_t end = pos;
    while (end > 0 && std::isspace(static_cast<unsigned char>(code[end - 1]))) --end;
    std::size_t begin = end;
    for (;;) {
      if (begin > 0 && code[begin - 1] == '>') {  // template arguments
        int depth = 0;
        std::size_t i = begin;
        while (i > 0) {
          --i;
          if (code[i] == '>') ++depth;
          else if (code[i] == '<' && --depth == 0) break;
        }
        begin = i;
        continue;
      }
      if (begin > 0 && (ident_char(code[begin - 1]) || code[begin - 1] == ':')) {
        --begin;
        continue;
      }
      break;
    }
    if (begin == end || begin < copied) fail(path, src, pos, "cannot find the kernel name before '<<<'");
    const std::size_t close = code.find(">>>", pos + 3);
    if (close == std::string::npos) fail(path, src, pos, "'<<<' without a matching '>>>'");
    std::size_t paren = close + 3;
    while (paren < code.size() && std::isspace(static_cast<unsigned char>(code[paren]))) ++paren;
    if (paren >= code.size() || code[paren] != '(') fail(path, src, close, "expected '(' after '>>>'");
    const std::size_t rparen = matching(code, paren, '(', ')');
    if (rparen == std::string::npos) fail(path, src, paren, "unbalanced parentheses in the kernel's arguments");

    const std::string callee = trim(src.substr(begin, end - begin));
    const auto config = split_args(src.substr(pos + 3, close - pos - 3));
    if (config.size() < 2 || config.size() > 4)
      fail(path, src, pos, "a launch takes 2 to 4 values between <<< and >>> (grid, block, shared bytes, stream)");
    const std::string args = trim(src.substr(paren + 1, rparen - paren - 1));
    // CONVLAB_CPU_COUNTED (prelude.hpp) says whether this file was built to count memory accesses.
    std::string call = "::convlab_cpu::launch(::convlab_cpu::LaunchSite{\"" + one_line(callee) +
                       "\", __FILE__, __LINE__, CONVLAB_CPU_COUNTED}, " + callee +
                       ", ::convlab_cpu::LaunchConfig(" + src.substr(pos + 3, close - pos - 3) + ")" +
                       (args.empty() ? "" : ", " + src.substr(paren + 1, rparen - paren - 1)) + ")";
    // Keep the line count: newlines inside the launch stay inside the replacement.
    const std::size_t lost = count_newlines(src.substr(begin, rparen + 1 - begin)) - count_newlines(call);
    out += src.substr(copied, begin - copied) + call + std::string(lost, '\n');
    copied = rparen + 1;
    pos = rparen;
  }
  out += src.substr(copied);
  return out;
}

// ---- declarations of __shared__, __constant__ and __device__ variables ---------------------
//
// Each is rewritten so that the CPU backend knows where the variable lives (a block's
// shared memory is one region per host thread; each __constant__ and __device__ variable is
// registered with its name), and so that the compiler's instrumentation sees every access
// to it (it instruments no access to a read-only variable):
//   __shared__ T s[N][M];       (in a function)
//       -> static char convlab_shared_key_s; T (&s)[N][M] = *::convlab_cpu::detail::static_shared<T[N][M]>(&convlab_shared_key_s, 0);
//          the running block's copy, in the block's shared memory
//   extern __shared__ T s[];
//       -> T* s = ::convlab_cpu::dynamic_shared<T>();     (at namespace scope: a wrapper that converts to T*)
//   __constant__ T c[N] = ...;  (the same for __device__ variables)
//       -> __constant__ T c[N] = ...; static const ::convlab_cpu::detail::DeviceSymbol convlab_symbol_c(&c, sizeof(c), "c", space);
//   __constant__ const T c[N] = ...;
//       -> __constant__ const T c_convlab_storage[N] = ...; static decltype(c_convlab_storage)& c = ::convlab_cpu::detail::device_symbol(c_convlab_storage, "c", space);
// A statement's lines become one line followed by as many empty lines, so the
// numbering (and the #line mapping) of everything after it stays the same.

// A token of code-only text: an identifier or number, or one punctuation character.
struct Token {
  std::size_t pos;
  std::size_t len;
  bool ident;
};

std::vector<Token> tokenize(const std::string& code, std::size_t begin, std::size_t end) {
  std::vector<Token> out;
  for (std::size_t i = begin; i < end;) {
    const char c = code[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ident_char(c)) {
      std::size_t j = i;
      while (j < end && ident_char(code[j])) ++j;
      out.push_back({i, j - i, !std::isdigit(static_cast<unsigned char>(c))});
      i = j;
    } else {
      out.push_back({i, 1, false});
      ++i;
    }
  }
  return out;
}

bool is(const std::string& code, const Token& t, const char* text) { return code.compare(t.pos, t.len, text) == 0 && std::strlen(text) == t.len; }

// Marks the characters of preprocessor directives (with their continuation lines).
std::vector<char> directive_mask(const std::string& code) {
  std::vector<char> mask(code.size(), 0);
  bool continued = false;
  for (std::size_t i = 0; i < code.size();) {
    std::size_t eol = code.find('\n', i);
    if (eol == std::string::npos) eol = code.size();
    const std::size_t first = code.find_first_not_of(" \t\r", i);
    const bool directive = continued || (first < eol && code[first] == '#');
    if (directive) {
      std::fill(mask.begin() + i, mask.begin() + eol, 1);
      std::size_t last = eol;
      while (last > i && (code[last - 1] == ' ' || code[last - 1] == '\t' || code[last - 1] == '\r')) --last;
      continued = last > i && code[last - 1] == '\\';
    } else {
      continued = false;
    }
    i = eol + 1;
  }
  return mask;
}

// For each character: how many braces that are not a namespace's (or an extern "C"
// block's) enclose it. Zero means namespace scope.
std::vector<int> function_depth(const std::string& code, const std::vector<char>& directive) {
  std::vector<int> depth(code.size() + 1, 0);
  std::vector<bool> stack;  // true: a namespace-like brace
  std::string head;         // the code since the last ';', '{' or '}'
  int d = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    depth[i] = d;
    if (directive[i]) continue;
    const char c = code[i];
    if (c == '{') {
      const std::vector<Token> t = tokenize(head, 0, head.size());
      bool ns = false;
      for (const Token& k : t) ns = ns || is(head, k, "namespace");
      // extern "C" { ... } (the string is blanked: three tokens); not extern "C" void f() { ... }
      if (t.size() == 3 && is(head, t[0], "extern") && head[t[1].pos] == '"' && head[t[2].pos] == '"') ns = true;
      stack.push_back(ns);
      if (!ns) ++d;
      head.clear();
    } else if (c == '}') {
      if (!stack.empty()) {
        if (!stack.back()) --d;
        stack.pop_back();
      }
      head.clear();
    } else if (c == ';') {
      head.clear();
    } else {
      head += c;
    }
  }
  depth[code.size()] = d;
  return depth;
}

// The first character of the statement that holds `pos`: just after the previous ';', '{',
// '}' or preprocessor line.
std::size_t statement_start(const std::string& code, const std::vector<char>& directive, std::size_t pos) {
  std::size_t i = pos;
  while (i > 0 && !directive[i - 1] && code[i - 1] != ';' && code[i - 1] != '{' && code[i - 1] != '}') --i;
  while (i < pos && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
  return i;
}

// The ';' that ends the statement holding `pos`, or npos.
std::size_t statement_end(const std::string& code, std::size_t pos) {
  int depth = 0;
  for (std::size_t i = pos; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) return std::string::npos;
    } else if (c == ';' && depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

// One declarator of a declaration: `name`, with what comes before it in its piece (the
// type, in the first piece; pointer operators) and after it (array bounds, initializer).
struct Declarator {
  std::size_t piece_begin, piece_end;  // positions in the source
  std::size_t name_pos, name_len;
  bool has_init;  // '=' or '{' after the name
};

bool reserved_word(const std::string& w) {
  static const char* const words[] = {"float", "double", "int", "unsigned", "signed", "char", "short", "long",
                                      "bool", "void", "const", "volatile", "auto", "struct", "class", "static",
                                      "extern", "inline", "constexpr", "__shared__", "__constant__", "__device__",
                                      "__restrict__", "typename", "template"};
  for (const char* k : words)
    if (w == k) return true;
  return false;
}

// Splits the tokens of a declaration at its top-level commas and finds each declarator's
// name: the last identifier before the first top-level '[', '=', '{' or '(' of its piece.
std::vector<Declarator> declarators(const std::string& path, const std::string& src, const std::string& code,
                                    const std::vector<Token>& tokens, std::size_t end) {
  std::vector<Declarator> out;
  std::size_t piece = 0;  // first token of the current piece
  int depth = 0, angle = 0;
  bool in_init = false;
  for (std::size_t k = 0; k <= tokens.size(); ++k) {
    const bool last = k == tokens.size();
    const char c = last ? ',' : code[tokens[k].pos];
    if (!last && !tokens[k].ident && tokens[k].len == 1) {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == '=' && depth == 0) in_init = true;
      if (c == '<' && depth == 0 && !in_init && k > 0 && tokens[k - 1].ident) ++angle;
      if (c == '>' && depth == 0 && angle > 0) --angle;
    }
    if (c != ',' || depth != 0 || angle != 0 || (!last && tokens[k].ident)) continue;
    // tokens [piece, k) are one declarator (with the type, for the first)
    if (piece == k) fail(path, src, last ? end : tokens[k].pos, "cu2cpp cannot read this declaration (an empty declarator)");
    std::size_t stop = k;
    for (std::size_t j = piece, a = 0; j < k; ++j) {
      const char t = code[tokens[j].pos];
      if (tokens[j].ident) continue;
      if (a == 0 && (t == '[' || t == '=' || t == '{' || t == '(')) {
        stop = j;
        break;
      }
      if (t == '<') ++a;
      if (t == '>' && a > 0) --a;
    }
    std::size_t name = std::string::npos;
    int a = 0;  // inside template arguments
    for (std::size_t j = piece; j < stop; ++j) {
      const char t = code[tokens[j].pos];
      if (!tokens[j].ident && t == '<') ++a;
      if (!tokens[j].ident && t == '>' && a > 0) --a;
      if (tokens[j].ident && a == 0) name = j;
    }
    if (name == std::string::npos || reserved_word(code.substr(tokens[name].pos, tokens[name].len)))
      fail(path, src, tokens[piece].pos,
           "cu2cpp cannot read this declaration; write it as `TYPE NAME[SIZE];`, one name or several "
           "separated by commas");
    bool has_init = false;
    if (stop < k) has_init = code[tokens[stop].pos] == '=' || code[tokens[stop].pos] == '{';
    for (std::size_t j = stop; j < k && !has_init; ++j) has_init = code[tokens[j].pos] == '=';
    out.push_back({tokens[piece].pos, last ? end : tokens[k].pos, tokens[name].pos, tokens[name].len, has_init});
    piece = k + 1;
    in_init = false;
  }
  return out;
}

// Removes `__shared__`, `static`, `extern`, `__align__(n)` and `alignas(n)` from a
// declaration's tokens; returns the alignment written (empty if none).
std::string strip_shared_specifiers(const std::string& code, std::vector<Token>& tokens) {
  std::string align;
  std::vector<Token> kept;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const Token& t = tokens[k];
    if (is(code, t, "__shared__") || is(code, t, "static") || is(code, t, "extern")) continue;
    if ((is(code, t, "__align__") || is(code, t, "alignas")) && k + 1 < tokens.size() &&
        code[tokens[k + 1].pos] == '(') {
      const std::size_t close = matching(code, tokens[k + 1].pos, '(', ')');
      align = trim(code.substr(tokens[k + 1].pos + 1, close - tokens[k + 1].pos - 1));
      while (k + 1 < tokens.size() && tokens[k + 1].pos <= close) ++k;
      continue;
    }
    kept.push_back(t);
  }
  tokens = kept;
  return align;
}

// The text of tokens [from, to) of code-only text, one space between tokens where the source had space.
std::string text_of(const std::string& code, const std::vector<Token>& tokens, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t k = from; k < to; ++k) {
    if (k > from && tokens[k].pos > tokens[k - 1].pos + tokens[k - 1].len) out += ' ';
    out += code.substr(tokens[k].pos, tokens[k].len);
  }
  return out;
}

std::size_t token_at(const std::vector<Token>& tokens, std::size_t pos) {
  std::size_t k = 0;
  while (k < tokens.size() && tokens[k].pos < pos) ++k;
  return k;
}

// `__shared__` declarations: static ones become references to the running block's shared
// memory, dynamic ones (extern, unsized) pointers to the block's dynamic shared memory.
std::string rewrite_shared(const std::string& path, const std::string& src, const std::string& code,
                           std::size_t start, std::size_t end, bool in_function) {
  std::vector<Token> tokens = tokenize(code, start, end);
  bool is_extern = false;
  for (const Token& t : tokens) is_extern = is_extern || is(code, t, "extern");
  for (const Token& t : tokens)
    if (code[t.pos] == '"' || is(code, t, "template"))
      fail(path, src, t.pos, "cu2cpp cannot read this __shared__ declaration");
  const std::string align = strip_shared_specifiers(code, tokens);
  if (tokens.empty()) fail(path, src, start, "a __shared__ declaration without a type and a name");
  const std::vector<Declarator> decls = declarators(path, src, code, tokens, end);
  // The type: the first piece up to its name, without the pointer operators next to the name.
  const std::size_t first_name = token_at(tokens, decls[0].name_pos);
  std::size_t type_end = first_name;
  while (type_end > 0 && !tokens[type_end - 1].ident && (code[tokens[type_end - 1].pos] == '*' || code[tokens[type_end - 1].pos] == '&'))
    --type_end;
  if (type_end == 0) fail(path, src, start, "a __shared__ declaration without a type");
  const std::string type = text_of(code, tokens, 0, type_end);
  std::string out;
  for (std::size_t i = 0; i < decls.size(); ++i) {
    const Declarator& d = decls[i];
    const std::size_t b = i == 0 ? type_end : token_at(tokens, d.piece_begin);
    const std::size_t n = token_at(tokens, d.name_pos), e = token_at(tokens, d.piece_end);
    const std::string name = code.substr(d.name_pos, d.name_len);
    const std::string before = text_of(code, tokens, b, n), after = text_of(code, tokens, n + 1, e);
    if (d.has_init)
      fail(path, src, d.name_pos, "__shared__ variable '" + name + "' has an initializer; CUDA allows none (a block's "
                                  "threads must write shared memory themselves)");
    if (!out.empty()) out += ' ';
    if (is_extern) {
      if (trim(after) != "[ ]" && trim(after) != "[]")
        fail(path, src, d.name_pos, "extern __shared__ variable '" + name + "' must be an unsized array: `extern __shared__ " +
                                        type + " " + name + "[];`");
      const std::string elem = type + (before.empty() ? "" : " " + before);
      if (in_function)
        out += "[[maybe_unused]] " + elem + "* " + name + " = ::convlab_cpu::dynamic_shared<" + elem + ">();";
      else
        out += "[[maybe_unused]] static ::convlab_cpu::detail::DynamicShared<" + elem + "> " + name + ";";
    } else {
      if (!in_function)
        fail(path, src, d.name_pos, "the CPU backend needs __shared__ variable '" + name + "' declared inside the "
                                    "kernel (or __device__ function) that uses it, not at namespace scope");
      const std::string key = "convlab_shared_key_" + name;
      const std::string full = type + (before.empty() ? "" : " " + before) + " " + after;
      // `T (&name)[N]` for an array; `T& name` otherwise (GCC warns about needless parentheses).
      const std::string ref = trim(after).empty() ? before + "& " + name : before + "(&" + name + ")" + after;
      out += "static char " + key + "; [[maybe_unused]] " + type + " " + ref +
             " = *::convlab_cpu::detail::static_shared<" + full + ">(&" + key + ", " + (align.empty() ? "0" : align) + ");";
    }
  }
  return out;
}

// `__constant__` and `__device__` variables: the declaration stays, followed by an object
// whose construction tells the runtime where each variable lives and its name. A `const`
// one is renamed and its name becomes a reference to it: the compiler instruments no access
// to a read-only variable, and reaches it through the reference.
std::string rewrite_symbol(const std::string& path, const std::string& src, const std::string& code,
                           const std::string& uncommented, std::size_t start, std::size_t end, bool constant) {
  const char* what = constant ? "__constant__" : "__device__";
  const std::string space = std::string("::convlab_cpu::MemorySpace::") + (constant ? "constant" : "global");
  const std::vector<Token> tokens = tokenize(code, start, end);
  bool is_extern = false, is_const = false, is_inline = false;
  for (const Token& t : tokens) {
    if (is(code, t, "template"))
      fail(path, src, t.pos, std::string("the CPU backend does not support templated ") + what + " variables");
    is_extern = is_extern || is(code, t, "extern");
    is_inline = is_inline || is(code, t, "inline");
  }
  const std::vector<Declarator> decls = declarators(path, src, code, tokens, end);
  // `const` in the declaration's specifiers (not after a '*'); it also gives the variable
  // internal linkage (C++), unless extern.
  for (std::size_t k = 0; k < tokens.size() && tokens[k].pos < decls[0].name_pos; ++k) {
    if (code[tokens[k].pos] == '*') break;
    is_const = is_const || is(code, tokens[k], "const") || is(code, tokens[k], "constexpr");
  }
  std::string storage = uncommented.substr(start, end - start);  // comments would swallow what follows on the line
  std::string after;
  for (auto d = decls.rbegin(); d != decls.rend(); ++d) {
    const std::string name = code.substr(d->name_pos, d->name_len);
    const bool defined = !is_extern || d->has_init;
    std::string more;
    if (!is_const) {
      if (defined)
        more = "[[maybe_unused]] static const ::convlab_cpu::detail::DeviceSymbol convlab_symbol_" + name + "(&" +
               name + ", sizeof(" + name + "), \"" + name + "\", " + space + ");";
    } else {
      const std::string stored = name + "_convlab_storage";
      storage.insert(d->name_pos + d->name_len - start, "_convlab_storage");
      more = "[[maybe_unused]] ";
      if (is_extern) more += "extern ";
      else more += "static ";
      if (is_inline) more += "inline ";
      more += "decltype(" + stored + ")& " + name;
      if (defined)
        more += " = ::convlab_cpu::detail::device_symbol(" + stored + ", \"" + name + "\", " + space + ")";
      more += ";";
    }
    if (!more.empty()) after = more + (after.empty() ? "" : " ") + after;
  }
  return storage + ";" + (after.empty() ? "" : " " + after);
}

// Rewrites every declaration of a __shared__, __constant__ or __device__ variable.
std::string rewrite_declarations(const std::string& path, const std::string& src) {
  const std::string code = code_only(src), uncommented = code_only(src, false);
  const std::vector<char> directive = directive_mask(code);
  const std::vector<int> depth = function_depth(code, directive);
  std::string out;
  std::size_t copied = 0;  // src is copied up to here
  for (std::size_t pos = 0; pos < code.size(); ++pos) {
    if (!ident_char(code[pos]) || (pos > 0 && ident_char(code[pos - 1]))) continue;
    std::size_t e = pos;
    while (e < code.size() && ident_char(code[e])) ++e;
    const std::string word = code.substr(pos, e - pos);
    const bool shared = word == "__shared__", constant = word == "__constant__", device = word == "__device__";
    if (!shared && !constant && !device) {
      pos = e - 1;
      continue;
    }
    if (directive[pos]) {
      if (device) continue;  // e.g. #define HD __host__ __device__
      fail(path, src, pos, "the CPU backend needs each " + word + " variable declared directly, not through a macro");
    }
    const std::size_t start = statement_start(code, directive, pos);
    if (start < copied) continue;  // a statement already rewritten (e.g. __device__ __constant__)
    bool kind_shared = shared, kind_constant = constant;
    // The statement's other keywords decide its kind: __shared__ wins, then __constant__.
    const std::size_t end = statement_end(code, pos);
    if (device) {
      // A __device__ function (a '(' before any '=', '{' or ';'), or one inside a function: not a variable.
      if (depth[pos] > 0) continue;
      bool function = false;
      for (std::size_t i = e; i < code.size(); ++i) {
        const char c = code[i];
        if (directive[i]) continue;
        if (c == '(') {
          std::size_t b = i;
          while (b > 0 && std::isspace(static_cast<unsigned char>(code[b - 1]))) --b;
          std::size_t a = b;
          while (a > 0 && ident_char(code[a - 1])) --a;
          const std::string before = code.substr(a, b - a);
          if (before == "__align__" || before == "alignas" || before == "__attribute__") {
            i = matching(code, i, '(', ')');
            if (i == std::string::npos) break;
            continue;
          }
          function = true;
          break;
        }
        if (c == '=' || c == '{' || c == ';') break;
      }
      if (function) continue;
    }
    if (end == std::string::npos) fail(path, src, pos, "cannot find the end of this " + word + " declaration");
    const std::vector<Token> all = tokenize(code, start, end);
    for (const Token& t : all) {
      kind_shared = kind_shared || is(code, t, "__shared__");
      kind_constant = kind_constant || is(code, t, "__constant__");
    }
    if (kind_constant && !kind_shared && depth[pos] > 0)
      fail(path, src, pos, "a __constant__ variable must be declared at namespace scope");
    std::string text = kind_shared ? rewrite_shared(path, src, code, start, end, depth[pos] > 0)
                                   : rewrite_symbol(path, src, code, uncommented, start, end, kind_constant);
    std::replace(text.begin(), text.end(), '\n', ' ');
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += src.substr(copied, start - copied) + text + std::string(count_newlines(src.substr(start, end + 1 - start)), '\n');
    copied = end + 1;
    pos = end;
  }
  out += src.substr(copied);
  return out;
}
// #pragma unroll, one line at a time (GCC does not know it).
std::string rewrite_pragmas(const std::string& src) {
  static const std::regex pragma_unroll(R"(^\s*#\s*pragma\s+unroll\b.*$)");
  std::istringstream in(src);
  std::ostringstream out;
  std::string line;
  const std::string code_all = code_only(src);
  std::istringstream code_in(code_all);
  std::string code_line;
  bool first = true;
  while (std::getline(in, line)) {
    std::getline(code_in, code_line);
    if (!first) out << "\n";
    first = false;
    if (std::regex_match(code_line, pragma_unroll)) continue;  // an empty line keeps the numbering
    out << line;
  }
  if (!src.empty() && src.back() == '\n') out << "\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: cu2cpp INPUT.cu OUTPUT.cpp\n";
    return 2;
  }
  const std::string in_path = argv[1], out_path = argv[2];
  std::ifstream in(in_path, std::ios::binary);
  if (!in) {
    std::cerr << "cu2cpp: cannot read " << in_path << "\n";
    return 2;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string src = buf.str();
  check_unsupported(in_path, src, code_only(src));
  check_reserved_names(in_path, src, code_only(src));
  const std::string rewritten = rewrite_pragmas(rewrite_launches(in_path, rewrite_declarations(in_path, src)));
  std::string escaped;
  for (char c : in_path) escaped += (c == '\\' || c == '"') ? std::string("\\") + c : std::string(1, c);
  std::ofstream out(out_path, std::ios::binary);
  out << "#include <convlab_cpu/prelude.hpp>\n#line 1 \"" << escaped << "\"\n" << rewritten;
  out.close();
  if (!out) {
    std::cerr << "cu2cpp: cannot write " << out_path << "\n";
    return 2;
  }
  return 0;
}
