// The CPU backend's block runner: one host thread's shared memory (SharedArena) and the
// scheduler that runs the threads of a block as fibers (BlockRunner), switching at
// __syncthreads() and at the warp barriers. launch.cpp hands blocks to it; block_runner.cpp
// holds the calls a running kernel makes into it.
#pragma once

#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/warp.hpp"

#include "counting.hpp"
#include "launch_internal.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace convlab_cpu {
namespace detail {

// ---- shared memory ---------------------------------------------------------------------------
// One host thread's shared memory: the dynamic shared memory of the launch first, then the
// static __shared__ variables of the running block, allocated as its threads reach them.
// With AddressSanitizer, what no variable holds is poisoned, so an overrun of a shared
// array is reported where it happens.
class SharedArena {
public:
  static constexpr std::size_t kStaticLimit = 48 * 1024;  // a block's static shared memory on every GPU
  ~SharedArena() { std::free(base_); }
  SharedArena() = default;
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  // For a launch with `dynamic` bytes of dynamic shared memory.
  void prepare(std::size_t dynamic) {
    static_begin_ = align_up(dynamic + kRedzone, 128);
    // Twice the static limit leaves room for alignment (and redzones) between variables.
    const std::size_t need = static_begin_ + 2 * kStaticLimit + 16 * 1024;
    if (need > capacity_) {
      std::free(base_);
      base_ = static_cast<unsigned char*>(std::aligned_alloc(128, need));
      if (!base_) {
        capacity_ = 0;
        throw std::bad_alloc();
      }
      capacity_ = need;
    }
    dynamic_ = dynamic;
    poison(base_, capacity_);
    unpoison(base_, dynamic_);
  }
  // Before each block: dynamic shared memory unwritten, no static variable allocated.
  void begin_block() {
    if (top_ > static_begin_) poison(base_ + static_begin_, top_ - static_begin_);
    top_ = static_begin_;
    if (dynamic_) fill_unwritten_shared(base_, dynamic_);
  }
  // Room for a static variable; null when the arena is full.
  void* allocate(std::size_t bytes, std::size_t align) {
    const std::size_t at = align_up(top_ + (top_ > static_begin_ ? kRedzone : 0), std::max<std::size_t>(align, 16));
    if (at + bytes > capacity_) return nullptr;
    top_ = at + bytes;
    unpoison(base_ + at, bytes);
    fill_unwritten_shared(base_ + at, bytes);
    return base_ + at;
  }
  void* dynamic() const { return dynamic_ ? base_ : nullptr; }
  const void* base() const { return base_; }
  std::size_t capacity() const { return capacity_; }

private:
#ifdef CONVLAB_ASAN_FIBERS
  static constexpr std::size_t kRedzone = 32;
  static void poison(void* p, std::size_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
  static void unpoison(void* p, std::size_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
  static constexpr std::size_t kRedzone = 0;
  static void poison(void*, std::size_t) {}
  static void unpoison(void*, std::size_t) {}
#endif
  static std::size_t align_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0, dynamic_ = 0, static_begin_ = 0, top_ = 0;
};

// What one host thread did for a launch.
struct LaunchStats {
  std::uint64_t blocks = 0, threads = 0, barriers = 0;
  std::uint64_t tensor_macs = 0;  // multiply-adds of the warp matrix API's mma_sync, once per warp
  std::size_t static_shared = 0;  // the largest block's
};

// Everything one host thread needs to run blocks.
class BlockRunner {
public:
  Slot* current = nullptr;
  bool direct = false;
  StackBounds scheduler_stack;  // the host thread's own stack (learnt at the first switch)
  SharedArena shared;
  std::uint64_t launch_serial = 0;  // the launch this thread last joined
  const Launch* launch = nullptr;
  LaunchStats stats;
  ThreadCounter counter;

  // Joins a launch: its first block on this host thread.
  void join(const Launch& l, const MemoryMap* map) {
    launch = &l;
    launch_serial = l.serial;
    stats = LaunchStats{};
    shared.prepare(l.config.shared_bytes);
    if (map) counter.begin(map, shared.base(), shared.capacity());
  }

  // Runs one block; throws LaunchFailure on barrier divergence or a failing thread.
  void run(const Launch& l, uint3 block_idx, std::uint64_t block_linear) {
    const dim3 bd = l.config.block;
    const std::size_t n = std::size_t(bd.x) * bd.y * bd.z;
    tv.block_idx = block_idx;
    shared.begin_block();
    statics_.clear();
    static_bytes_ = 0;
    stats.blocks += 1;
    stats.threads += n;
    slots_.resize(n);
    for (std::size_t t = 0; t < n; ++t) {
      slots_[t].idx = uint3{unsigned(t % bd.x), unsigned(t / bd.x % bd.y), unsigned(t / (std::size_t(bd.x) * bd.y))};
      slots_[t].state = Slot::ready;
      slots_[t].error = nullptr;
      slots_[t].published = false;
      slots_[t].pipeline.copies.clear();  // copies a thread of an earlier block left unwaited are gone
      slots_[t].pipeline.group_ends.clear();
    }
    order(l, block_linear, 0);

    // The first thread runs in a fiber. If it returns without reaching a barrier, the kernel
    // has none for this block (a __syncthreads() any other thread reaches is then a
    // divergence), and the rest run one after the other on one stack: cheap (run_direct). A
    // warp barrier reached there turns the block to fiber mode from that thread on.
    start_fiber(l, order_[0]);
    resume(order_[0]);
    std::size_t started = 1;  // the threads of order_ that have begun
    if (slots_[order_[0]].state == Slot::done) {
      started = run_direct(l, block_idx);
      if (started == n) return;
    }
    // Fiber mode: run every thread to its next barrier, round after round. A warp whose live
    // lanes all wait at warp barriers goes on at once; a block barrier is passed when no warp
    // can go on and every thread waits at it.
    for (std::size_t k = started; k < n; ++k) start_fiber(l, order_[k]);
    for (int phase = 0;; ++phase) {
      if (phase > 0) order(l, block_linear, phase);
      for (std::size_t t : order_)
        if (slots_[t].state == Slot::ready) resume(t);
      if (release_warps()) continue;
      std::size_t waiting = 0, finished = 0, a_waiter = 0, a_finisher = 0;
      for (std::size_t t = 0; t < n; ++t) {
        if (slots_[t].state == Slot::at_warp) fail_warp_deadlock(l, block_idx, t);
        if (slots_[t].state == Slot::at_barrier) waiting++, a_waiter = t;
        else finished++, a_finisher = t;
      }
      if (waiting == 0) break;
      if (finished > 0) {
        const Slot& w = slots_[a_waiter];
        const std::string msg = describe(l, block_idx) + ": thread " + coords(w.idx) + " waits at __syncthreads() (" +
                                w.file + ":" + std::to_string(w.line) + ") but " + std::to_string(finished) +
                                " thread(s) of the block, e.g. thread " + coords(slots_[a_finisher].idx) +
                                ", returned without reaching it";
        abandon();
        throw LaunchFailure{cudaErrorLaunchFailure, "barrier divergence in " + msg + hint()};
      }
      for (auto& s : slots_) s.state = Slot::ready;
    }
    current = nullptr;
  }

  // ---- warp barriers and exchanges (convlab_cpu/warp.hpp) ----
  // The running thread waits at a warp barrier until its warp's live lanes all wait at one.
  void warp_wait(const char* what, const char* file, int line) {
    Slot* s = current;
    if (direct) {  // the first warp barrier of a block in direct mode: fiber mode from here on
      direct = false;
      converted_ = true;
      s->caller = std::move(direct_caller_);
      s->stack = direct_stack_;
    }
    s->state = Slot::at_warp;
    s->what = what;
    s->file = file;
    s->line = line;
    suspend(s);
  }

  // __syncwarp(mask).
  void syncwarp(const char* file, int line, unsigned mask) {
    check_mask(mask, "__syncwarp()", file, line);
    warp_wait("__syncwarp()", file, line);
  }

  // A shuffle or a vote (see warp.hpp): publish, warp barrier, read, warp barrier.
  std::uint64_t exchange(detail::WarpOp op, const char* file, int line, unsigned mask, std::uint64_t value, int arg,
                         int width, int bytes) {
    const char* what = op_name(op);
    check_mask(mask, what, file, line);
    const bool shuffle = op <= detail::WarpOp::shfl_xor;
    if (shuffle && (width < 1 || width > 32 || (width & (width - 1)) != 0))
      throw std::invalid_argument(where(what, file, line) + "width " + std::to_string(width) +
                                  ": it must be a power of two from 1 to 32 (warpSize); the GPU's result is undefined");
    Slot* s = current;
    s->published = true;
    s->op = op;
    s->bytes = bytes;
    s->value = value;
    warp_wait(what, file, line);
    const std::uint64_t result =
        shuffle ? read_shuffle(s, what, file, line, arg, width) : read_vote(s, what, file, line);
    warp_wait(what, file, line);
    s->published = false;
    return result;
  }

  // Suspends the running thread `s` (inside its fiber) until the scheduler resumes it.
  void suspend(Slot* s) {
    switch_begin(&s->fake_stack, scheduler_stack);
    try {
      s->caller = std::move(s->caller).resume();
    } catch (const ctx::detail::forced_unwind&) {  // the block was abandoned: unwind this thread
      switch_end(s->fake_stack, &scheduler_stack);
      throw;
    }
    switch_end(s->fake_stack, &scheduler_stack);
  }

  // The running block's copy of the static __shared__ variable declared at `key`.
  void* static_shared(const void* key, std::size_t bytes, std::size_t align) {
    for (const auto& v : statics_)
      if (v.first == key) return v.second;
    const std::size_t total = static_bytes_ + bytes;
    const auto where = [this] {
      return std::string("kernel ") + launch->name + " (launched at " + launch->file + ":" +
             std::to_string(launch->line) + "): ";
    };
    if (total > SharedArena::kStaticLimit)
      throw std::runtime_error(where() + "its __shared__ variables take " + std::to_string(total) +
                               " bytes per block, more than the 48 KB (49152 bytes) of static shared memory a GPU "
                               "allows (nvcc refuses it); use dynamic shared memory for more");
    const std::size_t dynamic = launch->config.shared_bytes;
    const int limit = launch->max_dynamic_shared;
    if (limit > kDefaultDynamicShared && total + std::size_t(limit) > std::size_t(kMaxDynamicSharedOptin))
      throw std::runtime_error(where() + std::to_string(total) + " bytes of __shared__ variables plus the kernel's "
                               "dynamic shared memory limit of " + std::to_string(limit) + " bytes exceed the " +
                               std::to_string(kMaxDynamicSharedOptin) + " bytes a block can have; the launch would "
                               "fail on a GPU");
    if (limit <= kDefaultDynamicShared && total + dynamic > std::size_t(kDefaultDynamicShared))
      throw std::runtime_error(where() + std::to_string(total) + " bytes of __shared__ variables plus " +
                               std::to_string(dynamic) + " bytes of dynamic shared memory exceed the 48 KB (49152 "
                               "bytes) a block can have unless the kernel's limit is raised with cudaFuncSetAttribute("
                               "kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes); the launch would fail "
                               "on a GPU");
    void* p = shared.allocate(bytes, align);
    if (!p) throw std::runtime_error(where() + "too many __shared__ variables for the CPU backend");
    statics_.emplace_back(key, p);
    static_bytes_ = total;
    stats.static_shared = std::max(stats.static_shared, total);
    return p;
  }

private:
  StackPool stacks_;  // declared first, destroyed last: the slots' fibers live on these stacks
  std::vector<Slot> slots_;
  std::vector<std::size_t> order_;
  std::vector<std::pair<const void*, void*>> statics_;  // the running block's static shared variables
  std::size_t static_bytes_ = 0;
  // Direct mode (run_direct): its threads run in one fiber on the first thread's stack.
  ctx::fiber direct_caller_;   // inside that fiber: the scheduler
  StackBounds direct_stack_;
  std::size_t direct_next_ = 0;  // the thread of order_ it runs
  bool converted_ = false;       // a thread of it reached a warp barrier: fiber mode from then on
  struct DirectBarrier {
    bool reached = false;
    const char* file = nullptr;
    int line = 0;
    uint3 thread{};
  } direct_barrier_;            // a __syncthreads() reached in direct mode: a divergence

  // Runs order_[1..n) one after the other, as plain calls in one fiber (the first thread's
  // stack, free since it returned). Returns n when all returned; else the first thread of
  // order_ not yet begun, order_[result - 1] being the thread that reached a warp barrier,
  // suspended there and now in fiber mode with the others.
  std::size_t run_direct(const Launch& l, uint3 block_idx) {
    const std::size_t n = slots_.size();
    direct = true;
    converted_ = false;
    direct_next_ = 1;
    direct_barrier_ = DirectBarrier{};
    direct_stack_ = slots_[order_[0]].stack;
    char* base = stacks_.stack(order_[0]);
    ctx::stack_context sc;
    sc.size = stack_bytes();
    sc.sp = base + stack_bytes();
    ctx::fiber f(std::allocator_arg, ctx::preallocated(sc.sp, sc.size, sc), NoFree{},
                 [this, &l](ctx::fiber&& caller) {
                   switch_end(nullptr, &scheduler_stack);
                   direct_caller_ = std::move(caller);
                   return direct_loop(l);
                 });
    void* fake = nullptr;
    switch_begin(&fake, direct_stack_);
    f = std::move(f).resume();
    switch_end(fake, nullptr);
    current = nullptr;
    if (converted_) {
      Slot& x = slots_[order_[direct_next_]];
      x.fiber = std::move(f);  // suspended at its warp barrier
      return direct_next_ + 1;
    }
    direct = false;
    if (direct_barrier_.reached)
      fail_divergence(l, block_idx, direct_barrier_.thread, direct_barrier_.file, direct_barrier_.line,
                      slots_[order_[0]].idx);
    if (direct_next_ < n && slots_[order_[direct_next_]].error) {
      const Slot& s = slots_[order_[direct_next_]];
      throw LaunchFailure{cudaErrorLaunchFailure, "thread " + coords(s.idx) + " failed: " + what_of(s.error)};
    }
    return n;
  }

  // The body of run_direct's fiber.
  ctx::fiber direct_loop(const Launch& l) {
    const std::size_t n = slots_.size();
    for (; direct_next_ < n; ++direct_next_) {
      Slot& s = slots_[order_[direct_next_]];
      current = &s;
      tv.thread_idx = s.idx;
      try {
        l.invoke(l.context);
      } catch (const ctx::detail::forced_unwind&) {
        switch_begin(nullptr, scheduler_stack);
        throw;
      } catch (const DirectModeBarrier& b) {
        direct_barrier_ = DirectBarrier{true, b.file, b.line, s.idx};
        break;
      } catch (...) {
        s.error = std::current_exception();
      }
      s.state = Slot::done;
      if (converted_) {  // it ran on in fiber mode: the scheduler resumed it, and waits for it
        switch_begin(nullptr, scheduler_stack);
        return std::move(s.caller);
      }
      if (s.error) break;
    }
    switch_begin(nullptr, scheduler_stack);
    return std::move(direct_caller_);
  }

  // Sets every warp whose live lanes all wait at warp barriers going again; false if none.
  bool release_warps() {
    bool released = false;
    const std::size_t n = slots_.size();
    for (std::size_t base = 0; base < n; base += 32) {
      const std::size_t end = std::min(n, base + 32);
      bool waiting = false, blocked = false;
      for (std::size_t t = base; t < end; ++t) {
        if (slots_[t].state == Slot::at_warp) waiting = true;
        else if (slots_[t].state != Slot::done) blocked = true;
      }
      if (!waiting || blocked) continue;
      for (std::size_t t = base; t < end; ++t)
        if (slots_[t].state == Slot::at_warp) slots_[t].state = Slot::ready;
      released = true;
    }
    return released;
  }

  // Thread t waits at a warp barrier that a lane of its warp waiting at __syncthreads() keeps
  // from completing, while that __syncthreads() waits for t.
  [[noreturn]] void fail_warp_deadlock(const Launch& l, uint3 block_idx, std::size_t t) {
    const std::size_t base = t / 32 * 32, end = std::min(slots_.size(), base + 32);
    std::size_t other = t, lanes_at_warp = 0;
    for (std::size_t k = base; k < end; ++k) {
      if (slots_[k].state == Slot::at_barrier && other == t) other = k;
      lanes_at_warp += slots_[k].state == Slot::at_warp;
    }
    const Slot& w = slots_[t];
    const Slot& b = slots_[other];
    std::string msg = "warp deadlock in " + describe(l, block_idx) + ", warp " + std::to_string(t / 32) + ": thread " +
                      coords(w.idx) + " waits at " + w.what + " (" + w.file + ":" + std::to_string(w.line) + ")";
    if (lanes_at_warp > 1) msg += " with " + std::to_string(lanes_at_warp - 1) + " other lane(s)";
    msg += " for every lane of its warp, but thread " + coords(b.idx) + " of the same warp waits at __syncthreads() (" +
           b.file + ":" + std::to_string(b.line) + "), which waits for thread " + coords(w.idx) +
           ": neither barrier can complete (on a GPU the kernel would hang, or its result be undefined). The "
           "lanes of a warp must reach the same warp barriers, shuffles and votes, and a __syncthreads() only when "
           "every lane of the warp that has not returned reaches it too.";
    abandon();
    throw LaunchFailure{cudaErrorLaunchFailure, msg};
  }

  static const char* op_name(detail::WarpOp op) {
    switch (op) {
      case detail::WarpOp::shfl_idx: return "__shfl_sync";
      case detail::WarpOp::shfl_up: return "__shfl_up_sync";
      case detail::WarpOp::shfl_down: return "__shfl_down_sync";
      case detail::WarpOp::shfl_xor: return "__shfl_xor_sync";
      case detail::WarpOp::ballot: return "__ballot_sync";
      case detail::WarpOp::any: return "__any_sync";
      case detail::WarpOp::all: return "__all_sync";
    }
    return "a warp operation";
  }

  // "kernel K (launched at f:l), block B, thread T: what at file:line: ", for a warp operation's errors.
  std::string where(const char* what, const char* file, int line) const {
    return std::string("kernel ") + launch->name + " (launched at " + launch->file + ":" +
           std::to_string(launch->line) + "), block " + coords(tv.block_idx) + ", thread " + coords(current->idx) +
           ": " + what + " at " + file + ":" + std::to_string(line) + ": ";
  }

  // The lanes of the running thread's warp that exist: all 32, or fewer in a block's last warp.
  unsigned existing_mask() const {
    const std::size_t t = std::size_t(current - slots_.data()), base = t / 32 * 32;
    const std::size_t lanes = std::min<std::size_t>(32, slots_.size() - base);
    return lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1;
  }

  void check_mask(unsigned mask, const char* what, const char* file, int line) const {
    const unsigned existing = existing_mask();
    if (mask == 0xFFFFFFFFu || mask == existing) return;
    char buf[64];
    std::snprintf(buf, sizeof buf, "mask 0x%08x", mask);
    std::string msg = where(what, file, line) + buf + ": partial masks are not supported on the CPU backend; it runs "
                      "warp barriers, shuffles and votes with the full mask 0xffffffff";
    if (existing != 0xFFFFFFFFu) {
      std::snprintf(buf, sizeof buf, "0x%08x", existing);
      msg += std::string(" or, in this block's last, partial warp, the mask of the lanes that exist (") + buf + ")";
    }
    throw std::invalid_argument(msg + "; code with a partial mask needs the CUDA backend (an NVIDIA GPU)");
  }

  // What `s` reads at a shuffle, between the exchange's two warp barriers: the lane PTX's
  // shfl.sync names (the segment of `width` lanes: c = ((32 - width) << 8) | 0x1f, or without
  // the 0x1f for up), or its own value where that lane lies outside the segment.
  std::uint64_t read_shuffle(const Slot* s, const char* what, const char* file, int line, int arg, int width) const {
    const std::size_t t = std::size_t(s - slots_.data()), base = t / 32 * 32;
    const int lane = int(t - base), existing = int(std::min<std::size_t>(32, slots_.size() - base));
    const int seg = 32 - width, b = arg & 31;
    const int min_lane = lane & seg, max_lane = (lane & seg) | (31 & ~seg);
    int j = lane;
    bool inside = true;
    switch (s->op) {
      case detail::WarpOp::shfl_up: j = lane - b, inside = j >= min_lane; break;
      case detail::WarpOp::shfl_down: j = lane + b, inside = j <= max_lane; break;
      case detail::WarpOp::shfl_xor: j = lane ^ b, inside = j <= max_lane; break;
      default: j = min_lane | (b & ~seg); break;
    }
    if (!inside || j == lane) return s->value;
    const std::uint64_t undefined = s->bytes == 8 ? kUndefinedLaneBits64 : kUndefinedLaneBits;
    if (j >= existing) return undefined;  // past the end of a partial warp
    const Slot& o = slots_[base + std::size_t(j)];
    if (!o.published) {
      if (o.state == Slot::done) return undefined;  // returned from the kernel
      throw std::logic_error(where(what, file, line) + "lane " + std::to_string(j) + " of the warp (thread " +
                             coords(o.idx) + ") is not at a shuffle but at " + o.what + " (" + o.file + ":" +
                             std::to_string(o.line) + "); the lanes of a warp must reach the same shuffles");
    }
    if (o.op != s->op || o.bytes != s->bytes)
      throw std::logic_error(where(what, file, line) + "lane " + std::to_string(j) + " of the warp (thread " +
                             coords(o.idx) + ") is at a different shuffle: " + op_name(o.op) + " of a " +
                             std::to_string(8 * o.bytes) + "-bit value (" + o.file + ":" + std::to_string(o.line) +
                             ")");
    return o.value;
  }

  // A vote: the ballot of the lanes that have not returned (exited lanes vote 0, as on a GPU).
  std::uint64_t read_vote(const Slot* s, const char* what, const char* file, int line) const {
    const std::size_t t = std::size_t(s - slots_.data()), base = t / 32 * 32;
    const std::size_t end = std::min(slots_.size(), base + 32);
    unsigned ballot = 0, voters = 0;
    for (std::size_t k = base; k < end; ++k) {
      const Slot& o = slots_[k];
      if (!o.published) {
        if (o.state == Slot::done) continue;
        throw std::logic_error(where(what, file, line) + "lane " + std::to_string(k - base) + " of the warp (thread " +
                               coords(o.idx) + ") is not at a vote but at " + o.what + " (" + o.file + ":" +
                               std::to_string(o.line) + "); the lanes of a warp must reach the same votes");
      }
      if (o.op != s->op)
        throw std::logic_error(where(what, file, line) + "lane " + std::to_string(k - base) + " of the warp (thread " +
                               coords(o.idx) + ") is at " + op_name(o.op) + " (" + o.file + ":" +
                               std::to_string(o.line) + ")");
      voters |= 1u << (k - base);
      if (o.value) ballot |= 1u << (k - base);
    }
    switch (s->op) {
      case detail::WarpOp::any: return ballot != 0;
      case detail::WarpOp::all: return ballot == voters;
      default: return ballot;
    }
  }

  static std::string what_of(const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
    }
    return "an exception";
  }

  static std::string hint() {
    return ". Every thread of a block must reach every __syncthreads(): let out-of-range threads skip the work, "
           "not the barrier.";
  }
  static std::string describe(const Launch& l, uint3 block_idx) {
    return std::string("kernel ") + l.name + " (launched at " + l.file + ":" + std::to_string(l.line) + "), block " +
           coords(block_idx);
  }

  [[noreturn]] void fail_divergence(const Launch& l, uint3 block_idx, uint3 thread, const char* file, int line,
                                    uint3 finished) {
    abandon();
    throw LaunchFailure{cudaErrorLaunchFailure, "barrier divergence in " + describe(l, block_idx) + ": thread " +
                                                    coords(thread) + " reached __syncthreads() (" + file + ":" +
                                                    std::to_string(line) + ") but thread " + coords(finished) +
                                                    " returned without reaching it" + hint()};
  }

  // Drops suspended fibers: Boost switches into each one to unwind its stack.
  void abandon() {
    for (auto& s : slots_) {
      if (!s.fiber) continue;
      void* fake = nullptr;
      switch_begin(&fake, s.stack);
      s.fiber = ctx::fiber();
      switch_end(fake, nullptr);
    }
    current = nullptr;
  }

  void order(const Launch& l, std::uint64_t block_linear, int phase) {
    const std::size_t n = slots_.size();
    order_.resize(n);
    for (std::size_t i = 0; i < n; ++i) order_[i] = i;
    if (l.schedule == Schedule::reverse) std::reverse(order_.begin(), order_.end());
    if (l.schedule != Schedule::shuffle) return;
    std::uint64_t state = mix(l.seed ^ mix(block_linear * 0x100000001B3ull + std::uint64_t(phase)));
    for (std::size_t i = n; i > 1; --i) {  // Fisher-Yates
      state = mix(state);
      std::swap(order_[i - 1], order_[state % i]);
    }
  }

  void start_fiber(const Launch& l, std::size_t t) {
    Slot* s = &slots_[t];
    char* base = stacks_.stack(t);
    ctx::stack_context sc;
    sc.size = stack_bytes();
    sc.sp = base + stack_bytes();
    s->stack = {base, stack_bytes()};
    s->fiber = ctx::fiber(std::allocator_arg, ctx::preallocated(sc.sp, sc.size, sc), NoFree{},
                          [this, s, invoke = l.invoke, context = l.context](ctx::fiber&& caller) {
                            switch_end(nullptr, &scheduler_stack);
                            s->caller = std::move(caller);
                            try {
                              invoke(context);
                            } catch (const ctx::detail::forced_unwind&) {
                              switch_begin(nullptr, scheduler_stack);
                              throw;
                            } catch (...) {
                              s->error = std::current_exception();
                            }
                            s->state = Slot::done;
                            switch_begin(nullptr, scheduler_stack);  // this stack is finished
                            return std::move(s->caller);
                          });
  }

  void resume(std::size_t t) {
    Slot& s = slots_[t];
    current = &s;
    tv.thread_idx = s.idx;
    void* fake = nullptr;
    switch_begin(&fake, s.stack);
    s.fiber = std::move(s.fiber).resume();
    switch_end(fake, nullptr);
    current = nullptr;
    if (s.error) {
      const std::string what = what_of(s.error);
      abandon();
      throw LaunchFailure{cudaErrorLaunchFailure, "thread " + coords(s.idx) + " failed: " + what};
    }
  }
};

// The runner of the block this host thread is running (set by run_grid in launch.cpp).
extern thread_local BlockRunner* t_runner;

}  // namespace detail
}  // namespace convlab_cpu
