// Writing files: a forged record in the results folder, or straight to a file descriptor.
// fence-backends: cuda cpu
// fence-expect: fopen_write\.cu: calls fopen, which your kernels' file may not use \(it reads or writes files, sockets or devices
// fence-expect: fopen_write\.cu: calls write, which
#include <cstdio>
#include <unistd.h>

namespace convlab::lab01 {
void forge() {
  if (std::FILE* f = std::fopen("results/lab01.json", "w")) {
    std::fputs("{\"passed\": true}", f);
    std::fclose(f);
  }
  (void)!write(3, "passed\n", 7);
}
}  // namespace convlab::lab01
