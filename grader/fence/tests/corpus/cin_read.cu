// Reading the terminal: the runner's input is not the student's to read.
// fence-backends: cuda cpu
// fence-expect: cin_read\.cu: .*std::cin.*it reads input
#include <iostream>

namespace convlab::lab01 {
int ask() {
  int n = 0;
  std::cin >> n;
  return n;
}
}  // namespace convlab::lab01
