// Replacing the allocator that the graders' own containers use.
// fence-backends: cuda cpu
// fence-expect: define_operator_new\.cu: defines operator new, which your kernels' file may not define \(it replaces the program's memory allocator
#include <cstdlib>
#include <new>

__host__ void* operator new(std::size_t bytes) {
  if (void* p = std::malloc(bytes)) return p;
  std::abort();
}
