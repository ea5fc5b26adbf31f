// Symbol names: demangling and taking a demangled name apart. See names.hpp.
#include "names.hpp"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace convlab::fence {
namespace {

bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// The demangler's names for things that are not themselves functions or variables
// (they name one): c++filt's wording, longest first where one is a prefix of another.
const char* const kSpecial[] = {
    "construction vtable for", "typeinfo name for", "typeinfo fn for", "typeinfo for", "vtable for", "VTT for",
    "guard variable for",      "TLS init function for", "TLS wrapper function for", "reference temporary #0 for",
    "non-virtual thunk to",    "virtual thunk to",   "covariant return thunk to", "transaction clone for",
    "hidden alias for",        "java Class for",
};

// Operators whose spelling holds brackets or spaces that must not be read as
// nesting: `operator<<`, `operator()`, `operator new[]`. Longest first.
const char* const kOperators[] = {"->*", "<<=", ">>=", "<=>", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=",
                                  "&&",  "||",  "++",  "--",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<",
                                  ">",   "+",   "-",   "*",   "/",  "%",  "&",  "|",  "^",  "~",  "!",  "=",  ",",
                                  "\"\""};

// For each character: its bracket depth, and whether it belongs to an operator's
// spelling (never a bracket, a scope separator or a split point).
struct Layout {
  std::vector<int> depth;
  std::vector<bool> opaque;
};

Layout layout(const std::string& s) {
  Layout l{std::vector<int>(s.size(), 0), std::vector<bool>(s.size(), false)};
  int d = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 8, "operator") == 0 && (i == 0 || !ident(s[i - 1])) && (i + 8 >= s.size() || !ident(s[i + 8]))) {
      std::size_t k = i + 8;
      while (k < s.size() && s[k] == ' ') ++k;
      std::size_t end = k;
      if (k < s.size() && ident(s[k])) {
        while (end < s.size() && ident(s[end])) ++end;
        const std::string word = s.substr(k, end - k);
        if (word == "new" || word == "delete") {
          if (s.compare(end, 2, "[]") == 0) end += 2;
        } else {
          // A conversion operator: its type runs up to the parameter list.
          int inner = 0;
          while (end < s.size() && !(inner == 0 && s[end] == '(')) {
            if (s[end] == '<') ++inner;
            if (s[end] == '>') --inner;
            ++end;
          }
        }
      } else {
        for (const char* op : kOperators)
          if (s.compare(k, std::strlen(op), op) == 0) {
            end = k + std::strlen(op);
            break;
          }
        // `operator<< <std::char_traits<char> >`: the space before the template
        // arguments belongs to the operator's name.
        if (end + 1 < s.size() && s[end] == ' ' && s[end + 1] == '<') ++end;
      }
      for (std::size_t j = i; j < end; ++j) l.depth[j] = d, l.opaque[j] = true;
      i = end > i + 8 ? end : i + 8;
      continue;
    }
    const char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      l.depth[i] = d++;
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      d = d > 0 ? d - 1 : 0;
      l.depth[i] = d;
    } else {
      l.depth[i] = d;
    }
    ++i;
  }
  return l;
}

bool top(const Layout& l, std::size_t i) { return l.depth[i] == 0 && !l.opaque[i]; }

// The matching closing bracket of the top-level bracket at `open`.
std::size_t closing(const std::string& s, const Layout& l, std::size_t open) {
  for (std::size_t i = open + 1; i < s.size(); ++i)
    if (!l.opaque[i] && l.depth[i] == 0 && (s[i] == ')' || s[i] == '>' || s[i] == ']' || s[i] == '}')) return i;
  return std::string::npos;
}

// True if `rest` holds only what may follow a parameter list: cv- and
// ref-qualifiers, noexcept.
bool only_qualifiers(std::string rest) {
  for (;;) {
    while (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
    if (rest.empty()) return true;
    bool cut = false;
    for (const char* q : {"const", "volatile", "&&", "&", "noexcept", "transaction_safe"})
      if (starts_with(rest, q) && (rest.size() == std::strlen(q) || !ident(rest[std::strlen(q)]) || !ident(q[0]))) {
        rest.erase(0, std::strlen(q));
        cut = true;
        break;
      }
    if (!cut) return false;
  }
}

std::string demangle(const std::string& raw) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(raw.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : raw;
}

}  // namespace

std::string Name::base() const {
  std::string last = scopes.empty() ? qualified : scopes.back();
  // Drop a parameter list (a local entity's function), then trailing template
  // arguments and ABI tags: `to_string[abi:cxx11]`, `cudaMalloc<float>`.
  for (bool changed = true; changed && !last.empty();) {
    changed = false;
    const char close = last.back();
    const char open = close == '>' ? '<' : close == ']' ? '[' : close == ')' ? '(' : '\0';
    if (!open || starts_with(last, "operator")) break;
    int depth = 0;
    for (std::size_t i = last.size(); i-- > 0;) {
      if (last[i] == close) ++depth;
      if (last[i] == open && --depth == 0) {
        last.erase(i);
        changed = true;
        break;
      }
    }
  }
  return last;
}

std::string Name::shown() const {
  // ABI tags (`g_name[abi:cxx11]`) say nothing to a reader.
  std::string k = key();
  for (std::size_t p; (p = k.find("[abi:")) != std::string::npos;) {
    const std::size_t e = k.find(']', p);
    k.erase(p, e == std::string::npos ? std::string::npos : e - p + 1);
  }
  return k.size() <= 200 ? k : k.substr(0, 190) + " ...";
}

Name parse_name(const std::string& raw_in) {
  Name n;
  n.raw = raw_in;
  // A symbol version (`memcpy@GLIBC_2.14`) is not part of the name.
  const std::string raw = raw_in.substr(0, raw_in.find('@'));
  n.mangled = starts_with(raw, "_Z");
  n.demangled = n.mangled ? demangle(raw) : raw;
  std::string s = n.demangled;
  // Clone suffixes: `foo() [clone .cold]`, `foo() [clone .isra.0] [clone .cold]`.
  for (std::size_t p; (p = s.rfind(" [clone ")) != std::string::npos && ends_with(s, "]");) s.erase(p);
  for (const char* sp : kSpecial)
    if (starts_with(s, std::string(sp) + " ")) {
      n.special = sp;
      s.erase(0, std::strlen(sp) + 1);
      break;
    }
  Layout l = layout(s);
  // The parameter list: the last top-level '(...)' that only qualifiers follow.
  std::size_t params = std::string::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!top(l, i) || s[i] != '(') continue;
    const std::size_t close = closing(s, l, i);
    if (close == std::string::npos) break;
    if (only_qualifiers(s.substr(close + 1))) params = i;
    i = close;
  }
  if (params != std::string::npos) {
    n.function = true;
    s.erase(params);
    l = layout(s);
  }
  // A return type (template functions have one) ends at the last top-level space.
  for (std::size_t i = s.size(); i-- > 0;)
    if (s[i] == ' ' && top(l, i)) {
      s.erase(0, i + 1);
      l = layout(s);
      break;
    }
  n.qualified = s;
  std::size_t from = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] == ':' && s[i + 1] == ':' && top(l, i) && top(l, i + 1)) {
      n.scopes.push_back(s.substr(from, i - from));
      from = i + 2;
      ++i;
    }
  n.scopes.push_back(s.substr(from));
  return n;
}

bool glob_match(const std::string& pattern, const std::string& text) {
  std::size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool matches(const std::string& pattern, const Name& name) {
  if (glob_match(pattern, name.key())) return true;
  if (name.mangled) return false;
  for (const char* suffix : {"_ptsz", "_ptds"})
    if (ends_with(name.qualified, suffix) &&
        glob_match(pattern, name.qualified.substr(0, name.qualified.size() - std::strlen(suffix))))
      return true;
  return false;
}

}  // namespace convlab::fence
