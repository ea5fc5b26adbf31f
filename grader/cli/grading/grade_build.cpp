// convlab grade, building: each submission's files in a build slot (a pristine tree), compiled,
// its reads and symbols checked (the fence), the graders copied out. See grade_internal.hpp.
#include "grading/grade_internal.hpp"

#include "fence.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace grade_internal {

namespace {

std::string strip_paths(std::string text, const std::string& prefix) {
  for (std::size_t p; !prefix.empty() && (p = text.find(prefix)) != std::string::npos;) text.erase(p, prefix.size());
  return text;
}

// The compiler's complaints, without the noise of the build tool.
std::string compiler_errors(const std::string& output, const std::string& src_prefix) {
  std::istringstream in(strip_paths(output, src_prefix));
  std::string line, out;
  int kept = 0;
  while (std::getline(in, line) && kept < 60) {
    if (starts_with(line, "[") || starts_with(line, "ninja: ") || starts_with(line, "FAILED: ") ||
        line.find("/nvcc ") != std::string::npos || line.find("/c++ ") != std::string::npos)
      continue;
    out += line + "\n";
    ++kept;
  }
  return out;
}

}  // namespace

// ---- building ------------------------------------------------------------------

// How every grading build is configured (after -S and -B).
std::vector<std::string> Grader::configure_options() const {
  std::vector<std::string> o = {"--preset", opt_.preset, "-DCONVLAB_IMPL=student", "-DCONVLAB_SELFTEST=OFF",
                                "-DCONVLAB_BENCHMARKS=OFF"};
  if (!opt_.cuda_arch.empty()) o.push_back("-DCMAKE_CUDA_ARCHITECTURES=" + opt_.cuda_arch);
  // The student's preset picks its backend by what the machine has; grading with it means the
  // GPU graders, always (grade with --preset cpu for the CPU backend's correctness graders).
  if (opt_.preset == "default") o.push_back("-DCONVLAB_BACKEND=cuda");
  // A compiler launcher from the grader's environment (CMAKE_CXX_COMPILER_LAUNCHER=ccache) would
  // serve objects and dependency lists compiled from other trees: the check of the files a
  // compilation read would then name another submission's, or the course's, files.
  for (const char* lang : {"C", "CXX", "CUDA"}) o.push_back(std::string("-DCMAKE_") + lang + "_COMPILER_LAUNCHER=");
  for (const auto& a : opt_.cmake_args) o.push_back(a);
  return o;
}

// A failing correctness grader is built again with less device optimisation in trees of its own,
// configured as the slots are and vetted as build_lab() vets a build (recheck.hpp, issue 18).
GradeRechecker::Settings Grader::recheck_settings() {
  GradeRechecker::Settings r;
  r.root = project_.root;
  r.files = slot_files_;
  r.configure = configure_options();
  r.work = work_ + "/recheck";
  r.policy = opt_.compiler_bug_policy;
  r.cpu = opt_.recheck_cpu;
  r.compile_timeout_cap_s = opt_.compile_timeout;
  r.vet = [this](const Lab& lab, const std::string& build, const std::string& src,
                 const std::vector<std::string>& sources, const std::string& runner) {
    std::string bad = check_dependencies(build, sources, src);
    std::error_code ec;
    for (fs::recursive_directory_iterator it(build + "/labs", ec), end; bad.empty() && !ec && it != end; it.increment(ec))
      if (it->path().filename() == "lib" + lab.spec.lab + "_kernels.a") bad = check_symbols(lab, build, it->path().string(), false);
    return bad.empty() ? check_symbols(lab, build, runner, true) : bad;
  };
  r.log = [this](const std::string& text) { log_->raw(text); };
  return r;
}

void Grader::setup_slot(int slot) {
  const double t0 = now_s();
  slots_[slot] = lease_slot(slots_base_);
  const std::string base = slots_[slot].dir();
  const std::string src = base + "/src", build = base + "/build";
  const auto changed = sync_tree(project_.root, src, slot_files_);
  std::vector<std::string> configure = {"cmake", "-S", src, "-B", build};
  for (const auto& a : configure_options()) configure.push_back(a);
  RunResult r = run_tool(configure, src, 900);
  log_->raw("---- slot " + std::to_string(slot) + ": configure\n" + r.output + "\n");
  if (!r.ok()) throw Error("cannot configure the grading tree (preset '" + opt_.preset + "'): " + r.describe() + "\n" +
                           head_lines(r.output.substr(r.output.size() > 4000 ? r.output.size() - 4000 : 0), 40));
  std::vector<std::string> targets = {"cmake", "--build", build, "--target"};
  for (const Lab* l : labs_) targets.push_back(l->spec.lab + "_graders");
  r = run_tool(targets, src, 3600);
  log_->raw("---- slot " + std::to_string(slot) + ": build of the harness\n" + r.output + "\n");
  if (!r.ok()) throw Error("cannot build the graders of the untouched tree: " + r.describe() + "\n" +
                           head_lines(r.output.substr(r.output.size() > 4000 ? r.output.size() - 4000 : 0), 40));
  log_->line("build slot " + std::to_string(slot) + " ready in " + fmt_seconds(now_s() - t0) + " (" +
             std::to_string(changed.size()) + " files copied" +
             (slots_[slot].reused() ? "; an earlier run's build, brought up to date" : "") + "): " + base);
}

std::string Grader::check_dependencies(const std::string& build, const std::vector<std::string>& sources,
                                       const std::string& slot_src) {
  // The compiler's own record of every file it read (ninja -t deps): a submission
  // that #includes the instructor's tree (reference/ solutions) or another
  // student's files is caught here, whatever the source looks like.
  const RunResult r = run_tool({"ninja", "-C", build, "-t", "deps"}, "", 120);
  if (!r.ok()) return "";
  std::istringstream in(r.output);
  std::string line, bad;
  std::vector<std::string> block;
  const auto judge = [&] {
    const bool ours = std::any_of(block.begin(), block.end(), [&](const std::string& d) {
      return std::find(sources.begin(), sources.end(), d) != sources.end();
    });
    if (!ours) return;
    for (const auto& d : block) {
      if (starts_with(d, slot_src + "/") || starts_with(d, build + "/")) continue;
      const bool inside_root = starts_with(d, project_.root + "/");
      // Another slot's tree is another submission's (of this run or of one sharing --slots-dir).
      const bool inside_work =
          starts_with(d, work_ + "/") || starts_with(d, opt_.out + "/") || starts_with(d, slots_base_ + "/");
      if (inside_root || inside_work || d.find("/reference/") != std::string::npos)
        if (bad.find(d) == std::string::npos) bad += (bad.empty() ? "" : ", ") + d;
    }
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {
      judge();
      block.clear();
    } else if (!trim(line).empty()) {
      block.push_back(trim(line));
    }
  }
  judge();
  return bad;
}

std::string Grader::check_symbols(const Lab& lab, const std::string& build, const std::string& file, bool link_stage) {
  if (!link_stage) {
    // The submission's objects: the symbol fence (grader/fence), the same check the
    // build runs, with the runner's own objects and libraries from its link line
    // (the kernels may not define a name they define). Its lines are the feedback.
    try {
      std::string backend = "cuda";
      std::istringstream cache(read_file(build + "/CMakeCache.txt"));
      for (std::string line; std::getline(cache, line);)
        if (starts_with(line, "CONVLAB_BACKEND:")) backend = trim(line.substr(line.find('=') + 1));
      std::vector<std::string> harness;
      const RunResult c = run_tool({"ninja", "-C", build, "-t", "commands", lab.spec.lab + "_runner"}, "", 120);
      if (c.ok()) {
        std::istringstream lines(c.output);
        std::string link;
        for (std::string line; std::getline(lines, line);)
          if (!trim(line).empty()) link = line;
        std::istringstream words(link);
        for (std::string w; words >> w;) {
          const bool object = w.size() > 2 && (w.compare(w.size() - 2, 2, ".o") == 0 || w.compare(w.size() - 2, 2, ".a") == 0);
          if (object && w[0] != '/' && w[0] != '-' && fs::path(w).filename() != fs::path(file).filename())
            harness.push_back(build + "/" + w);
        }
      }
      const auto findings = fence::check(fence::load_policy(project_.root + "/" + lab.dir + "/grading.json"),
                                         fence::parse_backend(backend), {file}, harness);
      std::vector<std::string> lines;
      for (const auto& f : findings) lines.push_back(f.line());
      return fence_refusal(lines);
    } catch (const std::exception& e) {
      return std::string("- cannot check the submission's compiled objects: ") + e.what();
    }
  }
  std::vector<std::string> found;
  // A forbidden substring that the spec allows one file ("allowed_symbols") may reach the
  // graders: the fence checked that only that file's object uses it, so its library may be linked.
  const auto allowed = [&](const std::string&, const std::string& f) {
    for (const auto& [allowed_file, subs] : lab.spec.allowed_symbols)
      if (std::find(subs.begin(), subs.end(), f) != subs.end()) return true;
    return false;
  };
  const auto scan = [&](const std::string& text, bool symbols) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      std::string name = line;
      if (symbols) {  // "conv_basic.cu.o: U cublasCreate_v2" or "lib.a:obj.o:0000 T name"
        const auto pos = line.find(' ', line.rfind(": ") == std::string::npos ? 0 : line.rfind(": ") + 2);
        name = trim(line.substr(pos == std::string::npos ? 0 : pos));
        if (name.size() > 2 && name[1] == ' ') name = name.substr(2);
      }
      for (const auto& f : lab.spec.forbidden_symbols)
        if (contains_icase(name, f) && !allowed(line, f)) found.push_back(trim(name) + " (forbidden: " + f + ")");
    }
  };
  // The linked graders: their imports, NEEDED libraries and link line.
  const RunResult u = run_tool({"nm", "-C", "-u", file}, "", 120);
  if (u.ok()) scan(u.output, true);
  const RunResult d = run_tool({"readelf", "-d", file}, "", 120);
  std::istringstream in(d.output);
  std::string line;
  while (std::getline(in, line))
    if (line.find("(NEEDED)") != std::string::npos) scan(line, false);
  const RunResult c = run_tool({"ninja", "-C", build, "-t", "commands", lab.spec.lab + "_runner"}, "", 120);
  if (c.ok()) {
    const std::string link = c.output.substr(c.output.rfind('\n', c.output.size() > 1 ? c.output.size() - 2 : 0) + 1);
    for (const auto& f : lab.spec.forbidden_symbols)
      if ((contains_icase(link, "-l" + f) || contains_icase(link, "/lib" + f)) && !allowed(link, f))
        found.push_back("the link line names lib" + f);
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  std::string out;
  for (std::size_t i = 0; i < found.size() && i < 6; ++i) out += (i ? "; " : "") + found[i];
  return out;
}

// Writes the lab's files into the slot: the submitted ones, the starter's for the rest (noted in b); returns their paths.
std::vector<std::string> Grader::overlay_files(const Lab& lab, const std::map<std::string, std::string>& files,
                                               const std::string& src, BuiltLab& b) const {
  // Overlay: only the files the spec allows; the starter's version for those not submitted.
  std::vector<std::string> sources;
  for (const auto& f : lab.spec.files) {
    const std::string dst = src + "/" + lab.starter + "/" + f;
    const auto sub = files.find(f);
    const std::string from = sub != files.end() ? sub->second : project_.root + "/" + lab.starter + "/" + f;
    if (sub == files.end()) b.notes.push_back(f + " was not submitted: the starter's version was used");
    const std::string content = read_file(from);
    std::error_code ec;
    if (!fs::exists(dst, ec) || read_file(dst) != content) write_file_atomic(dst, content);
    sources.push_back(dst);
  }
  return sources;
}

// Checks the runner for forbidden libraries, then copies the judge, the runner and its facts out of the slot.
void Grader::copy_out(const Job& job, const Lab& lab, const std::string& build, BuiltLab& b) {
  // The student's code is linked into the runner only: that is the binary to check.
  const std::string dir = build + "/" + lab.dir + "/";
  const std::string bad = check_symbols(lab, build, dir + lab.spec.lab + "_runner", true);
  if (!bad.empty()) b.failure = "links a forbidden library: " + bad;
  make_dirs(job.dir + "/" + lab.spec.lab);
  b.exe = job.dir + "/" + lab.spec.lab + "/" + lab.spec.lab + "_graders";
  b.runner = job.dir + "/" + lab.spec.lab + "/" + lab.spec.lab + "_runner";
  // The judge, its runner, and the runner's compiled-code facts (technique graders; GPU builds).
  for (const auto& [from, to] : {std::pair{dir + lab.spec.lab + "_graders", b.exe},
                                 std::pair{dir + lab.spec.lab + "_runner", b.runner},
                                 std::pair{dir + lab.spec.lab + "_runner.facts.json", b.runner + ".facts.json"}}) {
    std::error_code ec;
    if (!fs::exists(from, ec) && starts_with(to, b.runner + ".facts")) continue;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error("cannot copy " + from + ": " + ec.message());
    fs::permissions(to, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec, ec);
  }
}

BuiltLab Grader::build_lab(const Job& job, const Lab& lab, int slot) {
  BuiltLab b;
  b.lab = &lab;
  b.spec = specs_.at(lab.spec.lab);
  const std::string base = slots_[slot].dir();
  const std::string src = base + "/src", build = base + "/build";
  b.slot_src = src;
  const auto it = job.sub.files.find(lab.spec.lab);
  b.submitted = it != job.sub.files.end() && !it->second.empty();
  if (!b.submitted) {
    b.failure = "the submission holds no file of this lab (starter_code/" + lab.spec.slug + "/)";
    return b;
  }
  const double t0 = now_s();
  const std::vector<std::string> sources = overlay_files(lab, it->second, src, b);
  const double limit = opt_.compile_timeout > 0 ? std::min<double>(opt_.compile_timeout, lab.spec.compile_timeout_s)
                                                : lab.spec.compile_timeout_s;
  const auto compile = [&](const std::string& target) {
    RunSpec s;
    s.argv = {"cmake", "--build", build, "--target", target};
    s.cwd = src;
    s.limits.timeout_s = limit;
    s.limits.file_bytes = 1ll << 30;
    s.limits.open_files = 0;
    s.keep_head = 256 * 1024;
    return run_sandboxed(s);
  };
  RunResult r = compile(lab.spec.lab + "_kernels");
  log_->raw("---- " + job.sub.student + " " + lab.spec.lab + ": compile\n" + r.output + "\n");
  if (!r.ok()) {
    b.failure = r.timed_out ? "the compilation ran past its time limit of " + fmt_points(limit) + " s"
                            : "did not compile";
    b.details = compiler_errors(r.output, src + "/");
  }
  if (b.failure.empty()) {
    const std::string bad = check_dependencies(build, sources, src);
    if (!bad.empty())
      b.failure = "the code reads files outside the submission while compiling (" + strip_paths(bad, "") +
                  "): reading the course's solutions or another submission is not allowed";
  }
  if (b.failure.empty()) {
    std::string lib;
    for (const auto& e : fs::recursive_directory_iterator(build + "/labs"))
      if (e.path().filename() == "lib" + lab.spec.lab + "_kernels.a") lib = e.path().string();
    const std::string bad = lib.empty() ? "the kernels library was not built" : check_symbols(lab, build, lib, false);
    if (!bad.empty()) b.failure = "refused by the symbol fence:\n" + bad;
  }
  if (b.failure.empty()) {
    r = compile(lab.spec.lab + "_graders");
    log_->raw("---- " + job.sub.student + " " + lab.spec.lab + ": link\n" + r.output + "\n");
    if (!r.ok()) {
      b.failure = r.timed_out ? "the build ran past its time limit" : "did not link with the graders";
      b.details = compiler_errors(r.output, src + "/");
    }
  }
  if (b.failure.empty()) {
    copy_out(job, lab, build, b);
  }
  b.build_s = now_s() - t0;
  return b;
}

void Grader::build_job(Job& job, int slot) {
  if (!slots_[slot].held()) setup_slot(slot);
  // Every submission starts from the pristine tree: anything changed is put back.
  const std::string src = slots_[slot].dir() + "/src";
  const auto restored = sync_tree(project_.root, src, slot_files_);
  for (const auto& f : restored)
    if (!starts_with(f, "starter_code/")) log_->line("slot " + std::to_string(slot) + ": restored " + f, false);
  for (const Lab* l : labs_) job.labs.push_back(build_lab(job, *l, slot));
  // Without --labs, a submission is graded for the labs it holds files of, and reported out of
  // their points (a lab 01 submission: "77.5 / 100", not out of every lab's points).
  const bool any = std::any_of(job.labs.begin(), job.labs.end(), [](const BuiltLab& b) { return b.submitted; });
  if (opt_.labs.empty() && any) {
    std::string absent;
    for (const auto& b : job.labs)
      if (!b.submitted) absent += (absent.empty() ? "" : ", ") + b.spec.lab;
    job.labs.erase(std::remove_if(job.labs.begin(), job.labs.end(), [](const BuiltLab& b) { return !b.submitted; }),
                   job.labs.end());
    if (!absent.empty())
      job.sub.notes.push_back("graded for the labs it holds files of; no files of " + absent +
                              " (grade with --labs to count those too)");
  }
}

void Grader::build_worker(int slot) {
  while (auto job = build_q_.pop()) {
    if (g_interrupted || fatal_) break;
    try {
      build_job(*job, slot);
      run_q_.push(std::move(*job));
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> l(mu_);
      if (!fatal_) fatal_message_ = e.what();
      fatal_ = true;
      cancel_all_runs();
      break;
    }
  }
}

}  // namespace grade_internal

}  // namespace convlab::cli
