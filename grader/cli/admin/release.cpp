// convlab release. See release.hpp.
#include "admin/release.hpp"

#include "common/progress.hpp"
#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

const char* const kOpen = "<!-- instructor-only -->";
const char* const kClose = "<!-- /instructor-only -->";

// The GPUs a student copy serves: sm_80 code runs on every 8.x GPU, sm_90 code on 9.0, and the
// compute_90 PTX is compiled by the driver for newer ones (cmake/ConvlabPrebuilt.cmake checks a
// student's build against it).
const char* const kPrebuiltCudaArchitectures = "80-real;90-real;90-virtual";

bool is_hidden(const ojson& preset) { return preset.value("hidden", false); }

std::vector<std::string> inherits_of(const ojson& preset) {
  if (!preset.contains("inherits")) return {};
  const ojson& in = preset["inherits"];
  if (in.is_string()) return {in.get<std::string>()};
  std::vector<std::string> out;
  for (const auto& b : in) out.push_back(b.get<std::string>());
  return out;
}

// Keeps the presets of `list` that `wanted` accepts, and the hidden ones those inherit from.
std::set<std::string> keep_presets(ojson& list, const std::string& kind,
                                   const std::function<bool(const ojson&)>& wanted) {
  std::map<std::string, const ojson*> by_name;
  for (const auto& p : list) by_name[p.value("name", std::string())] = &p;
  std::set<std::string> kept;
  std::vector<std::string> todo;
  for (const auto& p : list)
    if (!is_hidden(p) && wanted(p)) todo.push_back(p.value("name", std::string()));
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!kept.insert(name).second) continue;
    for (const auto& base : inherits_of(*by_name.at(name))) {
      if (!by_name.count(base)) throw Error("release: CMakePresets.json: " + kind + " preset '" + name + "' inherits from '" + base + "', which does not exist");
      if (!is_hidden(*by_name.at(base)))
        throw Error("release: CMakePresets.json: the student's " + kind + " preset '" + name + "' inherits from '" + base +
                    "', which is not a student's preset; make the shared part a hidden preset");
      todo.push_back(base);
    }
  }
  ojson out = ojson::array();
  for (const auto& p : list)
    if (kept.count(p.value("name", std::string()))) out.push_back(p);
  list = std::move(out);
  return kept;
}

std::string sha256_of(const std::string& path) {
  const RunResult r = run_tool({"cmake", "-E", "sha256sum", path}, "", 120);
  const std::string hash = trim(r.output).substr(0, 64);
  if (!r.ok() || hash.size() != 64) throw Error("release: cannot compute the SHA-256 of " + path + ": " + r.describe());
  return hash;
}

// The files of tracked content that differ from the last commit (`git status` lines), or "" when
// none do; "?" when this is not a git tree.
std::string uncommitted_edits(const std::string& root) {
  if (!fs::exists(root + "/.git") || which("git").empty()) return "?";
  const RunResult r =
      run_tool({"git", "-c", "safe.directory=*", "-C", root, "status", "--porcelain", "--untracked-files=no"}, "", 120);
  if (!r.ok()) throw Error("release: cannot ask git whether the tree has uncommitted edits: " + r.describe() + "\n" + r.output);
  return r.output;
}

// Compiles the grader-owned code that must reach students compiled only, for one backend, and
// copies it under `prebuilt`/<backend>/. Returns the manifest's entry for the backend.
ojson build_prebuilt(const Project& p, const std::string& build_root, const std::string& backend,
                     const std::string& prebuilt) {
  const std::string build = build_root + "/" + backend;
  // A student's build, as the 'default' and 'cpu' presets configure it: the same flags reach the
  // prebuilt code as the student's own.
  std::vector<std::string> configure = {"cmake", "-S", p.root, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                                        "-DCONVLAB_BACKEND=" + backend, "-DCONVLAB_IMPL=student",
                                        "-DCONVLAB_INSTRUCTOR_TESTS=OFF", "-DCONVLAB_BENCHMARKS=OFF",
                                        "-DCONVLAB_DOCS_RENDER_TEST=OFF"};
  if (backend == "cuda") {
    configure.push_back(std::string("-DCMAKE_CUDA_ARCHITECTURES=") + kPrebuiltCudaArchitectures);
    const char* cudacxx = std::getenv("CUDACXX");
    if ((!cudacxx || !*cudacxx) && which("nvcc").empty()) {
      if (!fs::exists("/usr/local/cuda/bin/nvcc"))
        throw Error("release: the student copy needs the baselines compiled for sm_80 and sm_90, and no CUDA compiler "
                    "was found (nvcc on PATH, $CUDACXX, /usr/local/cuda/bin/nvcc): install the CUDA toolkit or set CUDACXX");
      configure.push_back("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc");
    }
  }
  const auto tool = [&](std::vector<std::string> argv) {
    RunSpec s;
    s.argv = std::move(argv);
    s.cwd = p.root;
    s.limits.timeout_s = 1800;
    s.limits.open_files = 0;
    return s;
  };
  RunResult r = run_with_progress("configuring the " + backend + " build of the prebuilt libraries in " + build, tool(configure));
  if (!r.ok()) throw Error("release: cannot configure the " + backend + " build of the prebuilt libraries: " + r.describe() + "\n" + r.output);
  // Written by grader/CMakeLists.txt: which libraries a student copy holds compiled, and for what.
  const std::string what_path = build + "/convlab-prebuilt.json";
  if (!fs::exists(what_path))
    throw Error("release: " + what_path + " is missing after configuring: this tree does not build its baselines from source "
                "(is it a student copy?)");
  const ojson what = ojson::parse(read_file(what_path));
  std::vector<std::string> targets = {"cmake", "--build", build, "--target"};
  for (const auto& [name, file] : what.at("libraries").items()) targets.push_back(name);
  r = run_with_progress("compiling the prebuilt libraries for the " + backend + " backend", tool(targets));
  if (!r.ok()) throw Error("release: cannot compile the prebuilt libraries for the " + backend + " backend: " + r.describe() + "\n" + r.output);

  ojson entry = what;
  entry.erase("libraries");
  ojson libs = ojson::object();
  make_dirs(prebuilt + "/" + backend);
  for (const auto& [name, file] : what.at("libraries").items()) {
    const std::string from = file.get<std::string>();
    const std::string rel = backend + "/" + fs::path(from).filename().string();
    fs::copy_file(from, prebuilt + "/" + rel, fs::copy_options::overwrite_existing);
    libs[name] = {{"file", rel}, {"sha256", sha256_of(prebuilt + "/" + rel)}};
  }
  entry["libraries"] = libs;
  return entry;
}

bool is_doc_source(const std::string& f) {
  for (const char* ext : {".md", ".dox", ".hpp"})
    if (f.size() > std::strlen(ext) && f.compare(f.size() - std::strlen(ext), std::string::npos, ext) == 0) return true;
  return false;
}

}  // namespace

std::set<std::string> doc_anchors(const std::string& text) {
  static const std::regex anchor(R"(\{#([A-Za-z0-9_]+)\}|[\\@](?:page|section|subsection|subsubsection|anchor)\s+([A-Za-z0-9_]+))");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), anchor); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
  return out;
}

std::string unlink_refs(const std::string& text, const std::set<std::string>& gone, const std::string& file) {
  static const std::regex ref(R"re([\\@](?:ref|subpage)\s+([A-Za-z0-9_]+)(\s+"([^"]*)")?)re");
  std::string out;
  auto last = text.cbegin();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    if (!gone.count(m[1].str())) continue;
    if (!m[2].matched) {
      const long line = 1 + std::count(text.cbegin(), m[0].first, '\n');
      throw Error("release: " + file + ":" + std::to_string(line) + ": \\ref " + m[1].str() +
                  " points into instructor material that the student copy leaves out, and has no link text to keep "
                  "in its place: give it one (\\ref " + m[1].str() + " \"text\") or mark it instructor-only");
    }
    out.append(last, m[0].first);
    out += m[3].str();
    last = m[0].second;
  }
  out.append(last, text.cend());
  return out;
}

namespace {

// labs/NN-slug/instructor/...: a lab's instructor programs, such as lab 05's measurement of
// cp.async and clusters for its handout, whose kernels answer the lab.
bool is_lab_instructor_file(const std::string& rel) {
  const auto parts = split(rel, '/');
  return parts.size() >= 4 && parts[0] == "labs" && parts[2] == "instructor";
}

bool is_lab_baseline_source(const std::string& rel) {
  // labs/NN-slug/baseline_labNN.cu: a lab's own grader-owned baseline (lab 06's naive direct kernel).
  const auto parts = split(rel, '/');
  if (parts.size() != 3 || parts[0] != "labs") return false;
  const std::string& file = parts[2];
  return starts_with(file, "baseline_") && file.size() > 3 && file.compare(file.size() - 3, 3, ".cu") == 0;
}

}  // namespace

bool in_student_copy(const std::string& rel) {
  // Answers: the student copy holds them compiled (grader/prebuilt/).
  for (const char* answer : {"grader/baselines/", "grader/device/src/cudnn_conv.cpp"})
    if (starts_with(rel, answer)) return false;
  if (is_lab_baseline_source(rel) || is_lab_instructor_file(rel)) return false;
  // Instructor material: CI, the instructor pages (their links from the shared pages sit in
  // instructor-only regions).
  // The maintainers' pages (the docs, the map of the code) and the test of .ci/run are not a student's either.
  for (const char* instructor : {".ci/", "docs/instructor.md", "docs/instructors.md", "docs/quickstart.md",
                                 "docs/maintainers.md", "docs/architecture.md", "cmake/tests/ci_run_check.sh"})
    if (starts_with(rel, instructor)) return false;
  // A tree released from holds no prebuilt libraries of its own; stale ones would be shipped unchecked.
  return !starts_with(rel, "grader/prebuilt/");
}

std::string strip_instructor_only(const std::string& text, const std::string& file) {
  std::ostringstream out;
  std::istringstream in(text);
  std::string line;
  int n = 0, opened_at = 0;
  while (std::getline(in, line)) {
    ++n;
    const bool open = line.find(kOpen) != std::string::npos, close = line.find(kClose) != std::string::npos;
    if (open && opened_at)
      throw Error("release: " + file + ":" + std::to_string(n) + ": an instructor-only region opens inside the one opened at line " +
                  std::to_string(opened_at) + " (close it first with " + kClose + ")");
    if (open) {
      opened_at = n;
    } else if (close) {
      if (!opened_at)
        throw Error("release: " + file + ":" + std::to_string(n) + ": " + kClose + " without an " + kOpen + " before it");
      opened_at = 0;
    } else if (!opened_at) {
      out << line << (in.eof() ? "" : "\n");
    }
  }
  if (opened_at)
    throw Error("release: " + file + ":" + std::to_string(opened_at) + ": the instructor-only region opened here is never closed (" +
                kClose + ")");
  return out.str();
}

std::string student_presets(const std::string& json_text) {
  ojson j;
  try {
    j = ojson::parse(json_text);
  } catch (const std::exception& e) {
    throw Error(std::string("release: CMakePresets.json is not valid JSON: ") + e.what());
  }
  if (!j.contains("configurePresets")) throw Error("release: CMakePresets.json has no configurePresets");
  const std::set<std::string> configure = keep_presets(j["configurePresets"], "configure", [](const ojson& p) {
    return p.contains("cacheVariables") && p["cacheVariables"].value("CONVLAB_IMPL", std::string()) == "student";
  });
  if (configure.empty()) throw Error("release: CMakePresets.json has no student's configure preset (CONVLAB_IMPL student)");
  std::map<std::string, std::set<std::string>> kept = {{"configure", configure}};
  for (const auto& [kind, key] : {std::pair<std::string, std::string>{"build", "buildPresets"}, {"test", "testPresets"}}) {
    if (!j.contains(key)) continue;
    kept[kind] = keep_presets(j[key], kind, [&](const ojson& p) {
      return configure.count(p.value("configurePreset", std::string())) > 0;
    });
  }
  if (j.contains("workflowPresets")) {
    ojson out = ojson::array();
    for (const auto& w : j["workflowPresets"]) {
      bool all = true;
      for (const auto& step : w.value("steps", ojson::array()))
        all = all && kept[step.value("type", std::string())].count(step.value("name", std::string())) > 0;
      if (all) out.push_back(w);
    }
    j["workflowPresets"] = out;
  }
  return j.dump(2) + "\n";
}

namespace {

// Whether the tree's edits are committed: "" (all are), "?" (not a git tree: warned) or the edits,
// which only --allow-dirty packs (warned); refuses them otherwise.
std::string check_edits(const Project& p, const ReleaseOptions& o) {
  const std::string dirty = uncommitted_edits(p.root);
  if (dirty == "?") {
    std::cerr << "convlab: warning: " << p.root << " is not a git tree: every file is packed as it is on disk, "
              << "stray local files included\n";
  } else if (!dirty.empty()) {
    const std::string what = "the tree has uncommitted edits, which would be packed into the student copy:\n" +
                             head_lines(dirty, 20);
    if (!o.allow_dirty)
      throw Error("release: " + what + "Commit or stash them, or pass --allow-dirty to pack them as they are.");
    std::cerr << "convlab: warning: " << what << "(packed as they are: --allow-dirty)\n";
  }
  return dirty;
}

// The files of the student copy: the tree's sources (those git tracks, in a git tree) that belong
// in it; never one under reference/.
std::vector<std::string> student_files(const Project& p, bool git_tree) {
  std::vector<std::string> files = source_files(p.root, true);
  if (git_tree) {
    // Only what the course tracks: no stray local files.
    const RunResult r = run_tool({"git", "-c", "safe.directory=*", "-C", p.root, "ls-files", "-z"}, "", 120);
    if (!r.ok()) throw Error("release: git ls-files failed: " + r.describe() + "\n" + r.output);
    std::vector<std::string> tracked = split(r.output, '\0');
    std::sort(tracked.begin(), tracked.end());
    files.erase(std::remove_if(files.begin(), files.end(),
                               [&](const std::string& f) { return !std::binary_search(tracked.begin(), tracked.end(), f); }),
                files.end());
  }
  files.erase(std::remove_if(files.begin(), files.end(), [](const std::string& f) { return !in_student_copy(f); }),
              files.end());
  for (const auto& f : files)
    if (starts_with(f, "reference/")) throw Error("release: refusing to ship " + f);
  return files;
}

// The staged copy's presets for students, and its docs without their instructor-only regions.
// The docs' anchors that the student copy loses (its left-out pages, its instructor-only regions):
// a link to one from a page it keeps becomes its link text, so that its docs have no dead link.
void rewrite_for_students(const Project& p, const std::string& top, const std::vector<std::string>& files) {
  std::set<std::string> gone;
  for (const auto& f : source_files(p.root, true))
    if (!in_student_copy(f) && is_doc_source(f)) {
      const auto a = doc_anchors(read_file(p.root + "/" + f));
      gone.insert(a.begin(), a.end());
    }
  std::map<std::string, std::string> docs;
  for (const auto& f : files) {
    if (f == "CMakePresets.json") write_file_atomic(top + "/" + f, student_presets(read_file(top + "/" + f)));
    if (!is_doc_source(f)) continue;
    const std::string text = read_file(top + "/" + f);
    // The regions are marked in Markdown pages only (a header may quote the markers).
    docs[f] = f.compare(f.size() - 3, 3, ".md") == 0 ? strip_instructor_only(text, f) : text;
    for (const auto& a : doc_anchors(text)) gone.insert(a);
  }
  for (const auto& [f, kept] : docs)
    for (const auto& a : doc_anchors(kept)) gone.erase(a);
  for (const auto& [f, kept] : docs) {
    const std::string text = unlink_refs(kept, gone, f);
    if (text != read_file(top + "/" + f)) write_file_atomic(top + "/" + f, text);
  }
}

// The prebuilt baselines of both backends in the staged copy, with their manifest.
void write_prebuilt(const Project& p, const ReleaseOptions& o, const std::string& top) {
  const std::string build_root = o.build_dir.empty() ? p.root + "/build/release" : fs::absolute(o.build_dir).string();
  const std::string prebuilt = top + "/grader/prebuilt";
  ojson manifest = {{"convlab_prebuilt", 1},
                    {"what", "the speed graders' baselines (grader/baselines/, labs/*/baseline_*.cu) and the cuDNN anchor, "
                             "compiled: their sources are answers to labs 01, 05 and 06 (cmake/ConvlabPrebuilt.cmake "
                             "checks these sums)"},
                    {"created", utc_now()}};
  for (const char* backend : {"cuda", "cpu"}) manifest[backend] = build_prebuilt(p, build_root, backend, prebuilt);
  write_file_atomic(prebuilt + "/MANIFEST.json", manifest.dump(2) + "\n");
}

}  // namespace

int release_main(const Project& p, const ReleaseOptions& o) {
  if (o.out.empty()) throw Error("release: --out FILE is required");
  if (o.prefix.empty() || o.prefix.find('/') != std::string::npos || o.prefix[0] == '.')
    throw Error("release: --prefix must be a plain folder name");
  if (!p.has_reference())
    throw Error("release: " + p.root + " has no reference/ folder: it is a student copy itself; release from the course's tree");

  const std::string dirty = check_edits(p, o);
  const std::vector<std::string> files = student_files(p, dirty != "?");

  const std::string stage = fs::temp_directory_path().string() + "/convlab-release-" + std::to_string(::getpid());
  // Removed however release ends (a failed compile of the prebuilt libraries throws): no staged
  // copy of the tree is left in the temporary folder.
  const RemoveOnExit remove_stage{stage};
  std::error_code ec;
  fs::remove_all(stage, ec);
  const std::string top = stage + "/" + o.prefix;
  sync_tree(p.root, top, files);
  rewrite_for_students(p, top, files);
  write_prebuilt(p, o, top);

  const std::string abs_out = fs::absolute(o.out).string();
  if (fs::path(abs_out).has_parent_path()) make_dirs(fs::path(abs_out).parent_path().string());
  const RunResult r = run_tool({"tar", "-czf", abs_out, "--owner=0", "--group=0", "-C", stage, o.prefix}, "", 600);
  if (!r.ok()) {
    fs::remove(abs_out, ec);  // no half-written student copy
    throw Error("release: tar failed: " + r.describe() + "\n" + r.output);
  }
  std::cout << "wrote " << o.out << ": " << files.size() << " files under " << o.prefix
            << "/ and the prebuilt baselines (CUDA: sm_80, sm_90 and compute_90 PTX; the CPU backend) — no reference/, "
               "no baseline or cuDNN anchor sources, no instructor pages, presets or CI, no grading fixtures, no build outputs.\n"
            << "Students: tar xf " << fs::path(o.out).filename().string() << " && cd " << o.prefix
            << " && cmake --workflow --preset default\n";
  return 0;
}

}  // namespace convlab::cli
