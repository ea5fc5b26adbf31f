// The runner's timed runs (Op::measure): a baseline and a candidate program, timed in pairs from a
// cold cache on the judge's stream, the candidate's calls recorded and, when asked, checked on the
// device. Part of the Server of runner_internal.hpp (the requests and calls: runner_main.cpp).
#include "runner_internal.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace convlab::runner {

// Runs a program's operations; the student's calls are recorded when `evidence` is given.
void Server::run_program(const wire::Program& p, wire::Evidence* evidence) {
  for (const auto& op : p) {
    switch (op.kind) {
      case wire::ProgramOp::Kind::call: {
        const Outcome o = run_entry(op.entry, op.args, evidence != nullptr);
        if (o.kind != 0) throw std::runtime_error(op.entry + " threw during a timed run: " + o.message);
        if (o.launch_error != cudaSuccess || o.run_error != cudaSuccess)
          throw CudaFailure{o.launch_error != cudaSuccess ? o.launch_error : o.run_error,
                            op.entry + " failed during a timed run"};
        if (evidence) merge(*evidence, o.evidence);
        break;
      }
      case wire::ProgramOp::Kind::copy:
        check(cudaMemcpy(device_range(op.dst, op.bytes), device_range(op.src, op.bytes), op.bytes,
                         cudaMemcpyDeviceToDevice),
              "a copy of a timed program");
        settle("a copy of a timed program");
        break;
      case wire::ProgramOp::Kind::memset:
        check(cudaMemset(device_range(op.dst, op.bytes), static_cast<int>(op.value & 0xFF), op.bytes),
              "a memset of a timed program");
        settle("a memset of a timed program");
        break;
    }
  }
}

void Server::merge(wire::Evidence& into, const wire::Evidence& e) {
  into.launches.insert(into.launches.end(), e.launches.begin(), e.launches.end());
  into.transfers.insert(into.transfers.end(), e.transfers.begin(), e.transfers.end());
  into.allocations += e.allocations;
  into.allocated_bytes += e.allocated_bytes;
  into.host_device_stores += e.host_device_stores;
  into.counts_available = e.counts_available;
  into.counted_on_gpu = e.counted_on_gpu;
  if (into.writable_args.empty()) into.writable_args = e.writable_args;
}

// The program, timed on `s` from a cold cache. The interval ends only when every stream the
// program's calls used has finished: work sent elsewhere is timed too (and reported).
double Server::time_program(const wire::Program& p, cudaStream_t s, CacheFlusher& flusher, wire::Evidence* evidence,
                            cudaEvent_t start, cudaEvent_t stop) {
  flusher.flush(s);
  check(cudaStreamSynchronize(s), "the cache flush");
  check(cudaEventRecord(start, s), "cudaEventRecord");
  wire::Evidence e;
  run_program_recorded(p, e, evidence != nullptr, s, stop);
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a timed run");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  if (evidence) merge(*evidence, e);
  return ms;
}

// run_program() with the end of the timed interval joined to every other stream it used.
void Server::run_program_recorded(const wire::Program& p, wire::Evidence& e, bool record, cudaStream_t s, cudaEvent_t stop) {
  std::vector<cudaStream_t> others;
  for (const auto& op : p) {
    if (op.kind != wire::ProgramOp::Kind::call) {
      run_program({op}, nullptr);
      continue;
    }
    const Outcome o = run_entry(op.entry, op.args, true);
    if (o.kind != 0) throw std::runtime_error(op.entry + " threw during a timed run: " + o.message);
    if (o.launch_error != cudaSuccess || o.run_error != cudaSuccess)
      throw CudaFailure{o.launch_error != cudaSuccess ? o.launch_error : o.run_error,
                        op.entry + " failed during a timed run"};
    for (const auto& k : o.evidence.launches)
      if (!k.on_given_stream) others.push_back(reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(k.stream)));
    if (record) merge(e, o.evidence);
  }
  // run_entry() synchronised the device after each call, so `stop` on `s` already follows all
  // of the work; the joins keep that true should a call ever be left unsynchronised.
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
#ifndef CONVLAB_BACKEND_CPU  // (the CPU backend's streams are synchronous)
  for (cudaStream_t o : others) {
    cudaEvent_t joined = nullptr;
    check(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventRecord(joined, o), "cudaEventRecord on another stream");
    check(cudaStreamWaitEvent(s, joined, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(joined);
  }
#endif
  check(cudaEventRecord(stop, s), "cudaEventRecord");
}

std::string Server::do_measure(wire::Reader& r) {
  const wire::Program baseline = wire::read_program(r), candidate = wire::read_program(r),
                      prepare = wire::read_program(r);
  const std::uint64_t pairs = r.u64();
  const auto s = reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(r.u64()));
  wire::Refresh refresh;
  refresh.address = r.u64();
  refresh.count = r.u64();
  const std::uint64_t nonce = r.u64();
  refresh.copies = wire::read_program(r);
  const bool has_check = r.u8() != 0;
  wire::TimedCheck tc;
  tc.candidate = r.u64();
  tc.reference = r.u64();
  tc.count = r.u64();
  tc.tolerance = r.f64();
  r.finish();
  if (pairs < 1 || pairs > 1000) throw std::invalid_argument("a round of " + std::to_string(pairs) + " pairs");
  if (!streams_.count(s)) throw std::invalid_argument("timing on a stream the runner never created");
  float* fresh = refresh.count ? static_cast<float*>(device_range(refresh.address, refresh.count * sizeof(float)))
                               : nullptr;
  const float* cand = nullptr;
  const float* ref = nullptr;
  if (has_check) {
    cand = static_cast<const float*>(device_range(tc.candidate, tc.count * sizeof(float)));
    ref = static_cast<const float*>(device_range(tc.reference, tc.count * sizeof(float)));
  }
  // (On the CPU backend this runs too, with host timestamps: the harness's own tests use it; the
  // graders register no speed test there.)
  CacheFlusher flusher;
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  struct Events {
    cudaEvent_t a, b;
    ~Events() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } events{start, stop};
  // Warm-up: one untimed run of each (module loading, first-touch of memory).
  run_program(baseline, nullptr);
  run_program(prepare, nullptr);
  run_program(candidate, nullptr);
  check(cudaDeviceSynchronize(), "the warm-up");
  wire::Writer w;
  w.u64(pairs);
  wire::Evidence evidence;
  for (std::uint64_t i = 0; i < pairs; ++i) {
    if (fresh) {
      random_fill(fresh, refresh.count, nonce + 0x9E37ull * (i + 1), s);
      check(cudaStreamSynchronize(s), "the fresh input");
      run_program(refresh.copies, nullptr);
    }
    const double b = time_program(baseline, s, flusher, nullptr, start, stop);
    run_program(prepare, nullptr);
    check(cudaDeviceSynchronize(), "the preparation of a timed run");
    const double c = time_program(candidate, s, flusher, &evidence, start, stop);
    w.f64(b);
    w.f64(c);
    CheckResult cr;
    if (has_check) cr = compare_on_device(cand, ref, tc.count, static_cast<float>(tc.tolerance), s);
    w.u64(cr.mismatches);
    w.u64(cr.first);
    w.f64(cr.got);
    w.f64(cr.want);
  }
  evidence.stray_launches = stray_work();
  evidence.write(w);
  return w.take();
}

}  // namespace convlab::runner
