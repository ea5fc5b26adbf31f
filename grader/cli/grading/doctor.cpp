// convlab doctor: the known miscompile cases, on this machine's GPU and toolchain. See doctor.hpp.
#include "grading/doctor.hpp"

#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <dlfcn.h>
#include <unistd.h>

namespace convlab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The three builds of every case, in the order they are tried.
struct Level {
  const char* name;
  const char* flags;        // as people write them
  const char* suffix;       // of the CMake target (grader/toolchain/CMakeLists.txt)
  std::vector<std::string> argv;
};
const std::vector<Level>& levels() {
  static const std::vector<Level> l = {{"default", "", "", {}},
                                       {"O1", "-Xptxas -O1", "_O1", {"-Xptxas", "-O1"}},
                                       {"G", "-G", "_G", {"-G"}}};
  return l;
}

std::string find_nvcc(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* cxx = std::getenv("CUDACXX"); cxx && *cxx) return cxx;
  if (const std::string p = which("nvcc"); !p.empty()) return p;
  return fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "";
}

// "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0.88".
std::string nvcc_version(const std::string& nvcc) {
  const RunResult r = run_tool({nvcc, "--version"}, "", 60);
  const auto v = r.output.rfind(", V");
  if (!r.ok() || v == std::string::npos) return "";
  return trim(r.output.substr(v + 3, r.output.find('\n', v) - v - 3));
}

// The driver's own version (580.159.04) from nvidia-smi, when it is there.
std::string driver_release(const std::string& gpu) {
  if (which("nvidia-smi").empty()) return "";
  std::vector<std::string> argv = {"nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"};
  if (!gpu.empty() && gpu.find(',') == std::string::npos) argv.insert(argv.begin() + 1, {"-i", gpu});
  const RunResult r = run_tool(argv, "", 30);
  return r.ok() ? trim(r.output.substr(0, r.output.find('\n'))) : "";
}

// "90", "sm_90", "90-real", "90;80" -> "sm_90"; "" or "native" -> the GPU's own.
std::string arch_flag(const std::string& cuda_arch, const DoctorGpu& g) {
  std::string a = cuda_arch.substr(0, cuda_arch.find(';'));
  a = a.substr(0, a.find('-'));
  if (starts_with(a, "sm_")) a = a.substr(3);
  if (a.empty() || a == "native" || a == "all" || a == "all-major")
    a = std::to_string(g.cc_major) + std::to_string(g.cc_minor);
  return "sm_" + a;
}

std::string fmt_error(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", e);
  return buf;
}

std::string build_line(const CaseBuild& b) {
  const std::string what = b.level == "default" ? "as normally built" : b.flags;
  std::string s = what + ": ";
  if (b.status == "right") s += "right (" + std::to_string(b.total) + " outputs checked)";
  else if (b.status == "wrong")
    s += std::to_string(b.wrong) + " of " + std::to_string(b.total) + " outputs wrong (largest error " +
         fmt_error(b.max_error) + "; " + b.detail + ")";
  else s += b.status + ": " + b.detail;
  return s;
}

json build_json(const CaseBuild& b) {
  return {{"level", b.level}, {"flags", b.flags}, {"status", b.status}, {"wrong", b.wrong},
          {"total", b.total}, {"max_error", b.max_error}, {"detail", b.detail}};
}

}  // namespace

// The GPU, asked of the NVIDIA driver itself rather than of the CUDA runtime this command links: a
// convlab built for the CPU backend has a CPU "device", and the driver is all a check needs.
DoctorGpu probe_gpu() {
  DoctorGpu g;
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    g.reason = std::string("no NVIDIA driver: libcuda.so.1 cannot be loaded (") + (e ? e : "?") + ")";
    return g;
  }
  using Init = int (*)(unsigned);
  using IntOut = int (*)(int*);
  using Get = int (*)(int*, int);
  using Name = int (*)(char*, int, int);
  using Attr = int (*)(int*, int, int);
  const auto init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
  const auto version = reinterpret_cast<IntOut>(::dlsym(lib, "cuDriverGetVersion"));
  const auto count = reinterpret_cast<IntOut>(::dlsym(lib, "cuDeviceGetCount"));
  const auto get = reinterpret_cast<Get>(::dlsym(lib, "cuDeviceGet"));
  const auto name = reinterpret_cast<Name>(::dlsym(lib, "cuDeviceGetName"));
  const auto attr = reinterpret_cast<Attr>(::dlsym(lib, "cuDeviceGetAttribute"));
  if (!init || !version || !count || !get || !name || !attr) {
    g.reason = "the NVIDIA driver library (libcuda.so.1) lacks the functions a check needs";
    return g;
  }
  version(&g.driver_api);
  const int rc = init(0);
  int n = 0;
  if (rc != 0 || count(&n) != 0 || n == 0) {
    // 100 is CUDA_ERROR_NO_DEVICE: none installed, or CUDA_VISIBLE_DEVICES hides them all.
    g.reason = rc == 100 || (rc == 0 && n == 0) ? "no CUDA device visible (CUDA_VISIBLE_DEVICES may hide them)"
                                                 : "the NVIDIA driver does not start (cuInit error " + std::to_string(rc) + ")";
    return g;
  }
  int dev = 0;
  char buf[256] = {};
  if (get(&dev, 0) == 0 && name(buf, sizeof buf - 1, dev) == 0) g.name = buf;
  attr(&g.cc_major, 75, dev);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  attr(&g.cc_minor, 76, dev);  // ..._MINOR
  g.present = true;
  return g;
}

CaseBuild read_case_run(const std::string& level, const std::string& flags, int exit_code, const std::string& output) {
  CaseBuild b;
  b.level = level;
  b.flags = flags;
  // One line per shape: "convlab-case NAME n=255 r=4 block=128 wrong=253 total=255 max_error=1.7".
  std::istringstream in(output);
  std::string line;
  int shapes = 0;
  while (std::getline(in, line)) {
    if (!starts_with(line, "convlab-case ")) continue;
    std::istringstream words(line);
    std::string word, shape;
    long wrong = -1, total = -1;
    double max_error = 0;
    words >> word >> word;  // "convlab-case", the case's name
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      try {
        if (key == "wrong") wrong = std::stol(value);
        else if (key == "total") total = std::stol(value);
        else if (key == "max_error") max_error = value == "nan" ? NAN : std::stod(value);
        else shape += (shape.empty() ? "" : " ") + word;
      } catch (const std::exception&) {
        wrong = -1;
      }
    }
    if (wrong < 0 || total <= 0 || wrong > total) continue;  // not a result line after all
    ++shapes;
    b.wrong += wrong;
    b.total += total;
    if (wrong > 0 && b.detail.empty()) b.detail = "first at " + shape;
    if (wrong > 0 && !(max_error <= b.max_error)) b.max_error = max_error;
  }
  if (exit_code == 77) {
    b.status = "no-gpu";
    b.detail = trim(head_lines(output, 2));
  } else if (exit_code == 0 && shapes > 0 && b.wrong == 0) {
    b.status = "right";
  } else if (exit_code == 1 && b.wrong > 0) {
    b.status = "wrong";
  } else {
    b.status = "failed";
    const std::string tail = trim(output.substr(output.size() > 600 ? output.size() - 600 : 0));
    b.detail = (exit_code < 0 ? std::string("it was killed") : "exit status " + std::to_string(exit_code)) +
               (shapes == 0 ? ", no result printed" : ", its results disagree with its exit status") +
               (tail.empty() ? "" : ": " + tail);
  }
  return b;
}

std::string case_verdict(const std::vector<CaseBuild>& builds) {
  if (builds.empty()) return "error";
  const CaseBuild& normal = builds.front();
  if (normal.status == "right") return "fit";
  if (normal.status != "wrong") return "error";
  for (std::size_t i = 1; i < builds.size(); ++i)
    if (builds[i].status == "right") return "miscompiled";
  for (std::size_t i = 1; i < builds.size(); ++i)
    if (builds[i].status != "wrong") return "error";
  return "wrong-everywhere";
}

std::string case_workaround(const std::string& verdict, const std::vector<CaseBuild>& builds,
                            const std::vector<std::string>& labs) {
  std::string lab_list;
  for (const auto& l : labs) lab_list += (lab_list.empty() ? "" : ", ") + l;
  if (verdict == "miscompiled") {
    const CaseBuild* low = nullptr;
    for (std::size_t i = 1; i < builds.size() && !low; ++i)
      if (builds[i].status == "right") low = &builds[i];
    return "this compiler's optimised device code computes the case wrong. Grade with another CUDA version, or "
           "build the kernels of the affected labs (" + lab_list + ") with " + low->flags +
           " (-D CONVLAB_DEVICE_OPT=" + low->level + ", for convlab grade: -D CONVLAB_DEVICE_OPT=" + low->level +
           "); convlab check and grade also rebuild a failing grader that way on their own and tell a compiler "
           "bug from the student's (docs: Known issues)";
  }
  if (verdict == "wrong-everywhere")
    return "the case is wrong at every optimisation, -G included: the GPU or its driver is at fault, not the "
           "optimiser. Try another driver or CUDA version, and another GPU";
  if (verdict == "error") return "the case could not be checked: see why above, fix the toolchain, and run convlab doctor again";
  return "";
}

json run_doctor(const Project& project, const DoctorOptions& o) {
  if (!o.gpu.empty()) {  // before the driver starts; numbered as convlab grade numbers GPUs
    ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    ::setenv("CUDA_VISIBLE_DEVICES", o.gpu.c_str(), 1);
  }
  return check_cases(project, o, probe_gpu());
}

namespace {

// The compiler the cases are built with, its version, the architecture, and the folder that keeps
// the builds.
struct Toolchain {
  std::string nvcc, version, arch, work;
};

// The known cases, grader/toolchain/cases/cases.json.
json read_cases(const std::string& cases_dir) {
  json manifest;
  try {
    manifest = json::parse(read_file(cases_dir + "/cases.json"));
    if (!manifest.contains("cases") || !manifest.at("cases").is_array() || manifest.at("cases").empty())
      throw Error("it lists no case");
  } catch (const std::exception& e) {
    throw Error(cases_dir + "/cases.json: not a list of cases: " + e.what());
  }
  return manifest;
}

// The CUDA compiler and its version: the one --nvcc, $CUDACXX, PATH or /usr/local/cuda gives, or
// --build-dir's own; false, with out's status and summary saying why, where none runs.
bool find_compiler(const DoctorOptions& o, json& out, std::string& nvcc, std::string& version) {
  if (o.build_dir.empty()) {
    nvcc = find_nvcc(o.nvcc);
    if (nvcc.empty() || (version = nvcc_version(nvcc)).empty()) {
      out["status"] = "error";
      out["summary"] = nvcc.empty() ? "no CUDA compiler: nvcc is not on PATH, $CUDACXX is not set and "
                                      "/usr/local/cuda/bin/nvcc does not exist (--nvcc PATH names it)"
                                    : "cannot run the CUDA compiler " + nvcc + " --version";
      return false;
    }
  } else {
    // The build's own compiler, as CMake found it.
    const std::string cache = fs::absolute(o.build_dir).string() + "/CMakeCache.txt";
    std::istringstream in(fs::exists(cache) ? read_file(cache) : "");
    for (std::string line; std::getline(in, line);)
      if (starts_with(line, "CMAKE_CUDA_COMPILER:")) nvcc = line.substr(line.find('=') + 1);
    if (nvcc.empty()) throw Error("--build-dir " + o.build_dir + ": not a CUDA build of convlab (no CMAKE_CUDA_COMPILER in its cache)");
    version = nvcc_version(nvcc);
  }
  return true;
}

// A case's executable at one level: --build-dir's, or compiled here once per compiler, architecture,
// source and level and kept for the next check; "" where there is none, with `b` saying why.
std::string case_exe(const DoctorOptions& o, const Toolchain& t, const std::string& name, const std::string& source,
                     const Level& level, CaseBuild& b) {
  std::string exe;
  if (!o.build_dir.empty()) {
    exe = fs::absolute(o.build_dir).string() + "/grader/toolchain/convlab_case_" + name + level.suffix;
    if (!fs::exists(exe)) {
      b = read_case_run(level.name, level.flags, -1, "");
      b.detail = exe + " is not built (cmake --build " + o.build_dir + " --target convlab_case_" + name + level.suffix + ")";
      return "";
    }
  } else {
    const std::string key = hex64(fnv1a(read_file(source), fnv1a(t.nvcc + "|" + t.version + "|" + t.arch + "|" + level.name)));
    exe = t.work + "/" + name + "-" + level.name + "-" + key;
    if (!fs::exists(exe)) {
      make_dirs(t.work);
      std::vector<std::string> argv = {t.nvcc, "-O3", "-arch=" + t.arch};
      argv.insert(argv.end(), level.argv.begin(), level.argv.end());
      argv.insert(argv.end(), {"-o", exe + ".tmp", source});
      const RunResult r = run_tool(argv, t.work, 600);
      std::error_code ec;
      if (!r.ok() || (fs::rename(exe + ".tmp", exe, ec), ec)) {
        b = read_case_run(level.name, level.flags, -1, "");
        b.detail = "nvcc " + std::string(level.flags) + " did not compile it (" + r.describe() + "): " +
                   trim(head_lines(r.output, 8));
        return "";
      }
    }
  }
  return exe;
}

// A case at one level: built (or found), run in the sandbox, and what it printed read.
CaseBuild run_level(const DoctorOptions& o, const Toolchain& t, const std::string& name, const std::string& source,
                    const Level& level) {
  CaseBuild b;
  const std::string exe = case_exe(o, t, name, source, level, b);
  if (exe.empty()) return b;
  RunSpec s;
  s.argv = {exe};
  s.limits.timeout_s = 120;
  const RunResult r = run_sandboxed(s);
  b = read_case_run(level.name, level.flags, r.timed_out || r.signal ? -1 : r.exit_code, r.output);
  if (b.status == "failed" && (r.timed_out || r.signal)) b.detail = r.describe() + "; " + b.detail;
  return b;
}

// A case checked at every level: its entry in the report, with its builds, verdict and workaround.
json check_case(const json& c, const std::string& cases_dir, const DoctorOptions& o, const Toolchain& t) {
  json cj;
  std::vector<CaseBuild> builds;
  std::vector<std::string> labs;
  try {
    const std::string name = c.at("name").get<std::string>();
    cj = {{"name", name}, {"what", c.value("what", "")}, {"seen", c.value("seen", "")}, {"labs", c.value("labs", json::array())}};
    labs = cj["labs"].get<std::vector<std::string>>();
    const std::string source = cases_dir + "/" + c.at("source").get<std::string>();
    for (const Level& level : levels()) builds.push_back(run_level(o, t, name, source, level));
  } catch (const std::exception& e) {
    throw Error(cases_dir + "/cases.json: a case is malformed: " + e.what());
  }
  const std::string verdict = case_verdict(builds);
  cj["verdict"] = verdict;
  cj["builds"] = json::array();
  for (const auto& b : builds) cj["builds"].push_back(build_json(b));
  cj["workaround"] = case_workaround(verdict, builds, labs);
  return cj;
}

// The check's status and summary: unfit where a case computed wrong, error where one could not be
// checked, fit otherwise.
void summarise(json& out, int unfit, int errors, const std::string& workaround, const std::string& versions) {
  const std::size_t n = out["cases"].size();
  if (unfit > 0) {
    out["status"] = "unfit";
    out["summary"] = "UNFIT: " + std::to_string(unfit) + " of " + std::to_string(n) +
                     " known miscompile case(s) computed wrong with " + versions;
    out["workaround"] = workaround;
  } else if (errors > 0) {
    out["status"] = "error";
    out["summary"] = std::to_string(errors) + " of " + std::to_string(n) + " case(s) could not be checked with " + versions;
  } else {
    out["status"] = "fit";
    out["summary"] = "fit: every known miscompile case (" + std::to_string(n) + ") computed right with " + versions;
  }
}

}  // namespace

json check_cases(const Project& project, const DoctorOptions& o, const DoctorGpu& gpu) {
  json out = {{"convlab_doctor", 1}, {"date", utc_now()}, {"cases", json::array()}};
  const std::string cases_dir = project.root + "/grader/toolchain/cases";
  const json manifest = read_cases(cases_dir);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  out["gpu"] = {{"visible", visible ? (*visible ? visible : "(none)") : "(all)"}, {"present", gpu.present}};
  if (gpu.driver_api > 0)
    out["gpu"]["driver_api"] = std::to_string(gpu.driver_api / 1000) + "." + std::to_string(gpu.driver_api % 1000 / 10);
  if (!gpu.present) {
    out["status"] = "no-gpu";
    out["summary"] = "no GPU here, so the toolchain was not checked: " + gpu.reason +
                     ". Run convlab doctor on the machine that grades.";
    return out;
  }
  const std::string driver = driver_release(o.gpu);
  out["gpu"]["name"] = gpu.name;
  out["gpu"]["sm"] = "sm_" + std::to_string(gpu.cc_major) + std::to_string(gpu.cc_minor);
  out["gpu"]["driver"] = driver;
  Toolchain t;
  t.arch = arch_flag(o.cuda_arch, gpu);
  if (!find_compiler(o, out, t.nvcc, t.version)) return out;
  out["nvcc"] = {{"path", t.nvcc}, {"version", t.version}, {"arch", t.arch}};

  t.work = !o.work.empty() ? o.work
           : (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
                 "/convlab-doctor-" + std::to_string(::getuid());
  int unfit = 0, errors = 0;
  std::string workaround;
  for (const auto& c : manifest.at("cases")) {
    const json cj = check_case(c, cases_dir, o, t);
    const std::string verdict = cj["verdict"].get<std::string>();
    if (verdict == "miscompiled" || verdict == "wrong-everywhere") {
      ++unfit;
      if (workaround.empty()) workaround = cj["name"].get<std::string>() + ": " + cj["workaround"].get<std::string>();
    }
    if (verdict == "error") ++errors;
    out["cases"].push_back(cj);
  }
  const std::string versions = "nvcc " + t.version + (driver.empty() ? "" : ", driver " + driver) + ", " + gpu.name +
                               " (" + t.arch + ")";
  summarise(out, unfit, errors, workaround, versions);
  return out;
}

int doctor_exit_status(const json& result) {
  const std::string s = result.value("status", std::string("error"));
  if (s == "fit") return kDoctorFit;
  if (s == "unfit") return kDoctorUnfit;
  if (s == "no-gpu") return kDoctorNoGpu;
  return kDoctorError;
}

int doctor_main(const Project& project, const DoctorOptions& o) {
  std::cout << "convlab doctor: this machine's GPU and CUDA toolchain, against the known miscompile cases" << std::endl;
  const json r = run_doctor(project, o);
  const json& g = r.at("gpu");
  if (g.value("present", false))
    std::cout << "  GPU: " << g.value("name", std::string("?")) << " (" << g.value("sm", std::string("?")) << "), driver "
              << (g.value("driver", std::string()).empty() ? "?" : g.value("driver", std::string())) << " (CUDA "
              << g.value("driver_api", std::string("?")) << ")\n";
  if (r.contains("nvcc"))
    std::cout << "  nvcc: " << r["nvcc"].value("path", std::string()) << ", CUDA " << r["nvcc"].value("version", std::string())
              << ", compiling for " << r["nvcc"].value("arch", std::string()) << "\n";
  for (const auto& c : r.at("cases")) {
    const std::string verdict = c.value("verdict", std::string());
    std::cout << "\n  case " << c.value("name", std::string()) << ": "
              << (verdict == "fit" ? "fit" : verdict == "error" ? "NOT CHECKED" : "UNFIT (" + verdict + ")") << "\n"
              << "    " << c.value("what", std::string()) << "\n";
    for (const auto& b : c.at("builds")) {
      CaseBuild cb;
      cb.level = b.value("level", std::string());
      cb.flags = b.value("flags", std::string());
      cb.status = b.value("status", std::string());
      cb.wrong = b.value("wrong", 0L);
      cb.total = b.value("total", 0L);
      cb.max_error = b.value("max_error", 0.0);
      cb.detail = b.value("detail", std::string());
      std::cout << "      " << build_line(cb) << "\n";
    }
    if (!c.value("workaround", std::string()).empty())
      std::cout << "    what to do: " << c.value("workaround", std::string()) << "\n";
    if (verdict != "fit" && !c.value("seen", std::string()).empty())
      std::cout << "    seen before: " << c.value("seen", std::string()) << "\n";
  }
  std::cout << "\n" << r.value("summary", std::string()) << "\n";
  if (!o.json_out.empty()) {
    write_file_atomic(o.json_out, r.dump(2) + "\n");
    std::cout << "(written to " << o.json_out << ")\n";
  }
  return doctor_exit_status(r);
}

json doctor_in_child(const std::string& root, const std::string& gpu, const std::string& cuda_arch,
                     const std::string& work) {
  const std::string file = work + "/doctor.json";
  std::error_code ec;
  fs::remove(file, ec);
  RunSpec s;
  s.argv = {self_exe(), "--root", root, "doctor", "--gpu", gpu, "--work", work, "--json", file};
  if (!cuda_arch.empty()) s.argv.insert(s.argv.end(), {"--cuda-arch", cuda_arch});
  s.limits.timeout_s = 900;  // three compiles and three short runs per case
  s.limits.open_files = 0;
  const RunResult r = run_sandboxed(s);
  try {
    return json::parse(read_file(file));
  } catch (const std::exception&) {
    return {{"status", "error"},
            {"summary", "convlab doctor did not finish (" + r.describe() + "): " + trim(head_lines(r.output, 6))}};
  }
}

}  // namespace convlab::cli
