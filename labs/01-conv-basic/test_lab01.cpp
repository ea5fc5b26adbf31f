// Lab 01's graders. The cases live here, in one place; the checking is the
// shared conv testbed (grader/judge/src/conv_testbed.cpp); points and thresholds are
// in grading.json.
#include "lab01.hpp"

#include <convlab/conv_testbed.hpp>
#include <convlab/testbed.hpp>

#include <gtest/gtest.h>

namespace {

using namespace convlab;

void student_conv1d(const Conv1dArgs& a) {
  lab01::conv1d_naive(a.d_in, a.d_filter, a.d_out, {a.n, a.radius}, a.stream);
}
void student_conv2d(const Conv2dArgs& a) {
  lab01::conv2d_naive(a.d_in, a.d_filter, a.d_out, {a.width, a.height, a.radius}, a.stream);
}

// Shapes chosen to break the usual mistakes: one element, fewer elements than a
// block, radius 0, radius larger than the input, sizes one off a power of two,
// and one input larger than a 50 MB L2 cache.
const std::vector<Conv1dCase> kConv1dCases = {
    {1, 0},    {1, 3},     {7, 2},       {31, 1},       {100, 0},      {255, 4},
    {256, 4},  {257, 4},   {40, 60},     {4097, 7},     {65537, 16},   {1000003, 3},
    {(1 << 24) + 5, 2},  // 64 MB in, 64 MB out: larger than the L2 cache
};

const std::vector<Conv2dCase> kConv2dCases = {
    {1, 1, 0},     {1, 1, 2},     {1, 37, 1},    {37, 1, 1},    {5, 3, 4},   {15, 15, 1},
    {16, 16, 2},   {17, 17, 2},   {33, 31, 0},   {100, 75, 3},  {127, 129, 5}, {255, 257, 7},
    {1023, 517, 3}, {4099, 4001, 1},  // 64 MB: larger than the L2 cache
    {3, 70001, 2},  // taller than 65535 rows: a grid that gives each row its own block in y cannot launch
};

// Speed: inputs several times the L2 cache; a small and a large radius.
const std::vector<Conv1dCase> kSpeed1d = {{(1 << 26) + 3, 1}, {(1 << 26) + 3, 8}};
const std::vector<Conv2dCase> kSpeed2d = {{8191, 8193, 1}, {8191, 8193, 4}};

void register_lab01(Registry& reg) {
  add_conv1d_correctness(reg, "conv1d", student_conv1d, kConv1dCases);
  add_conv2d_correctness(reg, "conv2d", student_conv2d, kConv2dCases);
  add_conv1d_speedup(reg, "conv1d", student_conv1d, kSpeed1d);
  add_conv2d_speedup(reg, "conv2d", student_conv2d, kSpeed2d);

  // The contract refuses bad problems before touching the GPU.
  reg.cpu("cpu", "contract", "rejects_bad_problems", [] {
    EXPECT_THROW(lab01::conv1d_naive(nullptr, nullptr, nullptr, {0, 1}, nullptr), std::invalid_argument);
    EXPECT_THROW(lab01::conv1d_naive(nullptr, nullptr, nullptr, {10, -1}, nullptr), std::invalid_argument);
    EXPECT_THROW(lab01::conv1d_naive(nullptr, nullptr, nullptr, {10, lab01::kMaxRadius + 1}, nullptr),
                 std::invalid_argument);
    EXPECT_THROW(lab01::conv2d_naive(nullptr, nullptr, nullptr, {0, 5, 1}, nullptr), std::invalid_argument);
    EXPECT_THROW(lab01::conv2d_naive(nullptr, nullptr, nullptr, {65536, 65536, 1}, nullptr), std::invalid_argument);
    EXPECT_THROW(lab01::conv2d_naive(nullptr, nullptr, nullptr, {5, 5, -2}, nullptr), std::invalid_argument);
  });
}

}  // namespace

CONVLAB_LAB_MAIN(register_lab01)
