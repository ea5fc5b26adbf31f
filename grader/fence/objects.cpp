// Reading compiled objects with binutils (ar, readelf, objdump). See objects.hpp.
#include "objects.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace convlab::fence {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::uint64_t hex(const std::string& s) { return std::stoull(s, nullptr, 16); }

// A scratch folder, removed with everything in it when it goes out of scope.
class TempDir {
public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/convlab-fence-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw FenceError("cannot create a scratch folder " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

std::string describe(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

ToolResult checked(const std::vector<std::string>& argv) {
  ToolResult r = run_tool(argv);
  if (r.status != 0)
    throw FenceError(describe(argv) + " failed (status " + std::to_string(r.status) + "): " +
                     r.err.substr(0, 2000));
  return r;
}

}  // namespace

// ---- running the tools ---------------------------------------------------------

ToolResult run_tool(const std::vector<std::string>& argv, double timeout_s, std::size_t max_bytes) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw FenceError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw FenceError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // The tools' messages in English and their numbers as the parsers expect them.
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "LC_", 3) != 0 && std::strncmp(*e, "LANG=", 5) != 0) env_text.emplace_back(*e);
  env_text.emplace_back("LC_ALL=C");
  std::vector<char*> envp, args;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    throw FenceError("cannot run " + argv[0] + ": " + std::strerror(rc) + " (binutils must be installed)");
  }
  ToolResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string failure;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[1 << 16];
  while (open_fds > 0 && failure.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      failure = describe(argv) + " ran past " + std::to_string(static_cast<int>(timeout_s)) + " s";
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) {
      failure = std::string("poll: ") + std::strerror(errno);
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(got));
        if (r.out.size() + r.err.size() > max_bytes) {
          failure = describe(argv) + " printed more than " + std::to_string(max_bytes >> 20) +
                    " MiB: the objects are too large to check";
          break;
        }
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (!failure.empty()) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!failure.empty()) throw FenceError(failure);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// ---- parsing ------------------------------------------------------------------------

void parse_sections(const std::string& text, ObjectFile& obj) {
  //   [ 3] .rela.text   RELA   0000000000000000 001c38 0002e8 18   I 24   2  8
  static const std::regex row(
      R"(^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([A-Za-z]*)\s+\d+\s+(\d+)\s+\d+\s*$)");
  static const std::regex machine(R"(^\s*Machine:\s+(.*?)\s*$)");
  bool in_table = false;
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_match(line, m, machine)) obj.machine = m[1];
    if (line.find("Section Headers:") != std::string::npos) in_table = true;
    if (!in_table) continue;
    if (line.find("Key to Flags:") != std::string::npos) break;
    if (!std::regex_search(line, std::regex(R"(^\s*\[\s*\d+\])"))) continue;
    if (std::regex_match(line, m, row)) {
      Section s;
      s.index = std::stoi(m[1]);
      s.name = m[2];
      s.type = m[3];
      s.file_offset = hex(m[4]);
      s.size = hex(m[5]);
      s.flags = m[6];
      s.info = std::stoi(m[7]);
      obj.sections.push_back(s);
    } else if (!std::regex_search(line, std::regex(R"(^\s*\[\s*0\]\s+NULL)"))) {
      // A name with spaces or a format we do not know: never skip a section unread.
      throw FenceError(obj.member + ": cannot read this section header of readelf's output: " + line);
    }
  }
  if (obj.sections.empty()) throw FenceError(obj.member + ": readelf listed no sections (is it an ELF object?)");
}

void parse_symbols(const std::string& text, ObjectFile& obj) {
  //    17: 0000000000000000    97 FUNC    LOCAL  DEFAULT   11 _ZL24__sti____cudaRegisterAllv
  static const std::regex row(
      R"(^\s*\d+:\s+([0-9a-f]+)\s+(0x[0-9a-f]+|\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(?:\[[^\]]*\]\s+)?(\S+)\s?(.*)$)");
  static const std::regex header(R"(^Symbol table '([^']*)' contains (\d+) entr)");
  bool in_table = false;
  std::size_t expected = 0;
  for (const auto& line : lines_of(text)) {
    std::smatch h;
    if (std::regex_search(line, h, header)) {
      in_table = h[1] == ".symtab";
      if (in_table) expected = std::stoull(h[2]);
      continue;
    }
    if (!in_table || line.find("Num:") != std::string::npos || line.find_first_not_of(' ') == std::string::npos)
      continue;
    std::smatch m;
    if (!std::regex_match(line, m, row)) throw FenceError(obj.member + ": cannot read this symbol of readelf's output: " + line);
    Symbol s;
    s.value = hex(m[1]);
    s.size = std::stoull(m[2], nullptr, 0);
    s.type = m[3];
    s.bind = m[4];
    s.visibility = m[5];
    s.ndx = m[6];
    s.name = m[7];
    if (!s.ndx.empty() && std::isdigit(static_cast<unsigned char>(s.ndx[0]))) s.section = std::stoi(s.ndx);
    if (s.type == "SECTION" && s.name.empty() && obj.section(s.section)) s.name = obj.section(s.section)->name;
    obj.symbols.push_back(s);
  }
  // Relocations name their symbol by its index: every entry must have been read.
  if (obj.symbols.size() != expected)
    throw FenceError(obj.member + ": read " + std::to_string(obj.symbols.size()) + " of the " +
                     std::to_string(expected) + " symbols readelf listed");
}

void parse_relocations(const std::string& text, ObjectFile& obj) {
  // Relocation section '.rela.init_array' at offset 0x2070 contains 1 entry:
  // 0000000000000000  0000001000000001 R_X86_64_64   0000000000000000 .text.startup + 0
  static const std::regex header(R"(^Relocation section '([^']*)' at offset 0x([0-9a-f]+))");
  static const std::regex with_symbol(
      R"(^([0-9a-f]+)\s+([0-9a-f]+)\s+(\S+)\s+[0-9a-f]+\s+(\S+)\s*([+-])\s*([0-9a-f]+)\s*$)");
  static const std::regex without_symbol(R"(^([0-9a-f]+)\s+[0-9a-f]+\s+(\S+)\s*([0-9a-f]*)\s*$)");
  int target = -2;  // -2: not in a relocation table
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_search(line, m, header)) {
      // readelf shortens long names here (a template's COMDAT section): the
      // relocation section is the one at this file offset.
      const std::string name = m[1];
      const std::uint64_t at = hex(m[2]);
      target = -1;
      for (const auto& s : obj.sections)
        if ((s.type == "RELA" || s.type == "REL") && s.file_offset == at) target = s.info;
      if (target < 0) throw FenceError(obj.member + ": relocation section " + name + " applies to no section");
      continue;
    }
    if (target == -2 || line.empty() || line.find("Offset") != std::string::npos ||
        line.find("There are no relocations") != std::string::npos)
      continue;
    Relocation r;
    r.section = target;
    if (std::regex_match(line, m, with_symbol)) {
      r.offset = hex(m[1]);
      r.symbol_index = static_cast<int>(hex(m[2]) >> 32);  // ELF64: the symbol is the info's high half
      r.type = m[3];
      r.target = m[4];
      const auto a = static_cast<std::int64_t>(hex(m[6]));
      r.addend = m[5] == "-" ? -a : a;
    } else if (std::regex_match(line, m, without_symbol)) {
      r.offset = hex(m[1]);
      r.type = m[2];
      r.addend = m[3].length() ? static_cast<std::int64_t>(hex(m[3])) : 0;
    } else {
      throw FenceError(obj.member + ": cannot read this relocation of readelf's output: " + line);
    }
    obj.relocations.push_back(r);
  }
}

void parse_disassembly(const std::string& text, ObjectFile& obj) {
  // Disassembly of section .text:
  //    4d0:	sub    $0x18,%rsp
  static const std::regex header(R"(^Disassembly of section (.*):$)");
  static const std::regex insn(R"(^\s*([0-9a-f]+):\t(.*)$)");
  std::map<std::string, int> seen;  // several sections may share a name: take them in order
  int section = -1;
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_match(line, m, header)) {
      const std::string name = m[1];
      int k = seen[name]++;
      section = -1;
      for (const auto& s : obj.sections)
        if (s.name == name && k-- == 0) section = s.index;
      if (section < 0) throw FenceError(obj.member + ": objdump disassembled a section readelf did not list: " + name);
      continue;
    }
    if (section >= 0 && std::regex_match(line, m, insn)) {
      std::string t = m[2];
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
      obj.instructions.push_back({section, hex(m[1]), t});
    }
  }
}

// ---- ObjectFile --------------------------------------------------------------------

const Section* ObjectFile::section(int index) const {
  for (const auto& s : sections)
    if (s.index == index) return &s;
  return nullptr;
}

const Symbol* ObjectFile::function_at(int sec, std::uint64_t offset) const {
  const Symbol* best = nullptr;
  for (const auto& s : symbols)
    if (s.section == sec && s.type == "FUNC" && !s.name.empty() && s.value <= offset &&
        (offset < s.value + s.size || (s.size == 0 && (!best || s.value >= best->value))))
      if (!best || s.value >= best->value) best = &s;
  return best;
}

const Symbol* ObjectFile::symbol_at(int sec, std::uint64_t offset) const {
  const Symbol* found = nullptr;
  for (const auto& s : symbols)
    if (s.section == sec && s.value == offset && !s.name.empty() && s.type != "SECTION") {
      if (s.type == "FUNC") return &s;
      if (!found) found = &s;
    }
  return found;
}

const Symbol* ObjectFile::symbol(const std::string& name) const {
  const Symbol* found = nullptr;
  for (const auto& s : symbols)
    if (s.name == name) {
      if (!s.undefined()) return &s;
      if (!found) found = &s;
    }
  return found;
}

// ---- reading files -------------------------------------------------------------------

namespace {

ObjectFile read_object(const std::string& path, const std::string& member) {
  ObjectFile obj;
  obj.member = member;
  parse_sections(checked({"readelf", "-W", "-h", "-S", path}).out, obj);
  parse_symbols(checked({"readelf", "-W", "-s", path}).out, obj);
  parse_relocations(checked({"readelf", "-W", "-r", path}).out, obj);
  parse_disassembly(checked({"objdump", "-d", "-w", "--no-show-raw-insn", path}).out, obj);
  return obj;
}

bool is_archive(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof magic);
  return in && std::memcmp(magic, "!<arch>\n", 8) == 0;
}

bool is_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, sizeof magic);
  return in && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

}  // namespace

std::vector<ObjectFile> read_objects(const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw FenceError("no objects to check");
  std::vector<ObjectFile> out;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (!fs::is_regular_file(input, ec)) throw FenceError(input + ": no such file");
    if (is_elf(input)) {
      out.push_back(read_object(input, fs::path(input).filename().string()));
      continue;
    }
    if (!is_archive(input)) throw FenceError(input + ": neither a static archive (.a) nor an ELF object (.o)");
    const auto members = lines_of(checked({"ar", "t", input}).out);
    std::set<std::string> unique(members.begin(), members.end());
    if (unique.size() != members.size())
      throw FenceError(input + ": two members share a name; the fence checks each of them and needs them apart");
    TempDir dir;
    const std::string abs = fs::absolute(input).string();
    checked({"ar", "x", "--output=" + dir.path(), abs});
    for (const auto& m : members) {
      const std::string path = dir.path() + "/" + m;
      if (m.empty() || m.find('/') != std::string::npos || !fs::is_regular_file(path, ec))
        throw FenceError(input + ": cannot extract its member '" + m + "'");
      if (!is_elf(path)) throw FenceError(input + ": its member " + m + " is not an ELF object");
      out.push_back(read_object(path, m));
    }
  }
  return out;
}

std::vector<ObjectFile> read_symbol_tables(const std::vector<std::string>& inputs) {
  std::vector<ObjectFile> out;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (!fs::is_regular_file(input, ec)) throw FenceError(input + ": no such file");
    if (!is_elf(input) && !is_archive(input))
      throw FenceError(input + ": neither a static archive (.a) nor an ELF object (.o)");
    // readelf prints an archive's members one after the other, each after "File: lib.a(member.o)".
    const std::string text = checked({"readelf", "-W", "-h", "-S", "-s", input}).out;
    std::vector<std::pair<std::string, std::string>> chunks;  // member, its text
    std::string member = fs::path(input).filename().string(), chunk;
    for (const auto& line : lines_of(text)) {
      if (line.rfind("File: ", 0) == 0) {
        if (chunk.find("Section Headers:") != std::string::npos) chunks.emplace_back(member, chunk);
        member = line.substr(6);
        chunk.clear();
        continue;
      }
      chunk += line + "\n";
    }
    if (chunk.find("Section Headers:") != std::string::npos) chunks.emplace_back(member, chunk);
    for (const auto& [name, body] : chunks) {
      ObjectFile obj;
      obj.member = name;
      parse_sections(body, obj);
      parse_symbols(body, obj);
      out.push_back(std::move(obj));
    }
  }
  return out;
}

}  // namespace convlab::fence
