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

using namespace convlab;
using lab06::ConvProblem;
using lab06::Padding;
using lab06::Precision;
using lab06::held_to;
using lab06::tf32_scale;

// No guard zones under AddressSanitizer: it then reports the first access out of bounds itself.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kGuard = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t kGuard = 0;
#else
constexpr std::size_t kGuard = 4096;
#endif
#else
constexpr std::size_t kGuard = 4096;
#endif

constexpr std::uint64_t kFilterStream = 0xF117E5ull;

// A layer as the tests name it: lab06.correctness.direct.n2_c3_9x11_k6_2x2_st1x1_same
struct Case {
  int n, c, h, w, k, r, s, stride_h, stride_w;
  Padding mode;
  int pad_h = 0, pad_w = 0;
  ConvProblem problem() const {
    return lab06::make_problem(n, c, h, w, k, r, s, stride_h, stride_w, mode, pad_h, pad_w);
  }
  std::string name() const {
    std::ostringstream o;
    o << "n" << n << "_c" << c << "_" << h << "x" << w << "_k" << k << "_" << r << "x" << s << "_st" << stride_h
      << "x" << stride_w << "_";
    if (mode == Padding::valid) o << "valid";
    else if (mode == Padding::same) o << "same";
    else o << "pad" << pad_h << "x" << pad_w;
    return o.str();
  }
};

using ConvFn = std::function<void(const float*, const float*, float*, const ConvProblem&, cudaStream_t)>;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

std::string shape_text(const ConvProblem& p) {
  std::ostringstream o;
  o << "N " << p.n << ", C " << p.c << ", " << p.h << " x " << p.w << ", K " << p.k << " filters of " << p.r << " x "
    << p.s << ", stride " << p.stride_h << " x " << p.stride_w << ", pad " << p.pad_h << " x " << p.pad_w
    << " -> output " << p.out_h() << " x " << p.out_w();
  return o.str();
}

// One layer on the host and the device.
// Where a layer's input x is made: on the host, with the golden model (a correctness case), or on
// the device from the seed (a speed test's layer, checked against the baseline on the device: no
// golden model of a layer of gigaflops on the host, issue 29). The filters are made on the host.
enum class Inputs { host_with_golden, device };

// A layer's host side: its inputs, filters and golden model.
struct HostLayer {
  std::vector<float> x, w;
  Golden g;
};

struct Layer {
  ConvProblem p;
  std::vector<float> x, w;
  Golden g;
  GuardedBuffer dx, dw, dy;
  Stream stream;
  Layer(const ConvProblem& problem, std::uint64_t seed, Inputs inputs = Inputs::host_with_golden)
      : p(problem),
        x(inputs == Inputs::device ? std::vector<float>{} : random_floats(p.input_elements(), seed)),
        w(random_floats(p.filter_elements(), seed ^ kFilterStream)),
        g(inputs == Inputs::device ? Golden{} : lab06::conv_golden(x, w, p)),
        dx(p.input_elements(), kGuard), dw(w.size(), kGuard), dy(p.output_elements(), kGuard) {
    if (inputs == Inputs::device) {
      dx.poison();
      remote::random_fill(dx.data(), p.input_elements(), seed);
    } else {
      dx.upload(x);
    }
    dw.upload(w);
  }
  // A correctness case's layer from inputs and a golden model made already (shared_case_layer).
  Layer(const ConvProblem& problem, const HostLayer& host)
      : p(problem), x(host.x), w(host.w), g(host.g), dx(p.input_elements(), kGuard), dw(w.size(), kGuard),
        dy(p.output_elements(), kGuard) {
    dx.upload(x);
    dw.upload(w);
  }
};

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

// Empty if `buffer` still holds `host`; else what changed, for a launcher that wrote an input.
std::string changed(const GuardedBuffer& buffer, const std::vector<float>& host, const char* name) {
  const std::vector<float> now = buffer.download();
  std::size_t n = 0;
  for (std::size_t i = 0; i < now.size(); ++i) n += std::memcmp(&now[i], &host[i], sizeof(float)) != 0;
  if (n == 0) return {};
  return "the launcher changed its input (" + std::to_string(n) + " of " + std::to_string(now.size()) +
         " elements of " + name + "): the inputs are const, and the output must be computed from them as given";
}

bool run_and_compare(const ConvFn& fn, Layer& L, const std::string& when, Precision precision = Precision::fp32) {
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

// --- speed ----------------------------------------------------------------------------------------

// The tolerance of the check of every timed output against the baseline's output for the same
// fresh input. The speed grader refills x with uniform floats in [-1, 1) before each pair, so
// |x| <= 1, and output y[n][k][p][q] is a float32 dot product of at most m = C R S terms x w_k (the
// padding adds exact zeros) with sum |x w| <= sum_{c,r,s} |w[k][c][r][s]| =: W_k. Computed in any
// order (split into slices and added with atomics included), each kernel's result lies within
// gamma_{m+1} W_k of the exact value, the bound the correctness graders allow (tolerance_for()), so
// the student's and the baseline's differ by at most twice that. The check takes one tolerance for
// all outputs: the bound of the filter with the largest W_k. It stays far below what a result kept
// from another input is off by: the difference of two outputs of independent inputs has a standard
// deviation of sqrt(2/3 sum w^2) >= sqrt(2/3) W_k / sqrt(m), at least 170 times 2 gamma_{m+1} W_k on
// the timed layers (m = 216, 576 and 1152).
// TF32 (the tensor-core slot): the bound of a TF32 result is tf32_scale(m) times FP32's; against
// the naive baseline the check allows the TF32 and the FP32 bounds, against cuDNN with TF32 two TF32
// bounds, about 2^-8 W_k: still 6 times under that spread on the timed layers (m = 576, 1152).
double timed_tolerance(const Layer& L, Precision candidate, Precision baseline = Precision::fp32) {
  const std::size_t taps = lab06::im2col_rows(L.p);
  double largest = 0;
  for (int k = 0; k < L.p.k; ++k) {
    double sum = 0;
    for (std::size_t i = 0; i < taps; ++i) sum += std::fabs(double(L.w[std::size_t(k) * taps + i]));
    largest = std::max(largest, sum);
  }
  const double bound = tolerance_for(largest, int(taps));
  const auto scale = [&](Precision p) { return p == Precision::tf32 ? tf32_scale(int(taps)) : 1.0; };
  return bound * (scale(candidate) + scale(baseline));
}

// What a speed grader times the student's path against: the grader-owned naive direct kernel, or
// cuDNN with TF32 tensor cores allowed (the tensor-core slot: its fastest algorithm for the layer,
// chosen once before the timing; both results held to the TF32 bound).
enum class Against { naive, cudnn_tf32 };

void check_layer_speed(const ConvFn& candidate, const Case& cs, const GraderSpec& grader,
                       Precision precision = Precision::fp32, Against against = Against::naive) {
  Layer L(cs.problem(), current_seed(), Inputs::device);
  // A launcher that fails, or computes elsewhere than on the device, is not timed. Whether its
  // outputs are right is checked against the baseline's after every timed run (the first round's
  // first run included): a wrong kernel earns no speed-up.
  L.dy.poison();
  if (const std::string err = run_once(candidate, L, L.dy.data()); !err.empty()) {
    ADD_FAILURE() << "speed not measured: " << err << "\nlayer: " << shape_text(L.p);
    return;
  }
  const ConvProblem p = L.p;
  DeviceBuffer<float> base_out(p.output_elements());
  SpeedPolicy policy;
  policy.threshold = grader.threshold;
  SpeedSetup setup;
  setup.baseline = [&](cudaStream_t s) { lab06::baseline::conv_naive(L.dx.data(), L.dw.data(), base_out.get(), p, s); };
  std::string baseline_name = "the naive direct baseline (one thread per output)";
  double tolerance = timed_tolerance(L, precision);
#ifdef CONVLAB_HAVE_CUDNN
  struct CudnnBaseline {
    lab06::baseline::CudnnTf32* state = nullptr;
    ~CudnnBaseline() {
      if (state) lab06::baseline::cudnn_tf32_destroy(state);
    }
  } cudnn;
  if (against == Against::cudnn_tf32) {
    try {
      cudnn.state = lab06::baseline::cudnn_tf32_create(p, L.dx.data(), L.dw.data(), base_out.get());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "speed not measured: the baseline, cuDNN with TF32 allowed, could not be set up on this GPU "
                       "(the grader's fault, not yours: tell your instructor): "
                    << e.what() << "\nlayer: " << shape_text(L.p);
      return;
    }
    setup.baseline = [&](cudaStream_t s) {
      lab06::baseline::cudnn_tf32_forward(cudnn.state, L.dx.data(), L.dw.data(), base_out.get(), s);
    };
    baseline_name = "cuDNN with TF32 tensor cores allowed (" + lab06::baseline::cudnn_tf32_algorithm(cudnn.state) + ")";
    tolerance = timed_tolerance(L, precision, Precision::tf32);
  }
#else
  if (against == Against::cudnn_tf32) {
    GTEST_SKIP() << "this speed grader times the tensor-core path against cuDNN, which was not found when this build "
                    "was configured";
  }
#endif
  setup.candidate = [&](cudaStream_t s) { candidate(L.dx.data(), L.dw.data(), L.dy.data(), p, s); };
  // The output is poisoned before every timed run, outside the timed region.
  setup.prepare = [&](cudaStream_t s) {
    CONVLAB_CUDA_CHECK(cudaMemsetAsync(L.dy.data(), 0xFF, p.output_elements() * sizeof(float), s));
  };
  setup.stream = L.stream.s;
  // A fresh input x before every pair (the filters stay), and every timed output checked against the
  // baseline's for that input: a result kept from an earlier call, or work skipped, fails.
  setup.refresh.address = reinterpret_cast<std::uintptr_t>(L.dx.data());
  setup.refresh.count = p.input_elements();
  setup.check = wire::TimedCheck{reinterpret_cast<std::uintptr_t>(L.dy.data()),
                                 reinterpret_cast<std::uintptr_t>(base_out.get()), p.output_elements(),
                                 tolerance};
  // The least DRAM traffic of the layer: x and w read once, y written once.
  setup.ideal_bytes = 4.0 * double(p.input_elements() + p.filter_elements() + p.output_elements());
  // CONVLAB_SPEED_REPEAT=N makes N independent decisions (the worst counts).
  const SpeedVerdict v =
      convlab::check_speed(setup, policy, cs.name() + " vs " + baseline_name);
  record_speed(v, grader.threshold);
  EXPECT_TRUE(v.passed) << v.message;
  // Nothing written outside the output in any timed run.
  if (const std::string g = L.dy.check_guards(); !g.empty()) ADD_FAILURE() << "no speed-up is awarded: in the timed runs " << g;
}

// --- technique ------------------------------------------------------------------------------------

constexpr const char* kFixCorrectnessFirst = ": the technique is checked on a correct output; fix correctness first";

// A conv path's technique: it runs on the layer (its output must be right), then `rule` judges what
// the runner saw (convlab/technique.hpp).
void check_conv_technique(const std::string& slot, const ConvFn& fn, const Case& cs, const std::string& asks,
                          const TechniqueRule& rule, Precision precision = Precision::fp32) {
  Layer L(cs.problem(), current_seed());
  if (!run_and_compare(fn, L, "", precision)) {
    ADD_FAILURE() << slot << kFixCorrectnessFirst;
    return;
  }
  expect_technique(slot, asks, rule, double(L.p.output_elements()), double(lab06::im2col_rows(L.p)));
}

// The same on several layers of one C R S and K (the rules' per-output amounts stay those of one
// layer), judged together: a slot whose design takes another kernel for another kind of layer (the
// tensor-core reference's gather kernel where the stride is not 1) has each kernel judged, where
// judging one layer would leave the others' kernels unjudged (technique.hpp, unjudged_kernels).
void check_conv_technique(const std::string& slot, const ConvFn& fn, const std::vector<Case>& cases,
                          const std::string& asks, const TechniqueRule& rule, Precision precision) {
  double outputs = 0;
  std::vector<remote::CallRecord> calls;  // each run clears remote::calls(): kept layer by layer
  for (const Case& cs : cases) {
    Layer L(cs.problem(), current_seed());
    if (!run_and_compare(fn, L, "", precision)) {
      ADD_FAILURE() << slot << kFixCorrectnessFirst << " (layer " << shape_text(L.p) << ")";
      return;
    }
    outputs += double(L.p.output_elements());
    calls.insert(calls.end(), remote::calls().begin(), remote::calls().end());
  }
  const ConvProblem p = cases.front().problem();
  expect_technique(slot, asks, rule, outputs, double(lab06::im2col_rows(p)), calls);
}

// What d_col holds after conv_im2col(): empty if it is the column matrix of one of the images (which
// one stays there depends on the design: the reference's is the last image's), else what it holds.
// Read on every backend: it needs no record of the kernels.
std::string column_matrix_seen(const Layer& L, const GuardedBuffer& col) {
  const ConvProblem& p = L.p;
  if (std::string guards = col.check_guards(); !guards.empty())
    return "d_col, a buffer of im2col_workspace_floats() = " + std::to_string(col.size()) + " floats: " + guards;
  const std::vector<float> got = col.download();
  const int rows = int(lab06::im2col_rows(p)), cols = int(lab06::im2col_cols(p)), Q = p.out_w();
  std::optional<Comparison> closest;
  int closest_image = 0;
  for (int image = 0; image < p.n; ++image) {
    const Comparison c = compare(got, lab06::im2col_golden(L.x, image, p), Grid{cols, rows, 0}, 1);
    if (c.ok()) return {};
    if (c.unwritten == c.checked)
      return "d_col was never written (it still holds the NaN it was filled with): the layer was not computed "
             "through the column matrix";
    if (!closest || c.wrong < closest->wrong) closest = c, closest_image = image;
  }
  const Mismatch& m = closest->first.front();
  const int row = int(m.index / cols), column = int(m.index % cols);
  std::ostringstream o;
  o << "d_col holds the column matrix of no image: " << closest->wrong << " of its " << rows << " x " << cols
    << " elements differ from image " << closest_image << "'s (the closest), the first col[" << row << "][" << column
    << "] (tap c=" << row / (p.r * p.s) << ", r=" << row / p.s % p.r << ", s=" << row % p.s << " of output p="
    << column / Q << ", q=" << column % Q << "): ";
  if (m.unwritten) o << "never written";
  else o << "got " << m.got;
  o << ", expected " << m.expected;
  return o.str();
}

// im2col + GEMM's technique: the grader's d_col (im2col_workspace_floats(), NaN-filled before the
// call) must hold an image's column matrix after it, as the contract documents, and `rule` must hold.
void check_im2col_gemm_technique(const Case& cs, const std::string& asks, const TechniqueRule& rule) {
  Layer L(cs.problem(), current_seed());
  GuardedBuffer col(lab06::im2col_workspace_floats(L.p), kGuard);
  col.poison();
  const ConvFn fn = [&col](const float* x, const float* w, float* y, const ConvProblem& p, cudaStream_t s) {
    lab06::conv_im2col(x, w, col.data(), y, p, s);
  };
  if (!run_and_compare(fn, L, "")) {
    ADD_FAILURE() << "im2col_gemm" << kFixCorrectnessFirst;
    return;
  }
  const double outputs = double(L.p.output_elements()), taps = double(lab06::im2col_rows(L.p));
  std::string found = column_matrix_seen(L, col);
  if (found.empty()) {
    expect_technique("im2col_gemm", asks, rule, outputs, taps);
    return;
  }
  const TechniqueView v(remote::calls(), outputs, taps);
  if (!v.blind()) {
    std::printf("im2col_gemm: %s\n", v.traffic().c_str());
    if (const std::string more = all_of({rule, on_given_stream()})(v); !more.empty()) found += "; " + more;
  }
  ADD_FAILURE() << "im2col_gemm: " << found << "; the lab asks for " << asks;
}

#ifdef CONVLAB_HAVE_CUDNN
// The cuDNN path's technique: cudnn_forward's output comes from cuDNN (see technique::from_cudnn()).
void check_cudnn_technique(const Case& cs, const std::string& asks) {
  Layer L(cs.problem(), current_seed());
  if (!run_and_compare(cudnn_path, L, "")) {
    ADD_FAILURE() << "cudnn" << kFixCorrectnessFirst;
    return;
  }
  for (const auto& c : remote::calls())
    if (!c.evidence.recorded)
      GTEST_SKIP() << "technique not checked: this runner records no launches (" << remote::options().path << ")";
  const int y_arg = 3;  // cudnn_forward(state, d_x, d_w, d_y, stream): d_y is its fourth pointer
  if (const std::string found = lab06::technique::from_cudnn(remote::calls(), y_arg); !found.empty())
    ADD_FAILURE() << "cudnn: " << found << "; the lab asks for " << asks;
}
#endif

// --- the cases ------------------------------------------------------------------------------------

constexpr Padding kValid = Padding::valid, kSame = Padding::same, kPad = Padding::explicit_pads;

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
    // The tensor-core window kernel (stride 1, 3 x 3): 70 columns in two tiles of 64, 13 rows in
    // tiles of 2 or 4, C = 10 in chunks of 8 (the second partial), K = 70 in two tiles of 64.
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
// The same taps and filters at stride 2: the tensor-core slot's technique test judges both (a
// design may take another kernel where the stride is not 1, as the reference does).
const Case kTechniqueGemmLayerStride2 = {2, 16, 24, 24, 32, 3, 3, 2, 2, kPad, 1, 1};
const GemmCase kTechniqueGemm = {100, 300, 200};

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
  {
    const ConvProblem p = kTechniqueGemmLayer.problem();
    const double crs = double(lab06::im2col_rows(p));
    reg.gpu("technique", "tensor_core", kTechniqueGemmLayer.name(), [crs, p] {
      check_conv_technique("tensor_core", tensor_core, std::vector<Case>{kTechniqueGemmLayer, kTechniqueGemmLayerStride2},
                           "the implicit GEMM's products on the tensor cores (wmma::mma_sync with TF32 fragments, or "
                           "mma.sync), every product of each output's dot product, and no column matrix in device "
                           "memory (no cudaMalloc)",
                           all_of({tech::no_column_matrix(crs, p.k), tech::tensor_cores(crs)}), Precision::tf32);
    });
  }
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

  // --- CPU: the shape function, and the launchers refusing bad layers -----------------------------
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

}  // namespace

CONVLAB_LAB_MAIN(register_lab06)
