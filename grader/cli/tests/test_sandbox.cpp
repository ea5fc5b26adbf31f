// The sandbox: limits hold, the process tree is killed, output is capped.
#include "common/sandbox.hpp"
#include "test_files.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

namespace convlab::cli {
namespace {

using testing_files::temp_dir;

RunSpec shell(const std::string& script) {
  RunSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.env = {"PATH=/usr/bin:/bin"};
  s.limits.timeout_s = 30;
  return s;
}

TEST(Sandbox, ReportsExitStatusAndOutput) {
  const RunResult r = run_sandboxed(shell("echo hello; echo oops >&2; exit 3"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.output.find("hello"), std::string::npos);
  EXPECT_NE(r.output.find("oops"), std::string::npos);
  EXPECT_EQ(r.describe(), "exited with status 3");
  EXPECT_TRUE(run_sandboxed(shell("true")).ok());
}

// A program still open for writing somewhere (a copy another thread of convlab grade had just
// written, held by a child it forked) cannot be run for a moment: ETXTBSY. The sandbox waits that
// out instead of failing the submission ("cannot run ...: Text file busy", scored 0).
TEST(Sandbox, RunsAProgramOnceItsWriterLetsGo) {
  const std::string dir = temp_dir("busy");
  const std::string prog = dir + "/true";
  std::filesystem::copy_file("/bin/true", prog);
  std::filesystem::permissions(prog, std::filesystem::perms::owner_all);
  const int fd = ::open(prog.c_str(), O_WRONLY | O_CLOEXEC);  // as a writer that has not closed it yet
  ASSERT_GE(fd, 0);
  std::thread writer([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::close(fd);
  });
  RunSpec s;
  s.argv = {prog};
  s.limits.timeout_s = 30;
  const RunResult r = run_sandboxed(s);
  writer.join();
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  std::filesystem::remove_all(dir);
}

// Each sandboxed run starts a copy of convlab itself (the supervisor). If convlab was rebuilt
// while it graded, /proc/self/exe names a deleted file and no copy starts: every later build
// failed with "the supervisor died". Now the run stops with the cause, in plain words.
TEST(Sandbox, AConvlabRebuiltWhileRunningIsSaidSo) {
  EXPECT_EQ(checked_self_exe("/x/build/grader/cli/convlab"), "/x/build/grader/cli/convlab");
  try {
    checked_self_exe("/x/build/grader/cli/convlab (deleted)");
    ADD_FAILURE() << "a deleted executable was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/x/build/grader/cli/convlab, was rebuilt or removed"), std::string::npos) << what;
    EXPECT_NE(what.find("Run the command again"), std::string::npos) << what;
  }
  EXPECT_FALSE(self_exe().empty());  // this test's own executable is there
}

TEST(Sandbox, KillsAtTheTimeLimit) {
  RunSpec s = shell("sleep 60");
  s.limits.timeout_s = 1;
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_s, 15);
  EXPECT_NE(r.describe().find("time limit"), std::string::npos);
}

TEST(Sandbox, IdleLimitRestartsOnProgressLines) {
  RunSpec s = shell("for i in 1 2 3 4; do echo '[ RUN      ] t'$i; sleep 0.4; done; echo '[ RUN      ] hang'; sleep 60");
  s.limits.idle_timeout_s = 1.5;
  s.progress_marker = "[ RUN      ]";
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.idle_timed_out);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.last_progress, "[ RUN      ] hang");  // the four quick steps did not trip it
  EXPECT_GT(r.wall_s, 2.5);
}

TEST(Sandbox, CapsHugeOutput) {
  RunSpec s = shell("yes 'a line printed forever'");
  s.limits.output_kill_bytes = 4 << 20;
  s.keep_head = 1000;
  s.keep_tail = 1000;
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.output_exceeded);
  EXPECT_GT(r.output_bytes, 4 << 20);
  EXPECT_LT(r.output.size(), 3000u);
  EXPECT_NE(r.output.find("bytes of output cut"), std::string::npos);
}

// Several graders in one process (batch.hpp): each grader's tests may print what a process of its
// own could; the share that passes the limit is the one killed, and said.
TEST(Sandbox, SharesTheOutputLimitByProgressLine) {
  const auto run = [](const std::string& script) {
    RunSpec s = shell(script);
    s.progress_marker = "[ RUN      ]";
    s.output_share = [](const std::string& line) { return line.substr(13, 1); };  // "a.x" -> "a"
    s.limits.output_kill_bytes = 100000;
    return run_sandboxed(s);
  };
  // 80 kB in a's test, 80 kB in b's: each within the limit, the whole above it.
  const std::string quiet = "echo '[ RUN      ] a.x'; head -c 80000 /dev/zero | tr '\\0' x; echo;"
                            "echo '[ RUN      ] b.x'; head -c 80000 /dev/zero | tr '\\0' x; echo";
  RunResult r = run(quiet);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_GT(r.output_bytes, 160000);
  // b's test prints without end: killed in it, with its own count.
  r = run("echo '[ RUN      ] a.x'; head -c 80000 /dev/zero | tr '\\0' x; echo; echo '[ RUN      ] b.x'; yes");
  EXPECT_TRUE(r.output_exceeded);
  EXPECT_EQ(r.last_progress, "[ RUN      ] b.x");
  EXPECT_GT(r.share_bytes, 100000);
  EXPECT_LT(r.share_bytes, r.output_bytes - 80000 + 1);
  EXPECT_NE(r.describe().find("(" + std::to_string(r.share_bytes) + " bytes)"), std::string::npos) << r.describe();
}

TEST(Sandbox, KillsProcessesLeftBehindEvenInTheirOwnSession) {
  const std::string dir = temp_dir("leftover");
  RunSpec s = shell("for i in 1 2 3; do setsid sh -c 'echo $$ >> " + dir + "/pids; exec sleep 300' & done; sleep 0.5; exit 0");
  const RunResult r = run_sandboxed(s);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.leftover, 3);
  EXPECT_NE(r.describe().find("left 3 process(es) running"), std::string::npos);
  std::ifstream in(dir + "/pids");
  int count = 0;
  for (pid_t pid; in >> pid; ++count) EXPECT_NE(::kill(pid, 0), 0) << "process " << pid << " survived";
  EXPECT_EQ(count, 3);
  std::filesystem::remove_all(dir);
}

// The harness's runner dies with its judge (PR_SET_PDEATHSIG), which takes a moment on a loaded
// machine: within the grace period a process that ends on its own is not left behind (issue 26).
TEST(Sandbox, AProcessEndingOnItsOwnWithinTheGraceIsNotLeftBehind) {
  RunSpec s = shell("setsid sh -c 'exec sleep 0.6' & sleep 0.1; exit 0");
  s.grace_s = 5;
  const RunResult r = run_sandboxed(s);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.leftover, 0) << r.describe();
  EXPECT_TRUE(r.ok());
  // Without the grace the same process is killed and counted. At least one: on a loaded machine
  // (CI, 2 cores) the snapshot can catch the session's shell between its fork and its exec, two
  // processes then (seen once: "it left 2 process(es) running").
  s.grace_s = 0;
  const RunResult now = run_sandboxed(s);
  EXPECT_GE(now.leftover, 1) << now.describe();
  EXPECT_NE(now.describe().find("process(es) running, which were killed"), std::string::npos) << now.describe();
}

TEST(Sandbox, TheGraceIsBounded) {
  RunSpec s = shell("setsid sleep 300 & sleep 0.1; exit 0");
  s.grace_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_sandboxed(s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.leftover, 1);
  EXPECT_LT(took, 10.0);
  EXPECT_GE(took, 1.0);
}

// Processes left behind are attributed: the harness's own (one of the executables named in
// RunSpec::harness) or the submission's; the description says which.
TEST(Sandbox, LeftoversAreAttributedToTheHarnessOrTheSubmission) {
  const std::string sleep_exe = std::filesystem::canonical(which("sleep")).string();
  RunSpec s = shell("setsid sleep 300 & setsid sh -c 'exec tail -f /dev/null' & sleep 0.3; exit 0");
  s.harness = {sleep_exe};
  const RunResult both = run_sandboxed(s);
  EXPECT_EQ(both.leftover, 2) << both.describe();
  EXPECT_EQ(both.leftover_harness, 1) << both.describe();
  EXPECT_NE(both.describe().find("1 of them the grading harness's own"), std::string::npos) << both.describe();

  s = shell("setsid sleep 300 & sleep 0.3; exit 0");
  s.harness = {sleep_exe};
  const RunResult harness = run_sandboxed(s);
  EXPECT_EQ(harness.leftover, 1);
  EXPECT_EQ(harness.leftover_harness, 1);
  EXPECT_NE(harness.describe().find("(the grading harness's own, not the submission's)"), std::string::npos)
      << harness.describe();

  s.harness = {"/nonexistent/runner"};
  const RunResult student = run_sandboxed(s);
  EXPECT_EQ(student.leftover, 1);
  EXPECT_EQ(student.leftover_harness, 0);
  EXPECT_EQ(student.describe().find("harness"), std::string::npos) << student.describe();
}

TEST(Sandbox, FileSizeLimit) {
  const std::string dir = temp_dir("fsize");
  RunSpec s = shell("head -c 4000000 /dev/zero > " + dir + "/big");
  s.limits.file_bytes = 1 << 20;
  const RunResult r = run_sandboxed(s);
  EXPECT_FALSE(r.ok());
  EXPECT_LE(std::filesystem::file_size(dir + "/big"), 1u << 20);
  std::filesystem::remove_all(dir);
}

TEST(Sandbox, CpuLimit) {
  RunSpec s = shell("while :; do :; done");
  s.limits.cpu_s = 1;
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.signal == SIGXCPU || r.signal == SIGKILL) << r.describe();
  EXPECT_FALSE(r.timed_out);
}

TEST(Sandbox, MissingProgramIsAStartFailure) {
  RunSpec s;
  s.argv = {"/nonexistent/program"};
  s.limits.timeout_s = 10;
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.start_failed);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.output.find("cannot run /nonexistent/program"), std::string::npos);
}

TEST(Sandbox, WorkingFolderAndEnvironment) {
  const std::string dir = temp_dir("cwd");
  RunSpec s = shell("pwd; echo \"home=$HOME\"");
  s.cwd = dir;
  s.env = {"PATH=/usr/bin:/bin", "HOME=/somewhere"};
  const RunResult r = run_sandboxed(s);
  EXPECT_NE(r.output.find(dir), std::string::npos);
  EXPECT_NE(r.output.find("home=/somewhere"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// As root: the command runs as another user, and RLIMIT_NPROC then holds, so a
// fork bomb stops at the limit and everything it made is killed.
TEST(Sandbox, OtherUserAndProcessLimitContainAForkBomb) {
  if (::geteuid() != 0 || !::getpwnam("nobody")) GTEST_SKIP() << "needs root and the user nobody";
  RunSpec s = shell("id -u");
  s.user = "nobody";
  RunResult r = run_sandboxed(s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(trim(r.output), std::to_string(::getpwnam("nobody")->pw_uid));

  RunSpec bomb = shell("b() { b & b & wait; }; b");
  bomb.user = "nobody";
  bomb.limits.processes = 40;
  bomb.limits.timeout_s = 3;
  r = run_sandboxed(bomb);
  EXPECT_LT(r.wall_s, 25);
  EXPECT_TRUE(r.output.find("fork") != std::string::npos || r.timed_out) << "the process limit never held: " << r.output;
  // Nothing of it is left.
  const RunResult ps = run_tool({"sh", "-c", "ps -u nobody -o pid= | wc -l"});
  EXPECT_EQ(trim(ps.output), "0") << "processes of nobody left: " << ps.output;
}

}  // namespace
}  // namespace convlab::cli
