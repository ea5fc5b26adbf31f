// The calls a running kernel makes into the CPU backend: __syncthreads(), the warp barriers
// and exchanges (__syncwarp, shuffles, votes), the built-in indices, shared memory and the
// state of asynchronous copies, each served by the BlockRunner of the host thread
// (block_runner.hpp). See convlab_cpu/launch.hpp and convlab_cpu/warp.hpp.
#include "block_runner.hpp"

#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/warp.hpp"

#include "launch_internal.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace convlab_cpu {

namespace detail {
thread_local BlockRunner* t_runner = nullptr;
}  // namespace detail

namespace {
using detail::BlockRunner;
using detail::DirectModeBarrier;
using detail::Slot;
using detail::t_runner;
}  // namespace

// ---- inside a kernel ---------------------------------------------------------------------------
void detail::count_tensor_macs(std::uint64_t macs) {
  if (BlockRunner* r = t_runner; r && r->current) r->stats.tensor_macs += macs;
}

void syncthreads(const char* file, int line) {
  BlockRunner* r = t_runner;
  if (!r || !r->current) {
    std::fprintf(stderr, "convlab CPU backend: __syncthreads() called outside a kernel (%s:%d)\n", file, line);
    std::abort();
  }
  r->stats.barriers += 1;
  if (r->direct) throw DirectModeBarrier{file, line};
  Slot* s = r->current;
  s->state = Slot::at_barrier;
  s->what = "__syncthreads()";
  s->file = file;
  s->line = line;
  r->suspend(s);
  // Resumed by the scheduler: the barrier is passed.
}

void fill_unwritten_shared(void* address, std::size_t bytes) {
  unsigned char pattern[4];
  std::memcpy(pattern, &kUnwrittenSharedBits, 4);
  auto* p = static_cast<unsigned char*>(address);
  for (std::size_t i = 0; i < bytes; ++i) p[i] = pattern[i % 4];
}

bool in_block_shared_memory(const void* address) {
  const BlockRunner* r = t_runner;
  if (!r || !r->current) return false;
  const auto a = reinterpret_cast<std::uintptr_t>(address), b = reinterpret_cast<std::uintptr_t>(r->shared.base());
  return a - b < r->shared.capacity();
}

namespace detail {

namespace {
BlockRunner& warp_runner(const char* what, const char* file, int line) {
  BlockRunner* r = t_runner;
  if (!r || !r->current) {
    std::fprintf(stderr, "convlab CPU backend: %s called outside a kernel (%s:%d)\n", what, file, line);
    std::abort();
  }
  return *r;
}
}  // namespace

void syncwarp(const char* file, int line, unsigned mask) {
  warp_runner("__syncwarp()", file, line).syncwarp(file, line, mask);
}

std::uint64_t warp_exchange(WarpOp op, const char* file, int line, unsigned mask, std::uint64_t value, int lane,
                            int width, int bytes) {
  return warp_runner("a warp shuffle or vote", file, line).exchange(op, file, line, mask, value, lane, width, bytes);
}

uint3 thread_idx() { return tv.thread_idx; }
uint3 block_idx() { return tv.block_idx; }
dim3 block_dim() { return tv.block_dim; }
dim3 grid_dim() { return tv.grid_dim; }

void* dynamic_shared_memory() {
  BlockRunner* r = t_runner;
  return r && r->current ? r->shared.dynamic() : nullptr;
}

PipelineState& pipeline_state() {
  BlockRunner* r = t_runner;
  if (!r || !r->current) throw std::logic_error("an asynchronous copy's primitive called outside a kernel");
  return r->current->pipeline;
}

void* static_shared_memory(const void* key, std::size_t bytes, std::size_t align) {
  BlockRunner* r = t_runner;
  if (!r || !r->current) {
    std::fprintf(stderr, "convlab CPU backend: a __shared__ variable was reached outside a kernel\n");
    std::abort();
  }
  return r->static_shared(key, bytes, align);
}

}  // namespace detail
}  // namespace convlab_cpu
