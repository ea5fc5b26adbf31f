// The CPU backend's CUDA runtime API: memory, errors, streams, events, device
// properties. See convlab_cpu/runtime.hpp.
#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/runtime.hpp"
#include "launch_internal.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace convlab_cpu {
namespace {

thread_local cudaError_t g_last_error = cudaSuccess;

std::mutex g_alloc_mutex;
std::unordered_set<void*>& allocations() {
  static std::unordered_set<void*> live;
  return live;
}

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

cudaError_t copy_symbol(void* symbol, std::size_t symbol_bytes, const void* other, std::size_t bytes,
                        std::size_t offset, bool to_symbol) {
  if (!other || offset > symbol_bytes || bytes > symbol_bytes - offset) return set_last_error(cudaErrorInvalidValue);
  if (to_symbol)
    std::memcpy(static_cast<char*>(symbol) + offset, other, bytes);
  else
    std::memcpy(const_cast<void*>(other), static_cast<char*>(symbol) + offset, bytes);
  return cudaSuccess;
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
    default: *value = 0;  // clocks, bus width, L2: no meaning for the CPU backend
  }
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* v) { return v ? (*v = 0, cudaSuccess) : set_last_error(cudaErrorInvalidValue); }
cudaError_t cudaRuntimeGetVersion(int* v) { return v ? (*v = 0, cudaSuccess) : set_last_error(cudaErrorInvalidValue); }
cudaError_t cudaDeviceSynchronize() { return convlab_cpu::take_pending(); }
cudaError_t cudaDeviceReset() { return cudaSuccess; }

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  if (!ptr) return set_last_error(cudaErrorInvalidValue);
  // Exact size (AddressSanitizer then sees one element past the end); never 0 bytes.
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) return set_last_error(cudaErrorMemoryAllocation);
  {
    std::lock_guard<std::mutex> lock(convlab_cpu::g_alloc_mutex);
    convlab_cpu::allocations().insert(p);
  }
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lock(convlab_cpu::g_alloc_mutex);
    if (!convlab_cpu::allocations().erase(ptr)) return set_last_error(cudaErrorInvalidDevicePointer);
  }
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) { return cudaMalloc(ptr, bytes); }
cudaError_t cudaFreeHost(void* ptr) { return cudaFree(ptr); }

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (const cudaError_t e = convlab_cpu::take_pending(); e != cudaSuccess) return e;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return set_last_error(cudaErrorInvalidMemcpyDirection);
  if (bytes && (!dst || !src)) return set_last_error(cudaErrorInvalidValue);
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes) {
  if (bytes && !ptr) return set_last_error(cudaErrorInvalidValue);
  if (bytes) std::memset(ptr, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t) {
  return cudaMemset(ptr, value, bytes);
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
