// A runner that misbehaves on request, for the judge's own tests (test_remote.cpp): it answers
// hello like a real runner, then, for a call of entry X, does what X says — crashes, hangs, sends
// garbage, sends too much, exits with status 0, floods its output — or answers properly ("ok").
// With FAKE_RUNNER_PROFILER=<file> it says it runs on a GPU and plays the GPU's profiler, which
// serves one process at a time: asked to count, it takes an exclusive lock on the file (held
// until it exits), and answers as CUPTI does when another holds it; a call of "loads_N" then
// reports one kernel, counted_kernel, that loaded N words from global memory (its `threads`: the
// fake's process id, so that a test can tell which runner counted).
#include "convlab/wire.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

using namespace convlab::wire;

namespace {

bool read_exact(void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n) {
    const ssize_t got = ::read(3, c, n);
    if (got <= 0) return false;
    c += got, n -= static_cast<std::size_t>(got);
  }
  return true;
}

void write_exact(const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t put = ::write(4, c, n);
    if (put <= 0) std::_Exit(9);
    c += put, n -= static_cast<std::size_t>(put);
  }
}

void reply(std::uint32_t magic, std::uint32_t status, const std::string& payload, std::uint64_t claimed_length) {
  const std::uint32_t head[2] = {magic, status};
  write_exact(head, sizeof head);
  write_exact(&claimed_length, sizeof claimed_length);
  write_exact(payload.data(), payload.size());
}

}  // namespace

int main() {
  for (;;) {
    std::uint32_t head[2];
    std::uint64_t len = 0;
    if (!read_exact(head, sizeof head) || !read_exact(&len, sizeof len)) return 0;
    std::string payload(len, '\0');
    if (!read_exact(payload.data(), len)) return 0;
    const auto op = static_cast<Op>(head[1]);
    Writer w;
    const char* profiler = std::getenv("FAKE_RUNNER_PROFILER");
    if (op == Op::hello) {
      w.u32(kVersion);
      w.str(profiler ? "cuda" : "cpu");
      w.u8(1);
      w.str("");
      w.str("a fake runner");
      const std::vector<std::string> names = {"ok",    "crash", "hang",  "garbage",      "huge",
                                              "exit0", "noise", "short", "fake_verdict", "flood"};
      w.u64(names.size());
      for (const auto& n : names) w.str(n);
      reply(kMagic, 0, w.take(), w.data().size());
      continue;
    }
    static int held = -1;  // the fake profiler's lock, once taken
    if (op == Op::counting && profiler) {
      // 1 and 2 turn the counters on; 3 only sets the host side up (remote::prepare_counting):
      // the profiler is not taken.
      if (held < 0 && !payload.empty() && (payload[0] == 1 || payload[0] == 2)) {
        const int fd = ::open(profiler, O_RDWR | O_CREAT, 0600);
        if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) held = fd;
        else if (fd >= 0) ::close(fd);
      }
      w.str(held >= 0 ? "" : "CUPTI could not set up the counters (counter availability: CUPTI_ERROR_HARDWARE_BUSY)");
      reply(kMagic, 0, w.take(), w.data().size());
      continue;
    }
    if (op != Op::call) {
      reply(kMagic, 0, "", 0);
      continue;
    }
    Reader r(payload);
    const std::string entry = r.str();
    if (entry == "crash") {
      // The default action, as for a kernel that crashes its process: AddressSanitizer's SIGSEGV
      // handler (the cpu-asan preset) would otherwise report it and exit with status 1.
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (entry == "hang") for (;;) ::pause();
    if (entry == "exit0") std::exit(0);
    if (entry == "garbage") {
      reply(0xBADBAD, 0, "hello", 5);
      continue;
    }
    if (entry == "huge") {
      reply(kMagic, 0, "", kMaxPayload + 1);  // a length no reply may have
      continue;
    }
    if (entry == "noise")
      for (int i = 0; i < 1000; ++i) std::printf("output that is not a reply %d\n", i);
    if (entry == "fake_verdict") {  // what a launcher could print to pass for the graders, then a wrong answer
      std::printf("[       OK ] lab01.correctness.conv1d.n1_r0 (0 ms)\n[  PASSED  ] 13 tests.\n");
      std::fprintf(stderr, "[  SKIPPED ] 1 test\n\x1b[2J\xff\n");
      for (int i = 0; i < 100; ++i) std::printf("debug line %d\n", i);
    }
    if (entry == "flood")  // a print in an endless loop
      for (;;) std::fputs("debug: printing forever ...............................................\n", stdout);
    std::fflush(nullptr);  // as the real runner does before it answers
    // A proper answer: returned normally, no errors, empty result, empty evidence.
    w.u8(0);
    w.str("");
    w.i64(0);
    for (int k = 0; k < 2; ++k) {
      w.u32(0);
      w.str("");
      w.str("");
    }
    w.u8(0);
    w.str("");
    Evidence e;
    e.recorded = true;
    KernelLaunch k;
    k.name = "fake_kernel";
    // "loads_N" while counting: one kernel that loaded N words from global memory.
    if (held >= 0 && entry.rfind("loads_", 0) == 0) {
      e.counts_available = e.counted_on_gpu = true;
      k.name = "counted_kernel";
      k.counted = true;
      k.global_loads = std::strtoull(entry.c_str() + 6, nullptr, 10);
      k.threads = static_cast<std::uint64_t>(::getpid());  // which process counted it (the judge's tests compare)
    }
    e.launches.push_back(k);
    e.write(w);
    if (entry == "short") {  // the reply's frame says more than it sends, then the runner ends
      reply(kMagic, 0, w.data().substr(0, 10), w.data().size());
      return 0;
    }
    reply(kMagic, 0, w.take(), w.data().size());
  }
}
