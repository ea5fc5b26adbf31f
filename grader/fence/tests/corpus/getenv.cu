// A launcher that reads a setting to learn the seed the graders chose.
// fence-backends: cuda cpu
// fence-expect: getenv\.cu: calls getenv, which your kernels' file may not use \(the graders fix every setting
#include <cstdlib>

namespace convlab::lab01 {
const char* seed() { return std::getenv("CONVLAB_SEED"); }
}  // namespace convlab::lab01
