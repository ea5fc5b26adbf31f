// Shared graders for single-channel 1D/2D convolution. See convlab/conv_testbed.hpp.
#include "convlab/conv_testbed.hpp"

#include "convlab/baselines.hpp"
#include "convlab/check.hpp"
#include "convlab/compare.hpp"
#include "convlab/device_buffer.hpp"
#include "convlab/golden.hpp"
#include "convlab/gpu.hpp"
#include "convlab/hints.hpp"
#include "convlab/image.hpp"
#include "convlab/random.hpp"
#include "convlab/conv_technique.hpp"
#include "convlab/evidence.hpp"
#include "convlab/record.hpp"
#include "convlab/remote.hpp"
#include "convlab/speed_check.hpp"
#include "convlab/testbed.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

namespace convlab {

std::string Conv1dCase::name() const { return "n" + std::to_string(n) + "_r" + std::to_string(radius); }
std::string Conv2dCase::name() const {
  return "w" + std::to_string(width) + "_h" + std::to_string(height) + "_r" + std::to_string(radius);
}

namespace {

constexpr std::uint64_t kFilterStream = 0xF117E5ull;  // the filter's seed differs from the input's
constexpr std::uint64_t kColumnStream = 0xC011ull;    // a separable filter's second factor

// Guard zones of NaN around the test buffers (see GuardedBuffer). The sanitizer
// build has none, so that AddressSanitizer sees the first access out of bounds.
#ifdef CONVLAB_NO_GUARD_ZONES
constexpr bool kGuardZones = false;
#else
constexpr bool kGuardZones = true;
#endif

// Outputs of at most this many elements are dumped and compared across backends.
constexpr std::size_t kMaxDumpElements = std::size_t(1) << 21;

std::string dump_path(const char* env_var) {
  const char* dir = std::getenv(env_var);
  if (!dir || !*dir) return {};
  return std::string(dir) + "/" + current_record().test + ".f32";
}

// CONVLAB_DUMP_DIR: write each output; CONVLAB_COMPARE_DIR: compare each output with
// one written earlier (by the other backend, say) within twice the tolerance.
void dump_or_compare(const std::vector<float>& got, const Golden& g) {
  if (got.size() > kMaxDumpElements) return;
  if (const std::string path = dump_path("CONVLAB_DUMP_DIR"); !path.empty()) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(got.data()),
                                                std::streamsize(got.size() * sizeof(float)));
  }
  if (const std::string path = dump_path("CONVLAB_COMPARE_DIR"); !path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      ADD_FAILURE() << "CONVLAB_COMPARE_DIR: no dump " << path;
      return;
    }
    std::vector<float> other(got.size());
    in.read(reinterpret_cast<char*>(other.data()), std::streamsize(other.size() * sizeof(float)));
    if (!in || in.peek() != EOF) {
      ADD_FAILURE() << "CONVLAB_COMPARE_DIR: " << path << " does not hold " << got.size() << " floats";
      return;
    }
    double worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double r = std::fabs(double(got[i]) - double(other[i])) / (2 * tolerance_for(g.magnitude[i], g.terms));
      if (!(r <= worst)) worst = r, worst_at = i;
    }
    EXPECT_LE(worst, 1.0) << "this backend and the dump in " << path << " differ at element " << worst_at << ": "
                          << got[worst_at] << " vs " << other[worst_at];
    std::printf("compared with %s: largest difference %.3g of twice the tolerance\n", path.c_str(), worst);
  }
}

// Where a problem's inputs are made: on the host, with the golden model (a correctness case), or
// on the device from the seed (a speed test's problem, checked against the baseline on the device:
// no golden model of tens of millions of outputs on the host, issue 29).
enum class Inputs { host_with_golden, device };

struct StreamHandle {
  cudaStream_t s = nullptr;
  StreamHandle() { CONVLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~StreamHandle() { cudaStreamDestroy(s); }
};

// Everything one problem needs, on the host and on the device. A 1D problem is
// a 2D problem of height 1 as far as data and comparison go.
struct Problem {
  int width, height, radius;
  bool two_d;
  std::vector<float> h_in, h_row, h_col, h_filter;  // h_row, h_col: the factors of a separable filter
  Golden golden;
  GuardedBuffer d_in, d_filter, d_out;
  StreamHandle stream;

  std::size_t count;  // inputs (= outputs)

  Problem(int w, int h, int r, bool is_2d, std::uint64_t seed, FilterKind kind = FilterKind::random,
          Inputs inputs = Inputs::host_with_golden)
      : width(w), height(h), radius(r), two_d(is_2d),
        h_in(inputs == Inputs::device ? std::vector<float>{} : random_floats(std::size_t(w) * h, seed)),
        h_row(kind == FilterKind::separable ? separable_factor(2 * r + 1, seed ^ kFilterStream) : std::vector<float>{}),
        h_col(kind == FilterKind::separable ? separable_factor(2 * r + 1, seed ^ kFilterStream ^ kColumnStream)
                                            : std::vector<float>{}),
        h_filter(kind == FilterKind::separable ? outer_product(h_col, h_row)
                 : random_floats(is_2d ? std::size_t(2 * r + 1) * (2 * r + 1) : std::size_t(2 * r + 1),
                                 seed ^ kFilterStream)),
        // The input guard covers every read a kernel without boundary checks
        // can make (r rows and r columns beyond the image), capped at 64 MB.
        d_in(std::size_t(w) * h, !kGuardZones ? 0
                          : std::min<std::size_t>(is_2d ? std::size_t(r) * (w + 1) + 64 : std::size_t(r) + 64,
                                                  std::size_t(16) << 20)),
        d_filter(h_filter.size(), kGuardZones ? 64 : 0),
        d_out(std::size_t(w) * h, kGuardZones ? 1024 : 0),
        count(std::size_t(w) * h) {
    if (inputs == Inputs::device) {
      // A speed test's problem: its outputs are checked against the baseline's on the device.
      golden.terms = is_2d ? (2 * r + 1) * (2 * r + 1) : 2 * r + 1;
      d_in.poison();
      remote::random_fill(d_in.data(), count, seed);
    } else {
      golden = two_d ? conv2d_golden(h_in, w, h, h_filter, r) : conv1d_golden(h_in, h_filter, r);
      d_in.upload(h_in);
    }
    d_filter.upload(h_filter);
  }
  Grid grid(const ConvCheckOptions& o) const { return Grid{width, height, radius, o.tile_x, o.tile_y, two_d}; }
};

// Runs the kernel once on a poisoned output; returns an error text if the launch or the run failed,
// or if the runner saw the output computed anywhere but in kernels on the device.
std::string run_once(const std::function<void(cudaStream_t)>& launch, Problem& p) {
  p.d_out.poison();
  remote::clear_calls();
  try {
    launch(p.stream.s);
  } catch (const std::exception& e) {
    return std::string("the launcher failed: ") + e.what();
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return std::string("the kernel launch failed: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) +
           ") — check the grid and block sizes (at most 1024 threads per block) and the shared memory size";
  if (cudaError_t e = cudaStreamSynchronize(p.stream.s); e != cudaSuccess)
    return std::string("the kernel failed while running: ") + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) +
           ") — an illegal address usually means an index outside an array; run it under compute-sanitizer";
  if (const std::string why = not_computed_on_device(remote::calls()); !why.empty()) return why;
  // Work on another stream is checked after it ended (the runner waits for every stream), so the
  // result is right; the speed and technique graders award nothing for it.
  for (const auto& c : remote::calls())
    if (const std::string w = escaped_work(c.evidence); !w.empty()) std::printf("note: %s\n", w.c_str());
  return {};
}

// What the wrong outputs suggest, in words a student can act on (convlab/hints.hpp).
std::string diagnose(const Comparison& c, const Problem& p, const std::vector<float>& got) {
  return conv_hints(c, HintProblem{p.width, p.height, p.radius, p.two_d, &p.h_in, &p.h_filter, &got});
}

// A 2D failure also becomes a picture: wrong outputs lit, the tile grid drawn. Returns the
// line that names the file (or says why there is none).
std::string write_error_image(const Comparison& c) {
  if (!png_available()) return "(no error map image: this build has no libpng)\n";
  std::string name = current_record().test;
  if (name.empty()) name = "conv2d";
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-') ch = '_';
  const std::string path = error_map_dir() + "/" + name + ".png";
  try {
    write_png(path, render_error_map(c));
  } catch (const std::exception& e) {
    return std::string("(no error map image: ") + e.what() + ")\n";
  }
  const std::string abs = std::filesystem::absolute(path).string();
  return "error map image (red: wrong, yellow: never written, blue: tile edges): " + abs + "\n";
}

bool run_and_compare(const std::function<void(cudaStream_t)>& launch, Problem& p, const ConvCheckOptions& o,
                     const char* when) {
  if (const std::string err = run_once(launch, p); !err.empty()) {
    ADD_FAILURE() << when << err;
    return false;
  }
  const std::vector<float> got = p.d_out.download();
  // The input is const: a launcher that changes it (to make a checker agree, say) fails.
  if (const std::vector<float> in_after = p.d_in.download();
      std::memcmp(in_after.data(), p.h_in.data(), in_after.size() * sizeof(float)) != 0) {
    std::size_t changed = 0;
    for (std::size_t i = 0; i < in_after.size(); ++i)
      changed += std::memcmp(&in_after[i], &p.h_in[i], sizeof(float)) != 0;
    ADD_FAILURE() << when << "the launcher changed its input (" << changed << " of " << in_after.size()
                  << " elements of d_in): the input is const, and the output must be computed from it as given";
    return false;
  }
  const Comparison c = compare(got, p.golden, p.grid(o));
  const std::string guards = p.d_out.check_guards();
  auto& rec = current_record();
  rec.max_error = c.max_error;
  if (std::isfinite(c.max_error_ratio)) rec.max_error_ratio = c.max_error_ratio;
  if (c.ok() && guards.empty()) {
    dump_or_compare(got, p.golden);
    return true;
  }
  ADD_FAILURE() << when << (p.two_d ? "2D " : "1D ") << "convolution, " << p.width
                << (p.two_d ? " x " + std::to_string(p.height) : std::string()) << ", radius " << p.radius << ":\n"
                << c.report() << (guards.empty() ? "" : guards + "\n") << diagnose(c, p, got)
                << (p.two_d && c.wrong > 0 ? write_error_image(c) : std::string());
  return false;
}

Conv1dArgs args1d(const Problem& p, cudaStream_t s) {
  return {p.d_in.data(), p.d_filter.data(), p.h_filter.data(), nullptr, p.width, p.radius, s};
}
Conv2dArgs args2d(const Problem& p, cudaStream_t s) {
  return {p.d_in.data(),
          p.d_filter.data(),
          p.h_filter.data(),
          nullptr,
          p.width,
          p.height,
          p.radius,
          s,
          p.h_row.empty() ? nullptr : p.h_row.data(),
          p.h_col.empty() ? nullptr : p.h_col.data()};
}

// The sizes on which the naive baseline's loads per output are counted for a speed test's count
// (expect_traffic_vs_baseline's yardstick): a few million outputs, not multiples of a tile.
constexpr int kYardstick1d = 4194307;
constexpr std::pair<int, int> kYardstick2d{2053, 2047};

// The baseline alone on a problem of w x h at radius r (the same filter kind; inputs from the
// test's seed): a speed test's yardstick (technique.hpp).
template <class Fn, class MakeArgs>
Yardstick baseline_yardstick(int w, int h, int r, bool two_d, FilterKind kind, const Fn& baseline, MakeArgs make_args) {
  return [=, seed = current_seed()](const BaselineUse& use) {
    Problem q(w, h, r, two_d, seed, kind, Inputs::device);
    DeviceBuffer<float> out(q.count);
    use(
        [&] {
          auto a = make_args(q);
          a.d_out = out.get();
          baseline(a);
        },
        double(q.count));
  };
}

void require_valid(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("convlab testbed: invalid case: " + what);
}

void speed_check(Problem& p, const std::function<void(float*, cudaStream_t)>& student,
                 const std::function<void(float*, cudaStream_t)>& baseline, const std::string& what,
                 const GraderSpec& grader, const ProblemAgain& again, const Yardstick& yardstick) {
  // A launcher that fails, or computes elsewhere than on the device, is not timed. Whether its
  // outputs are right is checked against the baseline's after every timed run (the first round's
  // first run included): a wrong kernel earns no speed-up.
  if (const std::string err = run_once([&](cudaStream_t s) { student(p.d_out.data(), s); }, p); !err.empty()) {
    ADD_FAILURE() << "speed not measured: " << err;
    return;
  }
  DeviceBuffer<float> baseline_out(p.count);
  SpeedPolicy policy;
  policy.threshold = grader.threshold;
  SpeedSetup setup;
  setup.baseline = [&](cudaStream_t s) { baseline(baseline_out.get(), s); };
  setup.candidate = [&](cudaStream_t s) { student(p.d_out.data(), s); };
  // The output is poisoned before every timed run, outside the timed region.
  setup.prepare = [&](cudaStream_t s) {
    CONVLAB_CUDA_CHECK(cudaMemsetAsync(p.d_out.data(), 0xFF, p.count * sizeof(float), s));
  };
  setup.stream = p.stream.s;
  // A fresh input before every pair, and every timed output checked against the baseline's for
  // that input: |x| <= 1, so each output's rounding error is at most gamma_m * sum |f| for either
  // kernel, and the two may differ by twice that.
  setup.refresh.address = reinterpret_cast<std::uintptr_t>(p.d_in.data());
  setup.refresh.count = p.count;
  double sum_abs_filter = 0;
  for (float f : p.h_filter) sum_abs_filter += std::fabs(double(f));
  setup.check = wire::TimedCheck{reinterpret_cast<std::uintptr_t>(p.d_out.data()),
                                 reinterpret_cast<std::uintptr_t>(baseline_out.get()), p.count,
                                 2 * tolerance_for(sum_abs_filter, p.golden.terms)};
  setup.ideal_bytes = 2.0 * double(p.count) * sizeof(float);  // each input read once, each output written once
  // CONVLAB_SPEED_REPEAT=N makes N independent decisions (the worst counts).
  const SpeedVerdict v = check_speed(setup, policy, what);
  record_speed(v, grader.threshold);
  EXPECT_TRUE(v.passed) << v.message;
  // Nothing written outside the output in any timed run.
  if (const std::string g = p.d_out.check_guards(); !g.empty())
    ADD_FAILURE() << "no speed-up is awarded: in the timed runs " << g;
  // What ran when the slot was timed must be its technique: one more call of each, counted by the GPU.
  expect_traffic_vs_baseline(grader.id.substr(grader.id.find('.') + 1), what.substr(0, what.find(" vs ")),
                             grader.traffic_vs_baseline, grader.traffic_count == "instructions", double(p.count),
                             [&] { student(p.d_out.data(), p.stream.s); }, [&] { baseline(baseline_out.get(), p.stream.s); },
                             again, yardstick);
}

}  // namespace

bool check_conv1d(const Conv1dFn& kernel, const Conv1dCase& c, const ConvCheckOptions& o) {
  require_valid(c.n >= 1 && c.radius >= 0, c.name());
  Problem p(c.n, 1, c.radius, false, current_seed());
  return run_and_compare(
      [&](cudaStream_t s) {
        Conv1dArgs a = args1d(p, s);
        a.d_out = p.d_out.data();
        kernel(a);
      },
      p, o, "");
}

bool check_conv2d(const Conv2dFn& kernel, const Conv2dCase& c, const ConvCheckOptions& o) {
  require_valid(c.width >= 1 && c.height >= 1 && c.radius >= 0, c.name());
  Problem p(c.width, c.height, c.radius, true, current_seed(), o.filter);
  return run_and_compare(
      [&](cudaStream_t s) {
        Conv2dArgs a = args2d(p, s);
        a.d_out = p.d_out.data();
        kernel(a);
      },
      p, o, "");
}

void check_conv1d_speed(const Conv1dFn& kernel, const Conv1dFn& baseline, const std::string& baseline_name,
                        const Conv1dCase& c, const GraderSpec& grader) {
  require_valid(c.n >= 1 && c.radius >= 0, c.name());
  Problem p(c.n, 1, c.radius, false, current_seed(), FilterKind::random, Inputs::device);
  const auto call = [&p](const Conv1dFn& fn) {
    return [&p, &fn](float* out, cudaStream_t s) {
      Conv1dArgs a = args1d(p, s);
      a.d_out = out;
      fn(a);
    };
  };
  // The same problem made again, for a count that waits for the process's last speed test.
  const ProblemAgain again = [kernel, baseline, c, seed = current_seed()](const ProblemUse& use) {
    Problem q(c.n, 1, c.radius, false, seed, FilterKind::random, Inputs::device);
    DeviceBuffer<float> baseline_out(q.count);
    const auto call = [&q](const Conv1dFn& fn, float* out) {
      Conv1dArgs a = args1d(q, q.stream.s);
      a.d_out = out;
      fn(a);
    };
    use([&] { call(kernel, q.d_out.data()); }, [&] { call(baseline, baseline_out.get()); });
  };
  // The baseline's loads per output, for the count after the timed runs, on 4 M outputs at the same radius.
  const Yardstick yardstick = baseline_yardstick(std::min(c.n, kYardstick1d), 1, c.radius, false, FilterKind::random,
                                                 baseline, [](Problem& q) { return args1d(q, q.stream.s); });
  speed_check(p, call(kernel), call(baseline), "conv1d " + c.name() + " vs the " + baseline_name, grader, again,
              yardstick);
}

void check_conv2d_speed(const Conv2dFn& kernel, const Conv2dFn& baseline, const std::string& baseline_name,
                        const Conv2dCase& c, const GraderSpec& grader, const ConvCheckOptions& options) {
  require_valid(c.width >= 1 && c.height >= 1 && c.radius >= 0, c.name());
  Problem p(c.width, c.height, c.radius, true, current_seed(), options.filter, Inputs::device);
  const auto call = [&p](const Conv2dFn& fn) {
    return [&p, &fn](float* out, cudaStream_t s) {
      Conv2dArgs a = args2d(p, s);
      a.d_out = out;
      fn(a);
    };
  };
  const ProblemAgain again = [kernel, baseline, c, seed = current_seed(), filter = options.filter](const ProblemUse& use) {
    Problem q(c.width, c.height, c.radius, true, seed, filter, Inputs::device);
    DeviceBuffer<float> baseline_out(q.count);
    const auto call = [&q](const Conv2dFn& fn, float* out) {
      Conv2dArgs a = args2d(q, q.stream.s);
      a.d_out = out;
      fn(a);
    };
    use([&] { call(kernel, q.d_out.data()); }, [&] { call(baseline, baseline_out.get()); });
  };
  // The baseline's loads per output, for the count after the timed runs, on 2053 x 2047 at the same
  // radius and filter.
  const Yardstick yardstick =
      baseline_yardstick(std::min(c.width, kYardstick2d.first), std::min(c.height, kYardstick2d.second), c.radius, true,
                         options.filter, baseline, [](Problem& q) { return args2d(q, q.stream.s); });
  speed_check(p, call(kernel), call(baseline), "conv2d " + c.name() + " vs the " + baseline_name, grader, again,
              yardstick);
}

namespace {
template <class Case>
ConvCheckOptions options_for(const TileOf& tile, const Case& c) {
  return tile ? tile(c.radius) : ConvCheckOptions{};
}
}  // namespace

void add_conv1d_correctness(Registry& reg, const std::string& variant, const Conv1dFn& kernel,
                            const std::vector<Conv1dCase>& cases, const TileOf& tile) {
  // The slot's speed grader, whose traffic_vs_baseline the CPU backend applies to large cases.
  const GraderSpec* g = reg.spec().find_grader("speedup." + variant);
  const double fraction = g ? g->traffic_vs_baseline : 0;
  const bool by_instructions = g && g->traffic_count == "instructions";
  for (const auto& c : cases)
    reg.gpu("correctness", variant, c.name(), [kernel, c, o = options_for(tile, c), variant, fraction, by_instructions] {
      if (check_conv1d(kernel, c, o))
        expect_counted_traffic_vs_naive(variant, c.name(), fraction, by_instructions, double(c.n),
                                        double(2 * c.radius + 1));
    });
}

void add_conv2d_correctness(Registry& reg, const std::string& variant, const Conv2dFn& kernel,
                            const std::vector<Conv2dCase>& cases, const TileOf& tile) {
  // The slot's speed grader, whose traffic_vs_baseline the CPU backend applies to large cases.
  const GraderSpec* g = reg.spec().find_grader("speedup." + variant);
  const double fraction = g ? g->traffic_vs_baseline : 0;
  const bool by_instructions = g && g->traffic_count == "instructions";
  for (const auto& c : cases)
    reg.gpu("correctness", variant, c.name(), [kernel, c, o = options_for(tile, c), variant, fraction, by_instructions] {
      const double taps = double(2 * c.radius + 1) * double(2 * c.radius + 1);
      if (check_conv2d(kernel, c, o))
        expect_counted_traffic_vs_naive(variant, c.name(), fraction, by_instructions, double(c.width) * c.height, taps);
    });
}

void add_conv1d_speedup(Registry& reg, const std::string& variant, const Conv1dFn& kernel,
                        const std::vector<Conv1dCase>& cases) {
  const GraderSpec& grader = reg.spec().grader("speedup." + variant);  // lives as long as the registry
  for (const auto& c : cases)
    reg.gpu("speedup", variant, c.name(), [kernel, c, &grader] {
      check_conv1d_speed(kernel, baseline::conv1d_naive, "naive baseline", c, grader);
    });
}

void add_conv2d_speedup(Registry& reg, const std::string& variant, const Conv2dFn& kernel,
                        const std::vector<Conv2dCase>& cases) {
  const GraderSpec& grader = reg.spec().grader("speedup." + variant);
  for (const auto& c : cases)
    reg.gpu("speedup", variant, c.name(), [kernel, c, &grader] {
      check_conv2d_speed(kernel, baseline::conv2d_naive, "naive baseline", c, grader);
    });
}

// ---- technique graders -------------------------------------------------------------------------

void add_conv1d_technique(Registry& reg, const std::string& variant, const Conv1dFn& kernel, const Conv1dCase& c,
                          const std::string& asks, const TechniqueRule& rule) {
  reg.gpu("technique", variant, c.name(), [=] {
    // The technique is judged on a right result only (a wrong one says nothing about the design).
    if (!check_conv1d(kernel, c)) {
      ADD_FAILURE() << variant << ": the technique is checked on a correct output; fix correctness first";
      return;
    }
    expect_technique(variant, asks, rule, double(c.n), double(2 * c.radius + 1));
  });
}

void add_conv2d_technique(Registry& reg, const std::string& variant, const Conv2dFn& kernel, const Conv2dCase& c,
                          const std::string& asks, const TechniqueRule& rule, const ConvCheckOptions& options) {
  reg.gpu("technique", variant, c.name(), [=] {
    if (!check_conv2d(kernel, c, options)) {
      ADD_FAILURE() << variant << ": the technique is checked on a correct output; fix correctness first";
      return;
    }
    const double taps = double(2 * c.radius + 1) * double(2 * c.radius + 1);
    expect_technique(variant, asks, rule, double(c.width) * c.height, taps);
  });
}

void add_separable_technique(Registry& reg, const std::string& variant,
                             const std::function<void(const Conv2dArgs&, float* d_tmp)>& kernel, const Conv2dCase& c,
                             const std::string& asks, const TechniqueRule& rule) {
  reg.gpu("technique", variant, c.name(), [=] {
    require_valid(c.width >= 1 && c.height >= 1 && c.radius >= 0, c.name());
    Problem p(c.width, c.height, c.radius, true, current_seed(), FilterKind::separable);
    GuardedBuffer d_tmp(p.h_in.size(), kGuardZones ? 64 : 0);
    d_tmp.poison();
    const bool right = run_and_compare(
        [&](cudaStream_t s) {
          Conv2dArgs a = args2d(p, s);
          a.d_out = p.d_out.data();
          kernel(a, d_tmp.data());
        },
        p, {}, "");
    if (!right) {
      ADD_FAILURE() << variant << ": the technique is checked on a correct output; fix correctness first";
      return;
    }
    // d_tmp must hold one 1D pass of the input: along x with the row filter, or along y with the
    // column filter (the 2D filter with one non-zero row or column).
    const int m = 2 * c.radius + 1;
    std::vector<float> along_x(std::size_t(m) * m, 0.0f), along_y(std::size_t(m) * m, 0.0f);
    for (int k = 0; k < m; ++k) {
      along_x[std::size_t(c.radius) * m + k] = p.h_row[std::size_t(k)];
      along_y[std::size_t(k) * m + c.radius] = p.h_col[std::size_t(k)];
    }
    const std::vector<float> tmp = d_tmp.download();
    const Grid grid{c.width, c.height, c.radius, 0, 0};
    const bool row_pass = compare(tmp, conv2d_golden(p.h_in, c.width, c.height, along_x, c.radius), grid).ok();
    const bool col_pass = compare(tmp, conv2d_golden(p.h_in, c.width, c.height, along_y, c.radius), grid).ok();
    std::string two_passes;
    if (!row_pass && !col_pass) {
      std::size_t unwritten = 0;
      for (float v : tmp) unwritten += std::isnan(v);
      two_passes = unwritten == tmp.size()
                       ? "d_tmp was never written: the result did not go through an intermediate 1D pass"
                       : "d_tmp holds neither the row pass (the input filtered along x by the row filter) nor the "
                         "column pass: the two passes did not go through it";
    }
    const std::string more = [&] {
      const TechniqueView v(remote::calls(), double(c.width) * c.height, double(m) * m);
      if (v.blind()) return std::string();
      std::printf("%s: %s\n", variant.c_str(), v.traffic().c_str());
      const std::string seen = all_of({rule, on_given_stream()})(v);
      return seen.empty() ? unjudged_kernels(variant, v) : seen;
    }();
    const std::string found = two_passes + (two_passes.empty() || more.empty() ? "" : "; ") + more;
    if (!found.empty()) ADD_FAILURE() << variant << ": " << found << "; the lab asks for " << asks;
    else record_judged(TechniqueView(remote::calls(), double(c.width) * c.height, double(m) * m));
  });
}

}  // namespace convlab
