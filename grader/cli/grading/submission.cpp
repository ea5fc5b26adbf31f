// Reading submissions. See submission.hpp.
#include "grading/submission.hpp"

#include "grading/archive.hpp"
#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

constexpr long long kMaxFileBytes = 1 << 20;         // a kernel file larger than 1 MiB is not a kernel file
constexpr long long kMaxArchiveBytes = 256ll << 20;  // a repository cloned larger than this is cut off

// Files of the course tree a submission has no say in.
bool course_file(const std::string& rel) {
  for (const char* top : {"labs/", "grader/", "reference/", "cmake/", ".ci/", "docs/"})
    if (starts_with(rel, top)) return true;
  return rel == "CMakeLists.txt" || rel == "CMakePresets.json";
}

// Folders a submission's tree is not searched in: macOS's resource forks (__MACOSX/ in a zip made
// by the Finder holds a starter_code/ of ._ files), version control, hidden folders.
bool searched(const fs::directory_entry& e) {
  const std::string n = e.path().filename().string();
  return e.is_directory() && !e.is_symlink() && n != "__MACOSX" && !starts_with(n, ".");
}

// The folder holding starter_code/, or the labs' NN-slug/ folders themselves (a student who
// zipped what they edited): the top, or one or two levels down. `bare` says which.
std::string find_submission_root(const fs::path& top, const Project& project, bool* bare) {
  std::error_code ec;
  const auto holds = [&](const fs::path& dir) {
    if (fs::is_directory(dir / "starter_code", ec) && !fs::is_symlink(dir / "starter_code", ec)) return *bare = false, true;
    for (const auto& lab : project.labs) {
      const fs::path slug = dir / fs::path(lab.starter).filename();
      if (fs::is_directory(slug, ec) && !fs::is_symlink(slug, ec)) return *bare = true, true;
    }
    return false;
  };
  if (holds(top)) return top.string();
  std::vector<fs::path> level1, level2;
  for (const auto& e : fs::directory_iterator(top, ec))
    if (searched(e)) level1.push_back(e.path());
  std::sort(level1.begin(), level1.end());  // the same choice on every run, whatever the file system's order
  for (const auto& d : level1) {
    if (holds(d)) return d.string();
    for (const auto& e : fs::directory_iterator(d, ec))
      if (searched(e)) level2.push_back(e.path());
  }
  std::sort(level2.begin(), level2.end());
  for (const auto& d : level2)
    if (holds(d)) return d.string();
  return "";
}

// The archives lying directly in `dir` (an LMS's folder per student holds the one they uploaded).
std::vector<fs::path> archives_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && !e.is_symlink() && !starts_with(e.path().filename().string(), ".") &&
        sniff_archive(e.path().string()) != ArchiveFormat::none)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
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
  return safe_name(strip_archive_extension(name));
}

bool is_one_submission(const std::string& dir, const Project& project) {
  std::error_code ec;
  const fs::path p(dir);
  if (fs::exists(p / ".git", ec) || (fs::exists(p / "HEAD", ec) && fs::is_directory(p / "objects", ec))) return true;
  bool bare = false;
  if (find_submission_root(p, project, &bare) == p.string()) return true;
  // One folder down may be a wrapper (carol/lab1/starter_code/...) or a class (alice/..., bob/...):
  // a class when more than one of its folders holds a submission.
  int holding = 0;
  for (const auto& e : fs::directory_iterator(p, ec))
    if (searched(e) && !find_submission_root(e.path(), project, &bare).empty()) ++holding;
  return holding == 1;
}

namespace {

// What open_submission() works on while it finds the submission's root.
struct Opening {
  Submission& s;
  const fs::path& path;      // the submission as given, made absolute
  const fs::path& unpacked;  // where a clone or an archive is unpacked
  const std::string& scratch;
  const Project& project;
  bool bare = false;  // the root holds the labs' NN-slug/ folders, not starter_code/
  fs::path archive;   // the archive to unpack next, if any
};

// A folder's root (or the one archive in it), or a repository cloned; false when s.failure says why not.
bool find_root(Opening& o) {
  Submission& s = o.s;
  const fs::path& path = o.path;
  const bool is_git = fs::is_directory(path) && (fs::exists(path / ".git") || (fs::exists(path / "HEAD") && fs::is_directory(path / "objects")));
  if (fs::is_directory(path) && !is_git) {
    s.kind = "folder";
    s.root = find_submission_root(path, o.project, &o.bare);
    // An LMS's folder per student holds the archive they uploaded: that archive is the submission.
    if (s.root.empty()) {
      const auto found = archives_in(path);
      if (found.size() > 1) {
        s.failure = "the folder holds " + std::to_string(found.size()) + " archives (" + found[0].filename().string() +
                    ", " + found[1].filename().string() + (found.size() > 2 ? ", ..." : "") +
                    ") and no starter_code/ folder: which one is the submission? Keep one";
        return false;
      }
      if (found.size() == 1) o.archive = found[0];
    }
  } else if (is_git) {
    // A repository is cloned by git, with a time and file-size limit.
    s.kind = "git";
    RunSpec clone;
    clone.argv = {"git", "-c", "safe.directory=*", "clone", "--quiet", "--no-hardlinks", path.string(), o.unpacked.string()};
    clone.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + o.scratch, "LANG=C", "GIT_TERMINAL_PROMPT=0",
                 "GIT_CONFIG_NOSYSTEM=1"};
    clone.limits.timeout_s = 120;
    clone.limits.file_bytes = kMaxArchiveBytes;
    const RunResult r = run_sandboxed(clone);
    if (!r.ok()) {
      s.failure = unpack_failure("cannot clone the git repository", r);
      return false;
    }
    s.root = find_submission_root(o.unpacked, o.project, &o.bare);
  } else {
    o.archive = path;
  }
  return true;
}

// Unpacks o.archive (and the one archive it may hold) and finds the root in it; false when s.failure says why not.
bool unpack_root(Opening& o) {
  Submission& s = o.s;
  fs::path& archive = o.archive;
  // A zip or a tarball, by its content: checked, then unpacked with bounds (archive.hpp). An
  // archive that holds nothing but one archive (a zip of the zip) is opened once more, no deeper.
  for (int depth = 0; !archive.empty(); ++depth) {
    const ArchiveFormat format = sniff_archive(archive.string());
    if (depth == 0) s.kind = format == ArchiveFormat::zip ? "zip" : format == ArchiveFormat::tarball ? "tarball" : "file";
    const fs::path into = depth == 0 ? o.unpacked : fs::path(o.scratch) / ("unpacked-" + std::to_string(depth));
    const std::string why = unpack_archive(archive.string(), into.string());
    if (!why.empty()) {
      s.failure = "cannot unpack " + archive.filename().string() + ": " + why;
      return false;
    }
    s.root = find_submission_root(into, o.project, &o.bare);
    const auto inner = s.root.empty() && depth == 0 ? archives_in(into) : std::vector<fs::path>{};
    archive = inner.size() == 1 ? inner[0] : fs::path();
  }
  return true;
}

// Sorts every file under s.root: allowed by a lab's spec (into s.files), or ignored (and why, in s.notes).
void sort_files(Submission& s, const Project& project, bool bare) {
  std::error_code ec;
  std::map<std::string, std::pair<std::string, std::string>> allowed;  // rel -> (lab, file)
  for (const auto& lab : project.labs)
    for (const auto& f : lab.spec.files) allowed[lab.starter + "/" + f] = {lab.spec.lab, f};
  std::vector<std::string> modified, unchanged, other, refused;
  std::set<std::string> slugs;
  for (const auto& lab : project.labs) slugs.insert(fs::path(lab.starter).filename().string());
  const auto files = list_tree(s.root, [](const std::string& rel, bool) { return rel != ".git" && rel != "__MACOSX"; });
  for (const auto& listed : files) {
    const fs::path p = fs::path(s.root) / listed;
    const auto st = fs::symlink_status(p, ec);
    // A lab folder without its starter_code/ parent stands where starter_code/NN-slug/ would.
    const bool in_lab = slugs.count(listed.substr(0, listed.find('/'))) > 0;
    const std::string rel = bare && in_lab ? "starter_code/" + listed : listed;
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
}

}  // namespace

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

  Opening o{s, path, unpacked, scratch, project, false, {}};
  if (!find_root(o) || !unpack_root(o)) return s;
  if (s.root.empty()) {
    const std::string example = project.labs.empty() ? "NN-slug" : fs::path(project.labs[0].starter).filename().string();
    s.failure = "no starter_code/ folder and no lab folder (" + example +
                "/, ...) in the submission: it must hold starter_code/NN-slug/<files> or NN-slug/<files>";
    return s;
  }

  // Sort every file: allowed by a lab's spec, or ignored (and why).
  sort_files(s, project, o.bare);
  return s;
}

}  // namespace convlab::cli
