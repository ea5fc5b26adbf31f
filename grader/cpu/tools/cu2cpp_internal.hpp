// cu2cpp's parts (cu2cpp.cpp: the tool, its text helpers and checks; cu2cpp_declarations.cpp:
// the rewriting of variable declarations). Private to the tool.
#pragma once

#include <cstddef>
#include <string>

namespace cu2cpp {

bool ident_char(char c);
/// The source with comments, and string and character literals unless `blank_literals` is false,
/// blanked out (same length, newlines kept).
std::string code_only(const std::string& s, bool blank_literals = true);
/// Prints "path:line:column: error: msg" for position `pos` of `src` and exits with status 1.
[[noreturn]] void fail(const std::string& path, const std::string& src, std::size_t pos, const std::string& msg);
std::size_t count_newlines(const std::string& s);
/// Index of the bracket closing the one at `open` (same kind), in code-only text.
std::size_t matching(const std::string& code, std::size_t open, char o, char c);
std::string trim(const std::string& s);
/// __shared__, __constant__ and __device__ variable declarations rewritten for the CPU backend.
std::string rewrite_declarations(const std::string& path, const std::string& src);

}  // namespace cu2cpp
