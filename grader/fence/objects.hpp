/// @file objects.hpp
/// @brief The compiled objects the fence checks, as binutils shows them:
/// sections, symbols, relocations and the instructions of executable sections.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace convlab::fence {

/// The fence could not do its work (a missing tool, an unreadable file, bad
/// arguments): the command exits 2, and `convlab grade` fails the lab with it.
class FenceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One ELF section (`readelf -S`).
struct Section {
  int index = 0;
  std::string name;
  std::string type;   ///< PROGBITS, NOBITS, INIT_ARRAY, RELA, ...
  std::string flags;  ///< readelf's letters: W write, A alloc, X execute, G group, ...
  std::uint64_t size = 0;
  std::uint64_t file_offset = 0;  ///< where its bytes are in the file (names relocation sections)
  int info = 0;       ///< for a relocation section: the section it applies to
  bool executable() const { return flags.find('X') != std::string::npos; }
  bool writable() const { return flags.find('W') != std::string::npos; }
};

/// One symbol table entry (`readelf -s`).
struct Symbol {
  std::string name;
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  std::string type;        ///< NOTYPE, FUNC, OBJECT, TLS, SECTION, FILE, IFUNC, COMMON
  std::string bind;        ///< LOCAL, GLOBAL, WEAK, UNIQUE
  std::string visibility;  ///< DEFAULT, HIDDEN, ...
  std::string ndx;         ///< the section index as text, or UND, ABS, COM
  int section = -1;        ///< the section index; -1 for UND, ABS, COM
  bool undefined() const { return ndx == "UND"; }
  bool global() const { return bind != "LOCAL"; }
};

/// One relocation (`readelf -r`): at `offset` of section `section`, a reference
/// to `target` (a symbol's name, or a section's name for a section symbol) + addend.
struct Relocation {
  int section = -1;
  std::uint64_t offset = 0;
  std::string type;
  std::string target;
  std::int64_t addend = 0;
  int symbol_index = -1;  ///< the index of the target in the symbol table (ObjectFile::symbols)
};

/// One instruction of an executable section (`objdump -d`).
struct Instruction {
  int section = -1;
  std::uint64_t offset = 0;
  std::string text;  ///< "syscall", "sub    $0x18,%rsp"
};

/// One relocatable object, read by readelf and objdump.
struct ObjectFile {
  std::string member;   ///< the archive member's (or the file's) name: "conv_basic.cu.o"
  std::string machine;  ///< readelf's words: "Advanced Micro Devices X86-64", "AArch64"
  std::vector<Section> sections;
  std::vector<Symbol> symbols;
  std::vector<Relocation> relocations;
  std::vector<Instruction> instructions;

  /// The section with this index, or nullptr.
  const Section* section(int index) const;
  /// The named function (FUNC symbol) of `section` whose bytes hold `offset`, or nullptr.
  const Symbol* function_at(int section, std::uint64_t offset) const;
  /// The named symbol of `section` that starts at `offset` (functions first), or nullptr.
  const Symbol* symbol_at(int section, std::uint64_t offset) const;
  /// The symbol called `name` (defined first), or nullptr.
  const Symbol* symbol(const std::string& name) const;
};

/// The output of a command, and how it ended.
struct ToolResult {
  int status = -1;  ///< exit status; -1 when it did not exit normally
  std::string out, err;
};

/// Runs argv (a program found on PATH) and captures its output; throws
/// FenceError if it cannot start, runs past `timeout_s` or prints more than
/// `max_bytes`.
ToolResult run_tool(const std::vector<std::string>& argv, double timeout_s = 300,
                    std::size_t max_bytes = std::size_t(512) << 20);

/// Parsers of readelf's and objdump's text (exposed for the tests).
void parse_sections(const std::string& readelf_S, ObjectFile& obj);
void parse_symbols(const std::string& readelf_s, ObjectFile& obj);
void parse_relocations(const std::string& readelf_r, ObjectFile& obj);
void parse_disassembly(const std::string& objdump_d, ObjectFile& obj);

/// Reads the objects of `inputs`: static archives (every member) and object files.
/// Throws FenceError if a file is missing, is neither, or a tool fails.
std::vector<ObjectFile> read_objects(const std::vector<std::string>& inputs);

/// Reads only the sections and symbols of `inputs` (one readelf per file, archives
/// whole): enough to know what the graders' own objects define.
std::vector<ObjectFile> read_symbol_tables(const std::vector<std::string>& inputs);

}  // namespace convlab::fence
