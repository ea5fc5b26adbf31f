// A system call made by hand, so that no libc name shows it.
// fence-backends: cuda cpu
// fence-expect: syscall_asm\.cu: has a system-call instruction \((syscall|svc)\) in convlab::lab01::raw_getpid
namespace convlab::lab01 {
long raw_getpid() {
  long ret = 39;
#if defined(__x86_64__)
  __asm__ __volatile__("syscall" : "+a"(ret) : : "rcx", "r11", "memory");
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = 172;
  register long x0 __asm__("x0");
  __asm__ __volatile__("svc #0" : "=r"(x0) : "r"(x8) : "memory");
  ret = x0;
#endif
  return ret;
}
}  // namespace convlab::lab01
