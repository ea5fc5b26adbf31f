// Lab 06's CPU tests (moved from test_lab06.cpp, which registers them where they stood): the shape
// function, the launchers refusing bad layers, the technique rules on launches as the runner
// records them, the golden model worked by hand.
#include "test_lab06.hpp"

#include "lab06.hpp"
#include "lab06_golden.hpp"
#include "technique_lab06.hpp"

#include <convlab/evidence.hpp>
#include <convlab/remote.hpp>
#include <convlab/technique.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace lab06_tests;

// --- the technique rules' own tests: launches as the runner records them -------------------------

// A launch of `blocks` blocks of 256 threads holding `shared` bytes of shared memory per block.
KernelFacts fake_launch(const std::string& name, unsigned blocks, std::uint64_t shared) {
  KernelFacts k;
  k.launch.name = name;
  k.launch.grid[0] = blocks;
  k.launch.block[0] = 256;
  k.launch.static_shared = shared;
  return k;
}
// The same with the facts of its compiled code (a GPU build).
KernelFacts with_code(KernelFacts k, long ld_shared, long st_shared, long barriers) {
  CodeFacts c;
  c.ld_shared = ld_shared;
  c.st_shared = st_shared;
  c.barriers = barriers;
  k.code = c;
  return k;
}
// The same with execution counts, per output of `outputs` (the CPU backend).
KernelFacts with_counts(KernelFacts k, double outputs, double global_loads, double shared_loads, double shared_stores,
                        double barriers, double global_stores = 1) {
  k.launch.counted = true;
  k.launch.global_loads = std::uint64_t(global_loads * outputs);
  k.launch.global_stores = std::uint64_t(global_stores * outputs);
  k.launch.shared_loads = std::uint64_t(shared_loads * outputs);
  k.launch.shared_stores = std::uint64_t(shared_stores * outputs);
  k.launch.barriers = std::uint64_t(barriers * outputs);
  return k;
}
remote::CallRecord fake_call(const std::string& entry, std::vector<KernelFacts> kernels = {}) {
  remote::CallRecord c;
  c.entry = entry;
  for (auto& k : kernels) c.evidence.launches.push_back(k.launch);
  return c;
}
}  // namespace

namespace lab06_tests {

void register_lab06_rules(Registry& reg) {
  reg.cpu("cpu", "shape", "output_size_and_padding_modes", [] {
    // VALID: no padding, P = (H - R) / stride + 1.
    auto p = lab06::make_problem(1, 6, 768, 512, 6, 6, 6, 1, 1, kValid);
    EXPECT_EQ(p.out_h(), 763);
    EXPECT_EQ(p.out_w(), 507);
    // SAME, odd filter, stride 1: total padding 2, one on each side, output = input.
    p = lab06::make_problem(1, 3, 7, 5, 1, 3, 3, 1, 1, kSame);
    EXPECT_EQ(p.pad_h, 1);
    EXPECT_EQ(p.out_h(), 7);
    EXPECT_EQ(p.out_w(), 5);
    // SAME, even filter: total padding R - 1 = 1 is odd; pad 0 and the output recomputed: 4, not 5.
    p = lab06::make_problem(1, 1, 5, 5, 1, 2, 2, 1, 1, kSame);
    EXPECT_EQ(p.pad_h, 0);
    EXPECT_EQ(p.out_h(), 4);
    // SAME, stride 2: out = ceil(7 / 2) = 4, total (4 - 1) 2 + 3 - 7 = 2, pad 1, (7 + 2 - 3) / 2 + 1 = 4.
    p = lab06::make_problem(1, 1, 7, 7, 1, 3, 3, 2, 2, kSame);
    EXPECT_EQ(p.pad_h, 1);
    EXPECT_EQ(p.out_h(), 4);
    // SAME, the lab report's 512, 3x3, stride 3: out 171, total 170*3 + 3 - 512 = 1, pad 0, out (512 - 3) / 3 + 1 = 170.
    p = lab06::make_problem(1, 3, 512, 512, 1, 3, 3, 3, 3, kSame);
    EXPECT_EQ(p.pad_h, 0);
    EXPECT_EQ(p.out_h(), 170);
    // SAME, 2048, 3x3, stride 2: out 1024, total 1, pad 0, out 1023.
    p = lab06::make_problem(1, 3, 2048, 2048, 1, 3, 3, 2, 2, kSame);
    EXPECT_EQ(p.out_h(), 1023);
    // SAME where the stride is larger than the filter: total padding negative, so 0.
    p = lab06::make_problem(1, 1, 5, 5, 1, 1, 1, 3, 3, kSame);
    EXPECT_EQ(p.pad_h, 0);
    EXPECT_EQ(p.out_h(), 2);
    // Explicit, unequal pads and strides.
    p = lab06::make_problem(2, 1, 33, 7, 3, 7, 7, 3, 3, kPad, 3, 2);
    EXPECT_EQ(p.out_h(), (33 + 6 - 7) / 3 + 1);
    EXPECT_EQ(p.out_w(), (7 + 4 - 7) / 3 + 1);
  });
  reg.cpu("cpu", "shape", "bad_layers_refused", [] {
    expect_refused([] { lab06::make_problem(1, 1, 8, 8, 1, 3, 3, 0, 1, kValid); }, "stride must be");
    expect_refused([] { lab06::make_problem(1, 1, 8, 8, 1, 3, 3, 1, 1, kPad, -1, 0); }, "padding must be >= 0");
    expect_refused([] { lab06::make_problem(1, 1, 4, 4, 1, 5, 5, 1, 1, kValid); }, "larger than the padded input");
    expect_refused([] { lab06::make_problem(1, 1, 4, 4, 1, 3, 3, 1, 1, kPad, 3, 0); }, "smaller than the filter");
    expect_refused([] { lab06::make_problem(0, 1, 4, 4, 1, 3, 3, 1, 1, kValid); }, "every size must be >= 1");
    expect_refused([] { lab06::make_problem(1, 1, 4, 4, 0, 3, 3, 1, 1, kValid); }, "every size must be >= 1");
    expect_refused([] { lab06::make_problem(1, 1, 64, 64, 1, 33, 3, 1, 1, kValid); }, "filter must be at most");
    expect_refused([] { lab06::make_problem(1, 1, 64, 64, 1, 3, 3, 17, 1, kValid); }, "stride must be in");
    expect_refused([] { lab06::make_problem(1 << 12, 64, 1024, 1024, 1, 3, 3, 1, 1, kValid); }, "2^30 floats");
  });
  reg.cpu("cpu", "contract", "launchers_refuse_bad_layers", [] {
    ConvProblem bad{1, 1, 4, 4, 1, 5, 5, 1, 1, 0, 0};  // filter larger than the input
    EXPECT_THROW(lab06::conv_direct(nullptr, nullptr, nullptr, bad, nullptr), std::invalid_argument);
    EXPECT_THROW(lab06::conv_im2col(nullptr, nullptr, nullptr, nullptr, bad, nullptr), std::invalid_argument);
    EXPECT_THROW(lab06::im2col(nullptr, 0, nullptr, bad, nullptr), std::invalid_argument);
    EXPECT_THROW(lab06::conv_implicit_gemm(nullptr, nullptr, nullptr, bad, nullptr), std::invalid_argument);
    EXPECT_THROW(lab06::conv_tensor_core(nullptr, nullptr, nullptr, bad, nullptr), std::invalid_argument);
    EXPECT_THROW(lab06::gemm(nullptr, nullptr, nullptr, 0, 4, 4, nullptr), std::invalid_argument);
    ConvProblem zero_stride{1, 1, 8, 8, 1, 3, 3, 0, 1, 0, 0};
    EXPECT_THROW(lab06::conv_direct(nullptr, nullptr, nullptr, zero_stride, nullptr), std::invalid_argument);
  });
  // The technique rules on launches such as a GPU build (code facts) or the CPU backend (counts)
  // records them: the reference's designs pass, the evasions fail with what was seen.
  reg.cpu("cpu", "technique", "gemm_tiles_from_code", [] {
    namespace tech = lab06::technique;
    const double outputs = 32 * 1152, kd = 144;  // kTechniqueGemmLayer
    const auto spec = tech::gemm_tiles_spec(kd);
    const KernelFacts gemm = with_code(fake_launch("gemm_kernel", 9, 8448), 8, 2, 2);
    const KernelFacts naive = with_code(fake_launch("conv_direct_naive", 144, 0), 0, 0, 0);
    const KernelFacts im2col = with_code(fake_launch("im2col_kernel", 144, 0), 0, 0, 0);
    EXPECT_EQ(tech::tiled_kernel({im2col, gemm}, outputs, spec), "");
    EXPECT_EQ(tech::tiled_kernel({naive}, outputs, spec),
              "conv_direct_naive keeps no tile in shared memory (0 ld.shared, 0 st.shared, 0 barriers in its code)");
    // A decoy: a few bytes of shared memory with a barrier; 144 blocks of 256 outputs need 32 sqrt(256) B.
    const KernelFacts decoy = with_code(fake_launch("decoy_kernel", 144, 128), 1, 1, 1);
    EXPECT_EQ(tech::tiled_kernel({im2col, naive}, outputs, spec),
              "im2col_kernel keeps no tile in shared memory (0 ld.shared, 0 st.shared, 0 barriers in its code); "
              "conv_direct_naive keeps no tile in shared memory (0 ld.shared, 0 st.shared, 0 barriers in its code)");
    EXPECT_EQ(tech::tiled_kernel({im2col, decoy}, outputs, spec),
              "decoy_kernel holds 128 B of shared memory per block, for about 256 outputs per block: the two operand "
              "tiles for them need at least 512 B (a BM x BK tile of A and a BK x BN tile of B per step of BK >= 4 "
              "terms)");
    EXPECT_NE(tech::tiled_kernel({with_code(fake_launch("gemm_kernel", 9, 8448), 8, 2, 0)}, outputs, spec)
                  .find("gemm_kernel never waits at a barrier"),
              std::string::npos);
    // One kernel launched once per image counts with all its blocks: 2 x 5 blocks of about 3686 outputs.
    const KernelFacts half = with_code(fake_launch("gemm_kernel", 5, 1024), 8, 2, 2);
    EXPECT_NE(tech::tiled_kernel({half, half}, outputs, spec).find("for about 3686 outputs per block"),
              std::string::npos);
    EXPECT_EQ(tech::group_kernels({half, im2col, half}).size(), 2u);
    EXPECT_EQ(tech::group_kernels({half, im2col, half})[0].blocks, 10u);
    EXPECT_EQ(tech::tiled_kernel({}, outputs, spec), "no kernel was launched");
    EXPECT_EQ(tech::tiled_kernel({fake_launch("library_kernel", 9, 0)}, outputs, spec),
              "no record of the kernels' code or memory accesses");
  });
  reg.cpu("cpu", "technique", "gemm_tiles_from_counts", [] {
    namespace tech = lab06::technique;
    const double outputs = 32 * 1152, kd = 144;
    const auto spec = tech::gemm_tiles_spec(kd);
    // The reference's GEMM: 9 steps of (64 + 64) x 16 loads per block of 64 x 64: about 5 per output.
    EXPECT_EQ(tech::tiled_kernel({with_counts(fake_launch("gemm_kernel", 18, 8448), outputs, 5, 36, 4, 0.4)},
                                 outputs, spec),
              "");
    EXPECT_EQ(tech::tiled_kernel({with_counts(fake_launch("conv_direct_naive", 144, 0), outputs, 288, 0, 0, 0)},
                                 outputs, spec),
              "conv_direct_naive keeps no tile in shared memory (0 shared loads, 0 shared stores and 0 barriers per "
              "output)");
    // A decoy tile that the operands bypass: its loads still come from global memory.
    EXPECT_EQ(tech::tiled_kernel({with_counts(fake_launch("decoy_kernel", 18, 8448), outputs, 288, 1, 1, 1)}, outputs,
                                 spec),
              "decoy_kernel made 288 global loads per output (at most 36 for staged tiles: a dot product of 144 terms "
              "loads 2 x 144 values per output from global memory when each thread reads its own operands; staged "
              "tiles reused by 8 or more outputs bring it under 36)");
  });
  reg.cpu("cpu", "technique", "input_tile", [] {
    namespace tech = lab06::technique;
    const double outputs = 6 * 31 * 135, taps = 216;  // kTechniqueDirect: K = 6 filters of 6 x 6 x 6
    const auto spec = tech::input_tile_spec(taps, 6);
    EXPECT_EQ(tech::tiled_kernel({with_counts(fake_launch("conv_direct_strip", 8, 12256), outputs, 3.8, 80, 1, 0.1)},
                                 outputs, spec),
              "");
    EXPECT_NE(tech::tiled_kernel({with_code(fake_launch("small_tile", 8, 256), 4, 4, 2)}, outputs, spec)
                  .find("holds 256 B of shared memory per block, for about 3139 outputs per block: an input tile for "
                        "them need at least 523 B"),
              std::string::npos);
    EXPECT_NE(tech::tiled_kernel({with_counts(fake_launch("conv_direct_naive", 99, 0), outputs, 432, 0, 0, 0)},
                                 outputs, spec)
                  .find("keeps no tile in shared memory"),
              std::string::npos);
  });
  reg.cpu("cpu", "technique", "tile_bounds_hold_for_textbook_tiles", [] {
    namespace tech = lab06::technique;
    // (BM + BN) BK floats staged per step; the bound must hold for every tile shape with BK >= 4.
    const int tiles[][3] = {{16, 16, 16}, {32, 32, 32}, {64, 64, 16}, {64, 256, 8}, {128, 128, 8}, {128, 64, 4}, {8, 8, 4}};
    for (const auto& [bm, bn, bk] : tiles)
      EXPECT_GE(4.0 * (bm + bn) * bk, tech::gemm_tile_min_bytes(double(bm) * bn, 0)) << bm << " x " << bn << " x " << bk;
    EXPECT_DOUBLE_EQ(tech::gemm_tile_min_bytes(64 * 64, 0), 4.0 * (64 + 64) * 4);  // equality: square tiles, BK = 4
    // An input tile covers at least the positions of the block's outputs (stride 1).
    EXPECT_LE(tech::input_tile_min_bytes(8.0 * 128 * 6, 6), 4.0 * (8 + 5) * (128 + 5));
  });
  reg.cpu("cpu", "technique", "no_column_matrix", [] {
    namespace tech = lab06::technique;
    const double outputs = 32 * 1152, crs = 144, k = 32;  // kTechniqueGemmLayer
    remote::CallRecord call = fake_call("conv_implicit_gemm");
    EXPECT_EQ(tech::no_column_buffer({call}, {}, false, outputs, crs, k), "");
    call.evidence.allocations = 1;
    call.evidence.allocated_bytes = 144 * 576 * 4;
    EXPECT_EQ(tech::no_column_buffer({call}, {}, false, outputs, crs, k),
              "the launcher allocated 0.332 MB of device memory with cudaMalloc (1 allocations; the column matrix of "
              "this layer is 0.664 MB)");
    // Counts: im2col's stores (C R S per column, N P Q columns), a kernel without a tile.
    const auto im2col = with_counts(fake_launch("im2col_kernel", 576, 0), outputs, 4.5, 0, 0, 0, 4.5);
    const auto gemm = with_counts(fake_launch("gemm_kernel", 18, 8448), outputs, 5, 36, 4, 0.4, 1);
    EXPECT_EQ(tech::no_column_buffer({fake_call("conv_implicit_gemm")}, {im2col, gemm}, true, outputs, crs, k),
              "kernels without a tile in shared memory (im2col_kernel) stored 4.5 values to global memory per output: "
              "the output takes at most 1, a column matrix of C R S x N P Q floats adds C R S / K = 4.5");
    EXPECT_EQ(tech::no_column_buffer({fake_call("conv_implicit_gemm")}, {gemm}, true, outputs, crs, k), "");
    // Split-k: a tiled kernel adding each output once per slice (atomics count as stores), after a
    // kernel that zeroes the output: no column matrix.
    const auto zero = with_counts(fake_launch("zero_kernel", 144, 0), outputs, 0, 0, 0, 0, 1);
    const auto sliced = with_counts(fake_launch("implicit_gemm_kernel", 40, 20736), outputs, 3, 45, 3, 0.4, 8);
    EXPECT_EQ(tech::no_column_buffer({fake_call("conv_implicit_gemm")}, {zero, sliced}, true, outputs, crs, k), "");
    // A GPU counts no barriers: there a kernel's tile is its compiled code's fact. Seen on an H200: the
    // tensor-core reference's tiled kernels, counted at 3.67 global stores per output, were taken for
    // kernels without a tile and failed it.
    auto on_gpu = with_counts(fake_launch("window_kernel<8>", 12, 93312), outputs, 27, 25, 7, 0, 3.67);
    on_gpu.launch.barriers = 0;
    CodeFacts code;
    code.ld_shared = 40, code.async_copies = 12, code.st_shared = 16, code.barriers = 4, code.mma = 8;
    on_gpu.code = code;
    EXPECT_EQ(tech::no_column_buffer({fake_call("conv_tensor_core")}, {on_gpu}, true, outputs, crs, k), "");
    code.barriers = 0;  // the same counts with code that never waits: no tile
    on_gpu.code = code;
    EXPECT_NE(tech::no_column_buffer({fake_call("conv_tensor_core")}, {on_gpu}, true, outputs, crs, k)
                  .find("kernels without a tile in shared memory (window_kernel<8>) stored 3.67 values"),
              std::string::npos);
  });
  reg.cpu("cpu", "technique", "tensor_core_products", [] {
    namespace tech = lab06::technique;
    const double outputs = 32 * 1152, crs = 144;  // kTechniqueGemmLayer
    // A call as the runner records it: launches, and whether their tensor-core work was counted.
    // The rule on launches and their call's record (whether their tensor-core work was counted).
    const auto judge = [&](std::vector<KernelFacts> kernels, bool tensor_counted, bool gpu) {
      remote::CallRecord c = fake_call("conv_tensor_core", kernels);
      c.evidence.counts_available = true;
      c.evidence.counted_on_gpu = gpu;
      c.evidence.tensor_counted = tensor_counted;
      return tech::tensor_core_products(kernels, {c}, outputs, crs);
    };
    const auto macs = [&](KernelFacts k, double per_output) {
      k.launch.tensor_macs = std::uint64_t(per_output * outputs);
      return k;
    };
    const auto mma_code = [](KernelFacts k, long mma) {
      CodeFacts c = k.code.value_or(CodeFacts{});
      c.mma = mma;
      k.code = c;
      return k;
    };
    const KernelFacts tc = fake_launch("tensor_core_kernel", 10, 33792), fma = fake_launch("fma_kernel", 144, 0);
    // The CPU backend: counts only (no compiled-code facts). 144 products per output, or padded more: passes.
    const auto counted = [&](const KernelFacts& k, double per_output) {
      return macs(with_counts(k, outputs, 5, 20, 8, 1), per_output);
    };
    EXPECT_EQ(judge({counted(tc, 288)}, true, false), "");
    EXPECT_EQ(judge({counted(tc, 144)}, true, false), "");
    EXPECT_EQ(judge({counted(fma, 0)}, true, false),
              "the tensor cores did 0 multiply-adds per output (mma_sync, once a warp); each output's dot product has "
              "C R S = 144 products, and every one of them belongs on the tensor cores");
    // A token tensor-core launch beside the FMA kernel that does the work.
    EXPECT_NE(judge({counted(tc, 32), counted(fma, 0)}, true, false)
                  .find("the tensor cores did 32 multiply-adds per output"),
              std::string::npos);
    // A GPU build: the compiled code first. No kernel with a tensor-core instruction fails without counts.
    const KernelFacts tc_code = mma_code(with_code(tc, 8, 4, 2), 16), fma_code = mma_code(with_code(fma, 0, 0, 0), 0);
    EXPECT_EQ(judge({tc_code}, false, true), "");
    EXPECT_EQ(judge({fma_code}, false, true),
              "no kernel's compiled code holds a tensor-core instruction (fma_kernel: no wmma.mma, mma.sync or wgmma in "
              "the PTX): the products are FMA instructions on the CUDA cores");
    // ... and were a GPU's count of tensor-core work recorded (none is yet: wire.hpp), the token would be caught there.
    const auto gpu_counted = [&](const KernelFacts& k, double per_output) {
      return macs(with_counts(k, outputs, 5, 20, 8, 0), per_output);
    };
    EXPECT_NE(judge({gpu_counted(tc_code, 32), gpu_counted(fma_code, 0)}, true, true)
                  .find("(counted by the GPU)"),
              std::string::npos);
    // Counts without the tensor pipe's (a chip without the metric): the compiled code decides.
    EXPECT_EQ(judge({gpu_counted(tc_code, 0), gpu_counted(fma_code, 0)}, false, true),
              "");
  });
  reg.cpu("cpu", "technique", "from_cudnn_and_kernel_count", [] {
    namespace tech = lab06::technique;
    const auto own = fake_launch("implicit_gemm_kernel<64, 256>", 10, 20736);
    // cudnn_create's launches (none recorded in practice) do not count; cudnn_forward's do.
    EXPECT_EQ(tech::from_cudnn({fake_call("cudnn_create", {own}), fake_call("cudnn_forward")}, 3), "");
    EXPECT_EQ(tech::from_cudnn({fake_call("cudnn_forward", {own, own})}, 3),
              "cudnn_forward launched implicit_gemm_kernel<64, 256> itself (cuDNN's kernels are launched inside the "
              "cuDNN library and are never among the launches recorded here)");
    remote::CallRecord copy = fake_call("cudnn_forward");
    wire::Transfer t;
    t.kind = wire::Transfer::Kind::on_device;
    t.dst_arg = 1;  // into x's buffer: not the output
    copy.evidence.transfers.push_back(t);
    EXPECT_EQ(tech::from_cudnn({copy}, 3), "");
    copy.evidence.transfers.back().dst_arg = 3;
    EXPECT_EQ(tech::from_cudnn({copy}, 3), "cudnn_forward copied data into d_y (1 cudaMemcpy calls)");
    EXPECT_EQ(tech::from_cudnn({fake_call("cudnn_create")}, 3), "cudnn_forward was not called (a harness error)");
    const auto naive = fake_launch("conv_direct_naive", 144, 0);
    EXPECT_EQ(tech::kernel_count({naive}, 2, "why"), "1 kernel launch (conv_direct_naive): why");
    EXPECT_EQ(tech::kernel_count({naive, naive}, 2, "why"), "");
  });
  reg.cpu("cpu", "golden", "worked_by_hand", [] {
    // x: one image, 2 channels of 3 x 3 (channel 0: 1..9, channel 1: all 1); one 2 x 2 filter per
    // channel (channel 0: [1 0; 0 -1], channel 1: all 0.5); stride 1, pad 1 -> 4 x 4 outputs.
    std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    std::vector<float> w = {1, 0, 0, -1, 0.5f, 0.5f, 0.5f, 0.5f};
    const auto p = lab06::make_problem(1, 2, 3, 3, 1, 2, 2, 1, 1, kPad, 1, 1);
    const Golden g = lab06::conv_golden(x, w, p);
    ASSERT_EQ(g.value.size(), 16u);
    EXPECT_EQ(g.terms, 8);
    // y[0][0]: window rows -1..0, cols -1..0: channel 0 gives -x(0,0) = -1, channel 1 gives 0.5 -> -0.5.
    EXPECT_DOUBLE_EQ(g.value[0], -0.5);
    // y[1][1]: rows 0..1, cols 0..1: 1 - 5 = -4, plus 4 * 0.5 = 2 -> -2.
    EXPECT_DOUBLE_EQ(g.value[5], -2.0);
    // y[3][3]: rows 2..3, cols 2..3: channel 0 gives x(2,2) = 9, channel 1 gives 0.5 -> 9.5.
    EXPECT_DOUBLE_EQ(g.value[15], 9.5);
    EXPECT_DOUBLE_EQ(g.magnitude[5], 1 + 5 + 2.0);
    // The column matrix: 8 rows (c, r, s) x 16 columns (p, q); row 3 is tap (0, 1, 1): x[p][q].
    const Golden col = lab06::im2col_golden(x, 0, p);
    ASSERT_EQ(col.value.size(), 8u * 16u);
    EXPECT_DOUBLE_EQ(col.value[3 * 16 + 0], 1.0);   // output (0, 0): x(0, 0)
    EXPECT_DOUBLE_EQ(col.value[3 * 16 + 15], 0.0);  // output (3, 3): x(3, 3) is padding
    EXPECT_DOUBLE_EQ(col.value[0 * 16 + 5], 1.0);   // tap (0, 0, 0) of output (1, 1): x(0, 0)
  });
}

}  // namespace lab06_tests
