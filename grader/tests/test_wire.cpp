// The judge-runner message format: every field read back as written, and every way a runner can
// send garbage (short messages, oversized fields, wrong kinds, wrong sizes) refused with WireError.
#include <convlab/remote_codec.hpp>
#include <convlab/wire.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

using namespace convlab;
using namespace convlab::wire;

namespace {

// A runner's context that knows one allocation and one stream, as the runner's would.
class FakeContext : public remote::ArgContext {
public:
  void* device_pointer(std::uint64_t address, bool writable) override {
    if (address == 0) return nullptr;
    if (address < kBase || address >= kBase + 4096) throw WireError("a pointer argument that the runner never allocated");
    writable_.push_back(writable);
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  }
  void* host_copy(const char* bytes, std::size_t n) override {
    copies_.emplace_back(bytes, bytes + n);
    return copies_.back().data();
  }
  cudaStream_t stream(std::uint64_t handle) override {
    if (handle != 0 && handle != kStream) throw WireError("a stream that the runner never created");
    return reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(handle));
  }
  static constexpr std::uint64_t kBase = 0x7000, kStream = 0x42;
  std::vector<bool> writable_;
  std::vector<std::vector<char>> copies_;
};

struct Problem {
  int n;
  float scale;
};

}  // namespace

TEST(Wire, FieldsReadBackAsWritten) {
  Writer w;
  w.u8(7);
  w.u32(0xDEADBEEF);
  w.u64(1ull << 40);
  w.i64(-5);
  w.f64(0.25);
  w.str("conv2d_tiled_in");
  const float data[3] = {1, 2, 3};
  w.bytes(data, sizeof data);
  Reader r(w.data());
  EXPECT_EQ(r.u8(), 7);
  EXPECT_EQ(r.u32(), 0xDEADBEEFu);
  EXPECT_EQ(r.u64(), 1ull << 40);
  EXPECT_EQ(r.i64(), -5);
  EXPECT_EQ(r.f64(), 0.25);
  EXPECT_EQ(r.str(), "conv2d_tiled_in");
  std::size_t n = 0;
  const char* p = r.bytes(&n, 64);
  ASSERT_EQ(n, sizeof data);
  EXPECT_EQ(std::memcmp(p, data, n), 0);
  EXPECT_TRUE(r.done());
  EXPECT_NO_THROW(r.finish());
}

TEST(Wire, GarbageIsRefused) {
  Writer w;
  w.u32(1);
  Reader short_read(w.data());
  EXPECT_THROW(short_read.u64(), WireError);  // 4 bytes where 8 are needed

  Writer big;
  big.u64(std::uint64_t(1) << 40);  // a length no message holds
  Reader r(big.data());
  EXPECT_THROW(r.str(), WireError);

  Writer lie;
  lie.u64(100);  // says 100 bytes follow, none do
  Reader r2(lie.data());
  std::size_t n = 0;
  EXPECT_THROW(r2.bytes(&n, 1000), WireError);

  Writer extra;
  extra.u32(1);
  extra.u32(2);
  Reader r3(extra.data());
  r3.u32();
  EXPECT_THROW(r3.finish(), WireError);  // trailing bytes: the two sides disagree
}

TEST(Wire, EvidenceRoundTrip) {
  Evidence e;
  e.recorded = true;
  KernelLaunch k;
  k.name = "conv2d_tiled_in_kernel";
  k.grid[0] = 64, k.grid[1] = 33;
  k.block[0] = 32, k.block[1] = 32;
  k.dynamic_shared = 0;
  k.static_shared = 4096;
  k.registers = 40;
  k.stream = 0x42;
  k.on_given_stream = false;
  k.counted = true;
  k.shared_loads = 123456;
  k.barriers = 99;
  e.launches.push_back(k);
  Transfer t;
  t.kind = Transfer::Kind::to_host;
  t.bytes = 1 << 20;
  t.src_arg = 0;
  e.transfers.push_back(t);
  e.allocations = 2;
  e.allocated_bytes = 1000;
  e.stray_launches = 1;
  e.host_device_stores = 3;
  e.counts_available = true;
  e.counted_on_gpu = true;
  e.writable_args = {0, 1};
  Writer w;
  e.write(w);
  Reader r(w.data());
  const Evidence back = Evidence::read(r);
  r.finish();
  ASSERT_EQ(back.launches.size(), 1u);
  EXPECT_EQ(back.launches[0].name, "conv2d_tiled_in_kernel");
  EXPECT_EQ(back.launches[0].threads_launched(), 64u * 33 * 32 * 32);
  EXPECT_EQ(back.launches[0].static_shared, 4096u);
  EXPECT_FALSE(back.launches[0].on_given_stream);
  EXPECT_EQ(back.launches[0].shared_loads, 123456u);
  EXPECT_EQ(back.launches[0].barriers, 99u);
  ASSERT_EQ(back.transfers.size(), 1u);
  EXPECT_EQ(back.transfers[0].kind, Transfer::Kind::to_host);
  EXPECT_EQ(back.transfers[0].src_arg, 0);
  EXPECT_EQ(back.allocations, 2u);
  EXPECT_EQ(back.stray_launches, 1u);
  EXPECT_EQ(back.host_device_stores, 3u);
  EXPECT_TRUE(back.counts_available);
  EXPECT_TRUE(back.counted_on_gpu);
  EXPECT_EQ(back.writable_args, (std::vector<std::uint8_t>{0, 1}));

  // A record with an impossible transfer kind is refused: the kind is the byte after the flag
  // (1 byte) and the two record counts (8 bytes each) of an evidence with no launches.
  Evidence one;
  one.transfers.push_back(t);
  Writer w2;
  one.write(w2);
  std::string bad = w2.data();
  ASSERT_EQ(bad[17], static_cast<char>(Transfer::Kind::to_host));
  bad[17] = 9;
  Reader rb(bad);
  EXPECT_THROW(Evidence::read(rb), WireError);
}

TEST(Wire, ProgramRoundTripAndLimit) {
  Program p(2);
  p[0].kind = ProgramOp::Kind::call;
  p[0].entry = "baseline.conv1d_naive";
  p[0].args = std::string("\x01\x02", 2);
  p[1].kind = ProgramOp::Kind::memset;
  p[1].dst = 0x7000;
  p[1].bytes = 64;
  p[1].value = 0xFF;
  Writer w;
  write_program(w, p);
  Reader r(w.data());
  const Program back = read_program(r);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].entry, "baseline.conv1d_naive");
  EXPECT_EQ(back[0].args, p[0].args);
  EXPECT_EQ(back[1].kind, ProgramOp::Kind::memset);
  EXPECT_EQ(back[1].value, 0xFFu);
  Writer too_many;
  EXPECT_THROW(write_program(too_many, Program(10000)), WireError);
}

TEST(Wire, ArgumentsDecodeByParameterType) {
  Writer w;
  const float filter[3] = {0.5f, -1, 2};
  const Problem prob{1000, 0.5f};
  remote::encode_arg(w, reinterpret_cast<const float*>(FakeContext::kBase));  // device input
  remote::encode_arg(w, remote::host_array(filter, 3));                       // host filter
  remote::encode_arg(w, reinterpret_cast<float*>(FakeContext::kBase + 64));   // device output
  remote::encode_arg(w, prob);
  remote::encode_arg(w, reinterpret_cast<cudaStream_t>(std::uintptr_t(FakeContext::kStream)));
  remote::encode_arg(w, std::string("text"));
  FakeContext c;
  Reader r(w.data());
  const float* in = remote::Codec<const float*>::decode(r, c);
  const float* h = remote::Codec<const float*>::decode(r, c);
  float* out = remote::Codec<float*>::decode(r, c);
  const Problem p = remote::Codec<Problem>::decode(r, c);
  const cudaStream_t s = remote::Codec<cudaStream_t>::decode(r, c);
  const std::string t = remote::Codec<std::string>::decode(r, c);
  r.finish();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(in), FakeContext::kBase);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h[2], 2.0f);  // the runner's own copy of the host array
  EXPECT_NE(h, filter);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(out), FakeContext::kBase + 64);
  EXPECT_EQ(c.writable_, (std::vector<bool>{false, true}));
  EXPECT_EQ(p.n, 1000);
  EXPECT_EQ(p.scale, 0.5f);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s), FakeContext::kStream);
  EXPECT_EQ(t, "text");
}

TEST(Wire, WrongArgumentsAreRefused) {
  FakeContext c;
  {  // a value where a pointer is expected
    Writer w;
    remote::encode_arg(w, 5);
    Reader r(w.data());
    EXPECT_THROW(remote::Codec<float*>::decode(r, c), WireError);
  }
  {  // a struct of another size (judge and runner built from different headers)
    Writer w;
    remote::encode_arg(w, std::uint16_t(5));
    Reader r(w.data());
    EXPECT_THROW(remote::Codec<Problem>::decode(r, c), WireError);
  }
  {  // an address the runner never handed out
    Writer w;
    remote::encode_arg(w, reinterpret_cast<float*>(0x1));
    Reader r(w.data());
    EXPECT_THROW(remote::Codec<float*>::decode(r, c), WireError);
  }
  {  // a stream the runner never created
    Writer w;
    remote::encode_arg(w, reinterpret_cast<cudaStream_t>(std::uintptr_t(0x99)));
    Reader r(w.data());
    EXPECT_THROW(remote::Codec<cudaStream_t>::decode(r, c), WireError);
  }
  EXPECT_EQ(remote::filter_taps(2, 1), 5u);
  EXPECT_EQ(remote::filter_taps(2, 2), 25u);
  EXPECT_EQ(remote::filter_taps(-1, 2), 0u);
  EXPECT_EQ(remote::filter_taps(65, 1), 0u);
}
