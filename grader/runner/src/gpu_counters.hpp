// The GPU's own counters of each kernel a call launched (issue 27, item 2): how many values each
// kernel loaded from and stored to global and shared memory, counted by the hardware while the
// kernel ran, through CUPTI's range profiler (one range per kernel; where the counters take one
// pass, as on Hopper, the call runs once and is counted as it runs, else CUPTI replays each kernel,
// device memory restored between replays, until every counter is read). Used by the runner on
// a GPU when the judge asks for counts (wire::Op::counting); the CPU backend counts by itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace convlab::runner {

/// What the counters saw one kernel do. Loads and stores are in 4-byte words (a float4 load is
/// four), summed over every thread that executed them (predicated-off lanes excluded).
struct KernelCounts {
  std::string name;  ///< the range's name: the kernel's (mangled) name
  double global_load_words = 0, global_store_words = 0;
  double shared_load_words = 0, shared_store_words = 0;
  /// Global load instructions, each warp's counted for its 32 threads: a load that a whole warp
  /// makes of one address (a filter tap read from global memory) is one word above, 32 here.
  double global_load_instructions = 0;
  /// Multiply-adds on the tensor cores with TF32 operands (half the profiler's "ops"), where this
  /// chip counts them (GpuCounters::counts_tensor()).
  double tensor_macs = 0;
  // Asynchronous copies (cp.async, SASS LDGSTS) count as global loads and shared stores: the
  // profiler's plain load and store counts leave them out (seen on an H200 with CUDA 13).
};

/// One profiling session per runner; not thread-safe (the serving thread uses it).
class GpuCounters {
public:
  GpuCounters() = default;
  ~GpuCounters();
  GpuCounters(const GpuCounters&) = delete;
  GpuCounters& operator=(const GpuCounters&) = delete;

  /// Starts the host side of the set-up (the profiler's initialisation, the counters this context
  /// may read, the configuration image: 0.2 to 0.7 s on an H200) in a thread of its own, while the
  /// serving thread goes on (timed runs: nothing is enabled on the context until ready()). Once;
  /// a failure is reported by ready().
  void prepare();
  /// Sets the profiler up on the current context once (waiting for prepare()'s thread if one
  /// runs); false, with `why` in plain words, when this machine refuses the counters (not allowed
  /// for this user, not supported, a virtual GPU).
  bool ready(std::string* why);
  /// Counts the kernels launched from now on, one range each (call ready() first).
  void begin();
  /// Stops counting and returns each kernel's counts, in launch order. Throws std::runtime_error
  /// with CUPTI's words if the profiler failed.
  std::vector<KernelCounts> end();
  /// The counts include the tensor cores' TF32 multiply-adds (after ready()).
  bool counts_tensor() const { return counts_tensor_; }

private:
  std::string find_context();  // the runner's context and device, or why not
  std::string set_up_host();   // the host side (prepare()'s thread, or ready()): "" or why not
  std::string open_host();       // set_up_host()'s steps: the profiler and its host object,
  std::string choose_metrics();  // the metrics this chip has of those counted,
  std::string configure();       // their configuration image: each "" or why not
  std::string enable();        // the range profiler enabled on the context: "" or why not
  bool tried_ = false, ok_ = false, active_ = false;
  void* ctx_ = nullptr;  // CUcontext
  int device_ = 0;
  std::thread preparing_;            // prepare()'s thread, joined by ready() or the destructor
  std::atomic<bool> quitting_{false};  // the runner ends: the thread stops waiting for busy counters
  bool one_pass_ = false;  // the metrics fit one pass: user replay of the call itself (see the .cpp)
  bool counts_tensor_ = false;  // a metric of the tensor cores' TF32 work is among them
  std::string why_;
  void* host_ = nullptr;     // CUpti_Profiler_Host_Object*
  void* profiler_ = nullptr; // CUpti_RangeProfiler_Object*
  std::vector<std::uint8_t> config_, counter_data_;
  std::vector<std::uint8_t> availability_;  // the counter availability image the host object reads
  struct Metric {  // a counted metric ("name.sum") and what it adds to a kernel's counts
    std::string name;
    double KernelCounts::*field;
    double factor;
  };
  std::vector<Metric> metrics_;
};

}  // namespace convlab::runner
