// Lab 06's graders. The cases live here, in one place; the golden models are lab06_golden.hpp;
// points and thresholds are in grading.json.
//
// Every path (direct, im2col + GEMM, implicit GEMM, cuDNN) is checked on the same layers:
// C and K of 1 to 8192, past one tile of the reference in every GEMM dimension, non-square images,
// filters 1x1 to 9x9 (even sizes too), strides 1 to 4, every padding mode, batches of 1 and more,
// sizes that are no tile multiple. Inputs are random from the printed seed; outputs are poisoned
// with NaN and fenced with NaN guard zones; the tolerance per output is gamma_{m+1} sum |x w| with
// m = C R S; the output must come from kernels on the device, the inputs unchanged. On the CPU
// backend the shapes stay small; the larger ones run on a GPU only. The technique graders (one
// layer per slot; rules in technique_lab06.hpp) judge what the runner saw the kernels do; the speed
// graders time the paths against the naive baseline with a fresh input and a check of every run.
#include "test_lab06.hpp"
#include "baseline_lab06.hpp"
#include "lab06.hpp"
#include "lab06_golden.hpp"
#include "technique_lab06.hpp"

#include <convlab/compare.hpp>
#include <convlab/device_buffer.hpp>
#include <convlab/evidence.hpp>
#include <convlab/gpu.hpp>
#include <convlab/random.hpp>
#include <convlab/record.hpp>
#include <convlab/remote.hpp>
#include <convlab/speed_check.hpp>
#include <convlab/technique.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace lab06_tests;
using lab06::held_to;
using lab06::tf32_scale;

}  // namespace

namespace lab06_tests {

std::string shape_text(const ConvProblem& p) {
  std::ostringstream o;
  o << "N " << p.n << ", C " << p.c << ", " << p.h << " x " << p.w << ", K " << p.k << " filters of " << p.r << " x "
    << p.s << ", stride " << p.stride_h << " x " << p.stride_w << ", pad " << p.pad_h << " x " << p.pad_w
    << " -> output " << p.out_h() << " x " << p.out_w();
  return o.str();
}

}  // namespace lab06_tests

namespace {

// The inputs and golden model of a correctness case, the same for every path graded on it: drawn
// from the case's seed (the base seed and "lab06.correctness.<case>", whichever path's test asks)
// and kept for the next path's test, which comes next (issue 29: a GPU case's golden model took
// up to a third of a second on 16 cores, once per path). The last case's only.
const HostLayer& shared_case_layer(const ConvProblem& p, const std::string& case_name) {
  static std::string key;
  static HostLayer kept;
  const std::uint64_t seed = test_seed("lab06.correctness." + case_name);
  const std::string k = case_name + "/" + std::to_string(seed);
  if (k != key) {
    key.clear();
    kept.x = random_floats(p.input_elements(), seed);
    kept.w = random_floats(p.filter_elements(), seed ^ kFilterStream);
    kept.g = lab06::conv_golden(kept.x, kept.w, p);
    key = k;
  }
  return kept;
}

// Where output `i` lies: its coordinates and its window in the input.
std::string locate(const ConvProblem& p, std::size_t i, bool* in_padding = nullptr) {
  const int P = p.out_h(), Q = p.out_w();
  const int q = int(i % Q), oh = int(i / Q % P), k = int(i / (std::size_t(P) * Q) % p.k),
            n = int(i / (std::size_t(P) * Q * p.k));
  const int r0 = oh * p.stride_h - p.pad_h, c0 = q * p.stride_w - p.pad_w;
  const int r1 = r0 + p.r - 1, c1 = c0 + p.s - 1;
  std::string sides;
  const auto side = [&sides](bool on, const char* name) {
    if (on) sides += (sides.empty() ? "" : ", ") + std::string(name);
  };
  side(r0 < 0, "top");
  side(r1 >= p.h, "bottom");
  side(c0 < 0, "left");
  side(c1 >= p.w, "right");
  if (in_padding) *in_padding = !sides.empty();
  std::ostringstream o;
  o << "y[n=" << n << "][k=" << k << "][p=" << oh << "][q=" << q << "] (window rows " << r0 << ".." << r1
    << ", columns " << c0 << ".." << c1 << ": "
    << (sides.empty() ? "inside the image" : "overlaps the zero padding (" + sides + ")") << ")";
  return o.str();
}

// Precision, tf32_scale() and held_to(): the TF32 bound, derived in lab06_golden.hpp.

bool agrees(const std::vector<float>& got, const Comparison& c, const Golden& alt) {
  if (c.first.empty()) return false;
  for (const auto& m : c.first)
    if (!(std::fabs(double(got[m.index]) - alt.value[m.index]) <= tolerance_for(alt.magnitude[m.index], alt.terms)))
      return false;
  return true;
}

// What the wrong outputs suggest: other computations that give exactly what the kernel wrote.
std::string diagnose(const Layer& L, const Comparison& c, const std::vector<float>& got, Precision precision) {
  const ConvProblem& p = L.p;
  std::string hints;
  if (c.unwritten == c.checked)
    return "hint: no output was written at all: is the kernel still a TODO, is its grid empty, does it store to y?\n";
  if (c.unwritten > 0)
    hints += "hint: " + std::to_string(c.unwritten) +
             " outputs were never written: does the grid cover all N K P Q outputs (round up, and mind the output "
             "size P = (H + 2 pad_h - R) / stride_h + 1), and does every thread that owns one reach its store?\n";
  if (c.from_unwritten_shared > 0)
    hints += "hint: outputs were computed from shared memory no thread had written yet: a __syncthreads() is "
             "missing between filling a tile and reading it, or part of the tile is never loaded.\n";
  if (c.unwritten > 0 || p.macs() > 2e8) return hints;  // the alternatives below cost a golden model each
  const auto tryit = [&](const lab06::ConvVariant& v, const std::string& text) {
    if (agrees(got, c, held_to(lab06::conv_golden(L.x, L.w, p, v), precision))) hints += "hint: " + text + "\n";
  };
  const int offsets[][2] = {{p.pad_w, p.pad_h}, {p.pad_w, p.pad_w}, {p.pad_h, p.pad_h}, {0, 0},
                            {0, p.pad_w},       {p.pad_h, 0},       {p.pad_h + 1, p.pad_w}, {p.pad_h, p.pad_w + 1}};
  for (const auto& o : offsets) {
    if (o[0] == p.pad_h && o[1] == p.pad_w) continue;
    lab06::ConvVariant v;
    v.off_h = o[0];
    v.off_w = o[1];
    tryit(v, "these outputs equal a window whose top-left corner is (p*stride_h - " + std::to_string(o[0]) +
                 ", q*stride_w - " + std::to_string(o[1]) + ") instead of (p*stride_h - pad_h, q*stride_w - pad_w) "
                 "= (p*stride_h - " + std::to_string(p.pad_h) + ", q*stride_w - " + std::to_string(p.pad_w) +
                 "): check the padding offset (ih = p*stride_h - pad_h + r, iw = q*stride_w - pad_w + s)");
    if (hints.find("padding offset") != std::string::npos) break;
  }
  if (p.stride_h > 1 || p.stride_w > 1) {
    const int dil[][2] = {{p.stride_h, p.stride_w}, {p.stride_h, 1}, {1, p.stride_w}};
    for (const auto& d : dil) {
      if (d[0] == 1 && d[1] == 1) continue;
      lab06::ConvVariant v;
      v.dil_h = d[0];
      v.dil_w = d[1];
      tryit(v, "these outputs equal the result with the filter taps spaced by the stride (ih = p*stride_h - pad_h "
               "+ r*stride_h): the stride moves the window, not the taps inside it; ih = p*stride_h - pad_h + r");
      if (hints.find("spaced by the stride") != std::string::npos) break;
    }
  }
  if (p.c > 1)
    for (int ch : {p.c - 1, 0}) {
      lab06::ConvVariant v;
      v.only_channel = ch;
      tryit(v, "these outputs equal the sum over channel " + std::to_string(ch) +
                   " alone: the channels are not accumulated; all C channels add into one sum per output");
      if (hints.find("not accumulated") != std::string::npos) break;
    }
  if (p.r > 1 || p.s > 1) {
    lab06::ConvVariant v;
    v.flip = true;
    tryit(v, "these outputs equal the result with the filter reversed (true convolution): a CNN layer computes "
             "cross-correlation, w[k][c][r][s] multiplies x[..][p*stride_h - pad_h + r][q*stride_w - pad_w + s]");
  }
  bool any_inside = false;
  for (const auto& m : c.first) {
    bool pad = false;
    locate(p, m.index, &pad);
    any_inside |= !pad;
  }
  if (!any_inside && !c.first.empty() && hints.empty())
    hints += "hint: only outputs whose window overlaps the zero padding are listed: check the bounds test (0 <= ih "
             "< H, 0 <= iw < W) and the padding offset.\n";
  return hints;
}

std::string report(const Comparison& c, const std::function<std::string(std::size_t)>& where,
                   const std::vector<float>& got) {
  std::ostringstream o;
  o << c.wrong << " of " << c.checked << " outputs are wrong";
  if (c.unwritten) o << " (" << c.unwritten << " never written: still the NaN poison)";
  o << "; largest error " << c.max_error << ", " << c.max_error_ratio << " times its tolerance\n";
  for (const auto& m : c.first) {
    o << "  " << where(m.index) << ": got ";
    if (m.unwritten) o << "NaN (never written)";
    else if (m.from_unwritten_shared) o << "NaN (computed from shared memory that no thread had written yet)";
    else o << got[m.index];
    o << ", expected " << m.expected << " (tolerance " << m.tolerance << ")\n";
  }
  return o.str();
}

// The calls' records, for the check that kernels on the device computed the output. cuDNN launches
// its kernels inside its own (shared) library, out of the records' reach: its calls' records cannot
// say that no kernel ran (their copies and host stores they still show).
std::vector<remote::CallRecord> device_work_records() {
  std::vector<remote::CallRecord> calls = remote::calls();
  for (auto& c : calls)
    if (c.entry.rfind("cudnn_", 0) == 0) c.evidence.recorded = false;
  return calls;
}

// After a run: an error text if the runner saw the output computed anywhere but in kernels on the
// device (no kernel, a copy from the host into an output, the data read back to the host, host
// stores to device memory). Work on another stream is noted here (the runner waits for every stream,
// so the result is right); the speed and technique graders award nothing for it.
std::string device_work_problems() {
  if (const std::string why = not_computed_on_device(device_work_records()); !why.empty()) return why;
  for (const auto& c : remote::calls())
    if (const std::string w = escaped_work(c.evidence); !w.empty()) std::printf("note: %s\n", w.c_str());
  return {};
}

}  // namespace

namespace lab06_tests {

// Runs `fn` once on a poisoned output; an error text if the launch or the run failed.
std::string run_once(const ConvFn& fn, Layer& L, float* out) {
  remote::clear_calls();
  try {
    fn(L.dx.data(), L.dw.data(), out, L.p, L.stream.s);
  } catch (const std::exception& e) {
    return std::string("the launcher failed: ") + e.what();
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return std::string("the kernel launch failed: ") + cudaGetErrorString(e) +
           " - check the grid and block sizes and the shared memory size";
  if (cudaError_t e = cudaStreamSynchronize(L.stream.s); e != cudaSuccess)
    return std::string("the kernel failed while running: ") + cudaGetErrorString(e) +
           " - an illegal address usually means an index outside an array; run it under compute-sanitizer";
  return device_work_problems();
}

}  // namespace lab06_tests

namespace {

// Empty if `buffer` still holds `host`; else what changed, for a launcher that wrote an input.
std::string changed(const GuardedBuffer& buffer, const std::vector<float>& host, const char* name) {
  const std::vector<float> now = buffer.download();
  std::size_t n = 0;
  for (std::size_t i = 0; i < now.size(); ++i) n += std::memcmp(&now[i], &host[i], sizeof(float)) != 0;
  if (n == 0) return {};
  return "the launcher changed its input (" + std::to_string(n) + " of " + std::to_string(now.size()) +
         " elements of " + name + "): the inputs are const, and the output must be computed from them as given";
}

}  // namespace

namespace lab06_tests {

bool run_and_compare(const ConvFn& fn, Layer& L, const std::string& when, Precision precision) {
  L.dy.poison();
  if (const std::string err = run_once(fn, L, L.dy.data()); !err.empty()) {
    ADD_FAILURE() << when << err << "\nlayer: " << shape_text(L.p);
    return false;
  }
  for (const auto& [buffer, host, name] : {std::tuple{&L.dx, &L.x, "d_x"}, std::tuple{&L.dw, &L.w, "d_w"}})
    if (const std::string why = changed(*buffer, *host, name); !why.empty()) {
      ADD_FAILURE() << when << why << "\nlayer: " << shape_text(L.p);
      return false;
    }
  const std::vector<float> got = L.dy.download();
  const ConvProblem p = L.p;
  const Comparison c = compare(got, held_to(L.g, precision), Grid{p.out_w(), p.n * p.k * p.out_h(), 0});
  const std::string guards = L.dy.check_guards();
  auto& rec = current_record();
  rec.max_error = c.max_error;
  if (std::isfinite(c.max_error_ratio)) rec.max_error_ratio = c.max_error_ratio;
  if (c.ok() && guards.empty()) return true;
  ADD_FAILURE() << when << "layer: " << shape_text(p) << "\n"
                << report(c, [&p](std::size_t i) { return locate(p, i); }, got)
                << (guards.empty() ? "" : guards + "\nhint: a store landed outside y: guard every store with the "
                                                   "output's bounds (k < K, p < P, q < Q, and the batch)\n")
                << (c.ok() ? "" : diagnose(L, c, got, precision))
                << (precision == Precision::tf32 ? "(the tolerance is the TF32 bound: about 2^-9 times the sum of |x w| "
                                                    "over the output's taps; the handout derives it)\n"
                                                  : "");
  return false;
}

}  // namespace lab06_tests

namespace {

bool check_conv(const ConvFn& fn, const Case& cs, Precision precision = Precision::fp32) {
  Layer L(cs.problem(), shared_case_layer(cs.problem(), cs.name()));
  return run_and_compare(fn, L, "", precision);
}

// --- the paths, as ConvFns ----------------------------------------------------------------------

void direct(const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s) {
  lab06::conv_direct(x, w, y, p, s);
}
void implicit_gemm(const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s) {
  lab06::conv_implicit_gemm(x, w, y, p, s);
}
void tensor_core(const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s) {
  lab06::conv_tensor_core(x, w, y, p, s);
}
// im2col + GEMM with a grader-owned workspace, poisoned with NaN for correctness runs.
ConvFn im2col_gemm(bool poison) {
  auto col = std::make_shared<DeviceBuffer<float>>();
  return [col, poison](const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s) {
    const std::size_t need = lab06::im2col_workspace_floats(p);
    if (col->size() != need) *col = DeviceBuffer<float>(need);
    if (poison) CONVLAB_CUDA_CHECK(cudaMemsetAsync(col->get(), 0xFF, col->bytes(), s));
    lab06::conv_im2col(x, w, col->get(), y, p, s);
  };
}

#ifdef CONVLAB_HAVE_CUDNN
}  // namespace

namespace lab06_tests {

// The student's cuDNN path, set up and torn down around each correctness run; the output
// size cuDNN reports must be the contract's.
void cudnn_path(const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s) {
  lab06::CudnnState* st = lab06::cudnn_create(p, x, w, y);
  struct Free {
    lab06::CudnnState* st;
    ~Free() { lab06::cudnn_destroy(st); }
  } free_it{st};
  const lab06::CudnnInfo info = lab06::cudnn_info(st);
  if (info.out_h != p.out_h() || info.out_w != p.out_w())
    throw std::runtime_error("cudnn_info() reports an output of " + std::to_string(info.out_h) + " x " +
                             std::to_string(info.out_w) + ", the layer's is " + std::to_string(p.out_h()) + " x " +
                             std::to_string(p.out_w()) + ": take it from cudnnGetConvolution2dForwardOutputDim");
  std::printf("cuDNN chose %s, workspace %zu bytes\n", info.algorithm.c_str(), info.workspace_bytes);
  // cudnnFindConvolutionForwardAlgorithmEx in cudnn_create() writes y while it times the algorithms:
  // y is poisoned again, so that the output checked is cudnn_forward's.
  CONVLAB_CUDA_CHECK(cudaMemsetAsync(y, 0xFF, p.output_elements() * sizeof(float), s));
  lab06::cudnn_forward(st, x, w, y, s);
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace lab06_tests

namespace {
#endif

// --- the column matrix and the GEMM on their own: a wrong layer is then named where it is ------

void check_im2col(const Case& cs) {
  const ConvProblem p = cs.problem();
  const std::vector<float> x = random_floats(p.input_elements(), current_seed());
  const int image = p.n - 1;  // the last image: its offset in x matters
  const Golden g = lab06::im2col_golden(x, image, p);
  GuardedBuffer dx(x.size(), kGuard), dcol(g.value.size(), kGuard);
  dx.upload(x);
  dcol.poison();
  Stream st;
  remote::clear_calls();
  try {
    lab06::im2col(dx.data(), image, dcol.data(), p, st.s);
    CONVLAB_CUDA_CHECK(cudaStreamSynchronize(st.s));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "im2col failed: " << e.what();
    return;
  }
  if (const std::string why = device_work_problems(); !why.empty()) {
    ADD_FAILURE() << "im2col of image " << image << ", layer " << shape_text(p) << ": " << why;
    return;
  }
  const std::vector<float> got = dcol.download();
  const int cols = int(lab06::im2col_cols(p)), rows = int(lab06::im2col_rows(p)), Q = p.out_w();
  const Comparison c = compare(got, g, Grid{cols, rows, 0});
  const std::string guards = dcol.check_guards();
  if (c.ok() && guards.empty()) return;
  const auto where = [&](std::size_t i) {
    const int row = int(i / cols), col = int(i % cols);
    std::ostringstream o;
    o << "column matrix col[" << row << "][" << col << "] (tap c=" << row / (p.r * p.s) << ", r=" << row / p.s % p.r
      << ", s=" << row % p.s << " of output p=" << col / Q << ", q=" << col % Q << ")";
    return o.str();
  };
  std::string hint;
  if (!c.first.empty()) {  // stored transposed: element (row, col) at col * rows + row
    bool transposed = true;
    for (const auto& m : c.first) {
      const std::size_t row = m.index / cols, col = m.index % cols;
      (void)row;
      (void)col;
      const std::size_t t = m.index;  // what sits here if the writer swapped row and column
      const std::size_t tr = t % rows, tc = t / rows;
      if (tc >= std::size_t(cols) || got[t] != float(g.value[tr * cols + tc])) transposed = false;
    }
    if (transposed)
      hint = "hint: the column matrix is stored transposed (row and column swapped): row (c R + r) S + s is the tap, "
             "column p Q + q the output, and the element goes to col[row * P Q + column]\n";
  }
  ADD_FAILURE() << "im2col of image " << image << ", layer " << shape_text(p) << ": the column matrix ("
                << rows << " x " << cols << ") is wrong\n"
                << report(c, where, got) << (guards.empty() ? "" : guards + "\n") << hint;
}

struct GemmCase {
  int m, n, kd;
  std::string name() const {
    return "m" + std::to_string(m) + "_n" + std::to_string(n) + "_k" + std::to_string(kd);
  }
};

// Checks gemm() on one size; true if it is right.
bool check_gemm(const GemmCase& gc) {
  const std::vector<float> a = random_floats(std::size_t(gc.m) * gc.kd, current_seed());
  const std::vector<float> b = random_floats(std::size_t(gc.kd) * gc.n, current_seed() ^ kFilterStream);
  const Golden g = lab06::gemm_golden(a, b, gc.m, gc.n, gc.kd);
  GuardedBuffer da(a.size(), kGuard), db(b.size(), kGuard), dc(g.value.size(), kGuard);
  da.upload(a);
  db.upload(b);
  dc.poison();
  Stream st;
  remote::clear_calls();
  try {
    lab06::gemm(da.data(), db.data(), dc.data(), gc.m, gc.n, gc.kd, st.s);
    CONVLAB_CUDA_CHECK(cudaStreamSynchronize(st.s));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "gemm failed: " << e.what();
    return false;
  }
  if (const std::string why = device_work_problems(); !why.empty()) {
    ADD_FAILURE() << "gemm " << gc.m << " x " << gc.n << " x " << gc.kd << ": " << why;
    return false;
  }
  const std::vector<float> got = dc.download();
  const Comparison c = compare(got, g, Grid{gc.n, gc.m, 0});
  const std::string guards = dc.check_guards();
  if (c.ok() && guards.empty()) return true;
  const auto where = [&](std::size_t i) {
    return "C[" + std::to_string(i / gc.n) + "][" + std::to_string(i % gc.n) + "]";
  };
  ADD_FAILURE() << "gemm " << gc.m << " x " << gc.n << " x " << gc.kd << " (C = A B, A " << gc.m << " x " << gc.kd
                << ", B " << gc.kd << " x " << gc.n << "):\n"
                << report(c, where, got) << (guards.empty() ? "" : guards + "\n")
                << (guards.empty() ? ""
                                   : "hint: the GEMM stored outside C: guard the stores of a tile that hangs over the "
                                     "last row or column (row < m && column < n)\n");
  return false;
}

// --- the cases ------------------------------------------------------------------------------------

// Small enough for the CPU backend. Comments: which kernel of the reference's conv_direct()
// they reach (small: few taps, R, S <= 8, stride <= 3; naive otherwise).
const Case kCases[] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, kValid},          // one of everything
    {1, 3, 7, 5, 1, 3, 3, 1, 1, kSame},           // RGB, one filter (the lab report's layer)
    {2, 3, 9, 11, 6, 2, 2, 1, 1, kSame},          // even filter: SAME's odd total padding
    {1, 6, 17, 13, 6, 6, 6, 1, 1, kValid},        // the blog's layer, shrunk
    {1, 6, 20, 31, 3, 5, 5, 2, 2, kSame},         // stride 2
    {2, 1, 33, 7, 3, 7, 7, 3, 3, kPad, 3, 2},     // stride 3, unequal pads
    {1, 3, 40, 1, 1, 3, 1, 1, 1, kSame},          // one column wide
    {1, 6, 12, 140, 6, 6, 6, 1, 1, kValid},       // wider than one 128-column tile
    {1, 64, 10, 7, 64, 3, 3, 2, 2, kPad, 1, 0},   // naive: C = K = 64, stride 2, unequal pads
    {2, 64, 6, 9, 6, 3, 3, 1, 1, kPad, 1, 1},     // C = 64, K = 6
    {1, 6, 15, 12, 3, 9, 9, 2, 2, kPad, 4, 2},    // naive: 9 x 9 filter, stride 2
    {1, 3, 16, 19, 6, 3, 2, 4, 3, kValid},        // naive: stride 4 x 3, 3 x 2 filter
    {3, 3, 11, 13, 64, 4, 4, 1, 2, kSame},        // K = 64, stride 1 x 2, even filter
    {1, 64, 5, 5, 64, 1, 1, 1, 1, kValid},        // 1 x 1 filter: a plain matrix product
    {2, 64, 20, 23, 64, 3, 3, 1, 1, kPad, 1, 1},  // naive: a ResNet-like layer, several 128 x 128 GEMM tiles
    {1, 6, 70, 300, 6, 6, 6, 1, 1, kValid},       // the blog's layer on a 70 x 300 image
    {2, 5, 9, 13, 100, 3, 3, 1, 1, kSame},        // K = 100: more than one 64- or 128-row GEMM tile
    // Past one tile of the reference in each GEMM dimension (M = K filters, N = the outputs, C R S
    // taps): implicit GEMM tiles of 64 x 256 (K <= 64) or 128 x 128 with a gather table of 512 taps,
    // im2col's GEMM tiles of 64 x 64 and BK = 16; the direct strip kernel's 8 filters and 128 columns
    // per block. (More rows than im2col's grid.y carries: kIm2colCases, and kGpuCases for every path.)
    {1, 130, 9, 11, 130, 3, 3, 1, 1, kSame},       // K = 130: two 128-row tiles (three of 64); C R S = 1170: three tables
    {2, 20, 14, 15, 150, 3, 3, 1, 1, kPad, 1, 1},  // K = 150, N P Q = 420: 2 x 4 tiles of 128 x 128
    {1, 3, 19, 133, 20, 5, 5, 1, 1, kSame},        // strip kernel: 20 filters in 3 groups of 8, 133 columns in 2 tiles
    // The tensor-core mma kernel's 4-byte copies (W = 70 and C = 10 not multiples of 4 and 8): C in
    // chunks of 8 (the second partial), K = 70 in two tiles of 64.
    {2, 10, 13, 70, 70, 3, 3, 1, 1, kSame},
};
// GPU only: real layers, larger than any tile and (the first) than the L2 cache.
const Case kGpuCases[] = {
    {1, 6, 768, 512, 6, 6, 6, 1, 1, kValid},      // the blog's layer
    {4, 64, 56, 56, 64, 3, 3, 1, 1, kPad, 1, 1},  // a ResNet layer
    {1, 3, 513, 257, 6, 7, 7, 2, 2, kSame},
    {2, 64, 67, 130, 64, 1, 1, 1, 1, kValid},
    {1, 3, 512, 512, 1, 3, 3, 3, 3, kSame},       // the lab report's largest
    {1, 3, 1000, 700, 1, 5, 5, 1, 1, kSame},      // one filter on an image large enough for the strip kernel
    {2, 128, 28, 28, 130, 3, 3, 1, 1, kPad, 1, 1},  // K = 130: two 128-row tiles, the second nearly empty
    // The tensor-core wgmma kernel (compute capability 9.0; stride 1, 3 x 3, C <= 64, W % 4 == 0):
    // K = 72 in two tiles of 64 (the second 8 filters), 340 pixels an image in 6 units of 64 (the
    // last 20); and 400 units of 612 pixels, 4 a block on 132 SMs, so that a block's units cross
    // from one image into the next, C = 12 in chunks of 8 (the second partial), no padding.
    {3, 64, 17, 20, 72, 3, 3, 1, 1, kPad, 1, 1},
    {40, 12, 20, 36, 40, 3, 3, 1, 1, kValid},
    // C R S = 73728 > 65535 column-matrix rows (im2col's grid.y) and one output tile, its taps in up
    // to 2 x SMs slices. On the CPU backend only the im2col graders take it: its tens of thousands of
    // blocks, and the slices' thousands of barriers each, cost 10 to 20 s per path there.
    {1, 8192, 3, 3, 2, 3, 3, 1, 1, kSame},
};
const GemmCase kGemmCases[] = {{1, 1, 1}, {6, 54, 27}, {64, 64, 64}, {65, 63, 17}, {3, 1000, 75}, {130, 67, 300}};
const GemmCase kGpuGemmCases[] = {{64, 3136, 576}, {1000, 1001, 999}};
const Case kIm2colCases[] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, kValid}, {2, 3, 7, 5, 1, 3, 3, 1, 1, kSame},   {1, 6, 20, 31, 3, 5, 5, 2, 2, kSame},
    {2, 1, 33, 7, 3, 7, 7, 3, 3, kPad, 3, 2}, {1, 3, 16, 19, 6, 3, 2, 4, 3, kValid},
    {2, 8192, 3, 3, 2, 3, 3, 1, 1, kSame},  // 73728 rows: more than a grid's y can carry (65535)
};
// Speed: the blog's layer at batch 1 and 16 (direct), the ResNet layer (implicit GEMM).
const Case kSpeedDirect[] = {{1, 6, 768, 512, 6, 6, 6, 1, 1, kValid}, {16, 6, 768, 512, 6, 6, 6, 1, 1, kValid}};
const Case kSpeedImplicit[] = {{32, 64, 56, 56, 64, 3, 3, 1, 1, kPad, 1, 1}, {8, 128, 28, 28, 128, 3, 3, 1, 1, kPad, 1, 1}};
// Technique: one layer per slot, of the kind its technique is for. direct: few channels and
// filters at stride 1, the layers of seed article 004 (the blog's layer, shrunk). The GEMM paths: a
// GEMM of M = K = 32, N = N P Q = 1152 and C R S = 144 terms, several tiles of any design, cheap on
// the CPU backend; C R S / K = 4.5: writing a column matrix adds 4.5 stores per output.
const Case kTechniqueDirect = {1, 6, 36, 140, 6, 6, 6, 1, 1, kValid};
const Case kTechniqueGemmLayer = {2, 16, 24, 24, 32, 3, 3, 1, 1, kPad, 1, 1};
// The same taps and filters at stride 2, and a stride-1 layer with a 2 x 2 filter: the tensor-core
// slot's technique test judges these and kTechniqueChannels128 together, each by its own C R S and
// K. A design may take another kernel where the stride is not 1, the filter not 3 x 3 or the
// channels many, as the reference does (three kernels: the first layer takes its wgmma kernel on
// compute capability 9.0, its mma kernel elsewhere); a kernel that no judged layer launches fails
// the test when a correctness or speed test launched it (convlab grade runs them in one process).
const Case kTechniqueGemmLayerStride2 = {2, 16, 24, 24, 32, 3, 3, 2, 2, kPad, 1, 1};
const Case kTechniqueGemmLayerFilter2x2 = {2, 64, 24, 24, 32, 2, 2, 1, 1, kValid};
// And the kind of the speed graders' N8 C128 28x28 K128 layer, small: past 64 channels, where the
// reference leaves its wgmma kernel (compute capability 9.0) for its mma kernel.
const Case kTechniqueChannels128 = {1, 128, 8, 8, 128, 3, 3, 1, 1, kPad, 1, 1};
const GemmCase kTechniqueGemm = {100, 300, 200};

void register_lab06(Registry& reg) {
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  std::vector<GemmCase> gemms(std::begin(kGemmCases), std::end(kGemmCases));
  if (!kCpuBackend) {
    cases.insert(cases.end(), std::begin(kGpuCases), std::end(kGpuCases));
    gemms.insert(gemms.end(), std::begin(kGpuGemmCases), std::end(kGpuGemmCases));
  }
  // The direct slot's technique is asked of layers with few channels and filters only, and which
  // kernel a layer gets may depend on the GPU (the reference sends a single filter over an image
  // too small to fill the SMs to one thread per output): its other launches are not held to it.
  const auto direct_outside = [](const Case& c) {
    return [c] {
      current_record().outside_technique = true;
      check_conv(direct, c);
    };
  };
  for (const Case& c : cases) {
    reg.gpu("correctness", "direct", c.name(), direct_outside(c));
    reg.gpu("correctness", "im2col_gemm", c.name(), [c] { check_conv(im2col_gemm(true), c); });
    reg.gpu("correctness", "implicit_gemm", c.name(), [c] { check_conv(implicit_gemm, c); });
    reg.gpu("correctness", "tensor_core", c.name(), [c] { check_conv(tensor_core, c, Precision::tf32); });
#ifdef CONVLAB_HAVE_CUDNN
    reg.gpu("correctness", "cudnn", c.name(), [c] { check_conv(cudnn_path, c); });
#endif
  }
#ifndef CONVLAB_HAVE_CUDNN
  reg.gpu("correctness", "cudnn", "not_built", [] {
    GTEST_SKIP() << "cuDNN was not found when this build was configured (the CPU backend never has it): "
                    "conv_cudnn.cu is compiled and graded only on a machine with an NVIDIA GPU and cuDNN";
  });
#endif
  for (const Case& c : kIm2colCases) reg.gpu("correctness", "im2col", c.name(), [c] { check_im2col(c); });
  for (const GemmCase& g : gemms) reg.gpu("correctness", "gemm", g.name(), [g] { check_gemm(g); });

  const LabSpec& spec = reg.spec();
  for (const Case& c : kSpeedDirect)
    reg.gpu("speedup", "direct", c.name(), [c, &spec] {
      current_record().outside_technique = true;  // as its correctness tests (above)
      check_layer_speed(direct, c, spec.grader("speedup.direct"));
    });
  for (const Case& c : kSpeedImplicit)
    reg.gpu("speedup", "implicit_gemm", c.name(),
            [c, &spec] { check_layer_speed(implicit_gemm, c, spec.grader("speedup.implicit_gemm")); });
  for (const Case& c : kSpeedImplicit)
    reg.gpu("speedup", "tensor_core", c.name(), [c, &spec] {
      check_layer_speed(tensor_core, c, spec.grader("speedup.tensor_core"), Precision::tf32, Against::cudnn_tf32);
    });
  for (const Case& c : kSpeedImplicit)
    reg.gpu("speedup", "im2col_gemm", c.name(),
            [c, &spec] { check_layer_speed(im2col_gemm(false), c, spec.grader("speedup.im2col_gemm")); });

  // --- technique: what each slot teaches (technique_lab06.hpp has the rules and their bounds) -------
  namespace tech = lab06::technique;
  {
    const ConvProblem p = kTechniqueDirect.problem();
    const double taps = double(lab06::im2col_rows(p));
    reg.gpu("technique", "direct", kTechniqueDirect.name(), [taps, p] {
      check_conv_technique("direct", direct, kTechniqueDirect,
                           "an input tile in shared memory for layers with few channels and filters, one channel at a "
                           "time, a __syncthreads() before it is read, and several outputs per thread (filters x "
                           "columns), the filters from shared or constant memory",
                           all_of({tech::tiled(tech::input_tile_spec(taps, p.k)), outputs_per_thread(4)}));
    });
  }
  {
    const ConvProblem p = kTechniqueGemmLayer.problem();
    const double crs = double(lab06::im2col_rows(p));
    reg.gpu("technique", "im2col_gemm", kTechniqueGemmLayer.name(), [crs] {
      check_im2col_gemm_technique(
          kTechniqueGemmLayer,
          "im2col into d_col (the column matrix of C R S x P Q floats, as documented), then a tiled GEMM that "
          "reads it: tiles of both operands staged in shared memory, a __syncthreads() before they are read",
          all_of({tech::kernels_at_least(2, "im2col + GEMM takes a kernel that writes d_col and a GEMM kernel that "
                                            "reads it"),
                  tech::tiled(tech::gemm_tiles_spec(crs))}));
    });
    reg.gpu("technique", "implicit_gemm", kTechniqueGemmLayer.name(), [crs, p] {
      check_conv_technique("implicit_gemm", implicit_gemm, kTechniqueGemmLayer,
                           "the GEMM of im2col + GEMM with each tile of the column matrix gathered from x into shared "
                           "memory (no column matrix in device memory, no cudaMalloc), a __syncthreads() before the "
                           "tiles are read, and several outputs per thread (a register tile)",
                           all_of({tech::no_column_matrix(crs, p.k), tech::tiled(tech::gemm_tiles_spec(crs)),
                                   outputs_per_thread(4)}));
    });
  }
  reg.gpu("technique", "tensor_core", kTechniqueGemmLayer.name(), [] {
    check_conv_technique(
        "tensor_core", tensor_core,
        std::vector<Case>{kTechniqueGemmLayer, kTechniqueGemmLayerStride2, kTechniqueGemmLayerFilter2x2,
                          kTechniqueChannels128},
        "the implicit GEMM's products on the tensor cores (wmma::mma_sync with TF32 fragments, mma.sync or wgmma), "
        "every product of each output's dot product, and no column matrix in device memory (no cudaMalloc)",
        [](const ConvProblem& p) {
          const double crs = double(lab06::im2col_rows(p));
          return all_of({tech::no_column_matrix(crs, p.k), tech::tensor_cores(crs)});
        },
        Precision::tf32);
  });
  reg.gpu("technique", "gemm", kTechniqueGemm.name(), [] {
    if (!check_gemm(kTechniqueGemm)) {
      ADD_FAILURE() << "gemm" << kFixCorrectnessFirst;
      return;
    }
    expect_technique("gemm",
                     "a tiled SGEMM: per step of the dot product, a tile of A and a tile of B staged in shared "
                     "memory, with a __syncthreads() before they are read",
                     tech::tiled(tech::gemm_tiles_spec(kTechniqueGemm.kd)),
                     double(kTechniqueGemm.m) * kTechniqueGemm.n, double(kTechniqueGemm.kd));
  });
#ifdef CONVLAB_HAVE_CUDNN
  reg.gpu("technique", "cudnn", kTechniqueGemmLayer.name(), [] {
    check_cudnn_technique(kTechniqueGemmLayer,
                          "the layer computed by cudnnConvolutionForward in cudnn_forward (cuDNN's kernels), with no "
                          "kernel of your own and no copy into y");
  });
#else
  reg.gpu("technique", "cudnn", "not_built", [] {
    GTEST_SKIP() << "cuDNN was not found when this build was configured (the CPU backend never has it): "
                    "conv_cudnn.cu is compiled and graded only on a machine with an NVIDIA GPU and cuDNN";
  });
#endif

  // --- CPU: the shape function, the launchers refusing bad layers, the technique rules on launches
  // as the runner records them, the golden model worked by hand (test_lab06_rules.cpp) -------------
  register_lab06_rules(reg);
}

}  // namespace

CONVLAB_LAB_MAIN(register_lab06)
