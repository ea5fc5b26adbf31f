/// @file sandbox.hpp
/// @brief Running a command with limits: time, CPU, file size, processes,
/// memory, captured output; its whole process tree is killed at the end.
///
/// Each run goes through a supervisor (this same executable, `convlab
/// __supervise`): a new session that is a child subreaper, so that processes
/// the command leaves behind, even in a session of their own, come back to it
/// and are killed when the command ends. The limits are setrlimit() limits set
/// in the command's process; the time limits and the output cap are enforced by
/// the caller, which reads the output as it comes. Run as root with a
/// `user`, the command runs under that user's id (RLIMIT_NPROC then holds).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace convlab::cli {

/// What a command may use. 0 means no limit.
struct Limits {
  double timeout_s = 0;             ///< wall-clock limit of the whole run
  double idle_timeout_s = 0;        ///< limit between two progress lines (see RunSpec::progress_marker)
  long cpu_s = 0;                   ///< RLIMIT_CPU
  long long file_bytes = 0;         ///< RLIMIT_FSIZE: the largest file it may write
  long processes = 0;               ///< RLIMIT_NPROC (not enforced for root: see RunSpec::user)
  long long address_bytes = 0;      ///< RLIMIT_AS (never for CUDA programs: they map a large address space)
  long open_files = 256;            ///< RLIMIT_NOFILE
  long long output_kill_bytes = 0;  ///< kill the command once it has printed more than this
};

/// One command to run.
struct RunSpec {
  std::vector<std::string> argv;   ///< program (a path, or a name looked up on PATH) and arguments
  std::string cwd;                 ///< working folder ("" = the caller's)
  std::vector<std::string> env;    ///< the whole environment, "NAME=value" (empty = inherit the caller's)
  Limits limits;                   ///< limits
  std::string user;                ///< run under this user's id when convlab runs as root ("" = as is)
  std::size_t keep_head = 64 * 1024;  ///< bytes of output kept from the start
  std::size_t keep_tail = 64 * 1024;  ///< bytes of output kept from the end
  std::string progress_marker;     ///< a line starting with this restarts the idle timer
  /// Shares out Limits::output_kill_bytes: each line starting with progress_marker opens the share
  /// this names for it, and each share may print up to the limit (a graders process running several
  /// graders gives each the output a process of its own would have had). What comes before the
  /// first progress line is share "". Unset: the whole output is one share.
  std::function<std::string(const std::string& progress_line)> output_share;
  std::function<void(const std::string&)> on_line;  ///< called for every line of output (optional)
  /// After the command ends, wait up to this long for what it started to end on its own (the
  /// harness's runner dies with its judge) before what is left counts as left behind and is killed.
  double grace_s = 0;
  /// The harness's executables: a process left running that runs one of them is counted in
  /// RunResult::leftover_harness (the harness's fault, not the submission's).
  std::vector<std::string> harness;
};

/// How a run ended.
struct RunResult {
  int exit_code = -1;            ///< exit status when it exited normally, else -1
  int signal = 0;                ///< the signal that ended it, else 0
  bool timed_out = false;        ///< killed at Limits::timeout_s
  bool idle_timed_out = false;   ///< killed at Limits::idle_timeout_s
  bool output_exceeded = false;  ///< killed at Limits::output_kill_bytes
  bool start_failed = false;     ///< the program could not be started (exit_code 127)
  int leftover = 0;              ///< processes still running after it ended (killed)
  int leftover_harness = 0;      ///< of those, the harness's own (RunSpec::harness)
  long long output_bytes = 0;    ///< bytes it printed
  long long share_bytes = 0;     ///< with RunSpec::output_share: the bytes of the share that passed the output limit
  std::string output;            ///< stdout and stderr as printed, middle cut out if long
  std::string last_progress;     ///< the last progress line seen
  double wall_s = 0;             ///< seconds it ran
  /// True if it exited with status 0 and was not killed.
  bool ok() const { return exit_code == 0 && !timed_out && !idle_timed_out && !output_exceeded; }
  /// One line: "exited with status 1", "killed: no progress for 20 s (...)", ...
  std::string describe() const;
};

/// Runs `spec` and waits for it. Throws Error if the supervisor cannot be started.
RunResult run_sandboxed(const RunSpec& spec);

/// Runs a trusted tool (cmake, nm, tar, ...) with a time limit, in `cwd`.
RunResult run_tool(const std::vector<std::string>& argv, const std::string& cwd = "", double timeout_s = 600);

/// The supervisor's main (`convlab __supervise ...`); not for people.
int supervise_main(int argc, char** argv);

/// Asks every running sandbox to stop (on Ctrl-C): they are killed and report a time-out.
void cancel_all_runs();

}  // namespace convlab::cli
