// Looking a function up at run time, by name: the allow-list could not see what it calls.
// fence-backends: cuda cpu
// fence-expect: dlopen\.cu: calls dlopen, which your kernels' file may not use \(loading libraries or looking up functions at run time would get round this check\)
// fence-expect: dlopen\.cu: calls dlsym, which
#include <dlfcn.h>

namespace convlab::lab01 {
void* find(const char* name) {
  void* self = dlopen(nullptr, RTLD_NOW);
  return dlsym(self, name);
}
}  // namespace convlab::lab01
