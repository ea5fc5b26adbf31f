// A pointer placed in .init_array by hand: the loader calls it before main.
// fence-backends: cuda cpu
// fence-expect: ctor_init_array\.cu: places convlab::lab01::\(anonymous namespace\)::hook in \.init_array, so convlab::lab01::\(anonymous namespace\)::early runs before main
#include <cstdio>

namespace convlab::lab01 {
namespace {
void early() { std::puts("early"); }
__attribute__((section(".init_array"), used)) void (*hook)() = early;
}  // namespace
}  // namespace convlab::lab01
