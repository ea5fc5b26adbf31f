// Debugging output, all of it allowed (issue 28): <iostream> (std::cout, std::cerr, std::clog,
// std::endl, manipulators; with GCC 12 its std::ios_base::Init global constructor), a string
// stream, printf, fprintf(stderr), puts, and printf in a kernel. The runner's output goes to a
// pipe of the judge's own, is cut after the first lines of each test and shown in the feedback.
// fence-backends: cuda cpu
// fence-expect-clean
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

__global__ void show_kernel(const float* x) {
  if (threadIdx.x == 0 && blockIdx.x == 0) printf("x[0] = %f\n", x[0]);
}

namespace convlab::lab01 {
void say(const float* d_x, int n, cudaStream_t stream) {
  std::cout << "launching, n = " << n << std::endl;
  std::cerr << "debug: " << std::fixed << std::setprecision(3) << 1.5 * n << '\n';
  std::clog << "clog " << n << std::flush;
  std::ostringstream grid;
  grid << "grid " << (n + 31) / 32;
  std::puts(grid.str().c_str());
  std::printf("printf %d\n", n);
  std::fprintf(stderr, "stderr %d\n", n);
  show_kernel<<<1, 32, 0, stream>>>(d_x);
}
}  // namespace convlab::lab01
