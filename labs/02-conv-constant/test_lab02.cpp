// Lab 02's graders. The cases live here, in one place; the checking is the
// shared conv testbed (grader/judge/src/conv_testbed.cpp); points and thresholds are
// in grading.json.
#include "lab02.hpp"

#include <convlab/conv_technique.hpp>
#include <convlab/conv_testbed.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

namespace {

using namespace convlab;

// The filter goes in as a host pointer: the launcher copies it to constant memory.
void student_conv1d(const Conv1dArgs& a) {
  lab02::conv1d_constant(a.d_in, a.h_filter, a.d_out, {a.n, a.radius}, a.stream);
}
void student_conv2d(const Conv2dArgs& a) {
  lab02::conv2d_constant(a.d_in, a.h_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}

// Lab 01's shapes (one element, fewer than a block, radius 0, a radius larger
// than the input, sizes one off a power of two, inputs larger than a 50 MB L2
// cache), plus the largest filters the constant buffer holds.
const std::vector<Conv1dCase> kConv1dCases = {
    {1, 0},     {1, 3},      {7, 2},        {31, 1},       {100, 0},     {255, 4},
    {256, 4},   {257, 4},    {40, 60},      {4097, 7},     {65537, 16},  {1000003, 3},
    {3001, lab02::kMaxRadius1d},  // the full buffer: 4225 taps, wider than the input
    {(1 << 24) + 5, 2},           // 64 MB in, 64 MB out: larger than the L2 cache
};

const std::vector<Conv2dCase> kConv2dCases = {
    {1, 1, 0},      {1, 1, 2},     {1, 37, 1},      {37, 1, 1},    {5, 3, 4},     {15, 15, 1},
    {16, 16, 2},    {17, 17, 2},   {33, 31, 0},     {100, 75, 3},  {127, 129, 5}, {255, 257, 7},
    {70, 50, lab02::kMaxRadius},  // a 65 x 65 filter: the full buffer
    {1023, 517, 3}, {4099, 4001, 1},  // 64 MB: larger than the L2 cache
    {3, 70001, 2},  // taller than 65535 rows: a grid that gives each row its own block in y cannot launch
};

// Speed: inputs several times the L2 cache; lab 01's radii, so the two labs' results compare.
const std::vector<Conv1dCase> kSpeed1d = {{(1 << 26) + 3, 1}, {(1 << 26) + 3, 8}};
const std::vector<Conv2dCase> kSpeed2d = {{8191, 8193, 1}, {8191, 8193, 4}};

void register_lab02(Registry& reg) {
  add_conv1d_correctness(reg, "conv1d", student_conv1d, kConv1dCases);
  add_conv2d_correctness(reg, "conv2d", student_conv2d, kConv2dCases);
  add_conv1d_speedup(reg, "conv1d", student_conv1d, kSpeed1d);
  add_conv2d_speedup(reg, "conv2d", student_conv2d, kSpeed2d);

  // The technique: the filter lives in constant memory. The launcher uploads it with
  // cudaMemcpyToSymbol and makes no global copy; its kernel reads constant memory (on a GPU, ld.const
  // in its code; on the CPU backend, one constant load per tap and output).
  const std::string asks = "the filter in __constant__ memory, uploaded by the launcher with cudaMemcpyToSymbol "
                           "and read by every thread from there, with no copy in global memory";
  add_conv1d_technique(reg, "conv1d", student_conv1d, {100003, 5}, asks, constant_filter());
  add_conv2d_technique(reg, "conv2d", student_conv2d, {1000, 700, 3}, asks, constant_filter());

  // The contract refuses bad problems before touching the GPU, and a filter too
  // large for the constant buffer with a message that says so.
  reg.cpu("cpu", "contract", "rejects_bad_problems", [] {
    const auto conv1d = [](lab02::Conv1dProblem p) { lab02::conv1d_constant(nullptr, nullptr, nullptr, p, nullptr); };
    const auto conv2d = [](lab02::Conv2dProblem p) { lab02::conv2d_constant(nullptr, nullptr, nullptr, p, nullptr); };
    expect_refused([&] { conv1d({0, 1}); }, "n must be >= 1");
    expect_refused([&] { conv1d({10, -1}); }, "radius must be >= 0");
    expect_refused([&] { conv2d({0, 5, 1}); }, "width and height must be >= 1");
    expect_refused([&] { conv2d({65536, 65536, 1}); }, "fit in an int");
    expect_refused([&] { conv2d({5, 5, -2}); }, "radius must be >= 0");
  });
  reg.cpu("cpu", "contract", "refuses_filters_beyond_the_constant_buffer", [] {
    expect_refused([] { lab02::conv1d_constant(nullptr, nullptr, nullptr, {10, lab02::kMaxRadius1d + 1}, nullptr); },
                   "needs 4227 filter taps, but the constant-memory buffer holds 4225 floats: radius must be at "
                   "most 2112");
    expect_refused([] { lab02::conv2d_constant(nullptr, nullptr, nullptr, {10, 10, lab02::kMaxRadius + 1}, nullptr); },
                   "needs 67 x 67 = 4489 filter taps, but the constant-memory buffer holds 4225 floats: radius "
                   "must be at most 32");
    expect_refused([] { lab02::conv2d_constant(nullptr, nullptr, nullptr, {10, 10, 1 << 30}, nullptr); },
                   "needs 2147483649 x 2147483649");  // no overflow in the message either
    EXPECT_LE(lab02::kFilterCapacity * sizeof(float), std::size_t(lab02::kConstantMemoryBytes));
  });
}

}  // namespace

CONVLAB_LAB_MAIN(register_lab02)
