// A launcher that changes a setting of the graders' process: on the CPU backend it
// would pick the thread schedule that hides a race (issue 12 measured +14 points).
// fence-backends: cuda cpu
// fence-expect: setenv\.cu: calls setenv, which your kernels' file may not use \(the graders fix every setting before your code runs\)
#include <cstdlib>

namespace convlab::lab01 {
void pick_schedule() { setenv("CONVLAB_CPU_SCHEDULE", "in-order", 1); }
}  // namespace convlab::lab01
