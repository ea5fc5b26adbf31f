/// @file names.hpp
/// @brief Symbol names as the fence reads them: demangled, split into the
/// entity's qualified name, and matched against allow-list patterns.
#pragma once

#include <string>
#include <vector>

namespace convlab::fence {

/// A symbol's name, taken apart.
///
/// `std::__cxx11::basic_string<char, ...> std::operator+<char, ...>(...)` has the
/// qualified name `std::operator+<char, ...>`; `typeinfo for convlab::CudaError`
/// has the special prefix `typeinfo for` and the qualified name `convlab::CudaError`;
/// an unmangled (C) name is its own qualified name.
struct Name {
  std::string raw;        ///< as in the symbol table
  std::string demangled;  ///< as c++filt prints it (the raw name if it is not mangled)
  bool mangled = false;   ///< a C++ name (`_Z...`)
  std::string special;    ///< "typeinfo for", "vtable for", "guard variable for", ... or ""
  std::string qualified;  ///< the entity, without return type, parameters and clone suffixes
  bool function = false;  ///< the demangled name has a parameter list
  std::vector<std::string> scopes;  ///< `qualified` split at its top-level `::`

  /// `special` and `qualified` together: what allow-list patterns match.
  std::string key() const { return special.empty() ? qualified : special + " " + qualified; }
  /// The outermost namespace or class: "std", "convlab", ...; "" for a name in the
  /// global namespace, including a local entity of a global function (`f(int)::{lambda()#1}`).
  std::string outer() const {
    return scopes.size() > 1 && scopes.front().find('(') == std::string::npos ? scopes.front() : std::string();
  }
  /// The last component without template arguments: "cudaMemcpyToSymbol" for
  /// `cudaMemcpyToSymbol<float [33]>`, "to_string" for `std::__cxx11::to_string`.
  std::string base() const;
  /// What a message shows: the key, shortened if it is very long.
  std::string shown() const;
};

/// Demangles and takes apart `raw`.
/// `s` begins with `p`.
inline bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

Name parse_name(const std::string& raw);

/// Shell-style match: `*` stands for any run of characters (`::` included),
/// every other character for itself.
bool glob_match(const std::string& pattern, const std::string& text);

/// True if `pattern` matches the name's key, or, for a C name, the name without
/// a `_ptsz`/`_ptds` suffix (CUDA's per-thread default stream variants).
bool matches(const std::string& pattern, const Name& name);

}  // namespace convlab::fence
