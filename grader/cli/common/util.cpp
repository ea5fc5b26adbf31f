// Helpers of the convlab command. See util.hpp.
#include "common/util.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error("error while reading " + path);
  return s.str();
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const fs::path p(path);
  if (p.has_parent_path()) make_dirs(p.parent_path().string());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp);
    out << text;
    out.flush();
    if (!out) throw Error("error while writing " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw Error("cannot rename " + tmp + " to " + path + ": " + ec.message());
}

void make_dirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw Error("cannot create the folder " + dir + (ec ? ": " + ec.message() : ""));
}

std::vector<std::string> list_tree(const std::string& root,
                                   const std::function<bool(const std::string&, bool)>& keep) {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path base = fs::path(root).lexically_normal();
  fs::recursive_directory_iterator it(base, fs::directory_options::none, ec), end;
  if (ec) throw Error("cannot list " + root + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error("cannot list " + root + ": " + ec.message());
    const auto status = it->symlink_status();
    const std::string rel = it->path().lexically_relative(base).generic_string();  // links not followed
    const bool is_dir = fs::is_directory(status);
    if (!keep(rel, is_dir)) {
      if (is_dir) it.disable_recursion_pending();
      continue;
    }
    if (fs::is_regular_file(status) || fs::is_symlink(status)) out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
bool same_content(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(b, ec))) return false;
  if (fs::file_size(a, ec) != fs::file_size(b, ec) || ec) return false;
  return read_file(a.string()) == read_file(b.string());
}
}  // namespace

std::vector<std::string> sync_tree(const std::string& from, const std::string& to, const std::vector<std::string>& files,
                                   const std::vector<std::string>& keep_extra) {
  std::vector<std::string> changed;
  make_dirs(to);
  for (const auto& rel : files) {
    const fs::path src = fs::path(from) / rel, dst = fs::path(to) / rel;
    if (same_content(src, dst)) continue;
    std::error_code ec;
    fs::remove(dst, ec);
    make_dirs(dst.parent_path().string());
    fs::copy_file(src, dst, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error("cannot copy " + src.string() + " to " + dst.string() + ": " + ec.message());
    fs::permissions(dst, fs::status(src).permissions(), ec);
    changed.push_back(rel);
  }
  const std::vector<std::string> present = list_tree(to, [&](const std::string& rel, bool) {
    for (const auto& k : keep_extra)
      if (rel == k || starts_with(rel, k + "/")) return false;
    return true;
  });
  for (const auto& rel : present)
    if (!std::binary_search(files.begin(), files.end(), rel)) {
      std::error_code ec;
      fs::remove(fs::path(to) / rel, ec);
      if (ec) throw Error("cannot remove " + (fs::path(to) / rel).string() + ": " + ec.message());
      changed.push_back(rel);
    }
  return changed;
}

RemoveOnExit::~RemoveOnExit() {
  std::error_code ec;
  if (!path.empty()) fs::remove_all(path, ec);
}

SlotLease& SlotLease::operator=(SlotLease&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases its flock
    fd_ = std::exchange(o.fd_, -1);
    index_ = o.index_;
    dir_ = std::move(o.dir_);
    reused_ = o.reused_;
  }
  return *this;
}

SlotLease::~SlotLease() {
  if (fd_ >= 0) ::close(fd_);
}

SlotLease lease_slot(const std::string& base, int max_slots) {
  make_dirs(base);
  for (int k = 0; k < max_slots; ++k) {
    const std::string lock = base + "/" + std::to_string(k) + ".lock";
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot open " + lock + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      const std::string dir = base + "/" + std::to_string(k);
      std::error_code ec;
      const bool reused = fs::exists(dir + "/build/CMakeCache.txt", ec);
      return SlotLease(fd, k, dir, reused);
    }
    const int err = errno;
    ::close(fd);
    if (err != EWOULDBLOCK) throw Error("cannot lock " + lock + ": " + std::strerror(err));
  }
  throw Error("all " + std::to_string(max_slots) + " build slots of " + base +
              " are in use by other grading runs: wait for one to end, or give another --slots-dir");
}

std::uint64_t fnv1a(const std::string& data, std::uint64_t h) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::uint64_t hash_files(const std::string& root, const std::vector<std::string>& files) {
  std::uint64_t h = fnv1a("convlab");
  for (const auto& rel : files) {
    h = fnv1a(rel + '\0', h);
    std::error_code ec;
    const fs::path p = fs::path(root) / rel;
    h = fnv1a(fs::is_regular_file(fs::symlink_status(p, ec)) ? read_file(p.string()) : std::string("<missing>"), h);
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string which(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  for (const auto& dir : split(path ? path : "/usr/bin:/bin", ':')) {
    const std::string full = dir + "/" + program;
    if (::access(full.c_str(), X_OK) == 0 && !fs::is_directory(full)) return full;
  }
  return "";
}

std::string checked_self_exe(const std::string& link) {
  const std::string deleted = " (deleted)";
  if (link.size() > deleted.size() && link.compare(link.size() - deleted.size(), deleted.size(), deleted) == 0)
    throw Error("convlab's own executable, " + link.substr(0, link.size() - deleted.size()) +
                ", was rebuilt or removed while this convlab ran; it starts copies of itself to watch each "
                "build and test, and cannot now. Run the command again (rebuild convlab only while it is not "
                "grading)");
  return link;
}

std::string self_exe() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the convlab executable (/proc/self/exe): " + ec.message());
  // Seen while grading: `ninja` rebuilt convlab mid-run, and every later build failed with
  // "the supervisor died", the copies of a vanished executable not starting.
  return checked_self_exe(p.string());
}

bool stdout_is_tty() { return ::isatty(STDOUT_FILENO) == 1; }

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool contains_icase(const std::string& haystack, const std::string& needle) {
  const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != haystack.end();
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
  return out;
}

std::string fmt_points(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string head_lines(const std::string& text, std::size_t max_lines) {
  std::size_t pos = 0, lines = 0;
  while (lines < max_lines && pos < text.size()) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) return text;
    pos = nl + 1;
    ++lines;
  }
  if (pos >= text.size()) return text;
  const std::size_t rest = std::count(text.begin() + pos, text.end(), '\n');
  return text.substr(0, pos) + "[... " + std::to_string(rest) + " more lines]\n";
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace convlab::cli
