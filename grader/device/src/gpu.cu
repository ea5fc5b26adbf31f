// Device queries, measured ceilings and kernel timing. See convlab/gpu.hpp.
#include "convlab/check.hpp"
#include "convlab/device_buffer.hpp"
#include "convlab/gpu.hpp"
#include "convlab/gpu_reason.hpp"

#include <mma.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace convlab {

#ifndef CONVLAB_BACKEND_CPU
// describe_cuda_unavailable() tells CUDA's errors apart by number: they must be CUDA's.
static_assert(cuda_error::kInsufficientDriver == cudaErrorInsufficientDriver &&
                  cuda_error::kNoDevice == cudaErrorNoDevice && cuda_error::kStubLibrary == cudaErrorStubLibrary &&
                  cuda_error::kSystemDriverMismatch == cudaErrorSystemDriverMismatch &&
                  cuda_error::kDevicesUnavailable == cudaErrorDevicesUnavailable &&
                  cuda_error::kCallRequiresNewerDriver == cudaErrorCallRequiresNewerDriver,
              "convlab/gpu_reason.hpp's error numbers must be CUDA's");
#endif

bool gpu_available(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    if (reason) {
      int driver = 0, runtime = 0;
      cudaDriverGetVersion(&driver);  // 0 when no driver is installed
      cudaRuntimeGetVersion(&runtime);
      *reason = describe_cuda_unavailable(err, count, driver, runtime, std::getenv("CUDA_VISIBLE_DEVICES"));
    }
    cudaGetLastError();  // clear the sticky state, if any
    return false;
  }
  return true;
}

DeviceInfo device_info() {
  DeviceInfo d;
  CONVLAB_CUDA_CHECK(cudaGetDevice(&d.index));
  cudaDeviceProp p{};
  CONVLAB_CUDA_CHECK(cudaGetDeviceProperties(&p, d.index));
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.global_bytes = p.totalGlobalMem;
  int khz = 0;
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d.index));
  d.sm_clock_mhz = khz / 1000;
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, d.index));
  d.mem_clock_mhz = khz / 1000;
  CONVLAB_CUDA_CHECK(cudaDeviceGetAttribute(&d.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, d.index));
  CONVLAB_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CONVLAB_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

std::string DeviceInfo::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs, %.0f MB L2, %.1f GB, SM clock %d MHz, memory clock %d MHz, %d-bit bus, CUDA driver %d.%d, runtime %d.%d)",
                name.c_str(), cc_major, cc_minor, sm_count, l2_bytes / 1e6, global_bytes / 1e9, sm_clock_mhz,
                mem_clock_mhz, bus_width_bits, driver_version / 1000, (driver_version % 1000) / 10,
                runtime_version / 1000, (runtime_version % 1000) / 10);
  return buf;
}

namespace {

__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = in[i];
}

// Eight independent FMA chains per thread keep the FP32 pipes busy; the result
// is stored only if impossible, so the compiler cannot drop the loop.
__global__ void fma_loop(float* out, int iters, float a, float b) {
  float x[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = threadIdx.x * 1e-3f + k;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = fmaf(x[k], a, b);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) s += x[k];
  if (s == 1.2345f) out[threadIdx.x] = s;
}

// Four independent accumulators per warp keep the tensor cores busy; A and B stay in registers;
// the result is stored only if impossible, so the compiler cannot drop the loop.
__global__ void tf32_mma_loop(float* out, int iters) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> c[4];
  wmma::fill_fragment(a, 0.5f);
  wmma::fill_fragment(b, 0.25f);
#pragma unroll
  for (int k = 0; k < 4; ++k) wmma::fill_fragment(c[k], 0.0f);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 4; ++k) wmma::mma_sync(c[k], a, b, c[k]);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k)
    for (int e = 0; e < c[k].num_elements; ++e) s += c[k].x[e];
  if (s == 1.2345f) out[threadIdx.x] = s;
#else
  (void)iters;  // device code for a GPU without TF32: says so
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = -1.0f;
#endif
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    CONVLAB_CUDA_CHECK(cudaEventCreate(&start));
    CONVLAB_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  // Times one launch on `stream`, in milliseconds.
  double time(const Launch& launch, cudaStream_t stream) {
    CONVLAB_CUDA_CHECK(cudaEventRecord(start, stream));
    launch(stream);
    CONVLAB_CUDA_CHECK(cudaEventRecord(stop, stream));
    CONVLAB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CONVLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

}  // namespace

double measure_copy_bandwidth_gbs(std::size_t bytes) {
  const std::size_t n4 = bytes / sizeof(float4);
  DeviceBuffer<float4> in(n4), out(n4);
  in.fill_bytes(0x3C);  // any finite pattern
  const DeviceInfo d = device_info();
  const int grid = d.sm_count * 8;
  const Stats st = time_launch(
      [&](cudaStream_t s) {
        copy_float4<<<grid, 512, 0, s>>>(in.get(), out.get(), n4);
        CONVLAB_CHECK_LAUNCH();
      },
      20, 3);
  return 2.0 * double(n4 * sizeof(float4)) / (st.median * 1e-3) / 1e9;
}

double measure_fp32_peak_gflops() {
  const DeviceInfo d = device_info();
  DeviceBuffer<float> sink(1024);
  const int blocks = d.sm_count * 8, threads = 256, iters = 4096;
  const Stats st = time_launch(
      [&](cudaStream_t s) {
        fma_loop<<<blocks, threads, 0, s>>>(sink.get(), iters, 0.999f, 1e-4f);
        CONVLAB_CHECK_LAUNCH();
      },
      10, 2);
  const double flops = 2.0 * 8.0 * double(iters) * blocks * threads;
  return flops / (st.median * 1e-3) / 1e9;
}

double measure_tf32_mma_peak_gflops() {
  const DeviceInfo d = device_info();
  if (d.cc_major < 8) return 0;
  DeviceBuffer<float> sink(1024);
  sink.fill_bytes(0);
  const int blocks = d.sm_count * 4, threads = 256, iters = 2048;
  const Stats st = time_launch(
      [&](cudaStream_t s) {
        tf32_mma_loop<<<blocks, threads, 0, s>>>(sink.get(), iters);
        CONVLAB_CHECK_LAUNCH();
      },
      10, 2);
  if (sink.download()[0] == -1.0f) return 0;  // built for an older GPU only
  const double flops = 2.0 * 16 * 16 * 8 * 4.0 * double(iters) * blocks * (threads / 32);
  return flops / (st.median * 1e-3) / 1e9;
}

L2Flusher::L2Flusher() {
  const DeviceInfo d = device_info();
  bytes_ = std::max<std::size_t>(2 * d.l2_bytes, std::size_t(8) << 20);
  CONVLAB_CUDA_CHECK(cudaMalloc(&buffer_, bytes_));
}

L2Flusher::~L2Flusher() {
  if (buffer_) cudaFree(buffer_);
}

void L2Flusher::flush(cudaStream_t stream) { CONVLAB_CUDA_CHECK(cudaMemsetAsync(buffer_, 0x5A, bytes_, stream)); }

Stats time_launch(const Launch& launch, int reps, int warmup) {
  Stream stream;
  Events ev;
  L2Flusher flusher;
  for (int i = 0; i < warmup; ++i) launch(stream.s);
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(stream.s));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    flusher.flush(stream.s);
    ms.push_back(ev.time(launch, stream.s));
  }
  return summarize(ms);
}

SpeedRound measure_round(const Launch& baseline, const Launch& candidate, int pairs, const Launch& prepare) {
  Stream stream;
  Events ev;
  L2Flusher flusher;
  baseline(stream.s);
  candidate(stream.s);
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(stream.s));
  std::vector<double> b, c, r;
  for (int i = 0; i < pairs; ++i) {
    flusher.flush(stream.s);
    b.push_back(ev.time(baseline, stream.s));
    flusher.flush(stream.s);
    if (prepare) prepare(stream.s);
    c.push_back(ev.time(candidate, stream.s));
    r.push_back(b.back() / c.back());
  }
  return {summarize(b), summarize(c), summarize(r)};
}

SpeedVerdict check_speedup(const Launch& baseline, const Launch& candidate, const SpeedPolicy& policy,
                           const std::string& what, const Launch& prepare) {
  return decide_speedup([&](int pairs) { return measure_round(baseline, candidate, pairs, prepare); }, policy, what);
}

}  // namespace convlab
