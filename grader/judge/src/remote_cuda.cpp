// The judge's CUDA runtime: the CUDA-named functions of grader/judge/include/cuda_runtime_api.h,
// done by the runner through the requests of remote.cpp (shared through remote_internal.hpp).
#include "remote_internal.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

// ---- the judge's CUDA runtime ---------------------------------------------------------------------

using convlab::remote::addr;
namespace remote = convlab::remote;

namespace {

cudaError_t simple(convlab::wire::Op op, const std::string& payload, const char* what) {
  const auto r = remote::request(op, payload, what);
  return r.status == convlab::wire::Status::ok ? cudaSuccess : r.code;
}

}  // namespace

const char* cudaGetErrorName(cudaError_t error) {
  if (error == cudaSuccess) return "cudaSuccess";
  const auto it = remote::g_error_text.find(error);
  if (it != remote::g_error_text.end()) return it->second.first.c_str();
  return "cudaError";
}

const char* cudaGetErrorString(cudaError_t error) {
  if (error == cudaSuccess) return "no error";
  const auto it = remote::g_error_text.find(error);
  if (it != remote::g_error_text.end()) return it->second.second.c_str();
  return "an error of the runner's CUDA runtime";
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = remote::g_last_error;
  remote::g_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() { return remote::g_last_error; }

cudaError_t cudaGetDeviceCount(int* count) {
  const auto& s = remote::device_status();
  *count = s.available ? 1 : 0;
  return s.available ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaDeviceSynchronize() {
  if (remote::g_sync_error != cudaSuccess) {
    const cudaError_t e = remote::g_sync_error;
    remote::g_sync_error = cudaSuccess;
    return e;
  }
  return simple(convlab::wire::Op::synchronize, "", "a synchronisation");
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaDeviceSynchronize(); }

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  convlab::wire::Writer w;
  w.u64(bytes);
  const auto r = remote::request(convlab::wire::Op::malloc, w.take(), "an allocation");
  if (r.status != convlab::wire::Status::ok) return r.code;
  convlab::wire::Reader rd(r.payload);
  *ptr = reinterpret_cast<void*>(static_cast<std::uintptr_t>(rd.u64()));
  remote::note_owner(addr(*ptr));
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  const remote::OwnerScope owner(addr(ptr));
  if (!owner.alive()) return cudaSuccess;  // the runner that held it is gone, and its memory with it
  convlab::wire::Writer w;
  w.u64(addr(ptr));
  try {
    return simple(convlab::wire::Op::free, w.take(), "a free");
  } catch (const std::exception&) {
    return cudaErrorInvalidDevicePointer;  // destructors call this: never throw
  }
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  switch (kind) {
    case cudaMemcpyHostToHost:
      std::memmove(dst, src, bytes);
      return cudaSuccess;
    case cudaMemcpyHostToDevice:
      if (remote::g_recording) throw std::logic_error("a timed program cannot copy host data");
      return remote::to_device(addr(dst), static_cast<const char*>(src), bytes);
    case cudaMemcpyDeviceToHost:
      if (remote::g_recording) throw std::logic_error("a timed program cannot copy host data");
      return remote::to_host(static_cast<char*>(dst), addr(src), bytes);
    case cudaMemcpyDeviceToDevice: {
      convlab::wire::Writer w;
      w.u64(addr(dst));
      w.u64(addr(src));
      w.u64(bytes);
      const cudaError_t e = simple(convlab::wire::Op::copy, w.take(), "a copy on the device");
      convlab::wire::ProgramOp op;
      op.kind = convlab::wire::ProgramOp::Kind::copy;
      op.dst = addr(dst), op.src = addr(src), op.bytes = bytes;
      if (e == cudaSuccess) remote::note_op(op);
      return e;
    }
    default:
      return remote::g_last_error = cudaErrorInvalidMemcpyDirection;
  }
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes) {
  if (bytes == 0) return cudaSuccess;
  convlab::wire::Writer w;
  w.u64(addr(ptr));
  w.u32(static_cast<std::uint32_t>(value & 0xFF));
  w.u64(bytes);
  const cudaError_t e = simple(convlab::wire::Op::memset, w.take(), "a memset");
  convlab::wire::ProgramOp op;
  op.kind = convlab::wire::ProgramOp::Kind::memset;
  op.dst = addr(ptr), op.bytes = bytes, op.value = static_cast<std::uint32_t>(value & 0xFF);
  if (e == cudaSuccess) remote::note_op(op);
  return e;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t) {
  return cudaMemset(ptr, value, bytes);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  convlab::wire::Writer w;
  w.u32(flags);
  const auto r = remote::request(convlab::wire::Op::stream_create, w.take(), "the creation of a stream");
  if (r.status != convlab::wire::Status::ok) return r.code;
  convlab::wire::Reader rd(r.payload);
  *stream = reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(rd.u64()));
  remote::note_owner(addr(*stream));
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream) return cudaSuccess;
  const remote::OwnerScope owner(addr(stream));
  if (!owner.alive()) return cudaSuccess;
  convlab::wire::Writer w;
  w.u64(addr(stream));
  try {
    return simple(convlab::wire::Op::stream_destroy, w.take(), "the end of a stream");
  } catch (const std::exception&) {
    return cudaErrorInvalidResourceHandle;  // destructors call this: never throw
  }
}
