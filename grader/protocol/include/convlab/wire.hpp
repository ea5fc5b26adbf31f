/// @file wire.hpp
/// @brief The message format between a lab's judge (the graders, which hold no student code) and
/// its runner (the student's kernels plus the harness code that launches and times them).
///
/// The two processes meet only here: the judge sends requests on one pipe, the runner answers on
/// another, and bulk data (inputs, outputs) travels through a shared memory window. Every field is
/// read with bounds checks, so a runner that sends garbage, too much or nothing fails the test that
/// was running, with the reason, and never the judge (see convlab/remote.hpp for the judge's side,
/// grader/runner/ for the runner's).
///
/// A request or a reply is a frame: `u32 magic, u32 op or status, u64 length, payload`. Numbers are
/// little-endian as on every machine convlab runs on. A payload is a sequence of fields written by
/// Writer and read back by Reader in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace convlab::wire {

/// "CLWR": the first word of every frame.
inline constexpr std::uint32_t kMagic = 0x52574C43u;
/// Raised whenever the frame layout or a request's meaning changes; the judge refuses another.
inline constexpr std::uint32_t kVersion = 2;
/// The largest frame payload either side accepts (bulk data goes through the window instead).
inline constexpr std::uint64_t kMaxPayload = std::uint64_t(64) << 20;

/// The most kernels of one counted call (a technique test's, or the call after a speed test's timed
/// runs). The GPU's counters count no more (grader/runner/src/gpu_counters.cpp says why), and a call
/// with more is not judged on part of its launches: on a GPU the runner fails it, on the CPU backend,
/// which counts every launch, the technique test does, in the same words (too_many_launches()).
inline constexpr std::size_t kMaxCountedLaunches = 128;

/// Why a counted call that launched `launched` kernels (more than kMaxCountedLaunches) fails.
inline std::string too_many_launches(std::size_t launched) {
  return "this call launched " + std::to_string(launched) + " kernels; the GPU's counters count at most " +
         std::to_string(kMaxCountedLaunches) +
         " launches of one call (loop inside a kernel, or launch fewer, larger grids)";
}

/// What the judge asks for.
enum class Op : std::uint32_t {
  hello = 1,       ///< -> version, lab, backend, device status, entry names
  malloc = 2,      ///< bytes -> address
  free = 3,        ///< address
  to_device = 4,   ///< address, bytes: copy the window's first bytes to the device
  to_host = 5,     ///< address, bytes: copy device bytes into the window
  copy = 6,        ///< dst, src, bytes: device to device
  memset = 7,      ///< address, byte value, bytes
  stream_create = 8,   ///< -> stream handle
  stream_destroy = 9,  ///< stream handle
  synchronize = 10,    ///< wait for all device work (every stream) -> error of the work
  call = 11,       ///< entry name, arguments -> outcome, result, evidence
  measure = 12,    ///< programs, pairs, checks -> times per pair, checks, evidence
  ceilings = 13,   ///< -> copy bandwidth, FP32 peak (measured once per runner)
  random_fill = 14,  ///< address, count, nonce: uniform floats in [-1, 1) made on the device
  quit = 15,
  counting = 16,   ///< u8 0 off, 1 on, 2 on + a warm-up session, 3 set up in the background (not on yet): count each
                   ///< kernel of the next calls with the GPU's counters -> "" or why not
};

/// How a reply ends: ok, or the request failed in the harness (not in student code).
enum class Status : std::uint32_t {
  ok = 0,
  error = 1,        ///< a harness-side failure; the payload is its message
  cuda_error = 2,   ///< a CUDA call failed; payload: code, name, text, and whether the context is lost
};

/// A malformed frame or field: the runner broke the protocol.
class WireError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Builds a payload.
class Writer {
public:
  void u8(std::uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { raw(&v, sizeof v); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void i64(std::int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  /// A length-prefixed block of bytes.
  void bytes(const void* p, std::size_t n) {
    u64(n);
    raw(p, n);
  }
  void raw(const void* p, std::size_t n) { buf_.append(static_cast<const char*>(p), n); }
  const std::string& data() const { return buf_; }
  std::string take() { return std::move(buf_); }

private:
  std::string buf_;
};

/// Reads a payload; every read past the end, or a length that does not fit, throws WireError.
class Reader {
public:
  Reader(const char* p, std::size_t n) : p_(p), n_(n) {}
  explicit Reader(const std::string& s) : Reader(s.data(), s.size()) {}
  std::uint8_t u8() {
    need(1);
    return static_cast<std::uint8_t>(p_[at_++]);
  }
  std::uint32_t u32() { return pod<std::uint32_t>(); }
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  std::int64_t i64() { return pod<std::int64_t>(); }
  double f64() { return pod<double>(); }
  /// A string of at most `max` bytes.
  std::string str(std::size_t max = 1 << 20) {
    const std::uint64_t n = u64();
    if (n > max) throw WireError("a text field of " + std::to_string(n) + " bytes (at most " + std::to_string(max) + ")");
    need(n);
    std::string s(p_ + at_, n);
    at_ += n;
    return s;
  }
  /// A length-prefixed block of at most `max` bytes; returns a pointer into the payload.
  const char* bytes(std::size_t* n, std::size_t max) {
    const std::uint64_t len = u64();
    if (len > max) throw WireError("a block of " + std::to_string(len) + " bytes (at most " + std::to_string(max) + ")");
    need(len);
    const char* p = p_ + at_;
    at_ += len;
    *n = static_cast<std::size_t>(len);
    return p;
  }
  bool done() const { return at_ == n_; }
  /// Throws unless every byte was read: trailing bytes mean the two sides disagree.
  void finish() const {
    if (!done()) throw WireError(std::to_string(n_ - at_) + " unexpected bytes at the end of a message");
  }

private:
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  void need(std::uint64_t n) const {
    if (n > n_ - at_) throw WireError("a message ended early (wanted " + std::to_string(n) + " more bytes)");
  }
  const char* p_;
  std::size_t n_;
  std::size_t at_ = 0;
};

// ---- call arguments ---------------------------------------------------------------------------
//
// A call's arguments are tagged fields, so the runner can check each against the parameter it
// fills: a device pointer, a host array (copied, e.g. a filter for cudaMemcpyToSymbol), a stream,
// a value of a trivially copyable type (sizes must agree), or a text.

/// The tag before each argument.
enum class Tag : std::uint8_t {
  pointer = 'p',  ///< u64: an address the runner allocated (or 0)
  host = 'h',     ///< bytes: a host array; the runner passes a pointer to its own copy
  stream = 's',   ///< u64: a stream handle the runner created (or 0: the legacy default stream)
  value = 'v',    ///< bytes: the object representation of a trivially copyable value
  text = 't',     ///< str
};

// ---- what the runner saw a call do ------------------------------------------------------------

/// One kernel launch made while a call ran (or, with by_student false, by the harness).
struct KernelLaunch {
  std::string name;                ///< the kernel's name, without namespaces and parameters
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint64_t dynamic_shared = 0;  ///< bytes per block, from the launch
  std::uint64_t static_shared = 0;   ///< bytes per block, declared in the kernel
  std::int32_t registers = -1;       ///< per thread (GPU only; -1 unknown)
  std::uint64_t stream = 0;          ///< the stream it went to
  bool on_given_stream = true;       ///< the stream the grader passed to the launcher
  bool counted = false;              ///< the counts below were measured (CPU backend; GPU counters on request)
  std::uint64_t global_loads = 0, global_stores = 0;  ///< element accesses to device memory
  std::uint64_t shared_loads = 0, shared_stores = 0;  ///< ... to the block's shared memory
  std::uint64_t constant_loads = 0;                   ///< ... to __constant__ memory
  std::uint64_t barriers = 0;                         ///< __syncthreads() executed, over all threads
  std::uint64_t threads = 0;                          ///< threads run
  /// GPU counters only: global load instructions, each warp's counted for its 32 threads (a load
  /// of one address by the whole warp, a filter tap, counts 32 here and 1 word in global_loads).
  std::uint64_t global_load_instructions = 0;
  /// Multiply-adds on the tensor cores (CPU backend: the warp matrix API's mma_sync, once per warp;
  /// GPU: TF32 ones, from the counters; see Evidence::tensor_counted).
  std::uint64_t tensor_macs = 0;

  std::uint64_t blocks() const { return std::uint64_t(grid[0]) * grid[1] * grid[2]; }
  std::uint64_t threads_per_block() const { return std::uint64_t(block[0]) * block[1] * block[2]; }
  std::uint64_t threads_launched() const { return blocks() * threads_per_block(); }
};

/// One copy, memset or symbol upload made by the student's code while a call ran.
struct Transfer {
  enum class Kind : std::uint8_t { to_device = 0, to_host = 1, on_device = 2, memset = 3, to_symbol = 4 };
  Kind kind = Kind::on_device;
  std::uint64_t bytes = 0;
  std::int32_t dst_arg = -1;  ///< which pointer argument of the call (0, 1, ... in order) holds the destination, or -1
  std::int32_t src_arg = -1;  ///< the same for the source
  bool on_given_stream = true;  ///< async copies: on the stream the grader passed; synchronous ones: true
};

/// Everything the runner observed while one call ran.
struct Evidence {
  bool recorded = true;                 ///< launches and transfers were recorded (false: this runner cannot)
  std::vector<KernelLaunch> launches;   ///< the student's launches, in order
  std::vector<Transfer> transfers;      ///< the student's copies and memsets, in order
  std::uint64_t allocations = 0;        ///< cudaMalloc calls by the student's code
  std::uint64_t allocated_bytes = 0;    ///< their total size
  std::uint64_t stray_launches = 0;     ///< launches or copies while no call ran (another thread, after return)
  std::uint64_t host_device_stores = 0; ///< CPU backend: stores to device memory from host code
  bool counts_available = false;        ///< the launches carry counts (CPU backend, not under ASan; GPU: Op::counting)
  /// The counts are the GPU's hardware counters (4-byte words loaded and stored, per thread that
  /// executed the instruction); constant loads and barriers are not among them.
  bool counted_on_gpu = false;
  /// The launches' tensor_macs were measured: the CPU backend counts the warp matrix API's mma_sync in
  /// every build; a GPU's counters where the chip has smsp__ops_path_tensor_op_hmma_src_tf32_dst_fp32
  /// (TF32 operands only; on sm_90 Hopper's wgmma products, HGMMA, added: runner gpu_counters.cpp).
  /// Not sm__inst_executed_pipe_tensor_op_hmma: tried on an H200 through the range profiler, it
  /// reported 40 to 300 per output for kernels with no tensor-core instruction.
  bool tensor_counted = false;
  std::vector<std::uint8_t> writable_args;  ///< per pointer argument: 1 if the launcher may write it (not const)

  void write(Writer& w) const;
  static Evidence read(Reader& r);
};

/// A sequence of device operations that the runner replays inside a timed interval: the speed
/// graders record the baseline's and the student's work once and send it (see remote.hpp).
struct ProgramOp {
  enum class Kind : std::uint8_t { call = 0, copy = 1, memset = 2 };
  Kind kind = Kind::call;
  std::string entry;         ///< call: the entry's name
  std::string args;          ///< call: the encoded arguments
  std::uint64_t dst = 0, src = 0, bytes = 0;  ///< copy / memset
  std::uint32_t value = 0;   ///< memset byte
};

/// A program: the operations of one timed run.
using Program = std::vector<ProgramOp>;

void write_program(Writer& w, const Program& p);
Program read_program(Reader& r);

/// The check made on the device after every timed run of the student's program: its output
/// against the baseline's output for the same (fresh) input, element by element.
struct TimedCheck {
  std::uint64_t candidate = 0;  ///< address of the student's output
  std::uint64_t reference = 0;  ///< address of the baseline's output
  std::uint64_t count = 0;      ///< floats
  double tolerance = 0;         ///< allowed |candidate - reference| (NaN never passes)
};

/// Fresh input before each timed pair: `count` uniform floats in [-1, 1) at `address`, then copies.
struct Refresh {
  std::uint64_t address = 0, count = 0;  ///< the buffer refilled (count 0: no refresh)
  std::vector<ProgramOp> copies;         ///< copies made after the refill (a second input, say)
};

}  // namespace convlab::wire
