// A function that runs when the program exits (to overwrite what the graders wrote).
// fence-backends: cuda cpu
// fence-expect: dtor_attribute\.cu: runs convlab::lab01::\(anonymous namespace\)::late when the program exits \(a function marked __attribute__\(\(destructor\)\)
#include <cstdio>

namespace convlab::lab01 {
namespace {
__attribute__((destructor)) void late() { std::puts("late"); }
}  // namespace
}  // namespace convlab::lab01
