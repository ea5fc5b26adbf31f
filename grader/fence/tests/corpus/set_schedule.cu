// The CPU backend's schedule chosen by the submission: an in-order schedule hides a missing
// barrier. cu2cpp refuses the name convlab_cpu in a kernels file; a name pasted together by
// the preprocessor gets past it, and the fence still sees the call.
// fence-backends: cpu
// fence-expect: set_schedule\.cu: calls convlab_cpu::set_schedule, which your kernels' file may not use \(it sets the CPU backend's thread schedule
#define CPU_RUNTIME convlab##_cpu
namespace convlab::lab01 {
void calm() { CPU_RUNTIME::set_schedule(CPU_RUNTIME::Schedule::in_order, 1); }
}  // namespace convlab::lab01
