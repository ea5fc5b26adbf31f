// The CPU backend's schedule chosen by the submission: an in-order schedule hides a missing barrier.
// fence-backends: cpu
// fence-expect: set_schedule\.cu: calls convlab_cpu::set_schedule, which your kernels' file may not use \(it sets the CPU backend's thread schedule
namespace convlab::lab01 {
void calm() { convlab_cpu::set_schedule(convlab_cpu::Schedule::in_order, 1); }
}  // namespace convlab::lab01
