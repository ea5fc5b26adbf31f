/// @file technique_lab06.hpp
/// @brief Lab 06's technique rules (judge side): did the kernels use what the lab teaches?
///
/// The rules read the facts of convlab/technique.hpp: each launch's kernel, grid, block and shared
/// memory; on a GPU, what the kernel's compiled code does with shared memory (its PTX); on the CPU
/// backend, how many loads and stores of each memory space the kernel executed. A kernel launched
/// several times (im2col + GEMM launches its GEMM once per image) is judged on all its launches
/// together. Each rule returns what it saw when it does not hold, in words, and nothing when it does.
///
/// The amounts below are lower bounds that any correct design of the technique meets, derived in
/// the comments; they are not the reference's figures, so a student's own tile shapes pass.
#pragma once

#include <convlab/technique.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace convlab::lab06::technique {

/// One kernel, all its launches in the calls taken together.
struct KernelGroup {
  std::string name;
  std::uint64_t launches = 0, blocks = 0, threads = 0;
  std::uint64_t shared_bytes = 0;  ///< the largest of its launches, per block
  std::optional<CodeFacts> code;   ///< its compiled code's facts (GPU builds)
  bool counted = true;             ///< every launch carries execution counts (CPU backend)
  std::uint64_t global_loads = 0, global_stores = 0, shared_loads = 0, shared_stores = 0, barriers = 0;
  std::uint64_t tensor_macs = 0;  ///< tensor-core multiply-adds (CPU backend: mma_sync's)
};

/// The launches grouped by kernel name, in the order of first launch.
inline std::vector<KernelGroup> group_kernels(const std::vector<KernelFacts>& kernels) {
  std::vector<KernelGroup> groups;
  for (const auto& k : kernels) {
    KernelGroup* g = nullptr;
    for (auto& x : groups)
      if (x.name == k.launch.name) g = &x;
    if (!g) {
      groups.push_back({});
      g = &groups.back();
      g->name = k.launch.name;
      g->code = k.code;
    }
    ++g->launches;
    g->blocks += k.launch.blocks();
    g->threads += k.launch.threads_launched();
    g->shared_bytes = std::max<std::uint64_t>(g->shared_bytes, k.shared_bytes());
    g->counted = g->counted && k.launch.counted;
    g->global_loads += k.launch.global_loads;
    g->global_stores += k.launch.global_stores;
    g->shared_loads += k.launch.shared_loads;
    g->shared_stores += k.launch.shared_stores;
    g->barriers += k.launch.barriers;
    g->tensor_macs += k.launch.tensor_macs;
  }
  return groups;
}

/// The kernel stores to and loads from shared memory and waits at a barrier: from its compiled code
/// where a GPU build has it (a GPU counts no barriers: gpu_counters.cpp), else from the CPU backend's
/// counts. A kernel nobody can see into (a library's) keeps none.
struct TileSigns {
  bool writes = false, reads = false, waits = false;
};
inline TileSigns tile_signs(const KernelGroup& g) {
  if (g.code) return {g.code->st_shared + g.code->async_copies > 0, g.code->ld_shared > 0, g.code->barriers > 0};
  if (g.counted) return {g.shared_stores > 0, g.shared_loads > 0, g.barriers > 0};
  return {};
}
inline bool keeps_a_tile(const KernelGroup& g) {
  const TileSigns t = tile_signs(g);
  return t.writes && t.reads && t.waits;
}

/// What a tiled kernel of this lab must show, besides shared-memory stores, loads and a barrier.
struct TileSpec {
  /// The tile, in words: "the two operand tiles", "an input tile".
  std::string what;
  /// The least shared memory per block (bytes) the design implies for a block of this many outputs.
  double (*min_bytes)(double outputs_per_block, double param) = nullptr;
  double param = 0;  ///< passed to min_bytes
  /// Why that least amount, in words (shown in parentheses after it).
  std::string min_why;
  /// Counts only: the most global loads per output a tiled kernel makes (reuse from the tile).
  double max_global_loads = 0;
  /// Why that many, in words (shown after the limit).
  std::string loads_why;
};

/// The GEMM design: a block computing a BM x BN tile of C stages, per step of BK terms of the dot
/// product, a BM x BK tile of A and a BK x BN tile of B: (BM + BN) BK floats, which is at least
/// 2 sqrt(BM BN) BK (arithmetic and geometric means). With BK >= 4 (every tiled GEMM the lab shows
/// has 8 to 32) that is at least 32 sqrt(outputs per block) bytes. A split of the dot product over
/// several blocks (split-k) only lowers the bound: its blocks hold fewer outputs each.
inline double gemm_tile_min_bytes(double outputs_per_block, double) { return 32.0 * std::sqrt(outputs_per_block); }

/// The direct design: a block stages the inputs under its outputs, one channel at a time: at
/// stride 1 and for outputs of K_b filters at P_b x Q_b positions, a (P_b + R - 1) x (Q_b + S - 1)
/// tile, more than the P_b Q_b = outputs / K_b positions. `filters` is K, at least K_b, so
/// outputs / K floats is a lower bound; a quarter of it leaves room for tiles staged in parts.
inline double input_tile_min_bytes(double outputs_per_block, double filters) {
  return 4.0 * outputs_per_block / filters / 4.0;
}

/// The GEMM tiles of a dot product of `kd` terms. Tiles of T x T outputs make 2 kd / T global loads
/// per output; a one-thread-per-output GEMM makes 2 kd. At most kd / 4 holds for any T >= 8.
inline TileSpec gemm_tiles_spec(double kd) {
  TileSpec s;
  s.what = "the two operand tiles";
  s.min_bytes = gemm_tile_min_bytes;
  s.min_why = "a BM x BK tile of A and a BK x BN tile of B per step of BK >= 4 terms";
  s.max_global_loads = kd / 4;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "a dot product of %.0f terms loads 2 x %.0f values per output from global memory when each "
                "thread reads its own operands; staged tiles reused by 8 or more outputs bring it under %.0f",
                kd, kd, kd / 4);
  s.loads_why = buf;
  return s;
}

/// The input tile of a direct kernel for `filters` filters of `taps` taps (C R S) each: each output
/// reads `taps` inputs and `taps` filter values; staged in shared memory (or the filters in constant
/// memory) they come from global memory once per block, far under taps / 4 per output.
inline TileSpec input_tile_spec(double taps, double filters) {
  TileSpec s;
  s.what = "an input tile";
  s.min_bytes = input_tile_min_bytes;
  s.param = filters;
  s.min_why = "at least a quarter of the inputs under the block's outputs of one channel";
  s.max_global_loads = taps / 4;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "one thread per output loads its %.0f inputs and %.0f filter taps from global memory; staged "
                "tiles bring it under %.0f",
                taps, taps, taps / 4);
  s.loads_why = buf;
  return s;
}

namespace detail {
inline std::string bytes_text(double b) {
  char buf[64];
  if (b >= 1024) std::snprintf(buf, sizeof buf, "%.3g KB", b / 1024);
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}
}  // namespace detail

/// Some kernel keeps `spec`'s tile in shared memory: it stores to and loads from shared memory, waits
/// at a barrier, holds at least the bytes the design implies for its blocks and (counts) makes at
/// most `spec.max_global_loads` global loads per output. `outputs` is what the calls computed.
/// Empty when one kernel shows all of it; otherwise what the kernel closest to it showed (every
/// kernel, when none has a tile at all).
inline std::string tiled_kernel(const std::vector<KernelFacts>& kernels, double outputs, const TileSpec& spec) {
  if (kernels.empty()) return "no kernel was launched";
  std::string best;
  int best_score = -1;  // how far the best kernel got: 0 no tile, 1 no barrier, 2 too small, 3 too many loads
  for (const KernelGroup& g : group_kernels(kernels)) {
    const auto [writes, reads, waits] = tile_signs(g);
    char seen[256];
    if (g.code) {
      std::snprintf(seen, sizeof seen, "%ld ld.shared, %ld st.shared, %ld barriers in its code", g.code->ld_shared,
                    g.code->st_shared + g.code->async_copies, g.code->barriers);
    } else if (g.counted) {
      std::snprintf(seen, sizeof seen, "%.3g shared loads, %.3g shared stores and %.3g barriers per output",
                    double(g.shared_loads) / outputs, double(g.shared_stores) / outputs, double(g.barriers) / outputs);
    } else {
      continue;  // a kernel nobody can see into (a library's)
    }
    std::string why;
    int score = 0;
    const double per_block = g.blocks ? outputs / double(g.blocks) : outputs;
    const double need = spec.min_bytes ? spec.min_bytes(per_block, spec.param) : 0;
    const double loads = double(g.global_loads) / outputs;
    if (!writes || !reads) {
      why = g.name + " keeps no tile in shared memory (" + seen + ")";
    } else if (!waits) {
      score = 1;
      why = g.name + " never waits at a barrier between filling its tile and reading it (" + seen + ")";
    } else if (double(g.shared_bytes) < need) {
      score = 2;
      char buf[400];
      std::snprintf(buf, sizeof buf, "%s holds %s of shared memory per block, for about %.0f outputs per block: %s "
                    "for them need at least %s (%s)", g.name.c_str(), detail::bytes_text(double(g.shared_bytes)).c_str(),
                    per_block, spec.what.c_str(), detail::bytes_text(need).c_str(), spec.min_why.c_str());
      why = buf;
    } else if (!g.code && g.counted && loads > spec.max_global_loads) {
      score = 3;
      char buf[512];
      std::snprintf(buf, sizeof buf, "%s made %.3g global loads per output (at most %.3g for staged tiles: %s)",
                    g.name.c_str(), loads, spec.max_global_loads, spec.loads_why.c_str());
      why = buf;
    } else {
      return {};
    }
    if (score > best_score) best = why, best_score = score;
    else if (score == 0 && best_score == 0) best += "; " + why;  // none has a tile: name them all
  }
  return best.empty() ? "no record of the kernels' code or memory accesses" : best;
}

/// tiled_kernel() as a rule.
inline TechniqueRule tiled(TileSpec spec) {
  return [spec = std::move(spec)](const TechniqueView& v) { return tiled_kernel(v.kernels(), v.outputs(), spec); };
}

/// At least `at_least` kernel launches; else how many there were, and `why` they are needed.
inline std::string kernel_count(const std::vector<KernelFacts>& kernels, int at_least, const std::string& why) {
  const int n = static_cast<int>(kernels.size());
  if (n >= at_least) return {};
  std::string names;
  for (const auto& k : kernels)
    if (names.find(k.launch.name) == std::string::npos) names += (names.empty() ? "" : ", ") + k.launch.name;
  return std::to_string(n) + (n == 1 ? " kernel launch" : " kernel launches") + (names.empty() ? "" : " (" + names + ")") +
         ": " + why;
}

/// kernel_count() as a rule.
inline TechniqueRule kernels_at_least(int at_least, std::string why) {
  return [=](const TechniqueView& v) { return kernel_count(v.kernels(), at_least, why); };
}

/// No column matrix: the calls allocate no device memory, and (counts) the kernels that keep no tile
/// in shared memory store at most about one value per output to global memory (a kernel that zeroes
/// the output, say), not the C R S / K per output that writing the column matrix of C R S x N P Q
/// floats takes (`crs` = C R S, `filters` = K; up to 1 + half of that share is allowed). The tiled
/// kernels are left out: a GEMM that splits its dot product into slices adds each output once per
/// slice (atomics count as stores).
inline std::string no_column_buffer(const std::vector<remote::CallRecord>& calls, const std::vector<KernelFacts>& kernels,
                                    bool counted, double outputs, double crs, double filters) {
  std::string out;
  std::uint64_t allocations = 0, bytes = 0;
  for (const auto& c : calls) allocations += c.evidence.allocations, bytes += c.evidence.allocated_bytes;
  char buf[400];
  if (allocations > 0) {
    const double column_mb = crs * (outputs / filters) * 4 / 1e6;
    std::snprintf(buf, sizeof buf,
                  "the launcher allocated %.3g MB of device memory with cudaMalloc (%llu allocations; the column "
                  "matrix of this layer is %.3g MB)",
                  double(bytes) / 1e6, static_cast<unsigned long long>(allocations), column_mb);
    out = buf;
  }
  if (counted) {
    double stores = 0;
    std::string names;
    for (const KernelGroup& g : group_kernels(kernels)) {
      if (keeps_a_tile(g)) continue;
      stores += double(g.global_stores);
      names += (names.empty() ? "" : ", ") + g.name;
    }
    stores /= outputs;
    const double limit = 1 + 0.5 * crs / filters;
    if (stores > limit) {
      std::snprintf(buf, sizeof buf,
                    " stored %.3g values to global memory per output: the output takes at most 1, a column matrix of "
                    "C R S x N P Q floats adds C R S / K = %.3g",
                    stores, crs / filters);
      out += std::string(out.empty() ? "" : "; ") + "kernels without a tile in shared memory (" + names + ")" + buf;
    }
  }
  return out;
}

/// no_column_buffer() as a rule.
inline TechniqueRule no_column_matrix(double crs, double filters) {
  return [=](const TechniqueView& v) {
    return no_column_buffer(v.calls(), v.kernels(), v.counted(), v.outputs(), crs, filters);
  };
}

/// Tensor cores: the layer's products are computed on the tensor cores. `crs` = C R S, the products
/// in each output's dot product.
/// - A GPU build's compiled code: some kernel launched holds tensor-core instructions (PTX
///   wmma.mma, mma.sync or wgmma); the kernels without are named.
/// - Counts, where they were made (Evidence::tensor_counted: the CPU backend, whose emulated
///   mma_sync adds its 16 x 16 x 8 multiply-adds once per warp; a GPU whose profiler counts the
///   tensor cores' TF32 ops, gpu_counters.cpp): at least C R S per output. A tile padded past the
///   layer's edges only adds products, so any tensor-core design meets it; an FMA kernel beside a
///   token tensor-core kernel, or one that computes part of each dot product with FMAs, does not.
inline std::string tensor_core_products(const std::vector<KernelFacts>& kernels,
                                        const std::vector<remote::CallRecord>& calls, double outputs, double crs) {
  char buf[400];
  const auto groups = group_kernels(kernels);
  if (groups.empty()) return "no kernel was launched";
  bool has_code = true, counted = !calls.empty(), on_gpu = false;
  for (const auto& k : kernels) has_code = has_code && k.code.has_value(), counted = counted && k.launch.counted;
  for (const auto& c : calls) {
    counted = counted && c.evidence.counts_available && c.evidence.tensor_counted;
    on_gpu = on_gpu || c.evidence.counted_on_gpu;
  }
  if (has_code) {
    std::string without;
    long with = 0;
    for (const KernelGroup& g : groups) {
      if (g.code && g.code->mma > 0) ++with;
      else without += (without.empty() ? "" : ", ") + g.name;
    }
    if (with == 0)
      return "no kernel's compiled code holds a tensor-core instruction (" + without +
             ": no wmma.mma, mma.sync or wgmma in the PTX): the products are FMA instructions on the CUDA cores";
  }
  if (counted) {
    double macs = 0;
    for (const KernelGroup& g : groups) macs += double(g.tensor_macs);
    macs /= outputs;
    if (macs < crs * (1 - 1e-9)) {
      std::snprintf(buf, sizeof buf,
                    "the tensor cores did %.4g multiply-adds per output (%s); each output's dot product has C R S = "
                    "%.0f products, and every one of them belongs on the tensor cores",
                    macs, on_gpu ? "counted by the GPU" : "mma_sync, once a warp", crs);
      return buf;
    }
  }
  if (!has_code && !counted) return "no record of the kernels' code or of their tensor-core work";
  return {};
}

/// tensor_core_products() as a rule.
inline TechniqueRule tensor_cores(double crs) {
  return [=](const TechniqueView& v) { return tensor_core_products(v.kernels(), v.calls(), v.outputs(), crs); };
}

/// The cuDNN path: cudnn_forward's output comes from cudnnConvolutionForward, not from kernels of the
/// submission or a copy. cuDNN is a shared library: the kernels it launches never pass through the
/// runner's wrappers (which see the launches compiled into the runner: the submission's and the
/// harness's), so any launch recorded during cudnn_forward is one that cuDNN did not make.
/// `output_arg` is the index of y among cudnn_forward's pointer arguments. Empty when it holds.
inline std::string from_cudnn(const std::vector<remote::CallRecord>& calls, int output_arg) {
  std::string out;
  bool called = false;
  const auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  for (const auto& c : calls) {
    if (c.entry != "cudnn_forward") continue;
    called = true;
    std::string names;
    for (const auto& k : c.evidence.launches)
      if (names.find(k.name) == std::string::npos) names += (names.empty() ? "" : ", ") + k.name;
    if (!names.empty())
      add("cudnn_forward launched " + names + " itself (cuDNN's kernels are launched inside the cuDNN library and "
          "are never among the launches recorded here)");
    std::size_t copies = 0;
    for (const auto& t : c.evidence.transfers)
      copies += t.dst_arg == output_arg &&
                (t.kind == wire::Transfer::Kind::on_device || t.kind == wire::Transfer::Kind::to_device);
    if (copies) add("cudnn_forward copied data into d_y (" + std::to_string(copies) + " cudaMemcpy calls)");
  }
  if (!called) return "cudnn_forward was not called (a harness error)";
  return out;
}

}  // namespace convlab::lab06::technique
