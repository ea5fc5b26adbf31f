// Internals of the CPU backend's memory access counting and records (see
// convlab_cpu/records.hpp): the device memory map, the per-host-thread counter that the
// compiler's callbacks feed, and the record store.
#pragma once

#include "convlab_cpu/records.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace convlab_cpu {

// ---- the device memory map ---------------------------------------------------------------------
/// One allocation or `__constant__`/`__device__` variable.
struct MappedRange {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;  // at least 1, so that even an empty allocation has an address
  MemorySpace space = MemorySpace::global;
  bool pinned_host = false;
  const char* symbol = nullptr;  // a string literal written by cu2cpp; null for an allocation
};

/// An immutable snapshot of the device memory map: ranges sorted by address, disjoint.
struct MemoryMap {
  std::vector<MappedRange> ranges;
  /// The range holding `address`, or null.
  const MappedRange* find(std::uintptr_t address) const;
};

/// The current snapshot (rebuilt after the map changed; kernels never change it).
std::shared_ptr<const MemoryMap> memory_map();
/// Adds an allocation of `bytes` at `p` (pinned: cudaMallocHost). Not `const void*`: GCC would
/// take that for a read of the fresh, unwritten allocation.
void map_allocation(void* p, std::size_t bytes, bool pinned);
/// Removes the allocation at `p` of that kind; false if there is none.
bool unmap_allocation(const void* p, bool pinned);

// ---- counting ----------------------------------------------------------------------------------
/// The counts of one range. An access of 1, 2, 4, 8 or 16 bytes adds one to the counter of
/// its kind and size (the bytes follow from the sizes), so that the common case is a single
/// increment; an access of another size (a struct copy) adds to a count and a byte total.
struct alignas(64) RangeSlot {
  std::uint64_t v[24] = {};
};
enum : int {
  kLoad = 0,         // + size class (log2 of the size): v[0..4] loads of 1..16 bytes
  kStore = 5,        // v[5..9]
  kAtomic = 10,      // v[10..14]
  kLoadOther = 15,   // loads of other sizes: v[15] count, v[16] bytes
  kStoreOther = 17,  // stores of other sizes: v[17] count, v[18] bytes
};
/// The counter index of an access of `bytes` (1, 2, 4, 8 or 16) of kind `what`.
constexpr int size_index(int what, std::size_t bytes) {
  return what + (bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : bytes == 8 ? 3 : 4);
}

/// Counts the memory accesses of the kernels one host thread runs, for one launch. The
/// compiler's callbacks find an address's range in a small cache of recently used ranges
/// (an allocation, a variable, the shared memory, or a gap between them that counts as
/// "other"); a miss looks the address up in the launch's memory map.
class ThreadCounter {
public:
  /// Starts a launch: `map` lives until the launch ends; [shared, shared + shared_bytes) is
  /// this host thread's shared memory.
  void begin(const MemoryMap* map, const void* shared, std::size_t shared_bytes);
  /// Adds one to counter `index` of the range holding `address`.
  void count(std::uintptr_t address, int index) {
    for (const Entry& e : cache_)
      if (address - e.begin < e.size) {
        e.slot->v[index] += 1;
        return;
      }
    miss(address)->v[index] += 1;
  }
  /// An access of a size other than 1, 2, 4, 8 or 16 bytes (`what`: kLoadOther or kStoreOther).
  void count_other_size(std::uintptr_t address, std::size_t bytes, int what) {
    RangeSlot* s = find(address);
    s->v[what] += 1;
    s->v[what + 1] += bytes;
  }
  const MemoryMap* map() const { return map_; }
  /// The counts of map range i, of the shared memory.
  const RangeSlot& range(std::size_t i) const { return slots_[i]; }
  const RangeSlot& shared() const { return slots_[map_->ranges.size()]; }

private:
  struct Entry {
    std::uintptr_t begin = 0, size = 0;  // size 0 never matches
    RangeSlot* slot = nullptr;
  };
  RangeSlot* find(std::uintptr_t address) {
    for (const Entry& e : cache_)
      if (address - e.begin < e.size) return e.slot;
    return miss(address);
  }
  RangeSlot* miss(std::uintptr_t address);  // looks the range up and caches it
  Entry cache_[4];
  unsigned victim_ = 0;
  const MemoryMap* map_ = nullptr;
  std::uintptr_t shared_begin_ = 0, shared_size_ = 0;
  std::vector<RangeSlot> slots_;  // one per map range, then shared memory, then other
};

/// The counter of the kernel this host thread is running, or null when none is counted.
extern thread_local ThreadCounter* t_counter __attribute__((tls_model("initial-exec")));

/// Sums the counts of several host threads' counters (all for the same map) into `record`.
void add_counts(LaunchRecord& record, const std::vector<const ThreadCounter*>& counters);

// ---- records -----------------------------------------------------------------------------------
void add_launch_record(LaunchRecord&& record);
void add_memory_record(MemoryRecord&& record);
/// The space of a copy's end: global (an allocation or a __device__ variable), constant or other.
MemorySpace host_view_space(const void* address);
/// The name of the variable at `address`, or null.
const char* symbol_name(const void* address);

}  // namespace convlab_cpu
