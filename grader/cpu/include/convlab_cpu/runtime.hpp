/// @file runtime.hpp
/// @brief The CPU backend's CUDA runtime: the subset of the CUDA runtime API,
/// types and device functions that convlab's labs use, implemented on the host.
///
/// Device memory is exact-size host memory (so AddressSanitizer sees every
/// overrun), streams and events are synchronous, and a kernel launch runs the
/// grid's blocks in parallel on the CPU cores with the threads of a block as
/// fibers that switch at `__syncthreads()` (see launch.hpp). Launches and memory
/// calls leave records (records.hpp). Everything here
/// follows CUDA's semantics where the labs can observe them; what it does not
/// support is refused at build time by the source rewriter (tools/cu2cpp.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// ---- error codes ---------------------------------------------------------------
/// Error codes, with CUDA's names and values.
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999,
};
using cudaError = cudaError_t;

/// Memory copy directions (all are plain copies here).
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

/// Device attributes the harness queries.
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};

/// Function attributes settable with cudaFuncSetAttribute.
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

/// Stream flags (accepted, no effect).
inline constexpr unsigned cudaStreamDefault = 0, cudaStreamNonBlocking = 1;

struct CUstream_st;
struct CUevent_st;
using cudaStream_t = CUstream_st*;  ///< a stream (synchronous here)
using cudaEvent_t = CUevent_st*;    ///< an event (a host timestamp here)

// ---- vector types ----------------------------------------------------------------
/// CUDA's built-in vector types.
struct alignas(8) float2 { float x, y; };
struct float3 { float x, y, z; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct int3 { int x, y, z; };
struct alignas(16) int4 { int x, y, z, w; };
struct uint3 { unsigned x, y, z; };
struct alignas(16) double2 { double x, y; };

inline float2 make_float2(float x, float y) { return {x, y}; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int3 make_int3(int x, int y, int z) { return {x, y, z}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }

/// Grid and block dimensions.
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

/// The device properties the harness reads.
struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int major;
  int minor;
  int multiProcessorCount;
  int l2CacheSize;
  std::size_t sharedMemPerBlockOptin;
};

// ---- the runtime API -------------------------------------------------------------------
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();

cudaError_t cudaMalloc(void** ptr, std::size_t bytes);
template <class T>
cudaError_t cudaMalloc(T** ptr, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocHost(void** ptr, std::size_t bytes);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes);
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t stream = nullptr);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop);

namespace convlab_cpu {
/// The bits every 4 bytes of shared memory hold before a thread writes them: a quiet NaN
/// with a payload of its own, different from the graders' output poison (all ones), so
/// that a result computed from unwritten shared memory (a missing __syncthreads()) can be
/// told from an output that was never written. x86 arithmetic carries a NaN operand's
/// payload into its result. convlab::kUnwrittenSharedBits names the same value.
inline constexpr std::uint32_t kUnwrittenSharedBits = 0x7FC0BAD5u;
/// Fills `bytes` of shared memory with kUnwrittenSharedBits.
void fill_unwritten_shared(void* address, std::size_t bytes);
/// Records `error` as the last error (what cudaGetLastError returns next).
cudaError_t set_last_error(cudaError_t error);
/// Checks a constant-memory copy against the symbol's size, makes it and records it.
cudaError_t copy_symbol(void* symbol, std::size_t symbol_bytes, const void* other, std::size_t bytes,
                        std::size_t offset, bool to_symbol, cudaMemcpyKind kind, bool async, cudaStream_t stream);
/// Sets a kernel's dynamic shared memory limit (cudaFuncAttributeMaxDynamicSharedMemorySize).
cudaError_t set_max_dynamic_shared(const void* kernel, int bytes);
}  // namespace convlab_cpu

/// Copies to a `__constant__` or `__device__` variable; refuses a copy larger than the symbol.
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t bytes, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return convlab_cpu::copy_symbol(const_cast<void*>(static_cast<const void*>(&symbol)), sizeof(T), src, bytes, offset,
                                  true, kind, false, nullptr);
}
/// Copies from a `__constant__` or `__device__` variable.
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t bytes, std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return convlab_cpu::copy_symbol(const_cast<void*>(static_cast<const void*>(&symbol)), sizeof(T), dst, bytes, offset,
                                  false, kind, false, nullptr);
}
/// Asynchronous form (synchronous here).
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, std::size_t bytes, std::size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = nullptr) {
  return convlab_cpu::copy_symbol(const_cast<void*>(static_cast<const void*>(&symbol)), sizeof(T), src, bytes, offset,
                                  true, kind, true, stream);
}
/// Asynchronous form (synchronous here).
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, std::size_t bytes, std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t stream = nullptr) {
  return convlab_cpu::copy_symbol(const_cast<void*>(static_cast<const void*>(&symbol)), sizeof(T), dst, bytes, offset,
                                  false, kind, true, stream);
}
/// Raises a kernel's dynamic shared memory limit (up to 227 KB, as on Hopper).
template <class F>
cudaError_t cudaFuncSetAttribute(F* kernel, cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return convlab_cpu::set_last_error(cudaErrorNotSupported);
  return convlab_cpu::set_max_dynamic_shared(reinterpret_cast<const void*>(kernel), value);
}
