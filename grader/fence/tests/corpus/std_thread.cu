// The same with std::thread.
// fence-backends: cuda cpu
// fence-expect: std_thread\.cu: calls std::thread::_M_start_thread, which your kernels' file may not use \(it starts a thread or a timer
#include <thread>

namespace convlab::lab01 {
void start_thread() { std::thread([] {}).detach(); }
}  // namespace convlab::lab01
