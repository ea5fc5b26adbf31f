// Reading submissions. See submission.hpp.
#include "submission.hpp"

#include "sandbox.hpp"
#include "util.hpp"

#include <filesystem>
#include <set>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

constexpr long long kMaxFileBytes = 1 << 20;         // a kernel file larger than 1 MiB is not a kernel file
constexpr long long kMaxArchiveBytes = 256ll << 20;  // tarballs larger than this are refused unread

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Files of the course tree a submission has no say in.
bool course_file(const std::string& rel) {
  for (const char* top : {"labs/", "grader/", "reference/", "cmake/", ".ci/", "docs/"})
    if (starts_with(rel, top)) return true;
  return rel == "CMakeLists.txt" || rel == "CMakePresets.json";
}

// The folder holding starter_code/: the top, or one or two levels down.
std::string find_starter_parent(const fs::path& top) {
  std::error_code ec;
  if (fs::is_directory(top / "starter_code", ec)) return top.string();
  for (const auto& e : fs::directory_iterator(top, ec)) {
    if (!e.is_directory() || e.is_symlink()) continue;
    if (fs::is_directory(e.path() / "starter_code", ec)) return e.path().string();
    for (const auto& f : fs::directory_iterator(e.path(), ec))
      if (f.is_directory() && !f.is_symlink() && fs::is_directory(f.path() / "starter_code", ec)) return f.path().string();
  }
  return "";
}

std::string unpack_failure(const std::string& what, const RunResult& r) {
  return what + " (" + r.describe() + "): " + trim(head_lines(r.output, 5));
}

}  // namespace

std::string Submission::fingerprint() const {
  std::uint64_t h = fnv1a("submission");
  for (const auto& [lab, files] : this->files)
    for (const auto& [name, path] : files) h = fnv1a(lab + "/" + name + "\n" + read_file(path), h);
  return hex64(h);
}

std::string student_name(const std::string& origin) {
  std::string name = fs::path(origin).lexically_normal().filename().string();
  if (name.empty() || name == ".") name = fs::path(origin).lexically_normal().parent_path().filename().string();
  for (const char* ext : {".tar.gz", ".tar.xz", ".tar.bz2", ".tar.zst", ".tgz", ".tar", ".git"})
    if (ends_with(name, ext) && name.size() > std::string(ext).size()) {
      name.resize(name.size() - std::string(ext).size());
      break;
    }
  return safe_name(name);
}

Submission open_submission(const std::string& origin, const std::string& scratch, const Project& project) {
  Submission s;
  s.origin = origin;
  s.student = student_name(origin);
  std::error_code ec;
  const fs::path path = fs::absolute(origin, ec);
  if (!fs::exists(path, ec)) throw Error("submission '" + origin + "' does not exist");
  fs::remove_all(scratch, ec);
  make_dirs(scratch);
  const fs::path unpacked = fs::path(scratch) / "unpacked";

  const bool is_git = fs::is_directory(path) && (fs::exists(path / ".git") || (fs::exists(path / "HEAD") && fs::is_directory(path / "objects")));
  if (fs::is_directory(path) && !is_git) {
    s.kind = "folder";
    s.root = find_starter_parent(path);
  } else {
    // A repository is cloned, a tarball unpacked: by the tool, with a time and file-size limit.
    s.kind = is_git ? "git" : "tarball";
    if (!is_git && fs::file_size(path, ec) > static_cast<std::uintmax_t>(kMaxArchiveBytes)) {
      s.failure = "the tarball is larger than " + std::to_string(kMaxArchiveBytes >> 20) + " MiB";
      return s;
    }
    RunSpec unpack;
    if (is_git) {
      unpack.argv = {"git", "-c", "safe.directory=*", "clone", "--quiet", "--no-hardlinks", path.string(), unpacked.string()};
    } else {
      make_dirs(unpacked.string());
      unpack.argv = {"tar", "-x", "-f", path.string(), "-C", unpacked.string(), "--no-same-owner", "--no-same-permissions"};
    }
    unpack.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + scratch, "LANG=C", "GIT_TERMINAL_PROMPT=0",
                  "GIT_CONFIG_NOSYSTEM=1"};
    unpack.limits.timeout_s = 120;
    unpack.limits.file_bytes = kMaxArchiveBytes;
    const RunResult r = run_sandboxed(unpack);
    if (!r.ok()) {
      s.failure = unpack_failure(is_git ? "cannot clone the git repository" : "cannot unpack the tarball", r);
      return s;
    }
    s.root = find_starter_parent(unpacked);
  }
  if (s.root.empty()) {
    s.failure = "no starter_code/ folder in the submission (it must hold starter_code/NN-slug/<files>)";
    return s;
  }

  // Sort every file: allowed by a lab's spec, or ignored (and why).
  std::map<std::string, std::pair<std::string, std::string>> allowed;  // rel -> (lab, file)
  for (const auto& lab : project.labs)
    for (const auto& f : lab.spec.files) allowed[lab.starter + "/" + f] = {lab.spec.lab, f};
  std::vector<std::string> modified, unchanged, other, refused;
  const auto files = list_tree(s.root, [](const std::string& rel, bool) { return rel != ".git"; });
  for (const auto& rel : files) {
    const fs::path p = fs::path(s.root) / rel;
    const auto st = fs::symlink_status(p, ec);
    const auto a = allowed.find(rel);
    if (a != allowed.end()) {
      if (!fs::is_regular_file(st)) refused.push_back(rel + " (not a regular file: a symbolic link?)");
      else if (fs::file_size(p, ec) > static_cast<std::uintmax_t>(kMaxFileBytes)) refused.push_back(rel + " (larger than 1 MiB)");
      else s.files[a->second.first][a->second.second] = p.string();
      continue;
    }
    if (course_file(rel) || starts_with(rel, "starter_code/")) {
      const fs::path mine = fs::path(project.root) / rel;
      const bool same = fs::is_regular_file(st) && fs::is_regular_file(mine, ec) &&
                        fs::file_size(p, ec) == fs::file_size(mine, ec) && read_file(p.string()) == read_file(mine.string());
      (same ? unchanged : (course_file(rel) ? modified : other)).push_back(rel);
    } else {
      other.push_back(rel);
    }
  }
  const auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size() && i < 10; ++i) out += (i ? ", " : "") + v[i];
    if (v.size() > 10) out += " and " + std::to_string(v.size() - 10) + " more";
    return out;
  };
  if (!modified.empty())
    s.notes.push_back("tampering ignored: the submission changes files of the course (tests, specs, harness or build), "
                      "which are never taken from a submission: " + list(modified));
  if (!refused.empty()) s.notes.push_back("refused: " + list(refused));
  if (!other.empty()) s.notes.push_back("ignored (not a file a lab's grading spec allows): " + list(other));
  if (!unchanged.empty())
    s.notes.push_back(std::to_string(unchanged.size()) + " unchanged file(s) of the course tree ignored");
  return s;
}

}  // namespace convlab::cli
