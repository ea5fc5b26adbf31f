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
// line and feature. This file: the text helpers, the checks, launches and pragmas;
// cu2cpp_declarations.cpp: the variable declarations.
#include "cu2cpp_internal.hpp"

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

namespace cu2cpp {

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
std::string code_only(const std::string& s, bool blank_literals) {
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

}  // namespace cu2cpp

int main(int argc, char** argv) {
  using namespace cu2cpp;
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
