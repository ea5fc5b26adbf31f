// The judge's CUDA runtime: its device is the runner process.
//
// The judge (a lab's graders) holds no student code and no GPU context of its own. The graders'
// code is nevertheless written as ordinary CUDA host code — DeviceBuffer, cudaMemcpy, streams —
// and this header, which the judge's sources see instead of CUDA's, makes it so: each function
// here, with CUDA's name and meaning, asks the runner to do it (grader/judge/src/remote.cpp).
// Addresses and streams are the runner's, passed around as opaque values: the judge never
// dereferences a device pointer. Kernel launches, events and symbols do not exist here: the
// judge launches nothing itself (timing happens inside the runner; see convlab/remote.hpp).
#pragma once

#include <cstddef>

/// Error codes, with CUDA's names and values.
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorLaunchFailure = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorUnknown = 999,
};
using cudaError = cudaError_t;

/// Copy directions.
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

inline constexpr unsigned cudaStreamDefault = 0, cudaStreamNonBlocking = 1;

struct CUstream_st;
using cudaStream_t = CUstream_st*;  ///< a stream of the runner

const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
/// The error of the last call into the runner (a launch error of the student's launcher, say), cleared.
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
/// 1 if the runner has a usable device, else 0 (and an error saying why).
cudaError_t cudaGetDeviceCount(int* count);
/// Waits for all work in the runner, on every stream; returns the error of that work.
cudaError_t cudaDeviceSynchronize();

cudaError_t cudaMalloc(void** ptr, std::size_t bytes);
template <class T>
cudaError_t cudaMalloc(T** ptr, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
/// Done at once (the runner serves one request at a time); `stream` must be a runner stream or 0.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes);
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t stream = nullptr);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
/// Waits for all work in the runner (every stream, not only `stream`: a launcher that used another
/// stream by mistake is checked after its work ended, and reported by the launch records).
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
