// A function marked to run before main.
// fence-backends: cuda cpu
// fence-expect: ctor_attribute\.cu: runs convlab::lab01::\(anonymous namespace\)::early before main \(a function marked __attribute__\(\(constructor\)\)
#include <cstdio>

namespace convlab::lab01 {
namespace {
__attribute__((constructor)) void early() { std::puts("early"); }
}  // namespace
}  // namespace convlab::lab01
