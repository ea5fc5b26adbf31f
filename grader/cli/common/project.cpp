// The convlab tree and its labs. See project.hpp.
#include "common/project.hpp"

#include "common/util.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#ifndef CONVLAB_SOURCE_DIR
#define CONVLAB_SOURCE_DIR ""
#endif

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {
bool is_convlab_tree(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p / "labs", ec) && fs::exists(p / "CMakePresets.json", ec) &&
         fs::exists(p / "starter_code", ec);
}
}  // namespace

std::string find_root(const std::string& explicit_root) {
  std::error_code ec;
  if (!explicit_root.empty()) {
    if (!is_convlab_tree(explicit_root))
      throw Error("'" + explicit_root + "' is not a convlab tree (it needs labs/, starter_code/ and CMakePresets.json)");
    return fs::canonical(explicit_root, ec).string();
  }
  if (const char* env = std::getenv("CONVLAB_ROOT"); env && *env) {
    if (!is_convlab_tree(env)) throw Error("CONVLAB_ROOT='" + std::string(env) + "' is not a convlab tree");
    return fs::canonical(env, ec).string();
  }
  for (fs::path p = fs::current_path(ec); !p.empty(); p = p.parent_path()) {
    if (is_convlab_tree(p)) return fs::canonical(p, ec).string();
    if (p == p.root_path()) break;
  }
  if (*CONVLAB_SOURCE_DIR && is_convlab_tree(CONVLAB_SOURCE_DIR)) return fs::canonical(CONVLAB_SOURCE_DIR, ec).string();
  throw Error("no convlab tree here: run convlab inside one, or pass --root DIR");
}

Project load_project(const std::string& root) {
  Project p;
  p.root = root;
  std::vector<fs::path> specs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(root) / "labs", ec))
    if (e.is_directory() && fs::exists(e.path() / "grading.json")) specs.push_back(e.path() / "grading.json");
  if (ec) throw Error("cannot list " + root + "/labs: " + ec.message());
  std::sort(specs.begin(), specs.end());
  for (const auto& path : specs) {
    Lab lab;
    try {
      lab.spec = load_spec(path.string());
    } catch (const SpecError& e) {
      throw Error(e.what());
    }
    const std::string slug = path.parent_path().filename().string();
    if (lab.spec.slug != slug) throw Error(path.string() + ": slug '" + lab.spec.slug + "' differs from its folder " + slug);
    lab.dir = "labs/" + slug;
    lab.starter = "starter_code/" + slug;
    lab.reference = "reference/" + slug;
    p.labs.push_back(std::move(lab));
  }
  if (p.labs.empty()) throw Error(root + "/labs holds no lab (no labs/*/grading.json)");
  return p;
}

const Lab& Project::find(const std::string& name) const {
  for (const auto& l : labs) {
    const std::string num = l.spec.lab.substr(3);  // "01"
    if (name == l.spec.lab || name == l.spec.slug || name == num || name == std::to_string(std::stoi(num)) ||
        name == "labs/" + l.spec.slug)
      return l;
  }
  std::string known;
  for (const auto& l : labs) known += (known.empty() ? "" : ", ") + l.spec.lab + " (" + l.spec.slug + ")";
  throw Error("unknown lab '" + name + "'; the labs are: " + known);
}

bool Project::has_reference() const { return fs::is_directory(fs::path(root) / "reference"); }

bool in_source_tree(const std::string& rel, bool is_dir, bool student_copy) {
  const std::string top = rel.substr(0, rel.find('/'));
  // .slurm-debs: Slurm's packages carried to a GPU machine for grader/cli/tests/gpu-slurm-check.sh.
  if (top == "build" || top == "out" || top == "gpu-logs" || top == ".git" || top == ".vscode" || top == ".idea" ||
      top == "grade-out" || top == ".slurm-debs")
    return false;
  const std::string name = fs::path(rel).filename().string();
  if (!is_dir && (name.size() > 4 && name.substr(name.size() - 4) == ".swp")) return false;
  if (student_copy) {
    if (top == "reference") return false;
    if (rel == "grader/cli/tests" || starts_with(rel, "grader/cli/tests/")) return false;  // fixtures, grading tests
    if (rel == ".ci/gpu-check" || rel == "grader/cli/gpu-grade-check.sh" || rel == "grader/toolchain/gpu-compiler-check.sh")
      return false;  // instructor's GPU runs
  }
  return true;
}

std::vector<std::string> source_files(const std::string& root, bool student_copy) {
  return list_tree(root, [student_copy](const std::string& rel, bool is_dir) {
    return in_source_tree(rel, is_dir, student_copy);
  });
}

}  // namespace convlab::cli
