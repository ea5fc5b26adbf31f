// Running commands with limits, and the supervisor that cleans up after them.
// See sandbox.hpp.
#include "common/sandbox.hpp"

#include "common/util.hpp"

#include <convlab/exec_busy.hpp>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace convlab::cli {
namespace {

std::atomic<bool> g_cancel{false};

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// ---- the supervisor side -----------------------------------------------------

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

// Children of this process (orphans of the command come here: we are a subreaper),
// zombies left out.
std::vector<pid_t> living_children() {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  const pid_t me = ::getpid();
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    const std::string path = "/proc/" + std::string(e->d_name) + "/stat";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    char buf[1024];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* close = std::strrchr(buf, ')');
    char state = 0;
    long ppid = 0;
    if (close && std::sscanf(close + 1, " %c %ld", &state, &ppid) == 2 && ppid == me && state != 'Z')
      out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

void reap_all() {
  int st = 0;
  while (::waitpid(-1, &st, WNOHANG) > 0) {
  }
}

// The program a process runs, "" if it cannot be read ("/x/runner (deleted)" reads "/x/runner").
std::string exe_of(pid_t pid) {
  char buf[PATH_MAX + 1];
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<std::size_t>(n));
  const std::string deleted = " (deleted)";
  if (exe.size() > deleted.size() && exe.compare(exe.size() - deleted.size(), deleted.size(), deleted) == 0)
    exe.resize(exe.size() - deleted.size());
  return exe;
}

// A process of the harness: it runs one of the executables the caller named (their real paths).
// A submission cannot start processes of its own (the symbol fence refuses fork, exec, clone and
// system calls: grader/fence), so a copy of the runner left running is the harness's; anything
// else, or a process whose program cannot be read, is the submission's.
bool is_harness(pid_t pid, const std::vector<std::string>& harness) {
  const std::string exe = exe_of(pid);
  if (exe.empty()) return false;
  for (const auto& h : harness) {
    char real[PATH_MAX];
    if (exe == h || (::realpath(h.c_str(), real) && exe == real)) return true;
  }
  return false;
}

bool set_limit(int resource, long long value) {
  if (value <= 0) return true;
  rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  return ::setrlimit(resource, &r) == 0;
}

[[noreturn]] void child_fail(const char* what) {
  const std::string msg = std::string("convlab sandbox: ") + what + ": " + std::strerror(errno) + "\n";
  (void)!::write(STDERR_FILENO, msg.data(), msg.size());
  ::_exit(127);
}

// What convlab __supervise was asked to do.
struct SuperviseArgs {
  long long cpu = 0, fsize = 0, nproc = 0, as = 0, nofile = 0;
  double grace = 0;
  std::string user, cwd;
  std::vector<std::string> harness;
  int cmd = 0;  // where the command starts in argv
};

// Reads the options before "--"; false when they cannot be read (supervise_main exits 125).
bool parse_supervise_args(int argc, char** argv, SuperviseArgs& a) {
  // convlab __supervise [--cpu N] [--fsize N] [--nproc N] [--as N] [--nofile N] [--user U] [--cwd D]
  //                     [--grace S] [--harness EXE]... -- cmd...
  int i = 2;
  for (; i < argc; ++i) {
    const std::string o = argv[i];
    if (o == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (o == "--cpu") a.cpu = std::atoll(v.c_str());
    else if (o == "--fsize") a.fsize = std::atoll(v.c_str());
    else if (o == "--nproc") a.nproc = std::atoll(v.c_str());
    else if (o == "--as") a.as = std::atoll(v.c_str());
    else if (o == "--nofile") a.nofile = std::atoll(v.c_str());
    else if (o == "--user") a.user = v;
    else if (o == "--cwd") a.cwd = v;
    else if (o == "--grace") a.grace = std::atof(v.c_str());
    else if (o == "--harness") a.harness.push_back(v);
    else return false;
  }
  if (i >= argc) return false;
  a.cmd = i;
  return true;
}

// A session of its own, killed with convlab, a subreaper, and the stop signals caught.
void become_supervisor() {
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // convlab died: clean up anyway
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction sa{};
  sa.sa_handler = on_stop;  // no SA_RESTART: waitpid returns EINTR
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
}

// The forked child: its own process group, limits, the user dropped to, then the command.
[[noreturn]] void exec_command(const SuperviseArgs& a, uid_t uid, gid_t gid, char** argv) {
  const int i = a.cmd;
  ::setpgid(0, 0);
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &dfl, nullptr);
  for (int fd = 3; fd < 4096; ++fd) ::close(fd);  // nothing of convlab's leaks into the command
  if (!a.cwd.empty() && ::chdir(a.cwd.c_str()) != 0) child_fail("chdir");
  if (!set_limit(RLIMIT_CPU, a.cpu) || !set_limit(RLIMIT_FSIZE, a.fsize) || !set_limit(RLIMIT_AS, a.as) ||
      !set_limit(RLIMIT_NOFILE, a.nofile) || !set_limit(RLIMIT_NPROC, a.nproc))
    child_fail("setrlimit");
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (!a.user.empty()) {
    if (::setgroups(0, nullptr) != 0) child_fail("setgroups");
    if (::setgid(gid) != 0) child_fail("setgid");
    if (::setuid(uid) != 0) child_fail("setuid");
    if (::getuid() != uid || ::setuid(0) == 0) {
      errno = EPERM;
      child_fail("dropping privileges");
    }
  }
  convlab::exec_retrying_busy([&] { ::execvp(argv[i], argv + i); });
  const std::string what = std::string("cannot run ") + argv[i];
  child_fail(what.c_str());
}

// Waits for the command; a stop signal kills it (and its group) once. Returns its wait status.
int wait_for_command(pid_t pid) {
  int st = 0;
  bool killed = false;
  for (;;) {
    const pid_t r = ::waitpid(pid, &st, 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (g_stop && !killed) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      killed = true;
    }
  }
  return st;
}

// Kills what is left until nothing is, counting each process left and those of the harness.
void kill_leftovers(pid_t pid, const std::vector<std::string>& harness, std::set<pid_t>& leftover,
                    std::set<pid_t>& of_harness) {
  ::kill(-pid, SIGKILL);
  for (int round = 0; round < 2000; ++round) {
    reap_all();
    const auto kids = living_children();
    if (kids.empty()) break;
    for (pid_t k : kids) {
      if (leftover.insert(k).second && is_harness(k, harness)) of_harness.insert(k);
      ::kill(k, SIGKILL);
      ::kill(-k, SIGKILL);
    }
    ::usleep(2000);
  }
  reap_all();
}

}  // namespace

int supervise_main(int argc, char** argv) {
  SuperviseArgs a;
  if (!parse_supervise_args(argc, argv, a)) return 125;
  FILE* status = ::fdopen(3, "w");
  if (!status) return 125;

  become_supervisor();

  uid_t uid = 0;
  gid_t gid = 0;
  if (!a.user.empty()) {
    const passwd* pw = ::getpwnam(a.user.c_str());
    if (!pw) {
      std::fprintf(status, "startfail no such user '%s'\n", a.user.c_str());
      return 0;
    }
    uid = pw->pw_uid;
    gid = pw->pw_gid;
  }

  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(status, "startfail fork: %s\n", std::strerror(errno));
    return 0;
  }
  if (pid == 0) exec_command(a, uid, gid, argv);

  const int st = wait_for_command(pid);
  // The command has ended. What it started may still be ending on its own: the runner dies with
  // its judge (PR_SET_PDEATHSIG), bubblewrap with its parent (--die-with-parent), and on a loaded
  // machine that takes a moment. Wait for them (bounded) before anything counts as left behind:
  // a process the harness was ending must not be charged to the submission.
  const double grace_end = now_s() + a.grace;
  for (;;) {
    reap_all();
    if (living_children().empty() || now_s() >= grace_end) break;
    ::usleep(10000);
  }
  // Then kill its process group, and everything it left behind (orphans are reparented to us),
  // until nothing is left. Each process left is attributed: the harness's own (its executable is
  // one the caller named: the judge, the runner, bubblewrap) or the submission's.
  std::set<pid_t> leftover, of_harness;
  kill_leftovers(pid, a.harness, leftover, of_harness);
  if (WIFEXITED(st))
    std::fprintf(status, "exit %d leftover %zu harness %zu\n", WEXITSTATUS(st), leftover.size(), of_harness.size());
  else if (WIFSIGNALED(st))
    std::fprintf(status, "signal %d leftover %zu harness %zu\n", WTERMSIG(st), leftover.size(), of_harness.size());
  else std::fprintf(status, "startfail wait: %s\n", std::strerror(errno));
  std::fclose(status);
  return 0;
}

// ---- the caller's side -------------------------------------------------------

void cancel_all_runs() { g_cancel = true; }

std::string RunResult::describe() const {
  std::string s;
  if (start_failed) s = "could not be started";
  else if (timed_out) s = "killed: it ran past its time limit of " + fmt_seconds(wall_s);
  else if (idle_timed_out) s = "killed: one test ran past its time limit";
  else if (output_exceeded)
    s = "killed: it printed more than the output limit (" + std::to_string(share_bytes > 0 ? share_bytes : output_bytes) +
        " bytes)";
  else if (signal) s = std::string("crashed: killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) + ")";
  else s = "exited with status " + std::to_string(exit_code);
  if (leftover > 0) {
    s += "; it left " + std::to_string(leftover) + " process(es) running, which were killed";
    if (leftover_harness == leftover) s += " (the grading harness's own, not the submission's)";
    else if (leftover_harness > 0) s += " (" + std::to_string(leftover_harness) + " of them the grading harness's own)";
  }
  return s;
}

namespace {

// The supervisor's command line: convlab __supervise, the limits and options of spec, -- the command.
std::vector<std::string> supervisor_args(const RunSpec& spec) {
  std::vector<std::string> args = {self_exe(), "__supervise"};
  const auto opt = [&](const char* name, long long v) {
    if (v > 0) {
      args.push_back(name);
      args.push_back(std::to_string(v));
    }
  };
  opt("--cpu", spec.limits.cpu_s);
  opt("--fsize", spec.limits.file_bytes);
  opt("--nproc", spec.limits.processes);
  opt("--as", spec.limits.address_bytes);
  opt("--nofile", spec.limits.open_files);
  if (!spec.user.empty()) {
    args.push_back("--user");
    args.push_back(spec.user);
  }
  if (!spec.cwd.empty()) {
    args.push_back("--cwd");
    args.push_back(spec.cwd);
  }
  if (spec.grace_s > 0) {
    args.push_back("--grace");
    args.push_back(std::to_string(spec.grace_s));
  }
  for (const auto& h : spec.harness) {
    args.push_back("--harness");
    args.push_back(h);
  }
  args.push_back("--");
  args.insert(args.end(), spec.argv.begin(), spec.argv.end());
  return args;
}

// The supervisor's ends: its output (stdout and stderr), its status line (fd 3), /dev/null for stdin.
struct SupervisorFds {
  int out[2], st[2];
  int devnull = -1;
};

// Opens the two pipes and /dev/null (throws Error when a pipe cannot be made).
void open_supervisor_fds(SupervisorFds& f) {
  if (::pipe2(f.out, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(f.st, O_CLOEXEC) != 0) {
    ::close(f.out[0]);
    ::close(f.out[1]);
    throw Error(std::string("pipe: ") + std::strerror(errno));
  }
  f.devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

// Forks and execs the supervisor on those ends, then closes the child's ends here; returns its pid.
pid_t start_supervisor(std::vector<char*>& c_args, std::vector<char*>& c_env, const SupervisorFds& f) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {f.out[0], f.out[1], f.st[0], f.st[1], f.devnull}) ::close(fd);
    throw Error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    if (f.devnull >= 0) ::dup2(f.devnull, 0);
    ::dup2(f.out[1], 1);
    ::dup2(f.out[1], 2);
    ::dup2(f.st[1], 3);
    ::execve(c_args[0], c_args.data(), c_env.data());
    ::_exit(127);
  }
  for (int fd : {f.out[1], f.st[1], f.devnull}) ::close(fd);
  return pid;
}


// What run_sandboxed learns while the supervisor runs: its output, its status line, and the kill.
struct Watch {
  const RunSpec& spec;
  const pid_t pid;
  const int out_fd, st_fd;
  const double t0;
  RunResult r;
  std::string head, tail, line, status_text, last_progress;
  std::map<std::string, long long> shares;  // RunSpec::output_share: bytes per share
  long long* share = nullptr;
  long long* over = nullptr;  // the first share past the limit
  bool out_open = true, st_open = true, kill_sent = false;
  double kill_time = 0, last_progress_t;

  Watch(const RunSpec& s, pid_t p, int out, int st, double start)
      : spec(s), pid(p), out_fd(out), st_fd(st), t0(start), last_progress_t(start) {
    share = &shares[""];
  }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // Asks the supervisor to end (SIGTERM), once.
  void request_kill() {
    if (kill_sent) return;
    ::kill(pid, SIGTERM);
    kill_sent = true;
    kill_time = now_s();
  }

  // Takes in got bytes of the command's output: head and tail, lines, progress, shares, the output limit.
  void take_output(const char* buf, ssize_t got) {
    r.output_bytes += got;
    const std::size_t to_head = head.size() < spec.keep_head ? std::min<std::size_t>(spec.keep_head - head.size(), got) : 0;
    head.append(buf, to_head);
    tail.append(buf + to_head, got - to_head);
    if (tail.size() > 2 * spec.keep_tail) tail.erase(0, tail.size() - spec.keep_tail);
    const long long limit = spec.limits.output_kill_bytes;
    for (ssize_t c = 0; c < got; ++c) {
      ++*share;
      if (spec.output_share && limit > 0 && *share > limit && !over) over = share;
      if (buf[c] != '\n') {
        if (line.size() < 4096) line += buf[c];
        continue;
      }
      if (!spec.progress_marker.empty() && starts_with(line, spec.progress_marker)) {
        last_progress = line;
        last_progress_t = now_s();
        if (spec.output_share) share = &shares[spec.output_share(line)];
      }
      if (spec.on_line) spec.on_line(line);
      line.clear();
    }
    if (limit > 0 && !kill_sent && (spec.output_share ? over != nullptr : r.output_bytes > limit)) {
      r.output_exceeded = true;
      request_kill();
    }
  }

  // The time limits and cancelling; false when the supervisor did not answer SIGTERM (killed: stop).
  bool check_time() {
    const double now = now_s();
    if (!kill_sent) {
      if (g_cancel || (spec.limits.timeout_s > 0 && now - t0 > spec.limits.timeout_s)) {
        r.timed_out = true;
        request_kill();
      } else if (spec.limits.idle_timeout_s > 0 && now - last_progress_t > spec.limits.idle_timeout_s) {
        r.idle_timed_out = true;
        request_kill();
      }
    } else if (now - kill_time > 20) {
      ::kill(pid, SIGKILL);  // the supervisor itself does not answer
      return false;
    }
    return true;
  }

  // Reads both pipes until they close (or the supervisor is killed), checking the limits as it goes.
  void run() {
    char buf[65536];
    while (out_open || st_open) {
      pollfd fds[2];
      int n = 0;
      if (out_open) fds[n++] = {out_fd, POLLIN, 0};
      if (st_open) fds[n++] = {st_fd, POLLIN, 0};
      const int pr = ::poll(fds, n, 100);
      if (pr < 0 && errno != EINTR) break;
      for (int k = 0; k < n && pr > 0; ++k) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t got = ::read(fds[k].fd, buf, sizeof buf);
        if (got <= 0) {
          if (got < 0 && errno == EINTR) continue;
          (fds[k].fd == out_fd ? out_open : st_open) = false;
          continue;
        }
        if (fds[k].fd == st_fd) {
          status_text.append(buf, got);
          continue;
        }
        take_output(buf, got);
      }
      if (!check_time()) break;
    }
  }

  // The output kept: all of it, or head and tail with a line saying how much was cut between.
  void keep_output() {
    if (r.output_bytes <= static_cast<long long>(head.size() + tail.size())) {
      r.output = head + tail;
    } else {
      const std::size_t keep = std::min(tail.size(), spec.keep_tail);
      r.output = head + "\n[... " + std::to_string(r.output_bytes - head.size() - keep) + " bytes of output cut ...]\n" +
                 tail.substr(tail.size() - keep);
    }
  }

  // Reads the supervisor's status line: exit or signal, and the processes left behind.
  void read_status() {
    int code = 0;
    std::size_t leftover = 0, of_harness = 0;
    if (std::sscanf(status_text.c_str(), "exit %d leftover %zu harness %zu", &code, &leftover, &of_harness) == 3) {
      r.exit_code = code;
      r.start_failed = code == 127 && r.output.find("convlab sandbox: cannot run") != std::string::npos;
    } else if (std::sscanf(status_text.c_str(), "signal %d leftover %zu harness %zu", &code, &leftover, &of_harness) == 3) {
      r.signal = code;
    } else {
      r.start_failed = !(r.timed_out || r.idle_timed_out || r.output_exceeded);
      if (r.start_failed) r.output += "\nconvlab sandbox: " + (status_text.empty() ? "the supervisor died" : status_text);
    }
    r.leftover = static_cast<int>(leftover);
    r.leftover_harness = static_cast<int>(std::min(of_harness, leftover));
  }
};

}  // namespace

RunResult run_sandboxed(const RunSpec& spec) {
  if (spec.argv.empty()) throw Error("run_sandboxed: no command");
  std::vector<std::string> args = supervisor_args(spec);
  std::vector<std::string> env = spec.env;
  if (env.empty())
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
  auto c_args = c_strings(args);
  auto c_env = c_strings(env);

  SupervisorFds f;
  open_supervisor_fds(f);
  const double t0 = now_s();
  const pid_t pid = start_supervisor(c_args, c_env, f);

  Watch w(spec, pid, f.out[0], f.st[0], t0);
  w.run();
  ::close(f.out[0]);
  ::close(f.st[0]);
  int wst = 0;
  while (::waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
  }
  RunResult& r = w.r;
  r.wall_s = now_s() - t0;
  r.last_progress = w.last_progress;
  if (w.over) r.share_bytes = *w.over;
  w.keep_output();
  w.read_status();
  return std::move(r);
}

RunResult run_tool(const std::vector<std::string>& argv, const std::string& cwd, double timeout_s) {
  RunSpec s;
  s.argv = argv;
  s.cwd = cwd;
  s.limits.timeout_s = timeout_s;
  s.limits.open_files = 0;
  s.keep_head = 1 << 20;
  s.keep_tail = 1 << 20;
  return run_sandboxed(s);
}

}  // namespace convlab::cli
