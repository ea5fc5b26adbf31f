/// @file util.hpp
/// @brief Small helpers of the convlab command: files, trees, hashes, text.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace convlab::cli {

/// An error for the user: printed as "convlab: <message>", exit status 2.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The whole file; throws Error if it cannot be read.
std::string read_file(const std::string& path);
/// Writes `text` to `path` through a temporary file and a rename (never half a file).
void write_file_atomic(const std::string& path, const std::string& text);
/// Creates `dir` and its parents with mode 0755; throws Error on failure.
void make_dirs(const std::string& dir);

/// Files (regular files and symbolic links) under `root`, as sorted paths
/// relative to it; `keep(rel, is_dir)` prunes what it returns false for.
std::vector<std::string> list_tree(const std::string& root,
                                   const std::function<bool(const std::string& rel, bool is_dir)>& keep);
/// Makes `to` hold exactly `files` (relative to `from`), copying only files whose
/// content differs (so unchanged files keep their time stamps and a build stays
/// incremental) and deleting files of `to` not in the list, except under the
/// prefixes in `keep_extra`. Returns the paths it copied or deleted.
std::vector<std::string> sync_tree(const std::string& from, const std::string& to, const std::vector<std::string>& files,
                                   const std::vector<std::string>& keep_extra = {});
/// A 64-bit FNV-1a hash of the names and contents of `files` under `root`.
std::uint64_t hash_files(const std::string& root, const std::vector<std::string>& files);
/// FNV-1a of `data`, continuing from `h`.
std::uint64_t fnv1a(const std::string& data, std::uint64_t h = 0xcbf29ce484222325ull);
/// 16 hex digits.
std::string hex64(std::uint64_t v);

/// A folder removed, with what it holds, when the scope that made this ends, however it ends (an
/// exception included); an empty path removes nothing.
struct RemoveOnExit {
  std::string path;
  explicit RemoveOnExit(std::string folder) : path(std::move(folder)) {}
  RemoveOnExit(const RemoveOnExit&) = delete;
  RemoveOnExit& operator=(const RemoveOnExit&) = delete;
  ~RemoveOnExit();
};

/// A build slot this process holds: the folder BASE/<index> of lease_slot(), for as long as the
/// lease lives (an flock on BASE/<index>.lock: a second process, or a second lease in this one,
/// takes another index). Slots outlive the lease: a later grading run that takes the same index
/// finds its tree and build outputs and rebuilds only what changed.
class SlotLease {
public:
  SlotLease() = default;
  SlotLease(int fd, int index, std::string dir, bool reused) : fd_(fd), index_(index), dir_(std::move(dir)), reused_(reused) {}
  SlotLease(SlotLease&& o) noexcept { *this = std::move(o); }
  SlotLease& operator=(SlotLease&& o) noexcept;
  SlotLease(const SlotLease&) = delete;
  SlotLease& operator=(const SlotLease&) = delete;
  ~SlotLease();
  bool held() const { return fd_ >= 0; }
  int index() const { return index_; }
  const std::string& dir() const { return dir_; }
  /// The folder held a build already (left by an earlier run), rather than being made now.
  bool reused() const { return reused_; }

private:
  int fd_ = -1;
  int index_ = -1;
  std::string dir_;
  bool reused_ = false;
};
/// Takes the lowest-numbered slot of `base` that no lease holds (creating `base`); throws Error
/// when `max_slots` are all held, naming the folder.
SlotLease lease_slot(const std::string& base, int max_slots = 256);

/// The full path of `program` on PATH, or "" when absent.
std::string which(const std::string& program);
/// The path of the running executable.
std::string self_exe();
/// `link` (what /proc/self/exe reads) if the executable is still there; throws Error, in
/// plain words, when it was rebuilt or removed while convlab ran (" (deleted)").
std::string checked_self_exe(const std::string& link);
/// True when standard output is a terminal (progress is shown only then).
bool stdout_is_tty();

/// Leading and trailing white space removed.
std::string trim(const std::string& s);
/// Splits on `sep`, dropping empty pieces.
std::vector<std::string> split(const std::string& s, char sep);
/// True if `s` starts with `prefix`.
bool starts_with(const std::string& s, const std::string& prefix);
/// True if `haystack` contains `needle`, ignoring ASCII case.
bool contains_icase(const std::string& haystack, const std::string& needle);
/// A name safe for a file: letters, digits, '.', '_' and '-'; others become '_'.
std::string safe_name(const std::string& s);
/// "12.5" for 12.5, "100" for 100: points as people write them.
std::string fmt_points(double v);
/// Seconds with one decimal: "3.2 s".
std::string fmt_seconds(double s);
/// The first `max_lines` lines of `text` (and a note of how many were left out).
std::string head_lines(const std::string& text, std::size_t max_lines);
/// Wall-clock seconds since an arbitrary start (monotonic).
double now_s();
/// The current UTC time, ISO 8601.
std::string utc_now();

}  // namespace convlab::cli
