// Making the graders' code writable, to patch it (a detour on the timer).
// fence-backends: cuda cpu
// fence-expect: mprotect\.cu: calls mprotect, which your kernels' file may not use \(it changes the process's memory mappings or protections
// fence-expect: mprotect\.cu: calls mmap, which
#include <sys/mman.h>

namespace convlab::lab01 {
int unprotect(void* page) { return mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC); }
void* map_code() { return mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }
}  // namespace convlab::lab01
