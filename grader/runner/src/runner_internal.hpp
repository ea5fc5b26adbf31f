// Private to the runner (grader/runner/src): the Server that answers the judge's requests, shared by
// runner_main.cpp (the request loop, memory, streams and the student's calls) and runner_timing.cpp
// (the timed runs of Op::measure).
#pragma once

#include "runner_device.hpp"
#ifndef CONVLAB_BACKEND_CPU
#include "gpu_counters.hpp"
#endif

#include "convlab/check.hpp"
#include "convlab/gpu.hpp"
#include "convlab/runner.hpp"
#include "convlab/wire.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace convlab::runner {

using wire::Op;
using wire::Status;

// A harness-side failure with a CUDA error code: reported as Status::cuda_error.
struct CudaFailure {
  cudaError_t code;
  std::string what;
};

[[noreturn]] void die(const std::string& why);
void write_error(wire::Writer& w, cudaError_t e);
// After an error: is the context still usable? (runner_main.cpp)
bool context_lost();

class Server : public remote::ArgContext {
public:
  explicit Server(std::size_t window_bytes);

  void serve();

  // ---- ArgContext: how a call's arguments are decoded ----------------------------------------
  void* device_pointer(std::uint64_t address, bool writable) override;
  void* host_copy(const char* bytes, std::size_t n) override;
  cudaStream_t stream(std::uint64_t handle) override;
  void before_call() override;

private:
  std::optional<std::map<std::uintptr_t, std::size_t>::const_iterator> allocation_of(std::uintptr_t a) const;
  // [address, address + bytes) must lie inside one allocation.
  void* device_range(std::uint64_t address, std::uint64_t bytes) const;
  std::uint64_t window_bytes(std::uint64_t bytes) const;
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw CudaFailure{e, what};
  }
  // The judge's memory operations are complete before the next request runs. In the judge they
  // were stream-ordered (a poison cudaMemsetAsync on its stream, then the student's call on that
  // stream); here they run on the legacy default stream, which does not wait for (and is not
  // waited for by) the judge's non-blocking streams, and a pageable cudaMemcpy to the device may
  // return before its DMA lands. Without this a launcher that zeroes its output on the given
  // stream raced the judge's NaN poison (lab 06's implicit GEMM with split taps, on an H100:
  // every output NaN, now and then).
  static void settle(const char* what) { check(cudaDeviceSynchronize(), what); }

  std::string handle(Op op, wire::Reader& r);
  void do_hello(wire::Reader& r, wire::Writer& w);
  void do_memory(Op op, wire::Reader& r, wire::Writer& w);
  void do_ceilings(wire::Reader& r, wire::Writer& w);
  void do_counting(wire::Reader& r, wire::Writer& w);

  // ---- calls (runner_main.cpp) -----------------------------------------------------------------

  // What one run of an entry did.
  struct Outcome {
    std::uint8_t kind = 0;  // 0 returned, 1 invalid_argument, 2 runtime_error, 3 CudaError, 4 other exception
    std::string message;
    cudaError_t thrown_code = cudaSuccess;
    cudaError_t launch_error = cudaSuccess;  // cudaGetLastError() right after the call
    cudaError_t run_error = cudaSuccess;     // cudaDeviceSynchronize() after it: every stream
    std::string result;
    wire::Evidence evidence;
  };

  Outcome run_entry(const std::string& name, const std::string& args, bool record);
  template <class Hook>
  void fn_with_hook(const remote::Entries::Fn& fn, wire::Reader& r, wire::Writer& out, Hook before);
  std::string do_call(wire::Reader& r);
#ifndef CONVLAB_BACKEND_CPU
  static void attach_counts(const std::vector<KernelCounts>& counts, bool tensor, wire::Evidence& e);
  void warm_up_counters();
#endif

  // ---- timing (runner_timing.cpp) --------------------------------------------------------------
  void run_program(const wire::Program& p, wire::Evidence* evidence);
  static void merge(wire::Evidence& into, const wire::Evidence& e);
  double time_program(const wire::Program& p, cudaStream_t s, CacheFlusher& flusher, wire::Evidence* evidence,
                      cudaEvent_t start, cudaEvent_t stop);
  void run_program_recorded(const wire::Program& p, wire::Evidence& e, bool record, cudaStream_t s, cudaEvent_t stop);
  std::string do_measure(wire::Reader& r);

  char* window_ = nullptr;
  std::size_t window_bytes_ = 0;
  remote::Entries entries_;
  std::map<std::uintptr_t, std::size_t> allocations_;
  std::set<std::uintptr_t> handles_;
  std::set<cudaStream_t> streams_;
  std::vector<PointerArg> call_args_;
  std::vector<cudaStream_t> call_streams_;
  std::vector<std::unique_ptr<std::max_align_t[]>> host_copies_;
  std::function<void()> before_call_;

  std::optional<std::pair<double, double>> ceilings_;
  bool counting_ = false;  // Op::counting: count each kernel of the calls with the GPU's counters
#ifndef CONVLAB_BACKEND_CPU
  GpuCounters counters_;
#endif
};

}  // namespace convlab::runner
