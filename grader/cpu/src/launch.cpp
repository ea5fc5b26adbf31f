// The CPU backend's kernel launches: blocks in parallel on a pool of host
// threads, the threads of a block as fibers that switch at __syncthreads() and at
// the warp barriers (__syncwarp, shuffles, votes). See convlab_cpu/launch.hpp and
// convlab_cpu/warp.hpp. This file checks a launch and hands its blocks to the host
// threads; block_runner.hpp runs them, block_runner.cpp serves the calls a kernel makes.
#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/warp.hpp"

#include "counting.hpp"
#include "launch_internal.hpp"
#include "block_runner.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace convlab_cpu {

namespace detail {
thread_local ThreadView tv;
}  // namespace detail

namespace {

using detail::tv;
using detail::coords;

// ---- settings -------------------------------------------------------------------------------
std::atomic<int> g_schedule{int(Schedule::shuffle)};
std::atomic<std::uint64_t> g_schedule_seed{0};
std::atomic<bool> g_schedule_from_env{true};  // false once a runner fixed the schedule: no setenv changes it

Schedule schedule_from_env(Schedule fallback) {
  const char* env = std::getenv("CONVLAB_CPU_SCHEDULE");
  if (!env || !*env) return fallback;
  const std::string s(env);
  if (s == "shuffle") return Schedule::shuffle;
  if (s == "in-order") return Schedule::in_order;
  if (s == "reverse") return Schedule::reverse;
  std::fprintf(stderr, "convlab CPU backend: CONVLAB_CPU_SCHEDULE must be shuffle, in-order or reverse, not '%s'\n",
               env);
  std::exit(2);
}

// ---- errors ---------------------------------------------------------------------------------
std::mutex g_error_mutex;
cudaError_t g_execution_error = cudaSuccess;
std::string g_detail;

// ---- the pool of host threads ------------------------------------------------------------------
class Pool {
public:
  static Pool& get() {
    static Pool pool;
    return pool;
  }
  int size() const { return int(workers_.size()) + 1; }

  // Runs job(i) for i in [0, jobs) on all host threads, the caller included.
  void run(std::size_t jobs, const std::function<void(std::size_t)>& job) {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = &job;
    jobs_ = jobs;
    next_.store(0);
    active_ = int(workers_.size());
    ++generation_;
    cv_.notify_all();
    lock.unlock();
    work();
    lock.lock();
    done_cv_.wait(lock, [this] { return active_ == 0; });
    job_ = nullptr;
  }

private:
  Pool() {
    int n = int(std::thread::hardware_concurrency());
    if (const char* env = std::getenv("CONVLAB_CPU_THREADS"); env && *env) n = std::atoi(env);
    n = std::max(1, n);
    for (int i = 1; i < n; ++i) workers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      cv_.notify_all();
    }
    for (auto& w : workers_) w.join();
  }
  void loop() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_ == 0) done_cv_.notify_all();
    }
  }
  void work() {
    for (;;) {
      const std::size_t i = next_.fetch_add(1);
      if (i >= jobs_) return;
      (*job_)(i);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t jobs_ = 0;
  std::atomic<std::size_t> next_{0};
  int active_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

std::mutex g_launch_mutex;  // one launch at a time, as on one stream
thread_local bool t_in_kernel = false;

std::string check_config(const LaunchConfig& c, const void* kernel, cudaError_t* code) {
  const dim3 b = c.block, g = c.grid;
  *code = cudaErrorInvalidConfiguration;
  if (!b.x || !b.y || !b.z) return "block " + coords(b) + " has a zero dimension";
  if (!g.x || !g.y || !g.z) return "grid " + coords(g) + " has a zero dimension (no block to run)";
  if (std::uint64_t(b.x) * b.y * b.z > 1024)
    return "block " + coords(b) + " has " + std::to_string(std::uint64_t(b.x) * b.y * b.z) +
           " threads; at most 1024 threads per block";
  if (b.x > 1024 || b.y > 1024 || b.z > 64) return "block " + coords(b) + " exceeds the limits (1024,1024,64)";
  if (g.x > 0x7FFFFFFFu || g.y > 65535 || g.z > 65535) return "grid " + coords(g) + " exceeds (2^31-1,65535,65535)";
  const int limit = max_dynamic_shared(kernel);
  if (c.shared_bytes > std::size_t(limit)) {
    *code = cudaErrorInvalidValue;
    return std::to_string(c.shared_bytes) + " bytes of dynamic shared memory exceed this kernel's limit of " +
           std::to_string(limit) + " bytes (raise it with cudaFuncSetAttribute(kernel, "
           "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes); at most " + std::to_string(kMaxDynamicSharedOptin) + ")";
  }
  return {};
}

}  // namespace

// ---- public entry points ---------------------------------------------------------------------
void set_schedule(Schedule schedule, std::uint64_t seed, bool environment_overrides) {
  g_schedule.store(int(schedule));
  g_schedule_seed.store(seed);
  g_schedule_from_env.store(environment_overrides);
}

int worker_count() { return Pool::get().size(); }

cudaError_t take_execution_error() {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  const cudaError_t e = g_execution_error;
  g_execution_error = cudaSuccess;
  return e;
}

const std::string& last_launch_detail() {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  return g_detail;
}

namespace detail {

namespace {

// A launch's record before it runs: the kernel, where it was launched, its shape and stream.
LaunchRecord launch_record(const LaunchSite& site, const LaunchConfig& config) {
  LaunchRecord record;
  record.kernel = site.name;
  record.file = site.file;
  record.line = site.line;
  record.grid = config.grid;
  record.block = config.block;
  record.dynamic_shared_bytes = config.shared_bytes;
  record.stream = config.stream;
  record.counted = site.counted && access_counts_available();
  return record;
}

// A launch whose configuration a GPU refuses: the error set, as cudaGetLastError returns it, and
// recorded; false if the launch may run.
bool refuse_bad_config(const LaunchSite& site, const void* kernel, const LaunchConfig& config, LaunchRecord& record) {
  cudaError_t code = cudaSuccess;
  if (const std::string problem = check_config(config, kernel, &code); !problem.empty()) {
    {
      std::lock_guard<std::mutex> lock(g_error_mutex);
      g_detail = std::string("invalid launch of ") + site.name + " at " + site.file + ":" + std::to_string(site.line) +
                 ": " + problem;
    }
    set_last_error(code);
    record.error = code;
    add_launch_record(std::move(record));
    return true;
  }
  return false;
}

// Runs the launch's blocks on the pool's host threads, each joining the launch once (they go to
// `runners`); after a failure, the blocks not started are skipped and the first failure is kept.
// Returns whether a block failed.
bool run_blocks(const Launch& l, const LaunchConfig& config, const MemoryMap* map, std::vector<BlockRunner*>& runners,
                LaunchFailure& failure) {
  const dim3 g = config.grid;
  const std::size_t blocks = std::size_t(g.x) * g.y * g.z;
  std::atomic<bool> failed{false};
  std::mutex failure_mutex;  // also guards runners
  Pool::get().run(blocks, [&](std::size_t b) {
    if (failed.load(std::memory_order_relaxed)) return;
    thread_local BlockRunner runner;
    t_runner = &runner;
    t_in_kernel = true;
    tv.block_dim = config.block;
    tv.grid_dim = config.grid;
    try {
      if (runner.launch_serial != l.serial) {
        runner.join(l, map);
        std::lock_guard<std::mutex> lock(failure_mutex);
        runners.push_back(&runner);
      }
      t_counter = map ? &runner.counter : nullptr;
      runner.run(l, uint3{unsigned(b % g.x), unsigned(b / g.x % g.y), unsigned(b / (std::size_t(g.x) * g.y))}, b);
    } catch (const LaunchFailure& f) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failed.exchange(true)) failure = f;
    } catch (const std::bad_alloc&) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failed.exchange(true)) failure = {cudaErrorMemoryAllocation, "out of host memory for shared memory"};
    }
    t_counter = nullptr;
    t_in_kernel = false;
  });
  return failed.load();
}

// The blocks, threads, barriers, tensor-core work and static shared memory of the host threads
// that ran the launch, and their access counts where the launch was counted, added to its record.
void add_block_stats(LaunchRecord& record, const std::vector<BlockRunner*>& runners, bool counted) {
  std::vector<const ThreadCounter*> counters;
  for (const BlockRunner* r : runners) {
    record.blocks_run += r->stats.blocks;
    record.threads_run += r->stats.threads;
    record.barriers += r->stats.barriers;
    record.tensor_macs += r->stats.tensor_macs;
    record.static_shared_bytes = std::max(record.static_shared_bytes, r->stats.static_shared);
    counters.push_back(&r->counter);
  }
  if (counted) add_counts(record, counters);
}

}  // namespace

void run_grid(const LaunchSite& site, const void* kernel, const LaunchConfig& config,
              KernelInvoker invoke, const void* context) {
  if (t_in_kernel) {
    std::fprintf(stderr, "convlab CPU backend: kernel %s launched from inside a kernel (%s:%d): dynamic parallelism "
                         "is not supported\n", site.name, site.file, site.line);
    std::abort();
  }
  LaunchRecord record = launch_record(site, config);
  if (refuse_bad_config(site, kernel, config, record)) return;
  std::lock_guard<std::mutex> launch_lock(g_launch_mutex);
  static std::uint64_t serial = 0;  // guarded by g_launch_mutex
  const Launch l{site.name, site.file, site.line, config, invoke, context,
                 g_schedule_from_env.load() ? schedule_from_env(Schedule(g_schedule.load())) : Schedule(g_schedule.load()),
                 g_schedule_seed.load(), ++serial,
                 max_dynamic_shared(kernel)};
  // The device memory map cannot change while the kernel runs: one snapshot serves every block.
  const std::shared_ptr<const MemoryMap> map = record.counted ? memory_map() : nullptr;
  LaunchFailure failure{cudaSuccess, {}};
  std::vector<BlockRunner*> runners;  // the host threads that ran blocks
  if (run_blocks(l, config, map.get(), runners, failure)) {
    std::lock_guard<std::mutex> lock(g_error_mutex);
    g_detail = failure.message;
    g_execution_error = failure.code;
    record.error = failure.code;
  }
  add_block_stats(record, runners, map != nullptr);
  add_launch_record(std::move(record));
}

}  // namespace detail
}  // namespace convlab_cpu
