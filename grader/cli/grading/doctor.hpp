/// @file doctor.hpp
/// @brief `convlab doctor`: is this machine's CUDA toolchain fit to grade? It compiles the known
/// miscompile cases (grader/toolchain/cases/, issue 18) at the normal device optimisation, at
/// `-Xptxas -O1` and at `-G`, runs them on the GPU, and reports each case fit or unfit with the
/// versions (nvcc, driver) and the workaround. `convlab grade` runs it once per run and writes its
/// result into hardware.json.
#pragma once

#include "common/project.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace convlab::cli {

/// Exit statuses of `convlab doctor`.
enum DoctorStatus : int {
  kDoctorFit = 0,     ///< every case computed right at the normal optimisation
  kDoctorUnfit = 1,   ///< a case was computed wrong: the toolchain miscompiles a known case
  kDoctorError = 2,   ///< a case could not be checked (no nvcc, a compile error, a crash)
  kDoctorNoGpu = 77,  ///< no GPU here: nothing was checked (the same status as a skipped GPU test)
};

/// The settings of one check.
struct DoctorOptions {
  std::string json_out;   ///< also write the result as JSON here ("" = do not)
  std::string gpu;        ///< CUDA_VISIBLE_DEVICES for the check ("" = as the environment says)
  std::string cuda_arch;  ///< compile for this architecture ("90", "sm_90"; "" or "native" = the GPU's own)
  std::string nvcc;       ///< the compiler ("" = $CUDACXX, else nvcc on PATH, else /usr/local/cuda/bin/nvcc)
  std::string build_dir;  ///< run the cases built in this CMake build (grader/toolchain/) instead of compiling
  std::string work;       ///< where compiled cases are kept ("" = $TMPDIR/convlab-doctor-<uid>)
};

/// One build of a case, run: its level ("default", "O1", "G"), flags and what it computed.
struct CaseBuild {
  std::string level;       ///< default, O1 or G
  std::string flags;       ///< "", "-Xptxas -O1", "-G"
  std::string status;      ///< right, wrong, no-gpu or failed (not built, crashed, printed no result)
  long wrong = 0;          ///< outputs computed wrong, over every shape it ran
  long total = 0;          ///< outputs checked
  double max_error = 0;    ///< the largest error of a wrong output
  std::string detail;      ///< the first shape with wrong outputs, or why it failed
};

/// What one run of a case program said: its exit status and its output, read into a CaseBuild.
CaseBuild read_case_run(const std::string& level, const std::string& flags, int exit_code, const std::string& output);

/// A case's verdict from its builds (default first): "fit" (right as normally built), "miscompiled"
/// (wrong as normally built, right with less optimisation), "wrong-everywhere" or "error".
std::string case_verdict(const std::vector<CaseBuild>& builds);

/// What to do about a case with this verdict, in a sentence (labs: where it was seen).
std::string case_workaround(const std::string& verdict, const std::vector<CaseBuild>& builds,
                            const std::vector<std::string>& labs);

/// The GPU a check runs on, as the NVIDIA driver describes it.
struct DoctorGpu {
  bool present = false;   ///< a GPU is visible
  std::string reason;     ///< why not
  std::string name;       ///< "NVIDIA H100 80GB HBM3"
  int cc_major = 0;       ///< compute capability
  int cc_minor = 0;
  int driver_api = 0;     ///< the driver's CUDA version, 13000 for 13.0
};

/// Asks the driver (libcuda, not the CUDA runtime this command links: a CPU-backend build has a CPU
/// "device") for the first visible GPU.
DoctorGpu probe_gpu();

/// The check on `gpu` (present): compiles or finds each case's builds, runs them, judges them.
/// run_doctor() is probe_gpu() and this; the tests give it a GPU description and fake cases.
nlohmann::json check_cases(const Project& project, const DoctorOptions& options, const DoctorGpu& gpu);

/// Runs the check; never throws for trouble with the toolchain or the GPU (that is its result):
/// `{"status": "fit" | "unfit" | "error" | "no-gpu", "summary": ..., "gpu": ..., "nvcc": ...,
/// "cases": [...], "workaround": ...}`. Throws Error for bad options (an unreadable case list).
nlohmann::json run_doctor(const Project& project, const DoctorOptions& options);

/// The exit status for a result of run_doctor().
int doctor_exit_status(const nlohmann::json& result);

/// `convlab doctor`: prints the check, writes --json, returns a DoctorStatus.
int doctor_main(const Project& project, const DoctorOptions& options);

/// For `convlab grade`: runs `convlab doctor` in a child process on GPU `gpu` (a time limit, the
/// result read from its JSON); a failure to run it comes back as `{"status": "error", ...}`.
nlohmann::json doctor_in_child(const std::string& root, const std::string& gpu, const std::string& cuda_arch,
                               const std::string& work);

}  // namespace convlab::cli
