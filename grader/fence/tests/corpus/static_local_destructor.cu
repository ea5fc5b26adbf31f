// A function-local static with a destructor registers it to run at exit.
// fence-backends: cuda cpu
// fence-expect: static_local_destructor\.cu: calls __cxa_atexit, which your kernels' file may not use \(it registers code to run when the program ends.*a function-local static object with a destructor
#include <string>

namespace convlab::lab01 {
const char* label(int n) {
  static std::string cached = "conv" + std::to_string(n);
  return cached.c_str();
}
}  // namespace convlab::lab01
