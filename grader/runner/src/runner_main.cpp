// The runner: the process that holds the student's kernels. It serves the judge (the graders'
// process, which holds no student code) over two pipes and a shared memory window: it allocates
// device memory, moves data, calls the lab's contract functions on the student's code, records
// what that code launched and copied, and times it. It decides nothing: every verdict is the
// judge's, from the data and the records sent back. See convlab/wire.hpp for the messages.
//
// This file holds the request loop, memory, streams and the student's calls; the timed runs are in
// runner_timing.cpp, and runner_internal.hpp declares the Server the two share.
//
//   labNN_runner --convlab-serve=WINDOW_BYTES     (fd 3: requests, fd 4: replies, fd 5: the window)
#include "runner_internal.hpp"

#ifdef CONVLAB_BACKEND_CPU
#include <convlab_cpu/launch.hpp>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

// The lab's table (remote_labNN.cpp, compiled for the runner), and the harness's own entries.
void convlab_remote_entries(convlab::remote::Entries& entries);
namespace convlab::runner {
void add_harness_entries(remote::Entries& entries);
}

namespace convlab::runner {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "convlab runner: %s\n", why.c_str());
  std::_Exit(3);
}

namespace {

constexpr int kRequestFd = 3, kReplyFd = 4, kWindowFd = 5;

bool read_exact(int fd, void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t got = ::read(fd, c, n);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    c += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

void write_exact(int fd, const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t put = ::write(fd, c, n);
    if (put < 0) {
      if (errno == EINTR) continue;
      die(std::string("cannot answer the judge: ") + std::strerror(errno));
    }
    c += put;
    n -= static_cast<std::size_t>(put);
  }
}

void send(Status status, const std::string& payload) {
  // What the kernels' code printed reaches the judge's pipe for it before the answer does, so the
  // judge files it under the request that printed it.
  std::fflush(nullptr);
  const std::uint32_t head[2] = {wire::kMagic, static_cast<std::uint32_t>(status)};
  const std::uint64_t len = payload.size();
  write_exact(kReplyFd, head, sizeof head);
  write_exact(kReplyFd, &len, sizeof len);
  write_exact(kReplyFd, payload.data(), payload.size());
}

}  // namespace

void write_error(wire::Writer& w, cudaError_t e) {
  w.u32(static_cast<std::uint32_t>(e));
  w.str(e == cudaSuccess ? "" : cudaGetErrorName(e));
  w.str(e == cudaSuccess ? "" : cudaGetErrorString(e));
}

// After an error: is the context still usable? A sticky error (an illegal address, a trap) makes
// every later call fail, and the judge then starts a fresh runner for the next test.
bool context_lost() {
  cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess;
}

Server::Server(std::size_t window_bytes) : window_bytes_(window_bytes) {
  void* w = ::mmap(nullptr, window_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, kWindowFd, 0);
  if (w == MAP_FAILED) die(std::string("cannot map the data window: ") + std::strerror(errno));
  window_ = static_cast<char*>(w);
  convlab_remote_entries(entries_);
  add_harness_entries(entries_);
  recorder_init();
}

void Server::serve() {
  for (;;) {
    std::uint32_t head[2];
    std::uint64_t len = 0;
    if (!read_exact(kRequestFd, head, sizeof head) || !read_exact(kRequestFd, &len, sizeof len)) return;  // judge gone
    if (head[0] != wire::kMagic || len > wire::kMaxPayload) die("a malformed request from the judge");
    std::string payload(len, '\0');
    if (!read_exact(kRequestFd, payload.data(), len)) return;
    const auto op = static_cast<Op>(head[1]);
    if (op == Op::quit) return;
    try {
      wire::Reader r(payload);
      send(Status::ok, handle(op, r));
    } catch (const CudaFailure& f) {
      wire::Writer w;
      write_error(w, f.code);
      w.str(f.what);
      w.u8(context_lost());
      send(Status::cuda_error, w.take());
    } catch (const CudaError& e) {
      wire::Writer w;
      write_error(w, e.code());
      w.str(e.what());
      w.u8(context_lost());
      send(Status::cuda_error, w.take());
    } catch (const std::exception& e) {
      send(Status::error, e.what());
    }
  }
}

// ---- ArgContext: how a call's arguments are decoded ----------------------------------------
void* Server::device_pointer(std::uint64_t address, bool writable) {
  if (address == 0) {
    call_args_.push_back({0, 0, writable});
    return nullptr;
  }
  const auto a = static_cast<std::uintptr_t>(address);
  if (handles_.count(a)) {  // an opaque object an entry returned earlier (a cuDNN state, say)
    call_args_.push_back({a, a, writable});
    return reinterpret_cast<void*>(a);
  }
  const auto it = allocation_of(a);
  if (!it) throw wire::WireError("a pointer argument that the runner never allocated");
  call_args_.push_back({(*it)->first, (*it)->first + (*it)->second, writable});
  return reinterpret_cast<void*>(a);
}
void* Server::host_copy(const char* bytes, std::size_t n) {
  host_copies_.emplace_back(new std::max_align_t[(n + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t)]);
  std::memcpy(host_copies_.back().get(), bytes, n);
  return host_copies_.back().get();
}
cudaStream_t Server::stream(std::uint64_t handle) {
  const auto s = reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(handle));
  if (handle != 0 && !streams_.count(s)) throw wire::WireError("a stream that the runner never created");
  call_streams_.push_back(s);
  return s;
}

std::optional<std::map<std::uintptr_t, std::size_t>::const_iterator> Server::allocation_of(std::uintptr_t a) const {
  auto it = allocations_.upper_bound(a);
  if (it == allocations_.begin()) return std::nullopt;
  --it;
  if (a >= it->first + std::max<std::size_t>(it->second, 1)) return std::nullopt;
  return it;
}

// [address, address + bytes) must lie inside one allocation.
void* Server::device_range(std::uint64_t address, std::uint64_t bytes) const {
  const auto a = static_cast<std::uintptr_t>(address);
  const auto it = allocation_of(a);
  if (!it || bytes > (*it)->first + (*it)->second - a)
    throw std::invalid_argument("a device range outside the runner's allocations");
  return reinterpret_cast<void*>(a);
}

std::uint64_t Server::window_bytes(std::uint64_t bytes) const {
  if (bytes > window_bytes_) throw std::invalid_argument("a transfer larger than the data window");
  return bytes;
}

std::string Server::handle(Op op, wire::Reader& r) {
  wire::Writer w;
  switch (op) {
    case Op::hello:
      do_hello(r, w);
      break;
    case Op::malloc:
    case Op::free:
    case Op::to_device:
    case Op::to_host:
    case Op::copy:
    case Op::memset:
      do_memory(op, r, w);
      break;
    case Op::stream_create: {
      const std::uint32_t flags = r.u32();
      r.finish();
      cudaStream_t s = nullptr;
      check(cudaStreamCreateWithFlags(&s, flags), "cudaStreamCreateWithFlags");
      streams_.insert(s);
      w.u64(reinterpret_cast<std::uintptr_t>(s));
      break;
    }
    case Op::stream_destroy: {
      const auto s = reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(r.u64()));
      r.finish();
      if (!streams_.erase(s)) throw std::invalid_argument("cudaStreamDestroy of a stream the runner never created");
      check(cudaStreamDestroy(s), "cudaStreamDestroy");
      break;
    }
    case Op::synchronize: {
      r.finish();
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      break;
    }
    case Op::random_fill: {
      const std::uint64_t a = r.u64(), count = r.u64(), nonce = r.u64();
      r.finish();
      random_fill(static_cast<float*>(device_range(a, count * sizeof(float))), count, nonce, nullptr);
      check(cudaDeviceSynchronize(), "random_fill");
      break;
    }
    case Op::call:
      return do_call(r);
    case Op::measure:
      return do_measure(r);
    case Op::ceilings:
      do_ceilings(r, w);
      break;
    case Op::counting:
      do_counting(r, w);
      break;
    default:
      throw wire::WireError("an unknown request " + std::to_string(static_cast<unsigned>(op)));
  }
  return w.take();
}

// Op::hello: the protocol's version, the backend, the GPU, and the lab's entries.
void Server::do_hello(wire::Reader& r, wire::Writer& w) {
  r.finish();
  w.u32(wire::kVersion);
#ifdef CONVLAB_BACKEND_CPU
  w.str("cpu");
#else
  w.str("cuda");
#endif
  std::string reason;
  const bool available = gpu_available(&reason);
  w.u8(available);
  w.str(reason);
  w.str(available ? device_info().summary() : std::string());
  const auto names = entries_.names();
  w.u64(names.size());
  for (const auto& n : names) w.str(n);
}

// The judge's memory requests: allocations, copies through the window and on the device, memsets.
void Server::do_memory(Op op, wire::Reader& r, wire::Writer& w) {
  switch (op) {
    case Op::malloc: {
      const std::uint64_t bytes = r.u64();
      r.finish();
      void* p = nullptr;
      check(cudaMalloc(&p, bytes), "cudaMalloc");
      allocations_[reinterpret_cast<std::uintptr_t>(p)] = bytes;
      w.u64(reinterpret_cast<std::uintptr_t>(p));
      break;
    }
    case Op::free: {
      const auto a = static_cast<std::uintptr_t>(r.u64());
      r.finish();
      if (!allocations_.erase(a)) throw std::invalid_argument("cudaFree of an address the runner never allocated");
      check(cudaFree(reinterpret_cast<void*>(a)), "cudaFree");
      break;
    }
    case Op::to_device: {
      const std::uint64_t a = r.u64(), bytes = window_bytes(r.u64());
      r.finish();
      check(cudaMemcpy(device_range(a, bytes), window_, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
      settle("cudaMemcpy to the device");
      break;
    }
    case Op::to_host: {
      const std::uint64_t a = r.u64(), bytes = window_bytes(r.u64());
      r.finish();
      check(cudaMemcpy(window_, device_range(a, bytes), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
      break;
    }
    case Op::copy: {
      const std::uint64_t dst = r.u64(), src = r.u64(), bytes = r.u64();
      r.finish();
      check(cudaMemcpy(device_range(dst, bytes), device_range(src, bytes), bytes, cudaMemcpyDeviceToDevice),
            "cudaMemcpy on the device");
      settle("cudaMemcpy on the device");
      break;
    }
    case Op::memset: {
      const std::uint64_t a = r.u64();
      const std::uint32_t value = r.u32();
      const std::uint64_t bytes = r.u64();
      r.finish();
      check(cudaMemset(device_range(a, bytes), static_cast<int>(value & 0xFF), bytes), "cudaMemset");
      settle("cudaMemset");
      break;
    }
    default:
      break;  // (handle() sends only the requests above)
  }
}

// Op::ceilings: the device's copy bandwidth and FP32 peak, measured once (0, 0 on the CPU backend).
void Server::do_ceilings(wire::Reader& r, wire::Writer& w) {
  r.finish();
#ifdef CONVLAB_BACKEND_CPU
  w.f64(0);
  w.f64(0);
#else
  if (!ceilings_) ceilings_ = {measure_copy_bandwidth_gbs(), measure_fp32_peak_gflops()};
  w.f64(ceilings_->first);
  w.f64(ceilings_->second);
#endif
}

void Server::do_counting(wire::Reader& r, wire::Writer& w) {
  // Count each kernel of the next calls with the GPU's own counters (technique graders,
  // issue 27). The CPU backend counts every call anyway.
  // 0: off; 1: on; 2: on, and a first session now, on a kernel of the harness (the
  // profiler's first session costs most: paid while the judge does other work); 3: not
  // yet, but soon: the host side of the set-up starts in a thread of its own while this
  // runner goes on with timed runs (nothing is enabled on the context until mode 1 or 2).
  const std::uint8_t mode = r.u8();
  if (mode > 3) throw wire::WireError("an unknown counting mode " + std::to_string(unsigned(mode)));
  const bool on = mode == 1 || mode == 2;
  r.finish();
  std::string why;
#ifndef CONVLAB_BACKEND_CPU
  if (mode == 3) {
    counters_.prepare();
  } else {
    counting_ = on && counters_.ready(&why);
    if (counting_ && mode == 2) warm_up_counters();
  }
#else
  (void)on;
#endif
  w.str(why);
}

// ---- calls -----------------------------------------------------------------------------------

#ifndef CONVLAB_BACKEND_CPU
// The counters' kernels are the recorded launches, in order, when both saw the same number; a
// kernel the recorder did not see (a library's) leaves the call uncounted, and the judge's
// technique rules fall back to the compiled code's facts.
void Server::attach_counts(const std::vector<KernelCounts>& counts, bool tensor, wire::Evidence& e) {
  if (counts.size() != e.launches.size()) return;
  const auto n = [](double v) { return static_cast<std::uint64_t>(v + 0.5); };
  for (std::size_t i = 0; i < counts.size(); ++i) {
    wire::KernelLaunch& k = e.launches[i];
    k.counted = true;
    k.global_loads = n(counts[i].global_load_words);
    k.global_load_instructions = n(counts[i].global_load_instructions);
    k.global_stores = n(counts[i].global_store_words);
    k.shared_loads = n(counts[i].shared_load_words);
    k.shared_stores = n(counts[i].shared_store_words);
    k.tensor_macs = n(counts[i].tensor_macs);
    k.threads = k.threads_launched();
  }
  e.counts_available = true;
  e.counted_on_gpu = true;
  e.tensor_counted = tensor;
}
#endif

// Runs an entry; `before` runs once the arguments are decoded, right before the function.
template <class Hook>
void Server::fn_with_hook(const remote::Entries::Fn& fn, wire::Reader& r, wire::Writer& out, Hook before) {
  before_call_ = before;
  struct Reset {
    std::function<void()>& f;
    ~Reset() { f = nullptr; }
  } reset{before_call_};
  fn(r, *this, out);
}

Server::Outcome Server::run_entry(const std::string& name, const std::string& args, bool record) {
  const remote::Entries::Fn* fn = entries_.find(name);
  if (!fn) throw std::invalid_argument("the runner has no entry '" + name + "' (a judge and a runner of different labs?)");
  call_args_.clear();
  call_streams_.clear();
  host_copies_.clear();
  Outcome o;
  wire::Reader ar(args);
  wire::Writer result;
  cudaGetLastError();  // a stale error must not be blamed on this call
  bool recording = false;
#ifndef CONVLAB_BACKEND_CPU
  bool counting = false;  // the GPU's counters run for this call (the CPU backend counts every call)
#endif
  try {
    fn_with_hook(*fn, ar, result, [&] {
      if (record) {
        record_begin(call_streams_, call_args_);
        recording = true;
#ifndef CONVLAB_BACKEND_CPU
        if (counting_) {
          counters_.begin();
          counting = true;
        }
#endif
      }
    });
  } catch (const wire::WireError&) {
    if (recording) record_end();
#ifndef CONVLAB_BACKEND_CPU
    if (counting) counters_.end();
#endif
    throw;  // the judge sent something the entry cannot take: a harness error
  } catch (const std::invalid_argument& e) {
    o.kind = 1, o.message = e.what();
  } catch (const CudaError& e) {
    o.kind = 3, o.message = e.what(), o.thrown_code = e.code();
  } catch (const std::runtime_error& e) {
    o.kind = 2, o.message = e.what();
  } catch (const std::exception& e) {
    o.kind = 4, o.message = e.what();
  } catch (...) {
    o.kind = 4, o.message = "an exception that is not a std::exception";
  }
  o.launch_error = cudaGetLastError();
  o.run_error = cudaDeviceSynchronize();
  if (recording) o.evidence = record_end();
#ifndef CONVLAB_BACKEND_CPU
  if (counting) {
    const std::vector<KernelCounts> counts = counters_.end();
    // The profiler counts at most wire::kMaxCountedLaunches launches of a call, and the rest would
    // go unjudged (a flood of empty launches hiding a decoy): such a call fails, as if it had
    // thrown, with why.
    if (o.evidence.launches.size() > wire::kMaxCountedLaunches) {
      if (o.kind == 0) o.kind = 2, o.message = wire::too_many_launches(o.evidence.launches.size());
    } else {
      attach_counts(counts, counters_.counts_tensor(), o.evidence);
    }
  }
#endif
  o.result = result.take();
  // A pointer an entry returned may come back as an argument (an opaque handle).
  if (o.result.size() == 9 && static_cast<wire::Tag>(o.result[0]) == wire::Tag::pointer) {
    std::uint64_t a = 0;
    std::memcpy(&a, o.result.data() + 1, sizeof a);
    if (a && !allocation_of(static_cast<std::uintptr_t>(a))) handles_.insert(static_cast<std::uintptr_t>(a));
  }
  return o;
}

void Server::before_call() {
  if (before_call_) before_call_();
}

std::string Server::do_call(wire::Reader& r) {
  const std::string name = r.str(256);
  const std::uint32_t schedule = r.u32();
  const std::uint64_t seed = r.u64();
  const std::string args = r.str(std::size_t(16) << 20);
  r.finish();
#ifdef CONVLAB_BACKEND_CPU
  if (schedule > 2) throw std::invalid_argument("an unknown CPU schedule");
  convlab_cpu::set_schedule(static_cast<convlab_cpu::Schedule>(schedule), seed, /*environment_overrides=*/false);
#else
  (void)schedule, (void)seed;
#endif
  const Outcome o = run_entry(name, args, true);
  wire::Writer w;
  w.u8(o.kind);
  w.str(o.message);
  w.i64(o.thrown_code);
  write_error(w, o.launch_error);
  write_error(w, o.run_error);
  w.u8(o.run_error != cudaSuccess && context_lost());
  w.str(o.result);
  wire::Evidence e = o.evidence;
  e.stray_launches = stray_work();
  e.write(w);
  return w.take();
}

#ifndef CONVLAB_BACKEND_CPU
// One counted session on the harness's own fill kernel, its counts dropped: the profiler's
// first session on a context costs most of a second, paid here while the judge does other work
// (remote::prestart_counting). A failure here is left for the first real session to report.
void Server::warm_up_counters() {
  float* p = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&p), 4096 * sizeof(float)) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  try {
    counters_.begin();
    try {
      random_fill(p, 4096, 0, nullptr);
    } catch (const std::exception&) {
    }
    cudaDeviceSynchronize();
    counters_.end();
  } catch (const std::exception&) {
  }
  cudaFree(p);
  cudaGetLastError();
}
#endif

}  // namespace convlab::runner

int main(int argc, char** argv) {
  std::size_t window = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--convlab-serve=", 16) == 0) window = std::strtoull(a + 16, nullptr, 10);
  }
  if (window == 0) {
    std::fprintf(stderr,
                 "This is a convlab runner: the process that holds a lab's kernels. The lab's graders start it;\n"
                 "run the graders instead (ctest, or the lab's *_graders executable).\n");
    return 2;
  }
  // Line by line: the last lines before a crash are the ones a student needs.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    convlab::runner::Server server(window);
    server.serve();
  } catch (const std::exception& e) {
    convlab::runner::die(e.what());
  }
  return 0;
}