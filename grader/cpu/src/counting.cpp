// The CPU backend's memory access counting: the device memory map, the callbacks that
// GCC's -fsanitize=kernel-address instrumentation calls before each load and store of
// the student's code, and their classification. See convlab_cpu/records.hpp.
#include "counting.hpp"

#include "convlab_cpu/launch.hpp"
#include "launch_internal.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace convlab_cpu {

thread_local ThreadCounter* t_counter = nullptr;

namespace {

// ---- the device memory map ---------------------------------------------------------------------
std::mutex g_map_mutex;
std::map<std::uintptr_t, MappedRange>& live_ranges() {
  static std::map<std::uintptr_t, MappedRange> ranges;
  return ranges;
}
std::shared_ptr<const MemoryMap> g_snapshot;  // null when the map changed since the last one

void add_range(const MappedRange& r) {
  std::lock_guard<std::mutex> lock(g_map_mutex);
  live_ranges()[r.begin] = r;
  g_snapshot.reset();
}

}  // namespace

const MappedRange* MemoryMap::find(std::uintptr_t address) const {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), address,
                             [](std::uintptr_t a, const MappedRange& r) { return a < r.begin; });
  if (it == ranges.begin()) return nullptr;
  --it;
  return address - it->begin < it->bytes ? &*it : nullptr;
}

std::shared_ptr<const MemoryMap> memory_map() {
  std::lock_guard<std::mutex> lock(g_map_mutex);
  if (!g_snapshot) {
    auto m = std::make_shared<MemoryMap>();
    m->ranges.reserve(live_ranges().size());
    for (const auto& kv : live_ranges()) m->ranges.push_back(kv.second);
    g_snapshot = std::move(m);
  }
  return g_snapshot;
}

void map_allocation(void* p, std::size_t bytes, bool pinned) {
  MappedRange r;
  r.begin = reinterpret_cast<std::uintptr_t>(p);
  r.bytes = std::max<std::size_t>(bytes, 1);
  r.space = MemorySpace::global;
  r.pinned_host = pinned;
  add_range(r);
}

bool unmap_allocation(const void* p, bool pinned) {
  std::lock_guard<std::mutex> lock(g_map_mutex);
  auto& live = live_ranges();
  const auto it = live.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == live.end() || it->second.symbol || it->second.pinned_host != pinned) return false;
  live.erase(it);
  g_snapshot.reset();
  return true;
}

MemorySpace host_view_space(const void* address) {
  const auto map = memory_map();
  const MappedRange* r = map->find(reinterpret_cast<std::uintptr_t>(address));
  return r ? r->space : MemorySpace::other;
}

const char* symbol_name(const void* address) {
  const auto map = memory_map();
  const MappedRange* r = map->find(reinterpret_cast<std::uintptr_t>(address));
  return r && r->begin == reinterpret_cast<std::uintptr_t>(address) ? r->symbol : nullptr;
}

MemorySpace space_of(const void* address) {
  if (in_block_shared_memory(address)) return MemorySpace::shared;
  return host_view_space(address);
}

namespace detail {
const void* register_symbol(const void* address, std::size_t bytes, const char* name, MemorySpace space) {
  MappedRange r;
  r.begin = reinterpret_cast<std::uintptr_t>(address);
  r.bytes = std::max<std::size_t>(bytes, 1);
  r.space = space;
  r.symbol = name;
  add_range(r);
  return address;
}

void count_atomic(const void* address, std::size_t bytes) {
  if (ThreadCounter* c = t_counter) c->count(reinterpret_cast<std::uintptr_t>(address), size_index(kAtomic, bytes));
}
}  // namespace detail

// ---- the per-thread counter --------------------------------------------------------------------
void ThreadCounter::begin(const MemoryMap* map, const void* shared, std::size_t shared_bytes) {
  map_ = map;
  shared_begin_ = reinterpret_cast<std::uintptr_t>(shared);
  shared_size_ = shared ? shared_bytes : 0;
  slots_.assign(map->ranges.size() + 2, RangeSlot{});
  for (Entry& e : cache_) e = Entry{};
  victim_ = 0;
}

RangeSlot* ThreadCounter::miss(std::uintptr_t a) {
  Entry e;
  const auto& r = map_->ranges;
  if (a - shared_begin_ < shared_size_) {
    e = {shared_begin_, shared_size_, &slots_[r.size()]};
  } else {
    auto it = std::upper_bound(r.begin(), r.end(), a, [](std::uintptr_t x, const MappedRange& m) { return x < m.begin; });
    if (it != r.begin() && a - (it - 1)->begin < (it - 1)->bytes) {
      e = {(it - 1)->begin, (it - 1)->bytes, &slots_[std::size_t(it - 1 - r.begin())]};
    } else {
      // A gap between ranges: everything in it is "other" (stack, host memory, ...);
      // cut the shared memory out of it.
      std::uintptr_t lo = 0, hi = UINTPTR_MAX;
      if (it != r.begin()) lo = (it - 1)->begin + (it - 1)->bytes;
      if (it != r.end()) hi = it->begin;
      if (shared_size_ && shared_begin_ >= lo && shared_begin_ < hi) {
        if (a < shared_begin_) hi = shared_begin_;
        else lo = shared_begin_ + shared_size_;
      }
      e = {lo, hi - lo, &slots_[r.size() + 1]};
    }
  }
  cache_[victim_] = e;
  victim_ = (victim_ + 1) % 4;
  return e.slot;
}

void add_counts(LaunchRecord& rec, const std::vector<const ThreadCounter*>& counters) {
  if (counters.empty()) return;
  const MemoryMap* map = counters.front()->map();
  const auto to_count = [](const RangeSlot& s) {
    AccessCount c;
    for (int size = 0; size < 5; ++size) {
      c.loads += s.v[kLoad + size];
      c.load_bytes += s.v[kLoad + size] << size;
      c.stores += s.v[kStore + size];
      c.store_bytes += s.v[kStore + size] << size;
      c.atomics += s.v[kAtomic + size];
    }
    c.loads += s.v[kLoadOther];
    c.load_bytes += s.v[kLoadOther + 1];
    c.stores += s.v[kStoreOther];
    c.store_bytes += s.v[kStoreOther + 1];
    return c;
  };
  for (const ThreadCounter* t : counters) rec.shared += to_count(t->shared());
  for (std::size_t i = 0; i < map->ranges.size(); ++i) {
    AccessCount c;
    for (const ThreadCounter* t : counters) c += to_count(t->range(i));
    if (!c.any()) continue;
    const MappedRange& m = map->ranges[i];
    RangeAccess ra;
    ra.base = reinterpret_cast<const void*>(m.begin);
    ra.bytes = m.bytes;
    ra.space = m.space;
    ra.symbol = m.symbol ? m.symbol : "";
    ra.pinned_host = m.pinned_host;
    ra.count = c;
    (m.space == MemorySpace::constant ? rec.constant : rec.global) += c;
    rec.ranges.push_back(std::move(ra));
  }
}

bool access_counts_available() {
#if defined(__SANITIZE_ADDRESS__)
  return false;  // AddressSanitizer's own instrumentation takes the place of the counting one
#else
  return true;
#endif
}

}  // namespace convlab_cpu

// ---- the compiler's callbacks ------------------------------------------------------------------
// GCC with -fsanitize=thread --param=tsan-instrument-func-entry-exit=0 calls these for
// each access of instrumented code: reads and writes of 1 to 16 bytes (aligned or not),
// ranges (copies of large structs), atomics (replaced by these calls: they must do the
// atomic operation), and one __tsan_init per file. No ThreadSanitizer runtime is linked:
// these are the whole runtime. Outside a counted kernel an access returns at once. A build
// with AddressSanitizer does not build the student's code this way and defines none.
// The symbol names are the ones student objects reference (see the report to the lead).
#if !defined(__SANITIZE_ADDRESS__)
namespace {
using convlab_cpu::kAtomic;
using convlab_cpu::kLoad;
using convlab_cpu::kLoadOther;
using convlab_cpu::kStore;
using convlab_cpu::kStoreOther;
using convlab_cpu::size_index;
// An access of 1, 2, 4, 8 or 16 bytes: `index` says its kind and size.
inline void count_access(const volatile void* address, int index) {
  if (convlab_cpu::ThreadCounter* c = convlab_cpu::t_counter) c->count(reinterpret_cast<std::uintptr_t>(address), index);
}
// An access of any size (`what`: kLoad or kStore).
inline void count_sized(const volatile void* address, std::size_t bytes, int what) {
  convlab_cpu::ThreadCounter* c = convlab_cpu::t_counter;
  if (!c) return;
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  if (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16)
    c->count(a, size_index(what, bytes));
  else
    c->count_other_size(a, bytes, what == kLoad ? kLoadOther : kStoreOther);
}
}  // namespace

#define CONVLAB_CPU_ACCESS_CALLBACKS(n)                                                                    \
  void __tsan_read##n(void* a) { count_access(a, size_index(kLoad, n)); }                                 \
  void __tsan_write##n(void* a) { count_access(a, size_index(kStore, n)); }                               \
  void __tsan_unaligned_read##n(void* a) { count_access(a, size_index(kLoad, n)); }                       \
  void __tsan_unaligned_write##n(void* a) { count_access(a, size_index(kStore, n)); }                     \
  void __tsan_volatile_read##n(void* a) { count_access(a, size_index(kLoad, n)); }                        \
  void __tsan_volatile_write##n(void* a) { count_access(a, size_index(kStore, n)); }                      \
  void __tsan_unaligned_volatile_read##n(void* a) { count_access(a, size_index(kLoad, n)); }              \
  void __tsan_unaligned_volatile_write##n(void* a) { count_access(a, size_index(kStore, n)); }

// Atomics with every memory order made sequentially consistent (always allowed).
#define CONVLAB_CPU_ATOMIC_CALLBACKS(bits, T)                                                                     \
  T __tsan_atomic##bits##_load(const volatile T* a, int) {                                                        \
    count_access(a, size_index(kLoad, sizeof(T)));                                                                            \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                                  \
  }                                                                                                               \
  void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                                                     \
    count_access(a, size_index(kStore, sizeof(T)));                                                                           \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                                     \
  }                                                                                                               \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                                                     \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                           \
  }                                                                                                               \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) {                                                    \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                            \
  }                                                                                                               \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) {                                                    \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                            \
  }                                                                                                               \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) {                                                    \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                            \
  }                                                                                                               \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) {                                                     \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                             \
  }                                                                                                               \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) {                                                    \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                            \
  }                                                                                                               \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                                                   \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                           \
  }                                                                                                               \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* expected, T v, int, int) {                  \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_compare_exchange_n(a, expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
  }                                                                                                               \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* expected, T v, int, int) {                    \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    return __atomic_compare_exchange_n(a, expected, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                 \
  }                                                                                                               \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T expected, T v, int, int) {                        \
    count_access(a, size_index(kAtomic, sizeof(T)));                                                                          \
    __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                      \
    return expected;                                                                                              \
  }

extern "C" {
CONVLAB_CPU_ACCESS_CALLBACKS(1)
CONVLAB_CPU_ACCESS_CALLBACKS(2)
CONVLAB_CPU_ACCESS_CALLBACKS(4)
CONVLAB_CPU_ACCESS_CALLBACKS(8)
CONVLAB_CPU_ACCESS_CALLBACKS(16)
void __tsan_read_range(void* a, unsigned long n) { count_sized(a, n, kLoad); }
void __tsan_write_range(void* a, unsigned long n) { count_sized(a, n, kStore); }
void __tsan_vptr_read(void** a) { count_access(a, size_index(kLoad, sizeof(void*))); }
void __tsan_vptr_update(void** a, void*) { count_access(a, size_index(kStore, sizeof(void*))); }
CONVLAB_CPU_ATOMIC_CALLBACKS(8, unsigned char)
CONVLAB_CPU_ATOMIC_CALLBACKS(16, unsigned short)
CONVLAB_CPU_ATOMIC_CALLBACKS(32, unsigned int)
CONVLAB_CPU_ATOMIC_CALLBACKS(64, unsigned long long)
// No 128-bit atomics: they would need libatomic, and no GPU has them.
void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
// Once per instrumented file, and around every function when asked (the build does not):
// nothing to do here.
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
}
#endif
