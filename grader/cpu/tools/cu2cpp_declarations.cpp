// cu2cpp's rewriting of variable declarations: __shared__ (static and extern), __constant__ and
// __device__ variables (see cu2cpp.cpp for what the tool does as a whole).
#include "cu2cpp_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace cu2cpp {
namespace {

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
}  // namespace

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

}  // namespace cu2cpp
