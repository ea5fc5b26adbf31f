// Archives: recognised, checked, unpacked with bounds. See archive.hpp.
#include "grading/archive.hpp"

#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_bytes(const std::string& path, std::uint64_t offset, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(offset));
  std::string out(n, '\0');
  in.read(out.data(), static_cast<std::streamsize>(n));
  out.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return out;
}

std::uint64_t le(const std::string& b, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b[at + i]);
  return v;
}

std::string mib(long long bytes) { return fmt_points(static_cast<double>(bytes) / (1 << 20)) + " MiB"; }

// A path an archive may hold: relative, inside its folder. Backslashes count as separators,
// as some unpackers treat them.
std::string bad_path(const std::string& name) {
  if (name.empty()) return "an entry without a name";
  if (name.find('\0') != std::string::npos) return "a name with a NUL character";
  if (name[0] == '/' || name[0] == '\\' || (name.size() > 1 && name[1] == ':'))
    return name + ", an absolute path";
  std::string part;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/' || name[i] == '\\') {
      if (part == "..") return name + ", a path outside its folder";
      part.clear();
    } else {
      part += name[i];
    }
  }
  return "";
}

// What one archive declares: its entries' names, kinds and sizes.
struct Listing {
  long entries = 0;
  long long bytes = 0;     // unpacked, as declared
  long long largest = 0;   // the largest entry, as declared
  std::string refused;     // why it may not be unpacked ("" if it may)
};

void refuse(Listing& l, const std::string& why) {
  if (l.refused.empty()) l.refused = why;
}

// The central directory of a zip (APPNOTE 4.3.12-4.3.16), read without unpacking anything.
Listing list_zip(const std::string& path) {
  Listing l;
  std::error_code ec;
  const std::uint64_t size = fs::file_size(path, ec);
  const std::size_t tail_n = static_cast<std::size_t>(std::min<std::uint64_t>(size, 22 + 65535 + 20));
  const std::string tail = read_bytes(path, size - tail_n, tail_n);
  std::size_t eocd = std::string::npos;
  for (std::size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;)
    if (tail.compare(i, 4, "PK\x05\x06") == 0) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) {
    refuse(l, "it is not a complete .zip archive (no central directory: cut short while downloading?)");
    return l;
  }
  if (le(tail, eocd + 4, 2) != 0 || le(tail, eocd + 6, 2) != 0) {
    refuse(l, "it is a zip split into several parts; join them into one .zip");
    return l;
  }
  std::uint64_t count = le(tail, eocd + 10, 2), cd_size = le(tail, eocd + 12, 4), cd_offset = le(tail, eocd + 16, 4);
  const std::uint64_t eocd_at = size - tail_n + eocd;
  if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
    // ZIP64: the real values are in the ZIP64 end record that a locator just before points to.
    if (eocd < 20 || tail.compare(eocd - 20, 4, "PK\x06\x07") != 0) {
      refuse(l, "its ZIP64 end record is missing: the archive is damaged");
      return l;
    }
    const std::string z = read_bytes(path, le(tail, eocd - 20 + 8, 8), 56);
    if (z.size() < 56 || z.compare(0, 4, "PK\x06\x06") != 0) {
      refuse(l, "its ZIP64 end record is damaged");
      return l;
    }
    count = le(z, 32, 8), cd_size = le(z, 40, 8), cd_offset = le(z, 48, 8);
  }
  if (cd_size > size) {
    refuse(l, "its central directory is larger than the file: the archive is damaged");
    return l;
  }
  std::string cd = read_bytes(path, cd_offset, static_cast<std::size_t>(cd_size));
  // Data before the archive (a self-extracting stub) moves every offset: the directory ends where
  // the end record begins.
  if (cd.compare(0, 4, "PK\x01\x02") != 0 && count > 0 && eocd_at >= cd_size)
    cd = read_bytes(path, eocd_at - cd_size, static_cast<std::size_t>(cd_size));
  std::size_t at = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    if (at + 46 > cd.size() || cd.compare(at, 4, "PK\x01\x02") != 0) {
      refuse(l, "its central directory is damaged (entry " + std::to_string(k + 1) + ")");
      return l;
    }
    const unsigned host = static_cast<unsigned>(le(cd, at + 5, 1));
    const std::uint64_t flags = le(cd, at + 8, 2);
    std::uint64_t unpacked = le(cd, at + 24, 4);
    const std::size_t name_n = le(cd, at + 28, 2), extra_n = le(cd, at + 30, 2), comment_n = le(cd, at + 32, 2);
    const std::uint64_t mode = le(cd, at + 38, 4) >> 16;
    if (at + 46 + name_n + extra_n + comment_n > cd.size()) {
      refuse(l, "its central directory is damaged (entry " + std::to_string(k + 1) + ")");
      return l;
    }
    const std::string name = cd.substr(at + 46, name_n);
    if (unpacked == 0xFFFFFFFF) {  // the real size is in the ZIP64 extra field (id 1), first
      for (std::size_t e = at + 46 + name_n; e + 4 <= at + 46 + name_n + extra_n;) {
        const std::size_t id = le(cd, e, 2), n = le(cd, e + 2, 2);
        if (id == 1 && n >= 8 && e + 12 <= cd.size()) unpacked = le(cd, e + 4, 8);
        e += 4 + n;
      }
    }
    at += 46 + name_n + extra_n + comment_n;
    ++l.entries;
    if (const std::string bad = bad_path(name); !bad.empty()) refuse(l, "it holds " + bad);
    if (flags & 1) refuse(l, "it is password-protected (" + name + "); make it again without a password");
    // Unix file types (hosts 3, Unix, and 19, macOS); other hosts store none.
    const std::uint64_t type = (host == 3 || host == 19) ? (mode & 0170000) : 0;
    if (type == 0120000) refuse(l, "it holds a symbolic link (" + name + "); make it again without links (zip without -y)");
    else if (type != 0 && type != 0100000 && type != 0040000) refuse(l, "it holds a device or pipe (" + name + ")");
    l.bytes += static_cast<long long>(std::min<std::uint64_t>(unpacked, 1ull << 62));
    l.largest = std::max(l.largest, static_cast<long long>(std::min<std::uint64_t>(unpacked, 1ull << 62)));
  }
  return l;
}

// GNU tar's verbose listing: "-rw-r--r-- 0/0 1234 2024-01-01 12:00 name" (sizes are exact in tar).
Listing list_tar(const std::string& path, const UnpackLimits& limits) {
  Listing l;
  RunSpec s;
  s.argv = {"tar", "-t", "-v", "--numeric-owner", "-f", path};
  s.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C"};
  s.limits.timeout_s = limits.timeout_s;
  s.limits.output_kill_bytes = 64ll << 20;
  s.keep_head = 8 << 20;
  const RunResult r = run_sandboxed(s);
  if (!r.ok()) {
    refuse(l, "tar cannot read it (" + r.describe() + "): " + trim(head_lines(r.output, 3)));
    return l;
  }
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || starts_with(line, "tar: ")) continue;
    std::istringstream f(line);
    std::string perms, owner, size, date, time;
    f >> perms >> owner >> size >> date >> time;
    std::string name;
    std::getline(f, name);
    if (!name.empty() && name[0] == ' ') name.erase(0, 1);
    ++l.entries;
    const char type = perms.empty() ? '?' : perms[0];
    if (type == 'l') name = name.substr(0, name.find(" -> "));
    if (type == 'h') name = name.substr(0, name.find(" link to "));
    if (const std::string bad = bad_path(name); !bad.empty()) refuse(l, "it holds " + bad);
    if (type == 'l' || type == 'h') refuse(l, "it holds a link (" + name + "); make it again without links");
    else if (type != '-' && type != 'd') refuse(l, "it holds a device or pipe (" + name + ")");
    const long long bytes = type == '-' ? std::atoll(size.c_str()) : 0;
    l.bytes += bytes;
    l.largest = std::max(l.largest, bytes);
  }
  return l;
}

}  // namespace

ArchiveFormat sniff_archive(const std::string& path, std::string* what) {
  const std::string b = read_bytes(path, 0, 512);
  const auto say = [&](const std::string& w, ArchiveFormat f) {
    if (what) *what = w;
    return f;
  };
  const auto magic = [&](const std::string& m, std::size_t at = 0) { return b.compare(at, m.size(), m) == 0; };
  if (b.empty()) return say("an empty file", ArchiveFormat::none);
  if (magic("PK\x03\x04") || magic("PK\x05\x06") || magic("PK\x07\x08")) return say("a .zip archive", ArchiveFormat::zip);
  if (magic("\x1f\x8b")) return say("a gzip-compressed tarball", ArchiveFormat::tarball);
  if (magic("BZh")) return say("a bzip2-compressed tarball", ArchiveFormat::tarball);
  if (magic(std::string("\xfd" "7zXZ\0", 6))) return say("an xz-compressed tarball", ArchiveFormat::tarball);
  if (magic("\x28\xb5\x2f\xfd")) return say("a zstd-compressed tarball", ArchiveFormat::tarball);
  if (b.size() >= 262 && magic("ustar", 257)) return say("a tarball", ArchiveFormat::tarball);
  if (magic("Rar!")) return say("a RAR archive (not accepted)", ArchiveFormat::none);
  if (magic("7z\xbc\xaf\x27\x1c")) return say("a 7-Zip archive (not accepted)", ArchiveFormat::none);
  if (magic("%PDF")) return say("a PDF document", ArchiveFormat::none);
  if (magic("\x7f" "ELF")) return say("a compiled program", ArchiveFormat::none);
  const bool text = std::all_of(b.begin(), b.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 || c == '\n' || c == '\r' || c == '\t';
  });
  return say(text ? "a text file" : "a file of a format convlab does not know", ArchiveFormat::none);
}

std::string unpack_archive(const std::string& path, const std::string& dest, const UnpackLimits& limits) {
  std::string what;
  const ArchiveFormat format = sniff_archive(path, &what);
  if (format == ArchiveFormat::none)
    return "it is " + what + ", not a .zip or a tarball (.tar, .tar.gz, .tgz, .tar.bz2, .tar.xz, .tar.zst)";
  std::error_code ec;
  // Compressed, an archive is never larger than what it unpacks to, but for a few bytes of headers.
  if (fs::file_size(path, ec) > static_cast<std::uintmax_t>(limits.max_bytes))
    return "the archive is larger than " + mib(limits.max_bytes) + "; leave build folders and data out of it";
  Listing l = format == ArchiveFormat::zip ? list_zip(path) : list_tar(path, limits);
  if (l.refused.empty() && l.entries == 0) l.refused = "it is empty: it holds no file";
  if (l.refused.empty() && l.entries > limits.max_entries)
    l.refused = "it holds " + std::to_string(l.entries) + " entries, more than the " +
                std::to_string(limits.max_entries) + " accepted; leave build folders out of it";
  if (l.refused.empty() && l.largest > limits.max_file_bytes)
    l.refused = "one of its files unpacks to more than " + mib(limits.max_file_bytes);
  if (l.refused.empty() && l.bytes > limits.max_bytes)
    l.refused = "it unpacks to " + mib(l.bytes) + ", more than the " + mib(limits.max_bytes) + " accepted";
  if (!l.refused.empty()) return l.refused;

  const std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "HOME=" + dest};
  if (format == ArchiveFormat::zip) {
    if (which("unzip").empty())
      return "this machine has no unzip to unpack it with (apt-get install unzip), so the zip was not read";
    // A zip's declared sizes may lie (unzip writes what the data inflates to): what it really
    // unpacks to is measured first, unpacked to a pipe and cut off past the limit.
    RunSpec measure;
    measure.argv = {"unzip", "-p", "-qq", path};
    measure.env = env;
    measure.limits.timeout_s = limits.timeout_s;
    measure.limits.output_kill_bytes = limits.max_bytes;
    measure.keep_head = measure.keep_tail = 4096;
    const RunResult m = run_sandboxed(measure);
    if (m.output_exceeded)
      return "it unpacks to more than the " + mib(limits.max_bytes) + " accepted, more than its entries declare "
             "(a zip bomb?)";
    if (!m.ok()) return "unzip cannot read it (" + m.describe() + "): " + trim(head_lines(m.output, 3));
  }
  make_dirs(dest);
  RunSpec s;
  if (format == ArchiveFormat::zip)
    s.argv = {"unzip", "-qq", "-o", path, "-d", dest};
  else
    s.argv = {"tar", "-x", "-f", path, "-C", dest, "--no-same-owner", "--no-same-permissions"};
  s.env = env;
  s.limits.timeout_s = limits.timeout_s;
  // No file may grow past the largest size the archive declares: an entry that lies is cut off.
  s.limits.file_bytes = std::max<long long>(l.largest, 1);
  const RunResult r = run_sandboxed(s);
  if (!r.ok())
    return (format == ArchiveFormat::zip ? "unzip" : "tar") + std::string(" cannot unpack it (") + r.describe() +
           "): " + trim(head_lines(r.output, 3));
  // What landed on disk, measured again: no link, nothing past the limits.
  long long bytes = 0;
  for (fs::recursive_directory_iterator it(dest, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto st = it->symlink_status(ec);
    if (fs::is_symlink(st)) return "it holds a link (" + it->path().lexically_relative(dest).string() + ")";
    if (fs::is_regular_file(st)) bytes += static_cast<long long>(fs::file_size(it->path(), ec));
  }
  if (ec) return "its unpacked files cannot be listed: " + ec.message();
  if (bytes > limits.max_bytes) return "it unpacks to more than the " + mib(limits.max_bytes) + " accepted";
  return "";
}

std::string strip_archive_extension(const std::string& name) {
  for (const char* ext : {".tar.gz", ".tar.xz", ".tar.bz2", ".tar.zst", ".tgz", ".txz", ".tbz2", ".tar", ".zip", ".git"})
    if (ends_with(name, ext) && name.size() > std::string(ext).size()) return name.substr(0, name.size() - std::string(ext).size());
  return name;
}

}  // namespace convlab::cli
