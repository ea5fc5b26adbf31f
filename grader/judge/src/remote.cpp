// The judge's end of the judge-runner split: the runner process and its requests. The public API
// (convlab/remote.hpp) is in remote_api.cpp, the CUDA-named functions of the judge's runtime in remote_cuda.cpp.
#include "convlab/remote.hpp"
#include "remote_internal.hpp"

#include "convlab/check.hpp"
#include "convlab/record.hpp"
#include "convlab/exec_busy.hpp"
#include "convlab/remote_contract.hpp"
#include "convlab/runner_words.hpp"
#include "convlab/speed_check.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace convlab::remote {
// Shared with the judge's CUDA runtime (remote_cuda.cpp), declared in remote_internal.hpp.
cudaError_t g_last_error = cudaSuccess;
cudaError_t g_sync_error = cudaSuccess;  // the error of the work of the last call, until synchronised
std::map<int, std::pair<std::string, std::string>> g_error_text;  // code -> name, description
ProgramRecorder* g_recording = nullptr;

using namespace detail;

namespace detail {

// ---- the runner process ----------------------------------------------------------------------

RunnerOptions g_options;
// The runners of this judge: [0] runs everything but what the GPU's counters count; [1], the
// counting runner, started on the first set_counting(true) on a GPU, keeps CUPTI's profiler on its
// context from then on and runs only the counted work (issue 27): no timed run ever shares a
// context with the profiler, and neither runner is replaced for it (the profiler's start-up, about
// a second, is paid once per judge, not once per test).
Connection g_runners[2];
int g_which = 0;                                  // the runner requests go to
std::uint64_t g_generations = 0;                  // starts so far, of either runner
Connection& conn() { return g_runners[g_which]; }
// Who holds each allocation and stream: freed there, whichever runner is current.
std::map<std::uint64_t, std::pair<int, std::uint64_t>> g_owner;  // address -> runner, its generation
DeviceStatus g_status;
std::string g_current;  // what the runner was asked to do last, for messages
std::vector<CallRecord> g_calls;
std::map<std::string, std::map<std::string, std::string>> g_kernels_launched;  // slot -> kernel -> first test
int g_schedule = 0;
std::uint64_t g_schedule_seed = 0;
std::string g_ended;  // why the runner of this test ended: later requests of the test fail with it
std::string g_counters_refused;  // why the GPU refused its counters: refused to every later test
// Where the test's time went (issue 29): seconds the judge waited for each kind of request.
std::map<std::string, double> g_seconds;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The phase a request's wait belongs to (remote::take_seconds() names them).
const char* phase_of(Op op) {
  if (conn().counting) return "counting";  // a runner with the profiler on: its work is the counting's
  switch (op) {
    case Op::hello: case Op::ceilings: case Op::quit: return "startup";
    case Op::malloc: case Op::free: case Op::stream_create: case Op::stream_destroy: return "memory";
    case Op::to_device: case Op::to_host: case Op::copy: case Op::memset: case Op::random_fill: return "copies";
    case Op::measure: return "timed_overhead";
    case Op::counting: return "counting";
    default: return "calls";
  }
}

Printed g_printed;

void keep_printed(const char* p, std::size_t n) {
  g_printed.total += n;
  for (std::size_t i = 0; i < n; ++i) {
    if (g_printed.lines < kPrintedLines && g_printed.kept.size() < kPrintedBytes) {
      g_printed.kept += p[i];
      if (p[i] == '\n') ++g_printed.lines;
    } else {
      ++g_printed.cut_bytes;
      if (p[i] == '\n') ++g_printed.cut_lines;
    }
  }
}

// Reads what is waiting on the runner's output pipe, up to `most` bytes; false at its end.
bool drain_printed(std::size_t most) {
  char buf[65536];
  // The other runner's waiting prints first (it is idle: what it printed is from its last request).
  if (Connection& other = g_runners[1 - g_which]; other.printed >= 0)
    for (ssize_t got; (got = ::read(other.printed, buf, sizeof buf)) > 0;) keep_printed(buf, static_cast<std::size_t>(got));
  while (conn().printed >= 0 && most > 0) {
    const ssize_t got = ::read(conn().printed, buf, std::min(sizeof buf, most));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return got < 0 && errno == EAGAIN;
    keep_printed(buf, static_cast<std::size_t>(got));
    most -= static_cast<std::size_t>(got);
  }
  return true;
}

// A byte run that is valid UTF-8 from `i`: its length, or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

std::string signal_name(int sig) {
  const char* d = sigdescr_np(sig);
  const char* a = sigabbrev_np(sig);
  return std::string("signal ") + std::to_string(sig) + (a ? std::string(" (SIG") + a + ": " + (d ? d : "") + ")" : "");
}

void close_fds(Connection& c) {
  if (c.req >= 0) ::close(c.req);
  if (c.rep >= 0) ::close(c.rep);
  if (c.printed >= 0) {
    drain_printed(std::size_t(1) << 20);  // its last words before it ended: a crash's are the useful ones
    ::close(c.printed);
  }
  if (c.window) ::munmap(c.window, c.window_bytes);
  c = Connection{};
}

// Ends the runner (killed if it is still there) and says how it ended.
std::string stop(bool kill_it) {
  std::string how;
  if (conn().pid > 0) {
    if (kill_it) ::kill(conn().pid, SIGKILL);
    int st = 0;
    pid_t r;
    do {
      r = ::waitpid(conn().pid, &st, 0);
    } while (r < 0 && errno == EINTR);
    if (r == conn().pid) {
      const int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      // Under a prefix (the grading sandbox, bubblewrap) the runner is the prefix's child, and
      // the prefix exits with 128 + N when the runner was ended by signal N (a crash under
      // `convlab grade` showed as "exited with status 139").
      if (!g_options.prefix.empty() && code > 128 && code <= 128 + 64)
        how = "was ended by " + signal_name(code - 128) + " (exit status " + std::to_string(code) + " from " +
              g_options.prefix.front().substr(g_options.prefix.front().rfind('/') + 1) + ", which ran it)";
      else if (WIFEXITED(st)) how = "exited with status " + std::to_string(code);
      else if (WIFSIGNALED(st)) how = "was ended by " + signal_name(WTERMSIG(st));
    }
  }
  close_fds(conn());
  return how.empty() ? "ended" : how;
}

// Asks the current runner to quit and waits a moment for it (its CUDA context, and the GPU's
// profiler if it held it, end with it), then ends it as stop(true) does if it is still there.
void quit() {
  if (!conn().started || conn().pid <= 0) return;
  const std::uint32_t head[2] = {wire::kMagic, static_cast<std::uint32_t>(Op::quit)};
  const std::uint64_t len = 0;
  (void)!::write(conn().req, head, sizeof head);
  (void)!::write(conn().req, &len, sizeof len);
  ::close(conn().req);
  conn().req = -1;
  for (int i = 0; i < 1000; ++i) {  // up to 10 s: on a loaded machine a runner may take seconds
    int st = 0;
    if (::waitpid(conn().pid, &st, WNOHANG) == conn().pid) {
      conn().pid = -1;
      break;
    }
    ::usleep(10000);
  }
  stop(true);
}

// At the judge's exit: each runner quits, so that no process of the graders is left when the
// judge's own process ends (convlab grade counts those).
struct QuitAtExit {
  ~QuitAtExit() {
    for (g_which = 0; g_which < 2; ++g_which) quit();
    g_which = 0;
  }
} g_quit_at_exit;

// The kernels of a call of the student's code, in the test's record and in the process's ledger.
void note_kernels(const std::string& entry, const wire::Evidence& evidence) {
  if (entry.rfind("baseline.", 0) == 0) return;  // the graders' own kernels
  TestRecord& rec = current_record();
  if (rec.escaped.empty()) rec.escaped = escaped_work(evidence);  // in every test, whatever its kind
  if (rec.outside_technique) return;
  // "lab03.correctness.conv2d_tiled_in.w1_h1_r0": the slot is the third part.
  std::string slot;
  if (const auto a = rec.test.find('.'); a != std::string::npos)
    if (const auto b = rec.test.find('.', a + 1); b != std::string::npos) {
      const auto c = rec.test.find('.', b + 1);
      slot = rec.test.substr(b + 1, c == std::string::npos ? std::string::npos : c - b - 1);
    }
  for (const auto& k : evidence.launches) {
    if (std::find(rec.kernels.begin(), rec.kernels.end(), k.name) == rec.kernels.end()) rec.kernels.push_back(k.name);
    if (!slot.empty()) g_kernels_launched[slot].emplace(k.name, rec.test);
  }
}

[[noreturn]] void fail(const std::string& why, bool kill_it) {
  const std::string what = g_current;
  const std::string how = stop(kill_it);
  std::string text = "the runner (the process that runs your kernels) " + (kill_it ? why : how + (why.empty() ? "" : " " + why));
  if (!what.empty()) text += " while running " + what;
  g_ended = text;
  throw RunnerError(text);
}

void write_all(int fd, const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t put = ::write(fd, c, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) fail("stopped taking requests", false);
    c += put;
    n -= static_cast<std::size_t>(put);
  }
}

// Reads exactly n bytes before the deadline; a runner that ends or stays silent fails the request.
void read_all(int fd, void* p, std::size_t n, std::chrono::steady_clock::time_point deadline) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "did not answer within %.0f s (a kernel that never ends?) and was stopped",
                    g_options.timeout_s);
      fail(buf, true);
    }
    // The runner's prints are taken as they come: a runner blocked on a full output pipe would
    // never answer.
    pollfd pfd[2] = {{fd, POLLIN, 0}, {conn().printed, POLLIN, 0}};
    const int pr = ::poll(pfd, conn().printed >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    if (conn().printed >= 0 && (pfd[1].revents & (POLLIN | POLLHUP))) {
      if (!drain_printed(std::size_t(1) << 20)) {  // the runner closed its output: its end is near
        ::close(conn().printed);
        conn().printed = -1;
      }
      if (g_printed.total > kPrintedStopBytes)
        fail("printed more than " + std::to_string(kPrintedStopBytes >> 20) +
                 " MiB in one test (a print in an endless loop?) and was stopped at the output limit",
             true);
    }
    if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t got = ::read(fd, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail("", false);
    c += got;
    n -= static_cast<std::size_t>(got);
  }
}

}  // namespace detail

Reply request(Op op, const std::string& payload, const std::string& what) {
  // Addresses and streams belong to the runner that made them: after it ended, the rest of the
  // test cannot go on in a fresh one.
  if (!g_ended.empty()) throw RunnerError(g_ended + " (earlier in this test)");
  if (!conn().started) {
    const auto t = std::chrono::steady_clock::now();
    const double before = g_seconds["startup"];
    start();  // its hello is a request: its wait is part of this one
    g_seconds["startup"] = before + seconds_since(t);
  }
  settle();  // the replies of requests sent ahead, first
  struct Clock {  // the wait, thrown or not, into its phase
    const char* phase;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Clock() { g_seconds[phase] += seconds_since(t0); }
  } clock{phase_of(op)};
  g_current = what;
  send_request(op, payload);
  return receive_reply(what);
}

namespace detail {

void send_request(Op op, const std::string& payload) {
  const std::uint32_t head[2] = {wire::kMagic, static_cast<std::uint32_t>(op)};
  const std::uint64_t len = payload.size();
  write_all(conn().req, head, sizeof head);
  write_all(conn().req, &len, sizeof len);
  write_all(conn().req, payload.data(), payload.size());
}

Reply receive_reply(const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(g_options.timeout_s * 1000));
  std::uint32_t rhead[2];
  std::uint64_t rlen = 0;
  read_all(conn().rep, rhead, sizeof rhead, deadline);
  read_all(conn().rep, &rlen, sizeof rlen, deadline);
  if (rhead[0] != wire::kMagic || rlen > wire::kMaxPayload || rhead[1] > static_cast<std::uint32_t>(Status::cuda_error))
    fail("sent a malformed reply (was something else written to its reply channel?) and was stopped", true);
  Reply r;
  r.status = static_cast<Status>(rhead[1]);
  r.payload.resize(rlen);
  read_all(conn().rep, r.payload.data(), rlen, deadline);
  drain_printed(std::size_t(1) << 20);  // the runner flushed its prints before it answered
  g_current.clear();
  if (r.status == Status::error) throw std::runtime_error("the runner could not " + what + ": " + r.payload);
  if (r.status == Status::cuda_error) {
    try {
      wire::Reader rd(r.payload);
      r.code = static_cast<cudaError_t>(rd.u32());
      std::string name = rd.str(), text = rd.str();
      rd.str();  // the harness's message
      if (rd.u8()) conn().restart = true;
      g_error_text[r.code] = {std::move(name), std::move(text)};
    } catch (const wire::WireError& e) {
      fail(std::string("sent a malformed error (") + e.what() + ") and was stopped", true);
    }
    g_last_error = r.code;
  }
  return r;
}

void start(bool defer_hello) {
  if (g_options.path.empty()) throw RunnerError("no runner was given to the graders (--convlab-runner=PATH)");
  if (::access(g_options.path.c_str(), X_OK) != 0)
    throw RunnerError("the runner " + g_options.path + " cannot be run (" + std::strerror(errno) +
                      "): build the lab first (cmake --build)");
  std::signal(SIGPIPE, SIG_IGN);  // a runner that dies must fail a request, not end the judge
  int to_runner[2], from_runner[2], report[2], printed[2];
  if (::pipe2(to_runner, O_CLOEXEC) || ::pipe2(from_runner, O_CLOEXEC) || ::pipe2(report, O_CLOEXEC) ||
      ::pipe2(printed, O_CLOEXEC | O_NONBLOCK))
    throw RunnerError(std::string("cannot make pipes for the runner: ") + std::strerror(errno));
  const int mem = ::memfd_create("convlab-window", MFD_CLOEXEC);
  if (mem < 0 || ::ftruncate(mem, static_cast<off_t>(g_options.window_bytes)) != 0)
    throw RunnerError(std::string("cannot make the data window: ") + std::strerror(errno));
  void* w = ::mmap(nullptr, g_options.window_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mem, 0);
  if (w == MAP_FAILED) throw RunnerError(std::string("cannot map the data window: ") + std::strerror(errno));

  std::vector<std::string> argv = g_options.prefix;
  argv.push_back(g_options.path);
  argv.push_back("--convlab-serve=" + std::to_string(g_options.window_bytes));
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // The runner's environment is the judge's without the CONVLAB_* settings: the judge has read
  // them, and the runner must not (seeds, results folders, keys).
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "CONVLAB_", 8) != 0) env.emplace_back(*e);
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw RunnerError(std::string("cannot start the runner: ") + std::strerror(errno));
  if (pid == 0) {
    // Move the three channels to fds 3, 4, 5 (via high numbers, so none is overwritten early).
    // Its stdout and stderr go to the judge's pipe for them, blocking on the runner's side.
    const int a = ::fcntl(to_runner[0], F_DUPFD, 64), b = ::fcntl(from_runner[1], F_DUPFD, 64),
              c = ::fcntl(mem, F_DUPFD, 64), o = ::fcntl(printed[1], F_DUPFD, 64);
    if (a < 0 || b < 0 || c < 0 || o < 0 || ::dup2(a, 3) < 0 || ::dup2(b, 4) < 0 || ::dup2(c, 5) < 0 ||
        ::fcntl(o, F_SETFL, 0) < 0 || ::dup2(o, 1) < 0 || ::dup2(o, 2) < 0)
      ::_exit(126);
    for (int fd = 6; fd < 1024; ++fd)
      if (fd != report[1]) ::close(fd);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the runner never outlives its judge
    if (::getppid() != parent) ::_exit(126);
    exec_retrying_busy([&] { ::execve(cargv[0], cargv.data(), cenv.data()); });  // a runner copied a moment ago
    const int err = errno;
    (void)!::write(report[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(to_runner[0]);
  ::close(from_runner[1]);
  ::close(printed[1]);
  ::close(mem);
  ::close(report[1]);
  int exec_errno = 0;
  const bool exec_failed = ::read(report[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  ::close(report[0]);
  conn().pid = pid;
  conn().req = to_runner[1];
  conn().rep = from_runner[0];
  conn().printed = printed[0];
  conn().window = static_cast<char*>(w);
  conn().window_bytes = g_options.window_bytes;
  conn().started = true;
  conn().generation = ++g_generations;
  if (exec_failed) {
    stop(true);
    throw RunnerError("cannot run " + argv.front() + ": " + std::strerror(exec_errno));
  }
  // Hello: the same protocol, the entries the judge's proxies will call.
  if (defer_hello) {
    send_request(Op::hello, "");
    conn().pending.push_back(Op::hello);
    return;
  }
  hello_reply(request(Op::hello, "", runner_words::kStartUp));
}

void hello_reply(const Reply& r) {
  try {
    wire::Reader rd(r.payload);
    const std::uint32_t version = rd.u32();
    if (version != wire::kVersion)
      fail("speaks protocol version " + std::to_string(version) + ", the judge " + std::to_string(wire::kVersion) +
               ": rebuild both",
           true);
    g_status.backend = rd.str(16);
    g_status.available = rd.u8() != 0;
    g_status.reason = rd.str();
    g_status.summary = rd.str();
    g_status.entries.resize(rd.u64());
    if (g_status.entries.size() > 1000) throw wire::WireError("too many entries");
    for (auto& e : g_status.entries) e = rd.str(256);
    rd.finish();
  } catch (const wire::WireError& e) {
    fail(std::string("answered hello with garbage (") + e.what() + ") and was stopped", true);
  }
  Entries mine;
  convlab_remote_entries(mine);
  for (const auto& n : mine.names())
    if (std::find(g_status.entries.begin(), g_status.entries.end(), n) == g_status.entries.end())
      fail("has no entry '" + n + "': it was built for another lab, or from another version of the course", true);
}

}  // namespace detail

// ---- bulk data through the window ---------------------------------------------------------------

cudaError_t to_device(std::uint64_t dst, const char* src, std::size_t bytes) {
  if (!conn().started) start();
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(bytes - done, conn().window_bytes);
    std::memcpy(conn().window, src + done, n);
    wire::Writer w;
    w.u64(dst + done);
    w.u64(n);
    const Reply r = request(Op::to_device, w.take(), "a copy to the device");
    if (r.status != Status::ok) return r.code;
    done += n;
  }
  return cudaSuccess;
}

cudaError_t to_host(char* dst, std::uint64_t src, std::size_t bytes) {
  if (!conn().started) start();
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(bytes - done, conn().window_bytes);
    wire::Writer w;
    w.u64(src + done);
    w.u64(n);
    const Reply r = request(Op::to_host, w.take(), "a copy to the host");
    if (r.status != Status::ok) return r.code;
    std::memcpy(dst + done, conn().window, n);
    done += n;
  }
  return cudaSuccess;
}

void note_op(wire::ProgramOp op) {
  if (g_recording) g_recording->append(std::move(op));
}

}  // namespace convlab::remote
