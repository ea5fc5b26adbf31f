// The CPU backend's records of launches and memory calls. See convlab_cpu/records.hpp.
#include "counting.hpp"

#include <mutex>
#include <utility>

namespace convlab_cpu {
namespace {

constexpr std::size_t kDefaultRecordLimit = std::size_t(1) << 16;  // per list: a bound on memory
std::size_t g_limit = kDefaultRecordLimit;

std::mutex g_records_mutex;
std::uint64_t g_sequence = 0;
std::uint64_t g_dropped = 0;
std::vector<LaunchRecord>& launches() {
  static std::vector<LaunchRecord> v;
  return v;
}
std::vector<MemoryRecord>& memory() {
  static std::vector<MemoryRecord> v;
  return v;
}

template <class R>
void append(std::vector<R>& list, R&& r) {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  r.sequence = g_sequence++;
  if (list.size() >= g_limit) {
    ++g_dropped;
    return;
  }
  list.push_back(std::move(r));
}

}  // namespace

AccessCount& AccessCount::operator+=(const AccessCount& o) {
  loads += o.loads;
  load_bytes += o.load_bytes;
  stores += o.stores;
  store_bytes += o.store_bytes;
  atomics += o.atomics;
  return *this;
}

const char* to_string(MemorySpace space) {
  switch (space) {
    case MemorySpace::global: return "global";
    case MemorySpace::shared: return "shared";
    case MemorySpace::constant: return "constant";
    case MemorySpace::other: return "other";
  }
  return "?";
}

const char* to_string(MemoryOp op) {
  switch (op) {
    case MemoryOp::malloc: return "malloc";
    case MemoryOp::malloc_host: return "malloc_host";
    case MemoryOp::free: return "free";
    case MemoryOp::free_host: return "free_host";
    case MemoryOp::memcpy: return "memcpy";
    case MemoryOp::memset: return "memset";
    case MemoryOp::memcpy_to_symbol: return "memcpy_to_symbol";
    case MemoryOp::memcpy_from_symbol: return "memcpy_from_symbol";
  }
  return "?";
}

void add_launch_record(LaunchRecord&& record) { append(launches(), std::move(record)); }
void add_memory_record(MemoryRecord&& record) { append(memory(), std::move(record)); }

std::vector<LaunchRecord> launch_records() {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  return launches();
}

std::vector<MemoryRecord> memory_records() {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  return memory();
}

void clear_records() {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  launches().clear();
  memory().clear();
  g_dropped = 0;
}

void set_record_limit(std::size_t limit) {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  g_limit = limit ? limit : kDefaultRecordLimit;
}

std::uint64_t dropped_records() {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  return g_dropped;
}

}  // namespace convlab_cpu
