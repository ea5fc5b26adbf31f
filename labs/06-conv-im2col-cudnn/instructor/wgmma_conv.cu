// Lab 06, measured for the next step of the tensor-core slot (issue 30): the implicit GEMM of
// conv_tensor_core.cu's mma_kernel on Hopper's warpgroup instruction, wgmma (sm_90a), timed beside
// the slot's own conv_tensor_core() (the reference in an instructor build) on the ResNet layer
// N32 C64 56x56 K64 3x3. An instructor's program: it answers the slot, so the student copy leaves
// this folder out (`convlab release`).
//
// The design, and why (each step measured on an H200, CUDA 13.0, in the probe this file grew from):
//   - wgmma.mma_async m64n64k8 TF32: a warpgroup (4 warps) multiplies 64 output pixels by 64 filters
//     by 8 channels; A (pixels x channels) from registers, laid out as mma.sync's m16n8k8 A
//     fragments per warp, so the lanes load them from the window exactly as mma_kernel does
//     (channel-major NCHW window, 32 banks a load); B (channels x filters) read by the tensor cores
//     from shared memory through a matrix descriptor. TF32 needs both K-major: B's tile of a tap is
//     8 filters x 4 channels core matrices (128 bytes each), K neighbours 128 bytes apart (the
//     descriptor's leading offset), N neighbours 256 (its stride offset), no swizzle. The wgmma
//     peak measured the same way (wgmma_peak below) is about twice what mma.sync reaches.
//   - Every filter of the block's 64, every channel, stays in shared memory (C / 8 x 9 taps x 2064
//     bytes: 149 KB for C = 64), so a block is persistent: one an SM, a contiguous range of 64-pixel
//     units (about units / SMs each), in tiles of up to 4 units inside one image, one unit a
//     warpgroup. The filters are copied (4-byte cp.async, a chunk of 8 channels a stage) while the
//     first tile's first chunks are multiplied; the window stages (three, 16-byte cp.async) run on
//     across tiles. A warpgroup whose unit is past the tile's end skips its products: the branch is
//     around a whole chunk, so ptxas keeps the wgmma pipeline (a branch around single wgmma
//     instructions makes it serialize them: ptxas info C7520).
//   - A group of 3 taps' products is committed at a time; the lanes load the next group's A while it
//     runs (wait_group 1; three register sets, one per filter row, so a set is reused only after
//     its group is done).
// Layers it takes: stride 1, 3 x 3, C a multiple of 8 up to 64, K a multiple of 64, W a multiple of
// 4 (16-byte window copies). The program checks each layer it runs against the lab's golden model
// within the TF32 bound (the slot's correctness test's bound) before timing it.
//   lab06_wgmma [--quick] [--pairs K] [--markdown FILE]
// Exit 77 (skipped) without a GPU of compute capability 9.0, 1 on a wrong output, 2 on a bad
// command line.
#include "lab06.hpp"
#include "lab06_golden.hpp"

#include <convlab/bench_run.hpp>
#include <convlab/check.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#include <convlab/stats.hpp>

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace convlab;
using namespace convlab::lab06;

constexpr int kUnit = 64;                 // output pixels a warpgroup multiplies (wgmma's m)
constexpr int kGroups = 4;                // warpgroups a block: a tile is up to 4 units
constexpr int kThreads = 128 * kGroups;
constexpr int kTilePixels = kUnit * kGroups;
constexpr int kChunk = 8;                 // channels a stage
constexpr int kStages = 3;
constexpr int kTapFloats = 516;           // a tap's 64 x 8 filter tile: 512 floats + 4 (banks, when written)
constexpr int kMaxChannels = 64;          // the filters stay in shared memory

// The window of a tile (as mma_kernel's): rows of the input under the tile's output rows, channel
// planes kc floats apart (kc = 8 mod 32: the A loads hit 32 banks), the first column at a multiple
// of 4 left of -pad_w.
struct Window {
  int wr, wc, kc, ix0, lead, floats;
};

Window window_of(const ConvProblem& p, int Q) {
  Window g;
  g.wr = (Q - 1 + kTilePixels - 1) / Q + 1 + p.r - 1;
  g.ix0 = -((p.pad_w + 3) / 4 * 4);
  g.lead = -p.pad_w - g.ix0;
  g.wc = (g.lead + Q + p.s - 1 + 3) / 4 * 4;
  g.kc = (g.wr * g.wc + 23) / 32 * 32 + 8;
  g.floats = kChunk * g.kc;
  return g;
}

// The blocks' shares: 64-pixel units, units_per_image of them an image (the last may hang over).
struct Plan {
  int units_per_image, units, per_block;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONVLAB_WGMMA 1
#endif

__device__ __forceinline__ std::uint64_t descriptor(const float* tile) {
  const std::uint32_t a = std::uint32_t(__cvta_generic_to_shared(tile));
  constexpr std::uint64_t lead = 128 >> 4, stride = 256 >> 4;  // bytes between K, N core matrices
  return std::uint64_t((a & 0x3FFFF) >> 4) | (lead << 16) | (stride << 32);
}

// acc += A B: one m64n64k8 TF32 product of the warpgroup (acc: this lane's 32 accumulators).
__device__ __forceinline__ void wgmma_64x64x8(float (&d)[32], const float (&a)[4], std::uint64_t b) {
#if defined(CONVLAB_WGMMA)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, p, 1, 1;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
        "r"(__float_as_uint(a[3])), "l"(b), "r"(1));
#endif
}

__device__ __forceinline__ void wgmma_fence() {
#if defined(CONVLAB_WGMMA)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if defined(CONVLAB_WGMMA)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if defined(CONVLAB_WGMMA)
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}

// Channels c0 .. c0 + 7 of a tile's window into one stage: 16-byte copies, zeros outside the image.
__device__ void copy_window(const float* __restrict__ x_img, const ConvProblem& p, const Window& g, int c0, int iy0,
                            float* win) {
  const int per_row = g.wc / 4;
  const std::size_t plane = std::size_t(p.h) * p.w;
  for (int e = int(threadIdx.x); e < g.wr * per_row; e += kThreads) {
    const int row = e / per_row, col = e % per_row * 4, iy = iy0 + row, ix = g.ix0 + col;
    const bool inside = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
    const float* src = x_img + std::size_t(c0) * plane + (inside ? std::size_t(iy) * p.w + ix : 0);
    float* dst = win + row * g.wc + col;
#pragma unroll
    for (int c = 0; c < kChunk; ++c, src += plane, dst += g.kc)
      __pipeline_memcpy_async(dst, inside ? src : x_img, 16, inside ? 0 : 16);
  }
}

// Channels c0 .. c0 + 7 of the block's 64 filters into their K-major tiles (one a tap): thread t
// copies the 9 taps of (filter t / 8, channel c0 + t % 8), 9 consecutive floats of w.
__device__ void copy_filters(const float* __restrict__ w, const ConvProblem& p, int f0, int c0, float* filt) {
  for (int pair = int(threadIdx.x); pair < kUnit * kChunk; pair += kThreads) {
    const int k = pair / kChunk, c = c0 + pair % kChunk;
    float* dst = filt + (c / kChunk) * 9 * kTapFloats + (k / 8) * 64 + (c / 4 % 2) * 32 + (k % 8) * 4 + c % 4;
    const float* src = w + (std::size_t(f0 + k) * p.c + c) * 9;
#pragma unroll
    for (int rs = 0; rs < 9; ++rs) __pipeline_memcpy_async(dst + rs * kTapFloats, src + rs, sizeof(float));
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    wgmma_conv_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, ConvProblem p,
                      int P, int Q, Window g, Plan plan) {
#if !defined(CONVLAB_WGMMA)
  __trap();  // built without sm_90a: the host refuses to launch it (see run())
#else
  extern __shared__ __align__(128) float smem[];
  const int chunks = p.c / kChunk;
  float* const filt = smem;                            // [C / 8][9][kTapFloats]
  float* const stages = smem + chunks * 9 * kTapFloats;  // [kStages][g.floats]
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32, group = warp / 4, wq = warp % 4;
  const int lg = lane / 4, lt = lane % 4;
  const int f0 = int(blockIdx.y) * kUnit, PQ = P * Q;
  const int u_begin = int(blockIdx.x) * plan.per_block, u_end = min(plan.units, u_begin + plan.per_block);
  const auto tile_units = [&](int u) {  // the tile starting at unit u: up to 4 units, one image
    return min(kGroups, min(u_end, (u / plan.units_per_image + 1) * plan.units_per_image) - u);
  };

  // The copies run ahead of the products by two stages: (tile pu, chunk pc) next.
  int pu = u_begin, pc = 0;
  const auto copy_next = [&](float* stage) {
    if (pu < u_end) {
      if (pu == u_begin) copy_filters(w, p, f0, pc * kChunk, filt);  // the first tile brings the filters
      const int n = pu / plan.units_per_image, m0 = pu % plan.units_per_image * kUnit;
      copy_window(x + std::size_t(n) * p.c * p.h * p.w, p, g, pc * kChunk, m0 / Q - p.pad_h, stage);
      if (++pc == chunks) pc = 0, pu += tile_units(pu);
    }
    __pipeline_commit();
  };
  copy_next(stages);
  copy_next(stages + g.floats);

  float acc[32] = {};
  int step = 0;
  for (int tu = u_begin; tu < u_end;) {
    const int units = tile_units(tu);
    const int n = tu / plan.units_per_image, m0 = tu % plan.units_per_image * kUnit, oy0 = m0 / Q;
    const bool active = group < units;
    // This lane's A elements of tap (0, 0): pixels lg and lg + 8 of its warp's 16, channel lt
    // (lt + 4: 4 kc further). Pixels past the image read the tile's first one (not stored).
    int a_at[2];
    for (int h = 0; h < 2; ++h) {
      int m = m0 + group * kUnit + wq * 16 + lg + 8 * h;
      if (m >= PQ || !active) m = m0;
      a_at[h] = lt * g.kc + (m / Q - oy0) * g.wc + m % Q + g.lead;
    }
    for (int c = 0; c < chunks; ++c, ++step) {
      __pipeline_wait_prior(1);  // this step's copies have landed (this thread's)
      // The filters were written by the generic proxy (cp.async); wgmma reads them through the async one.
      if (step < chunks) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncthreads();  // ... every thread's; and every warp is done with the stage filled next
      copy_next(stages + (step + 2) % kStages * g.floats);
      if (!active) continue;  // around the whole chunk: the wgmma pipeline stays as it is
      const float* win = stages + step % kStages * g.floats;
      const float* taps = filt + c * 9 * kTapFloats;
      float a[3][3][4];
#pragma unroll
      for (int r = 0; r < 3; ++r) {
#pragma unroll
        for (int s = 0; s < 3; ++s) {
          const float* tap = win + r * g.wc + s;  // the window moved r rows, s columns
          a[r][s][0] = tap[a_at[0]], a[r][s][1] = tap[a_at[1]];
          a[r][s][2] = tap[a_at[0] + 4 * g.kc], a[r][s][3] = tap[a_at[1] + 4 * g.kc];
        }
        wgmma_fence();  // the A registers just written
#pragma unroll
        for (int s = 0; s < 3; ++s) wgmma_64x64x8(acc, a[r][s], descriptor(taps + (r * 3 + s) * kTapFloats));
        wgmma_commit();
        wgmma_wait<1>();  // the previous row's group is done: its registers may be loaded again
      }
    }
    wgmma_wait<0>();
    // Element i of the accumulators: pixel wq 16 + lg + 8 (i / 2 % 2), filter 8 (i / 4) + 2 lt + i % 2.
    float* const y_img = y + std::size_t(n) * p.k * PQ;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int m = m0 + group * kUnit + wq * 16 + lg + 8 * (i / 2 % 2), f = f0 + 8 * (i / 4) + 2 * lt + i % 2;
      if (active && m < PQ) y_img[std::size_t(f) * PQ + m] = acc[i];
      acc[i] = 0.0f;
    }
    tu += units;
  }
#endif
}

std::size_t shared_bytes(const ConvProblem& p, const Window& g) {
  return (std::size_t(p.c / kChunk) * 9 * kTapFloats + std::size_t(kStages) * g.floats) * sizeof(float);
}

// Why this kernel cannot take the layer ("" if it can).
std::string refusal(const ConvProblem& p, const float* d_x) {
  if (p.stride_h != 1 || p.stride_w != 1 || p.r != 3 || p.s != 3) return "stride 1 and 3 x 3 filters only";
  if (p.c % kChunk != 0 || p.c > kMaxChannels) return "C must be a multiple of 8 up to 64";
  if (p.k % kUnit != 0) return "K must be a multiple of 64";
  if (p.w % 4 != 0 || reinterpret_cast<std::uintptr_t>(d_x) % 16 != 0) return "W must be a multiple of 4";
  return "";
}

void wgmma_conv(const float* d_x, const float* d_w, float* d_y, const ConvProblem& p, int sms, cudaStream_t st) {
  const int P = p.out_h(), Q = p.out_w();
  const Window g = window_of(p, Q);
  Plan plan;
  plan.units_per_image = (P * Q + kUnit - 1) / kUnit;
  plan.units = p.n * plan.units_per_image;
  plan.per_block = (plan.units + std::min(sms, plan.units) - 1) / std::min(sms, plan.units);
  const int blocks = (plan.units + plan.per_block - 1) / plan.per_block;
  const std::size_t bytes = shared_bytes(p, g);
  CONVLAB_CUDA_CHECK(cudaFuncSetAttribute(wgmma_conv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  wgmma_conv_kernel<<<dim3(unsigned(blocks), unsigned(p.k / kUnit)), kThreads, bytes, st>>>(d_x, d_w, d_y, p, P, Q, g,
                                                                                             plan);
  CONVLAB_CHECK_LAUNCH();
}

// The wgmma TF32 peak: every warpgroup's m64n64k8 products back to back (groups of 6, wait_group 1,
// as the kernel issues them), B from shared memory, A from registers. GFLOP/s.
__global__ void __launch_bounds__(256, 1) wgmma_peak_kernel(float* sink, int iters) {
#if !defined(CONVLAB_WGMMA)
  __trap();
#else
  __shared__ __align__(128) float b[kTapFloats];
  for (int i = int(threadIdx.x); i < kTapFloats; i += blockDim.x) b[i] = 1.0f / 1024;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  float acc[32] = {};
  const float a[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::uint64_t d = descriptor(b);
  for (int it = 0; it < iters; ++it) {
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 6; ++j) wgmma_64x64x8(acc, a, d);
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  float s = 0;
  for (float v : acc) s += v;
  if (s == -1.0f) sink[threadIdx.x] = s;  // never: keeps the products
#endif
}

double wgmma_peak_gflops(int sms) {
  DeviceBuffer<float> sink(256);
  const int iters = 4096;
  const Stats t = time_launch(
      [&](cudaStream_t st) {
        wgmma_peak_kernel<<<sms, 256, 0, st>>>(sink.get(), iters);
        CONVLAB_CHECK_LAUNCH();
      },
      10, 2);
  return 2.0 * 64 * 64 * 8 * 6 * double(iters) * sms * 2 / (t.median * 1e-3) / 1e9;
}

struct Options {
  bool quick = false;
  int pairs = 30;
  std::string markdown;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") o.quick = true;
    else if (arg == "--pairs" && i + 1 < argc) o.pairs = whole_number_option(arg, argv[++i]);
    else if (arg == "--markdown" && i + 1 < argc) o.markdown = argv[++i];
    else throw std::invalid_argument("unknown argument '" + arg + "'");
  }
  if (o.pairs < 1 || o.pairs > 1000) throw std::invalid_argument("--pairs must be from 1 to 1000");
  return o;
}

ConvProblem layer(int n, int c, int h, int w, int k, int pad) {
  return make_problem(n, c, h, w, k, 3, 3, 1, 1, Padding::explicit_pads, pad, pad);
}

std::string name_of(const ConvProblem& p) {
  return "N" + std::to_string(p.n) + " C" + std::to_string(p.c) + " " + std::to_string(p.h) + "x" +
         std::to_string(p.w) + " K" + std::to_string(p.k) + " 3x3 pad " + std::to_string(p.pad_h);
}

int run(const Options& o) {
  std::string why_not;
  if (!gpu_available(&why_not)) {
    std::cout << "lab06_wgmma: skipped: " << why_not << "\n";
    return 77;
  }
  const DeviceInfo gpu = device_info();
  if (gpu.cc_major != 9 || gpu.cc_minor != 0) {
    std::cout << "lab06_wgmma: skipped: wgmma needs compute capability 9.0 (sm_90a), this GPU has " << gpu.cc_major
              << "." << gpu.cc_minor << "\n";
    return 77;
  }
  // The timed layer, then layers that check the edges: partial tiles and units, 128 filters (two
  // filter tiles), no padding, 16 channels.
  const std::vector<ConvProblem> layers = {layer(o.quick ? 4 : 32, 64, 56, 56, 64, 1), layer(3, 64, 30, 20, 128, 1),
                                           layer(5, 16, 9, 12, 64, 0)};
  std::string table = "### Lab 06: implicit GEMM on wgmma (sm_90a) beside the slot's conv_tensor_core()\n\n" +
                      gpu.summary() + "\n\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const ConvProblem& p = layers[i];
    const std::uint64_t seed_x = 61 + i, seed_w = 67 + i;
    const std::vector<float> h_x = random_floats(p.input_elements(), seed_x);
    const std::vector<float> h_w = random_floats(p.filter_elements(), seed_w);
    DeviceBuffer<float> d_x(h_x), d_w(h_w), d_y(p.output_elements()), d_ref(p.output_elements());
    const std::string why = refusal(p, d_x.get());
    if (!why.empty()) throw std::logic_error(name_of(p) + ": " + why);  // this file's own layers
    const Golden golden = held_to(conv_golden(h_x, h_w, p), Precision::tf32);
    const Grid grid{p.out_w(), p.n * p.k * p.out_h(), 0};
    d_y.fill_bytes(0xFF);
    wgmma_conv(d_x.get(), d_w.get(), d_y.get(), p, gpu.sm_count, nullptr);
    verify_output(d_y, golden, grid, "wgmma_conv on " + name_of(p));
    d_ref.fill_bytes(0xFF);
    conv_tensor_core(d_x.get(), d_w.get(), d_ref.get(), p, nullptr);
    verify_output(d_ref, golden, grid, "conv_tensor_core on " + name_of(p));
    std::cerr << "lab06_wgmma: " << name_of(p) << " (seeds " << seed_x << ", " << seed_w
              << "): both match the golden model within the TF32 bound\n";
    if (i != 0) continue;

    const int pairs = o.quick ? 3 : o.pairs;
    const Launch base = [&](cudaStream_t st) { conv_tensor_core(d_x.get(), d_w.get(), d_ref.get(), p, st); };
    const Launch cand = [&](cudaStream_t st) { wgmma_conv(d_x.get(), d_w.get(), d_y.get(), p, gpu.sm_count, st); };
    // Poisoned again, so that the checks below see what the timed runs wrote (each overwrites the
    // whole output), not the outputs checked above: a time of a wrong or unwritten result means nothing.
    d_y.fill_bytes(0xFF);
    d_ref.fill_bytes(0xFF);
    const SpeedRound round = measure_round(base, cand, pairs);
    verify_output(d_y, golden, grid, "wgmma_conv on " + name_of(p) + ", after timing");
    verify_output(d_ref, golden, grid, "conv_tensor_core on " + name_of(p) + ", after timing");
    const double peak = wgmma_peak_gflops(gpu.sm_count), mma_peak = measure_tf32_mma_peak_gflops();
    const double flop = 2.0 * p.macs();
    char buf[768];
    std::snprintf(buf, sizeof buf,
                  "%s. Medians of %d interleaved pairs (10th-90th percentile), the L2 cache flushed before each "
                  "run. TF32 peaks measured in this run: wgmma %.1f TFLOP/s, the warp matrix API (mma.sync) %.1f.\n\n"
                  "| kernel | time (ms) | p10-p90 (ms) | TFLOP/s | of the wgmma peak |\n|---|---:|---:|---:|---:|\n",
                  name_of(p).c_str(), pairs, peak / 1e3, mma_peak / 1e3);
    table += buf;
    const auto row = [&](const char* name, const Stats& t) {
      std::snprintf(buf, sizeof buf, "| %s | %.4f | %.4f-%.4f | %.1f | %.1f%% |\n", name, t.median, t.p10, t.p90,
                    flop / (t.median * 1e-3) / 1e12, 100.0 * flop / (t.median * 1e-3) / 1e9 / peak);
      table += buf;
    };
    row("conv_tensor_core (" CONVLAB_IMPL_NAME ")", round.baseline_ms);
    row("wgmma_conv (this program)", round.candidate_ms);
    std::snprintf(buf, sizeof buf, "\nwgmma_conv against conv_tensor_core: %.2fx (%.2f-%.2f) of %d pairs.\n",
                  round.ratio.median, round.ratio.p10, round.ratio.p90, pairs);
    table += buf;
  }
  std::cout << table;
  if (!o.markdown.empty()) std::ofstream(o.markdown) << table;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return convlab::instructor_main(argc, argv, "lab06_wgmma", "lab06_wgmma [--quick] [--pairs K] [--markdown FILE]",
                                  parse, run);
}
