// A launcher that starts processes (the fixture corpus's fork bomb does this).
// fence-backends: cuda cpu
// fence-expect: fork\.cu: calls fork, which your kernels' file may not use \(it starts or waits for other processes
#include <unistd.h>

namespace convlab::lab01 {
int spawn() { return fork(); }
}  // namespace convlab::lab01
