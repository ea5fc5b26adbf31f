// What the student's code does on a GPU, seen from inside the runner: every kernel launch, copy,
// memset, symbol upload and allocation goes through these wrappers. The runner is linked with
// `--wrap=<symbol>` for each (see grader/runner/CMakeLists.txt), so a call of, say, cudaMemcpy in
// the student's object reaches __wrap_cudaMemcpy here, which notes it and calls the real one.
// nvcc's `kernel<<<...>>>` compiles to __cudaGetKernel + __cudaLaunchKernel, which are wrapped
// too. Nothing is recorded outside a call (the harness's own work); work started from another
// thread is counted as stray whenever it happens.
#include "runner_device.hpp"

#include <cuda_runtime_api.h>

#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace convlab::runner {
namespace {

struct State {
  std::thread::id serving;
  bool recording = false;
  std::vector<cudaStream_t> given;
  std::vector<PointerArg> args;
  wire::Evidence evidence;
  std::vector<cudaStream_t> other_streams;
  std::map<const void*, const void*> kernel_function;  // cudaKernel_t handle -> host stub
};

State& state() {
  static State s;
  return s;
}
std::atomic<std::uint64_t> g_stray{0};
std::mutex g_mutex;  // guards State against a stray thread

// "convlab::lab01::(anonymous namespace)::conv1d_kernel(float const*, int)" -> "conv1d_kernel";
// template arguments are kept ("tile_kernel<8>").
std::string short_name(const char* mangled) {
  if (!mangled) return "?";
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : mangled;
  std::free(d);
  for (std::size_t p; (p = s.find("(anonymous namespace)")) != std::string::npos;) s.erase(p, 21);
  int angle = 0;
  std::size_t end = s.size(), start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') ++angle;
    else if (c == '>') --angle;
    else if (angle == 0 && c == '(') {
      end = i;
      break;
    } else if (angle == 0 && c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      start = i + 2;
      ++i;
    }
  }
  return s.substr(start, end - start);
}

// True when the call is the student's work of the call being recorded; counts stray work.
bool noting(State& st) {
  if (std::this_thread::get_id() != st.serving) {
    ++g_stray;
    return false;
  }
  return st.recording;
}

void note_launch(const void* function, dim3 g, dim3 b, std::size_t shared, cudaStream_t s) {
  std::lock_guard<std::mutex> lock(g_mutex);
  State& st = state();
  if (!noting(st)) return;
  wire::KernelLaunch k;
  const char* name = nullptr;
  if (function && cudaFuncGetName(&name, function) == cudaSuccess) k.name = short_name(name);
  else k.name = "?";
  cudaFuncAttributes attr{};
  if (function && cudaFuncGetAttributes(&attr, function) == cudaSuccess) {
    k.static_shared = attr.sharedSizeBytes;
    k.registers = attr.numRegs;
  }
  cudaGetLastError();  // the queries must not leave an error for the student's launch check
  k.grid[0] = g.x, k.grid[1] = g.y, k.grid[2] = g.z;
  k.block[0] = b.x, k.block[1] = b.y, k.block[2] = b.z;
  k.dynamic_shared = shared;
  k.stream = reinterpret_cast<std::uintptr_t>(s);
  k.on_given_stream = given_stream(st.given, s);
  if (!k.on_given_stream) st.other_streams.push_back(s);
  st.evidence.launches.push_back(std::move(k));
}

void note_transfer(wire::Transfer::Kind kind, void* dst, const void* src, std::size_t bytes, bool async,
                   cudaStream_t s) {
  std::lock_guard<std::mutex> lock(g_mutex);
  State& st = state();
  if (!noting(st)) return;
  wire::Transfer t;
  t.kind = kind;
  t.bytes = bytes;
  t.dst_arg = arg_of(st.args, dst);
  t.src_arg = src ? arg_of(st.args, src) : -1;
  t.on_given_stream = !async || given_stream(st.given, s);
  if (!t.on_given_stream) st.other_streams.push_back(s);
  st.evidence.transfers.push_back(t);
}

wire::Transfer::Kind kind_of(cudaMemcpyKind k, const void* dst, const void* src) {
  switch (k) {
    case cudaMemcpyHostToDevice: return wire::Transfer::Kind::to_device;
    case cudaMemcpyDeviceToHost: return wire::Transfer::Kind::to_host;
    case cudaMemcpyDeviceToDevice: return wire::Transfer::Kind::on_device;
    default: break;
  }
  // cudaMemcpyDefault: ask where each side lives.
  const auto on_device = [](const void* p) {
    cudaPointerAttributes a{};
    const bool dev = cudaPointerGetAttributes(&a, p) == cudaSuccess && a.type == cudaMemoryTypeDevice;
    cudaGetLastError();
    return dev;
  };
  const bool d = on_device(dst), s = on_device(src);
  return d && s ? wire::Transfer::Kind::on_device : d ? wire::Transfer::Kind::to_device : wire::Transfer::Kind::to_host;
}

}  // namespace

void recorder_init() { state().serving = std::this_thread::get_id(); }

void record_begin(const std::vector<cudaStream_t>& given, const std::vector<PointerArg>& args) {
  std::lock_guard<std::mutex> lock(g_mutex);
  State& st = state();
  st.recording = true;
  st.given = given;
  st.args = args;
  st.evidence = wire::Evidence{};
  st.other_streams.clear();
}

wire::Evidence record_end() {
  std::lock_guard<std::mutex> lock(g_mutex);
  State& st = state();
  st.recording = false;
  wire::Evidence e = std::move(st.evidence);
  st.evidence = wire::Evidence{};
  for (const auto& a : st.args) e.writable_args.push_back(a.writable);
  e.counts_available = false;  // a GPU counts nothing per access; the judge uses the compiled code
  return e;
}

std::vector<cudaStream_t> recorded_other_streams() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return state().other_streams;
}

std::uint64_t stray_work() { return g_stray.load(); }

}  // namespace convlab::runner

using convlab::runner::note_launch;
using convlab::runner::note_transfer;
using Kind = convlab::wire::Transfer::Kind;

extern "C" {

cudaError_t __real___cudaGetKernel(cudaKernel_t* kernel, const void* function);
cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, std::size_t, cudaStream_t);
cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void**, std::size_t, cudaStream_t);
cudaError_t __real_cudaLaunchKernel(const void*, dim3, dim3, void**, std::size_t, cudaStream_t);
cudaError_t __real_cudaMemcpy(void*, const void*, std::size_t, cudaMemcpyKind);
cudaError_t __real_cudaMemcpyAsync(void*, const void*, std::size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t __real_cudaMemset(void*, int, std::size_t);
cudaError_t __real_cudaMemsetAsync(void*, int, std::size_t, cudaStream_t);
cudaError_t __real_cudaMemcpyToSymbol(const void*, const void*, std::size_t, std::size_t, cudaMemcpyKind);
cudaError_t __real_cudaMemcpyToSymbolAsync(const void*, const void*, std::size_t, std::size_t, cudaMemcpyKind,
                                           cudaStream_t);
cudaError_t __real_cudaMalloc(void**, std::size_t);

cudaError_t __wrap___cudaGetKernel(cudaKernel_t* kernel, const void* function) {
  const cudaError_t e = __real___cudaGetKernel(kernel, function);
  if (e == cudaSuccess && kernel) {
    std::lock_guard<std::mutex> lock(convlab::runner::g_mutex);
    convlab::runner::state().kernel_function[static_cast<const void*>(*kernel)] = function;
  }
  return e;
}

static const void* function_of(cudaKernel_t k) {
  std::lock_guard<std::mutex> lock(convlab::runner::g_mutex);
  const auto& m = convlab::runner::state().kernel_function;
  const auto it = m.find(static_cast<const void*>(k));
  return it == m.end() ? nullptr : it->second;
}

cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void** args, std::size_t shared,
                                      cudaStream_t s) {
  note_launch(function_of(k), g, b, shared, s);
  return __real___cudaLaunchKernel(k, g, b, args, shared, s);
}

cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void** args, std::size_t shared,
                                           cudaStream_t s) {
  note_launch(function_of(k), g, b, shared, s);
  return __real___cudaLaunchKernel_ptsz(k, g, b, args, shared, s);
}

cudaError_t __wrap_cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args, std::size_t shared, cudaStream_t s) {
  note_launch(f, g, b, shared, s);
  return __real_cudaLaunchKernel(f, g, b, args, shared, s);
}

cudaError_t __wrap_cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  note_transfer(convlab::runner::kind_of(kind, dst, src), dst, src, bytes, false, nullptr);
  return __real_cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t __wrap_cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  note_transfer(convlab::runner::kind_of(kind, dst, src), dst, src, bytes, true, s);
  return __real_cudaMemcpyAsync(dst, src, bytes, kind, s);
}

cudaError_t __wrap_cudaMemset(void* dst, int value, std::size_t bytes) {
  note_transfer(Kind::memset, dst, nullptr, bytes, false, nullptr);
  return __real_cudaMemset(dst, value, bytes);
}

cudaError_t __wrap_cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t s) {
  note_transfer(Kind::memset, dst, nullptr, bytes, true, s);
  return __real_cudaMemsetAsync(dst, value, bytes, s);
}

cudaError_t __wrap_cudaMemcpyToSymbol(const void* symbol, const void* src, std::size_t bytes, std::size_t offset,
                                      cudaMemcpyKind kind) {
  note_transfer(Kind::to_symbol, nullptr, src, bytes, false, nullptr);
  return __real_cudaMemcpyToSymbol(symbol, src, bytes, offset, kind);
}

cudaError_t __wrap_cudaMemcpyToSymbolAsync(const void* symbol, const void* src, std::size_t bytes, std::size_t offset,
                                           cudaMemcpyKind kind, cudaStream_t s) {
  note_transfer(Kind::to_symbol, nullptr, src, bytes, true, s);
  return __real_cudaMemcpyToSymbolAsync(symbol, src, bytes, offset, kind, s);
}

cudaError_t __wrap_cudaMalloc(void** p, std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(convlab::runner::g_mutex);
    auto& st = convlab::runner::state();
    if (convlab::runner::noting(st)) {
      ++st.evidence.allocations;
      st.evidence.allocated_bytes += bytes;
    }
  }
  return __real_cudaMalloc(p, bytes);
}

}  // extern "C"
