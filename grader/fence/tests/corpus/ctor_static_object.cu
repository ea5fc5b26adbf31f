// `static Foo foo;` with a constructor of the submission's own.
// fence-backends: cuda cpu
// fence-expect: ctor_static_object\.cu: has a global constructor.*: a global or static variable whose value is computed when the program starts
#include <cstdio>

namespace convlab::lab01 {
namespace {
struct Banner {
  Banner() { std::puts("hello from before main"); }
};
Banner banner;
}  // namespace
}  // namespace convlab::lab01
