// Prints the two OP/B tables of lab 03's handout (op_ratio.hpp), to paste into
// README.md between the op_ratio_table and op_ratio_kernels markers:
//   ./lab03_op_ratio_table
#include "op_ratio.hpp"

#include <iostream>

int main() {
  std::cout << convlab::lab03::op_ratio_table_markdown() << "\n" << convlab::lab03::lab_kernels_table_markdown();
}
