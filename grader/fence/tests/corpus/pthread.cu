// A host thread that goes on working after the launcher returns, outside the timed interval.
// fence-backends: cuda cpu
// fence-expect: pthread\.cu: calls pthread_create, which your kernels' file may not use \(it starts a thread or a timer
#include <pthread.h>

namespace convlab::lab01 {
namespace {
void* later(void*) { return nullptr; }
}  // namespace
void start_thread() {
  pthread_t t;
  pthread_create(&t, nullptr, later, nullptr);
  pthread_detach(t);
}
}  // namespace convlab::lab01
