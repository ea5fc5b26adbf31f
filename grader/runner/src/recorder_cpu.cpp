// What the student's code does on the CPU backend, seen from inside the runner. The CPU runtime
// owns every launch, copy and allocation and counts each kernel's memory accesses by memory space
// (convlab_cpu/records.hpp), so the records come straight from it.
#include "runner_device.hpp"

#include <convlab_cpu/records.hpp>

namespace convlab::runner {
namespace {

struct State {
  bool recording = false;
  std::vector<cudaStream_t> given;
  std::vector<PointerArg> args;
  std::vector<cudaStream_t> others;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

void recorder_init() {}

void record_begin(const std::vector<cudaStream_t>& given, const std::vector<PointerArg>& args) {
  State& st = state();
  st.recording = true;
  st.given = given;
  st.args = args;
  st.others.clear();
  convlab_cpu::clear_records();
}

wire::Evidence record_end() {
  State& st = state();
  st.recording = false;
  wire::Evidence e;
  for (const auto& a : st.args) e.writable_args.push_back(a.writable);
  e.counts_available = convlab_cpu::access_counts_available();
  e.tensor_counted = true;  // mma_sync's multiply-adds: counted in every build (block_runner.cpp)
  for (const auto& r : convlab_cpu::launch_records()) {
    wire::KernelLaunch k;
    k.name = r.kernel;
    k.grid[0] = r.grid.x, k.grid[1] = r.grid.y, k.grid[2] = r.grid.z;
    k.block[0] = r.block.x, k.block[1] = r.block.y, k.block[2] = r.block.z;
    k.dynamic_shared = r.dynamic_shared_bytes;
    k.static_shared = r.static_shared_bytes;
    k.stream = reinterpret_cast<std::uintptr_t>(r.stream);
    k.on_given_stream = given_stream(st.given, r.stream);
    if (!k.on_given_stream) st.others.push_back(r.stream);
    k.counted = r.counted;
    k.global_loads = r.global.loads;
    k.global_stores = r.global.stores + r.global.atomics;
    k.shared_loads = r.shared.loads;
    k.shared_stores = r.shared.stores + r.shared.atomics;
    k.constant_loads = r.constant.loads;
    k.barriers = r.barriers;
    k.tensor_macs = r.tensor_macs;
    k.threads = r.threads_run;
    e.launches.push_back(std::move(k));
  }
  for (const auto& m : convlab_cpu::memory_records()) {
    if (m.op == convlab_cpu::MemoryOp::malloc || m.op == convlab_cpu::MemoryOp::malloc_host) {
      ++e.allocations;
      e.allocated_bytes += m.bytes;
      continue;
    }
    wire::Transfer t;
    switch (m.op) {
      case convlab_cpu::MemoryOp::memcpy:
        t.kind = m.kind == cudaMemcpyHostToDevice   ? wire::Transfer::Kind::to_device
                 : m.kind == cudaMemcpyDeviceToHost ? wire::Transfer::Kind::to_host
                 : m.kind == cudaMemcpyDeviceToDevice
                     ? wire::Transfer::Kind::on_device
                     : (m.dst_space == convlab_cpu::MemorySpace::global
                            ? (m.src_space == convlab_cpu::MemorySpace::global ? wire::Transfer::Kind::on_device
                                                                                : wire::Transfer::Kind::to_device)
                            : wire::Transfer::Kind::to_host);
        break;
      case convlab_cpu::MemoryOp::memset: t.kind = wire::Transfer::Kind::memset; break;
      case convlab_cpu::MemoryOp::memcpy_to_symbol: t.kind = wire::Transfer::Kind::to_symbol; break;
      default: continue;  // frees, reads from symbols: nothing a grader looks at
    }
    t.bytes = m.bytes;
    t.dst_arg = arg_of(st.args, m.dst);
    t.src_arg = m.src ? arg_of(st.args, m.src) : -1;
    t.on_given_stream = !m.async || given_stream(st.given, m.stream);
    if (!t.on_given_stream) st.others.push_back(m.stream);
    e.transfers.push_back(t);
  }
  return e;
}

std::vector<cudaStream_t> recorded_other_streams() { return state().others; }

std::uint64_t stray_work() { return 0; }

}  // namespace convlab::runner
