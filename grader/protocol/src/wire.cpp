// The judge-runner message format: evidence and programs. See convlab/wire.hpp.
#include "convlab/wire.hpp"

#include <algorithm>

namespace convlab::wire {
namespace {

// A runner may launch many kernels in one call (a steps loop, a tiled GEMM); records beyond these
// are summarised by the counts the evidence keeps, never by an unbounded message.
constexpr std::uint64_t kMaxLaunchRecords = 4096;
constexpr std::uint64_t kMaxTransferRecords = 4096;
constexpr std::uint64_t kMaxProgramOps = 256;

std::uint64_t count_of(Reader& r, std::uint64_t max, const char* what) {
  const std::uint64_t n = r.u64();
  if (n > max) throw WireError(std::string("too many ") + what + " (" + std::to_string(n) + ")");
  return n;
}

}  // namespace

void Evidence::write(Writer& w) const {
  w.u8(recorded);
  const std::uint64_t nl = std::min<std::uint64_t>(launches.size(), kMaxLaunchRecords);
  w.u64(nl);
  for (std::uint64_t i = 0; i < nl; ++i) {
    const KernelLaunch& k = launches[i];
    w.str(k.name);
    for (auto v : k.grid) w.u32(v);
    for (auto v : k.block) w.u32(v);
    w.u64(k.dynamic_shared);
    w.u64(k.static_shared);
    w.i64(k.registers);
    w.u64(k.stream);
    w.u8(k.on_given_stream);
    w.u8(k.counted);
    for (auto v : {k.global_loads, k.global_stores, k.shared_loads, k.shared_stores, k.constant_loads, k.barriers,
                   k.threads, k.global_load_instructions, k.tensor_macs})
      w.u64(v);
  }
  const std::uint64_t nt = std::min<std::uint64_t>(transfers.size(), kMaxTransferRecords);
  w.u64(nt);
  for (std::uint64_t i = 0; i < nt; ++i) {
    const Transfer& t = transfers[i];
    w.u8(static_cast<std::uint8_t>(t.kind));
    w.u64(t.bytes);
    w.i64(t.dst_arg);
    w.i64(t.src_arg);
    w.u8(t.on_given_stream);
  }
  w.u64(allocations);
  w.u64(allocated_bytes);
  w.u64(stray_launches);
  w.u64(host_device_stores);
  w.u8(counts_available);
  w.u8(counted_on_gpu);
  w.u8(tensor_counted);
  w.bytes(writable_args.data(), writable_args.size());
}

Evidence Evidence::read(Reader& r) {
  Evidence e;
  e.recorded = r.u8() != 0;
  const std::uint64_t nl = count_of(r, kMaxLaunchRecords, "launch records");
  e.launches.resize(nl);
  for (auto& k : e.launches) {
    k.name = r.str(4096);
    for (auto& v : k.grid) v = r.u32();
    for (auto& v : k.block) v = r.u32();
    k.dynamic_shared = r.u64();
    k.static_shared = r.u64();
    k.registers = static_cast<std::int32_t>(r.i64());
    k.stream = r.u64();
    k.on_given_stream = r.u8() != 0;
    k.counted = r.u8() != 0;
    for (auto* v : {&k.global_loads, &k.global_stores, &k.shared_loads, &k.shared_stores, &k.constant_loads,
                    &k.barriers, &k.threads, &k.global_load_instructions, &k.tensor_macs})
      *v = r.u64();
  }
  const std::uint64_t nt = count_of(r, kMaxTransferRecords, "transfer records");
  e.transfers.resize(nt);
  for (auto& t : e.transfers) {
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(Transfer::Kind::to_symbol)) throw WireError("an unknown transfer kind");
    t.kind = static_cast<Transfer::Kind>(kind);
    t.bytes = r.u64();
    t.dst_arg = static_cast<std::int32_t>(r.i64());
    t.src_arg = static_cast<std::int32_t>(r.i64());
    t.on_given_stream = r.u8() != 0;
  }
  e.allocations = r.u64();
  e.allocated_bytes = r.u64();
  e.stray_launches = r.u64();
  e.host_device_stores = r.u64();
  e.counts_available = r.u8() != 0;
  e.counted_on_gpu = r.u8() != 0;
  e.tensor_counted = r.u8() != 0;
  std::size_t n = 0;
  const char* p = r.bytes(&n, 256);
  e.writable_args.assign(p, p + n);
  return e;
}

void write_program(Writer& w, const Program& p) {
  if (p.size() > kMaxProgramOps) throw WireError("a program of " + std::to_string(p.size()) + " operations");
  w.u64(p.size());
  for (const auto& op : p) {
    w.u8(static_cast<std::uint8_t>(op.kind));
    w.str(op.entry);
    w.str(op.args);
    w.u64(op.dst);
    w.u64(op.src);
    w.u64(op.bytes);
    w.u32(op.value);
  }
}

Program read_program(Reader& r) {
  Program p(count_of(r, kMaxProgramOps, "program operations"));
  for (auto& op : p) {
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(ProgramOp::Kind::memset)) throw WireError("an unknown program operation");
    op.kind = static_cast<ProgramOp::Kind>(kind);
    op.entry = r.str(256);
    op.args = r.str(std::size_t(16) << 20);
    op.dst = r.u64();
    op.src = r.u64();
    op.bytes = r.u64();
    op.value = r.u32();
  }
  return p;
}

}  // namespace convlab::wire
