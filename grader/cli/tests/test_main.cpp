// The tests' main: it also serves as the sandbox supervisor (`__supervise`),
// as the convlab executable does, since run_sandboxed() re-runs this executable.
#include "common/sandbox.hpp"

#include <gtest/gtest.h>

#include <cstring>

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "__supervise") == 0) return convlab::cli::supervise_main(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
