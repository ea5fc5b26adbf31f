// The CPU backend's CUDA runtime API: memory, errors, streams, events, device
// properties. See convlab_cpu/runtime.hpp.
#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/runtime.hpp"
#include "counting.hpp"
#include "launch_internal.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>

namespace convlab_cpu {
namespace {

thread_local cudaError_t g_last_error = cudaSuccess;

std::mutex g_attr_mutex;
std::unordered_map<const void*, int>& dynamic_shared_limits() {
  static std::unordered_map<const void*, int> limits;
  return limits;
}

// Synchronising calls return the error of a kernel that failed while running.
cudaError_t take_pending() {
  const cudaError_t e = take_execution_error();
  if (e != cudaSuccess) g_last_error = e;
  return e;
}

}  // namespace

cudaError_t set_last_error(cudaError_t error) {
  if (error != cudaSuccess) g_last_error = error;
  return error;
}

namespace {
// Records a memory call the student's code (or the harness) made.
cudaError_t record_memory(MemoryOp op, cudaError_t result, const void* dst, const void* src, std::size_t bytes,
                          cudaMemcpyKind kind = cudaMemcpyHostToHost, bool async = false, cudaStream_t stream = nullptr,
                          int value = 0) {
  MemoryRecord r;
  r.value = value;
  r.op = op;
  r.result = result;
  r.dst = dst;
  r.src = src;
  r.bytes = bytes;
  r.kind = kind;
  r.async = async;
  r.stream = stream;
  r.dst_space = dst ? host_view_space(dst) : MemorySpace::other;
  r.src_space = src ? host_view_space(src) : MemorySpace::other;
  add_memory_record(std::move(r));
  return result;
}
}  // namespace

cudaError_t copy_symbol(void* symbol, std::size_t symbol_bytes, const void* other, std::size_t bytes,
                        std::size_t offset, bool to_symbol, cudaMemcpyKind kind, bool async, cudaStream_t stream) {
  cudaError_t result = cudaSuccess;
  if (!other || offset > symbol_bytes || bytes > symbol_bytes - offset)
    result = set_last_error(cudaErrorInvalidValue);
  else if (to_symbol)
    std::memcpy(static_cast<char*>(symbol) + offset, other, bytes);
  else
    std::memcpy(const_cast<void*>(other), static_cast<char*>(symbol) + offset, bytes);
  MemoryRecord r;
  r.op = to_symbol ? MemoryOp::memcpy_to_symbol : MemoryOp::memcpy_from_symbol;
  r.result = result;
  r.dst = to_symbol ? symbol : other;
  r.src = to_symbol ? other : symbol;
  r.bytes = bytes;
  r.offset = offset;
  r.kind = kind;
  r.async = async;
  r.stream = stream;
  r.dst_space = host_view_space(r.dst);
  r.src_space = host_view_space(r.src);
  if (const char* name = symbol_name(symbol)) r.symbol = name;
  add_memory_record(std::move(r));
  return result;
}

cudaError_t set_max_dynamic_shared(const void* kernel, int bytes) {
  if (bytes < 0 || bytes > kMaxDynamicSharedOptin) return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(g_attr_mutex);
  dynamic_shared_limits()[kernel] = bytes;
  return cudaSuccess;
}

int max_dynamic_shared(const void* kernel) {
  std::lock_guard<std::mutex> lock(g_attr_mutex);
  const auto it = dynamic_shared_limits().find(kernel);
  return it == dynamic_shared_limits().end() ? kDefaultDynamicShared : std::max(it->second, kDefaultDynamicShared);
}

}  // namespace convlab_cpu

using convlab_cpu::set_last_error;

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: {
      const std::string& d = convlab_cpu::last_launch_detail();
      return d.empty() ? "invalid configuration argument" : d.c_str();
    }
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorLaunchFailure: {
      const std::string& d = convlab_cpu::last_launch_detail();
      return d.empty() ? "unspecified launch failure" : d.c_str();
    }
    case cudaErrorNotSupported: return "operation not supported";
    default: return cudaGetErrorName(e);
  }
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = convlab_cpu::g_last_error;
  convlab_cpu::g_last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return convlab_cpu::g_last_error; }

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return set_last_error(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  if (!device) return set_last_error(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : set_last_error(cudaErrorInvalidValue); }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (!p || device != 0) return set_last_error(cudaErrorInvalidValue);
  *p = cudaDeviceProp{};
  std::snprintf(p->name, sizeof p->name, "convlab CPU backend (%d host threads)", convlab_cpu::worker_count());
  p->totalGlobalMem = std::size_t(1) << 34;
  p->sharedMemPerBlock = convlab_cpu::kDefaultDynamicShared;
  p->sharedMemPerBlockOptin = convlab_cpu::kMaxDynamicSharedOptin;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7FFFFFFF; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->multiProcessorCount = convlab_cpu::worker_count();
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value || device != 0) return set_last_error(cudaErrorInvalidValue);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = convlab_cpu::kDefaultDynamicShared; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = convlab_cpu::kMaxDynamicSharedOptin; break;
    case cudaDevAttrMultiProcessorCount: *value = convlab_cpu::worker_count(); break;
    // The GPU whose behaviour the backend follows, for a kernel that asks before using tensor cores
    // (sm_90: its warp matrix API with TF32 fragments and asynchronous copies are emulated).
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    default: *value = 0;  // clocks, bus width, L2: no meaning for the CPU backend
  }
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* v) { return v ? (*v = 0, cudaSuccess) : set_last_error(cudaErrorInvalidValue); }
cudaError_t cudaRuntimeGetVersion(int* v) { return v ? (*v = 0, cudaSuccess) : set_last_error(cudaErrorInvalidValue); }
cudaError_t cudaDeviceSynchronize() { return convlab_cpu::take_pending(); }
cudaError_t cudaDeviceReset() { return cudaSuccess; }

namespace convlab_cpu {
namespace {

// cudaMalloc and cudaMallocHost: exact size (AddressSanitizer then sees one element past
// the end); never 0 bytes; aligned to 256 bytes, as cudaMalloc's memory is.
cudaError_t allocate(void** ptr, std::size_t bytes, bool pinned) {
  const MemoryOp op = pinned ? MemoryOp::malloc_host : MemoryOp::malloc;
  if (!ptr) return record_memory(op, set_last_error(cudaErrorInvalidValue), nullptr, nullptr, bytes);
  void* p = nullptr;
  if (posix_memalign(&p, 256, bytes ? bytes : 1) != 0) p = nullptr;
  if (!p) return record_memory(op, set_last_error(cudaErrorMemoryAllocation), nullptr, nullptr, bytes);
  map_allocation(p, bytes, pinned);
  *ptr = p;
  return record_memory(op, cudaSuccess, p, nullptr, bytes);
}

cudaError_t release(void* ptr, bool pinned) {
  const MemoryOp op = pinned ? MemoryOp::free_host : MemoryOp::free;
  if (!ptr) return record_memory(op, cudaSuccess, nullptr, nullptr, 0);
  if (!unmap_allocation(ptr, pinned))
    return record_memory(op, set_last_error(pinned ? cudaErrorInvalidValue : cudaErrorInvalidDevicePointer), ptr,
                         nullptr, 0);
  record_memory(op, cudaSuccess, ptr, nullptr, 0);  // before the free: the record reads where ptr lies
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, bool async, cudaStream_t stream) {
  cudaError_t result = take_pending();
  if (result != cudaSuccess) {
  } else if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    result = set_last_error(cudaErrorInvalidMemcpyDirection);
  } else if (bytes && (!dst || !src)) {
    result = set_last_error(cudaErrorInvalidValue);
  } else if (bytes) {
    std::memmove(dst, src, bytes);
  }
  return record_memory(MemoryOp::memcpy, result, dst, src, bytes, kind, async, stream);
}

cudaError_t fill(void* ptr, int value, std::size_t bytes, bool async, cudaStream_t stream) {
  cudaError_t result = cudaSuccess;
  if (bytes && !ptr) result = set_last_error(cudaErrorInvalidValue);
  else if (bytes) std::memset(ptr, value, bytes);
  return record_memory(MemoryOp::memset, result, ptr, nullptr, bytes, cudaMemcpyHostToHost, async, stream, value);
}

}  // namespace
}  // namespace convlab_cpu

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) { return convlab_cpu::allocate(ptr, bytes, false); }
cudaError_t cudaFree(void* ptr) { return convlab_cpu::release(ptr, false); }
cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) { return convlab_cpu::allocate(ptr, bytes, true); }
cudaError_t cudaFreeHost(void* ptr) { return convlab_cpu::release(ptr, true); }

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  return convlab_cpu::copy(dst, src, bytes, kind, false, nullptr);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  return convlab_cpu::copy(dst, src, bytes, kind, true, stream);
}
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes) {
  return convlab_cpu::fill(ptr, value, bytes, false, nullptr);
}
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t stream) {
  return convlab_cpu::fill(ptr, value, bytes, true, stream);
}

// Streams: every operation completes before its call returns. A stream is a
// distinct non-null handle so that code comparing streams behaves.
struct CUstream_st {
  int unused = 0;
};
struct CUevent_st {
  std::chrono::steady_clock::time_point when{};
  bool recorded = false;
};

cudaError_t cudaStreamCreate(cudaStream_t* s) {
  if (!s) return set_last_error(cudaErrorInvalidValue);
  *s = new (std::nothrow) CUstream_st;
  return *s ? cudaSuccess : set_last_error(cudaErrorMemoryAllocation);
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { return cudaStreamCreate(s); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return convlab_cpu::take_pending(); }

cudaError_t cudaEventCreate(cudaEvent_t* e) {
  if (!e) return set_last_error(cudaErrorInvalidValue);
  *e = new (std::nothrow) CUevent_st;
  return *e ? cudaSuccess : set_last_error(cudaErrorMemoryAllocation);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  if (!e) return set_last_error(cudaErrorInvalidResourceHandle);
  e->when = std::chrono::steady_clock::now();
  e->recorded = true;
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (!e) return set_last_error(cudaErrorInvalidResourceHandle);
  return convlab_cpu::take_pending();
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!ms || !a || !b) return set_last_error(cudaErrorInvalidValue);
  if (!a->recorded || !b->recorded) return set_last_error(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return cudaSuccess;
}
