// convlab doctor (issue 18): reading a case's output, the verdicts, and the whole check with a GPU
// described and fake case programs (the real ones need a GPU; grader/toolchain/gpu-compiler-check.sh
// runs them on one).
#include "grading/doctor.hpp"
#include "test_files.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

namespace convlab::cli {
namespace {

using testing_files::temp_dir;
using testing_files::write_executable;

const char* kWrong =
    "device: NVIDIA H100 80GB HBM3 (sm_90), driver API 13000, runtime 13000\n"
    "convlab-case downward_taps n=255 r=4 block=128 wrong=253 total=255 max_error=1.7\n"
    "convlab-case downward_taps n=255 r=4 block=256 wrong=0 total=255 max_error=0\n"
    "convlab-case downward_taps n=1000 r=3 block=128 wrong=990 total=1000 max_error=2.25\n"
    "WRONG: this build computes the downward loop wrong\n";
const char* kRight =
    "convlab-case downward_taps n=255 r=4 block=128 wrong=0 total=255 max_error=0\n"
    "convlab-case downward_taps n=1000 r=3 block=128 wrong=0 total=1000 max_error=0\n";

TEST(Doctor, ReadsACasesOutput) {
  const CaseBuild wrong = read_case_run("default", "", 1, kWrong);
  EXPECT_EQ(wrong.status, "wrong");
  EXPECT_EQ(wrong.wrong, 1243);
  EXPECT_EQ(wrong.total, 1510);
  EXPECT_DOUBLE_EQ(wrong.max_error, 2.25);
  EXPECT_EQ(wrong.detail, "first at n=255 r=4 block=128");

  const CaseBuild right = read_case_run("O1", "-Xptxas -O1", 0, kRight);
  EXPECT_EQ(right.status, "right");
  EXPECT_EQ(right.total, 1255);

  EXPECT_EQ(read_case_run("G", "-G", 77, "no GPU: no CUDA device\n").status, "no-gpu");
  // Output and exit status must agree, and a result must be printed.
  EXPECT_EQ(read_case_run("default", "", 0, "").status, "failed");
  EXPECT_EQ(read_case_run("default", "", 0, kWrong).status, "failed");
  EXPECT_EQ(read_case_run("default", "", 1, kRight).status, "failed");
  const CaseBuild crashed = read_case_run("default", "", 2, "CUDA error in the kernel: an illegal memory access\n");
  EXPECT_EQ(crashed.status, "failed");
  EXPECT_NE(crashed.detail.find("illegal memory access"), std::string::npos);
  EXPECT_NE(read_case_run("default", "", -1, "").detail.find("killed"), std::string::npos);
  // Lines that only look like results do not count.
  EXPECT_EQ(read_case_run("default", "", 0, "convlab-case x wrong=abc total=5\n").status, "failed");
}

std::vector<CaseBuild> builds(const std::string& normal, const std::string& o1, const std::string& g) {
  const auto one = [](const std::string& level, const std::string& flags, const std::string& status) {
    CaseBuild b;
    b.level = level;
    b.flags = flags;
    b.status = status;
    return b;
  };
  return {one("default", "", normal), one("O1", "-Xptxas -O1", o1), one("G", "-G", g)};
}

TEST(Doctor, Verdicts) {
  EXPECT_EQ(case_verdict(builds("right", "right", "right")), "fit");
  EXPECT_EQ(case_verdict(builds("wrong", "right", "right")), "miscompiled");
  EXPECT_EQ(case_verdict(builds("wrong", "wrong", "right")), "miscompiled");
  EXPECT_EQ(case_verdict(builds("wrong", "wrong", "wrong")), "wrong-everywhere");
  EXPECT_EQ(case_verdict(builds("failed", "right", "right")), "error");
  EXPECT_EQ(case_verdict(builds("wrong", "failed", "wrong")), "error");
  EXPECT_EQ(case_verdict({}), "error");

  const std::string w = case_workaround("miscompiled", builds("wrong", "right", "right"), {"lab01"});
  for (const char* words : {"another CUDA version", "-Xptxas -O1", "CONVLAB_DEVICE_OPT=O1", "lab01", "Known issues"})
    EXPECT_NE(w.find(words), std::string::npos) << words << " missing from: " << w;
  EXPECT_NE(case_workaround("miscompiled", builds("wrong", "wrong", "right"), {"lab01"}).find("CONVLAB_DEVICE_OPT=G"),
            std::string::npos);
  EXPECT_NE(case_workaround("wrong-everywhere", builds("wrong", "wrong", "wrong"), {}).find("driver"), std::string::npos);
  EXPECT_EQ(case_workaround("fit", builds("right", "right", "right"), {}), "");
}

Project this_tree() {
  Project p;
  p.root = CONVLAB_SOURCE_DIR;  // its grader/toolchain/cases/cases.json
  return p;
}

DoctorGpu h100() {
  DoctorGpu g;
  g.present = true;
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.cc_minor = 0;
  g.driver_api = 13000;
  return g;
}

// A fake nvcc: --version as CUDA 13.0.88 says it; a "compiled" case is a script that prints the
// miscompile at the default optimisation and right results with -Xptxas -O1 or -G.
const char* kFakeNvcc = R"(#!/bin/sh
if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
echo "$*" >>"$(dirname "$0")/nvcc-calls"
level=default
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift ;;
    -O1) level=O1 ;;
    -G) level=G ;;
    -arch=*) arch=${1#-arch=} ;;
  esac
  shift
done
[ "$arch" = sm_90 ] || { echo "unexpected $arch"; exit 1; }
if [ $level = default ]; then
  printf '#!/bin/sh\necho "convlab-case downward_taps n=255 r=4 block=128 wrong=253 total=255 max_error=1.7"\nexit 1\n' >"$out"
else
  printf '#!/bin/sh\necho "convlab-case downward_taps n=255 r=4 block=128 wrong=0 total=255 max_error=0"\n' >"$out"
fi
chmod +x "$out"
)";

TEST(Doctor, FlagsAMiscompiledCaseWithTheVersionsAndTheWorkaround) {
  const std::string dir = temp_dir("doctor-nvcc");
  write_executable(dir + "/nvcc", kFakeNvcc);
  DoctorOptions o;
  o.nvcc = dir + "/nvcc";
  o.work = dir + "/work";
  const nlohmann::json r = check_cases(this_tree(), o, h100());
  EXPECT_EQ(r.at("status"), "unfit") << r.dump(2);
  EXPECT_EQ(doctor_exit_status(r), kDoctorUnfit);
  EXPECT_EQ(r.at("nvcc").at("version"), "13.0.88");
  EXPECT_EQ(r.at("nvcc").at("arch"), "sm_90");
  EXPECT_EQ(r.at("gpu").at("driver_api"), "13.0");
  EXPECT_NE(r.at("summary").get<std::string>().find("nvcc 13.0.88"), std::string::npos);
  const auto& c = r.at("cases").at(0);
  EXPECT_EQ(c.at("name"), "downward_taps");
  EXPECT_EQ(c.at("verdict"), "miscompiled");
  EXPECT_EQ(c.at("builds").at(0).at("wrong"), 253);
  EXPECT_EQ(c.at("builds").at(1).at("status"), "right");
  EXPECT_NE(r.at("workaround").get<std::string>().find("CONVLAB_DEVICE_OPT=O1"), std::string::npos);
  // Compiled once: a second check runs what the first compiled.
  const auto calls = [&] { return split(read_file(dir + "/nvcc-calls"), '\n').size(); };
  EXPECT_EQ(calls(), 3u);
  EXPECT_EQ(check_cases(this_tree(), o, h100()).at("status"), "unfit");
  EXPECT_EQ(calls(), 3u);
  // --cuda-arch is honoured (the fake refuses anything but sm_90).
  o.cuda_arch = "80";
  EXPECT_EQ(check_cases(this_tree(), o, h100()).at("status"), "error");
}

TEST(Doctor, RunsTheCasesOfABuildFolder) {
  const std::string dir = temp_dir("doctor-build");
  write_executable(dir + "/nvcc", kFakeNvcc);
  write_file_atomic(dir + "/build/CMakeCache.txt", "CMAKE_CUDA_COMPILER:FILEPATH=" + dir + "/nvcc\n");
  for (const char* suffix : {"", "_O1", "_G"})
    write_executable(dir + "/build/grader/toolchain/convlab_case_downward_taps" + std::string(suffix),
                     std::string("#!/bin/sh\nprintf '") + kRight + "'\n");
  DoctorOptions o;
  o.build_dir = dir + "/build";
  const nlohmann::json r = check_cases(this_tree(), o, h100());
  EXPECT_EQ(r.at("status"), "fit") << r.dump(2);
  EXPECT_EQ(doctor_exit_status(r), kDoctorFit);
  EXPECT_EQ(r.at("cases").at(0).at("verdict"), "fit");
  // A build without the case programs: the check says how to build them.
  std::filesystem::remove(dir + "/build/grader/toolchain/convlab_case_downward_taps");
  const nlohmann::json missing = check_cases(this_tree(), o, h100());
  EXPECT_EQ(missing.at("status"), "error");
  EXPECT_NE(missing.dump().find("--target convlab_case_downward_taps"), std::string::npos);
  o.build_dir = dir;  // no CMakeCache.txt
  EXPECT_THROW(check_cases(this_tree(), o, h100()), Error);
}

TEST(Doctor, WithoutAGpuItSaysSoAndChecksNothing) {
  DoctorGpu none;
  none.reason = "no CUDA device visible";
  DoctorOptions o;
  o.nvcc = "/nonexistent/nvcc";  // never asked for
  const nlohmann::json r = check_cases(this_tree(), o, none);
  EXPECT_EQ(r.at("status"), "no-gpu");
  EXPECT_EQ(doctor_exit_status(r), kDoctorNoGpu);
  EXPECT_NE(r.at("summary").get<std::string>().find("no GPU here"), std::string::npos);
  EXPECT_TRUE(r.at("cases").empty());
}

TEST(Doctor, WithoutACompilerItCannotCheck) {
  DoctorOptions o;
  o.nvcc = "/nonexistent/nvcc";
  const nlohmann::json r = check_cases(this_tree(), o, h100());
  EXPECT_EQ(r.at("status"), "error");
  EXPECT_EQ(doctor_exit_status(r), kDoctorError);
  EXPECT_NE(r.at("summary").get<std::string>().find("/nonexistent/nvcc"), std::string::npos);
}

TEST(Doctor, ABadCaseListIsAClearError) {
  const std::string dir = temp_dir("doctor-list");
  write_file_atomic(dir + "/grader/toolchain/cases/cases.json", "{\"cases\": []}");
  Project p;
  p.root = dir;
  try {
    check_cases(p, DoctorOptions{}, h100());
    FAIL() << "an empty case list was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cases.json: not a list of cases"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convlab::cli
