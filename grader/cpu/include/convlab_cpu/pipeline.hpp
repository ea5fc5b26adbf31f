/// @file pipeline.hpp
/// @brief CUDA's asynchronous copy primitives (`<cuda_pipeline.h>`: `__pipeline_memcpy_async`,
/// `__pipeline_commit`, `__pipeline_wait_prior`; PTX `cp.async`) on the CPU backend.
///
/// A copy reads its source when it is issued and lands in its destination (shared memory) only
/// when the thread waits for its group: `__pipeline_wait_prior(n)` lands every copy of the groups
/// committed before the newest n; copies issued after the last commit belong to no group and wait
/// for the next one. So a thread that reads a tile before waiting for it reads what was there
/// before (the poison of unwritten shared memory, or the previous tile) on every run, where a GPU
/// may or may not have landed it yet: the missing wait shows. Other threads see a landed copy after
/// the next `__syncthreads()`, as on a GPU. Copies a thread never waited for are dropped when it
/// ends (on a GPU no thread could read them without a wait and a barrier).
///
/// Checked as a GPU does: a size of 4, 8 or 16 bytes, at most that many bytes of zero fill, source
/// and destination aligned to the size (else a misaligned address). Counted as a GPU's counters
/// see `cp.async`: one global load of the size per copy when it is issued, one shared store when
/// it lands.
#pragma once

#include "convlab_cpu/launch.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace convlab_cpu::pipeline_detail {

// A load or store of `size` bytes at `p`, as one access of that size where the file counts them.
inline void counted_read(const void* p, std::size_t size) {
  switch (size) {
    case 4: (void)*static_cast<const volatile std::uint32_t*>(p); break;
    case 8: (void)*static_cast<const volatile std::uint64_t*>(p); break;
    default: (void)*static_cast<const volatile unsigned __int128*>(p); break;
  }
}
inline void counted_write(void* p, const unsigned char* data, std::size_t size) {
  switch (size) {
    case 4: { std::uint32_t v; std::memcpy(&v, data, 4); *static_cast<volatile std::uint32_t*>(p) = v; break; }
    case 8: { std::uint64_t v; std::memcpy(&v, data, 8); *static_cast<volatile std::uint64_t*>(p) = v; break; }
    default: { unsigned __int128 v; std::memcpy(&v, data, 16); *static_cast<volatile unsigned __int128*>(p) = v; break; }
  }
}

}  // namespace convlab_cpu::pipeline_detail

/// Issues a copy of `size_and_align` bytes (4, 8 or 16) from global memory to shared memory, the
/// last `zfill` of them zeros instead of the source's.
inline void __pipeline_memcpy_async(void* __restrict__ dst_shared, const void* __restrict__ src_global,
                                    std::size_t size_and_align, std::size_t zfill = 0) {
  const std::size_t size = size_and_align;
  if (size != 4 && size != 8 && size != 16)
    throw std::invalid_argument("__pipeline_memcpy_async: a copy of " + std::to_string(size) +
                                " bytes (it copies 4, 8 or 16)");
  if (zfill > size)
    throw std::invalid_argument("__pipeline_memcpy_async: " + std::to_string(zfill) + " bytes of zero fill in a copy of " +
                                std::to_string(size));
  if (reinterpret_cast<std::uintptr_t>(dst_shared) % size != 0 || reinterpret_cast<std::uintptr_t>(src_global) % size != 0)
    throw std::invalid_argument("__pipeline_memcpy_async: misaligned address (a copy of " + std::to_string(size) +
                                " bytes needs its source and destination aligned to " + std::to_string(size) +
                                " bytes; here they are " +
                                std::to_string(reinterpret_cast<std::uintptr_t>(src_global) % size) + " and " +
                                std::to_string(reinterpret_cast<std::uintptr_t>(dst_shared) % size) + " past it)");
  convlab_cpu::detail::PipelineCopy c;
  c.dst = dst_shared;
  c.size = static_cast<unsigned char>(size);
  if (zfill == 0) convlab_cpu::pipeline_detail::counted_read(src_global, size);
  else if (zfill < size) (void)*static_cast<const volatile unsigned char*>(src_global);
  std::memcpy(c.data, src_global, size - zfill);
  convlab_cpu::detail::pipeline_state().copies.push_back(c);
}

/// Closes the group of the copies issued since the last commit.
inline void __pipeline_commit() {
  convlab_cpu::detail::PipelineState& s = convlab_cpu::detail::pipeline_state();
  s.group_ends.push_back(s.copies.size());
}

/// Lands every copy of the committed groups but the newest `prior` (more than 8 counts as 8, as in CUDA).
inline void __pipeline_wait_prior(std::size_t prior) {
  convlab_cpu::detail::PipelineState& s = convlab_cpu::detail::pipeline_state();
  if (prior > 8) prior = 8;
  if (s.group_ends.size() <= prior) return;
  const std::size_t groups = s.group_ends.size() - prior, landed = s.group_ends[groups - 1];
  for (std::size_t i = 0; i < landed; ++i) {
    const convlab_cpu::detail::PipelineCopy& c = s.copies[i];
    convlab_cpu::pipeline_detail::counted_write(c.dst, c.data, c.size);
  }
  s.copies.erase(s.copies.begin(), s.copies.begin() + std::ptrdiff_t(landed));
  s.group_ends.erase(s.group_ends.begin(), s.group_ends.begin() + std::ptrdiff_t(groups));
  for (std::size_t& end : s.group_ends) end -= landed;
}
