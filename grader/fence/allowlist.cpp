// The fence's common allow-list and its reasons. See allowlist.hpp.
//
// How it was derived: every reference, starter and planted-bug variant of the six
// labs was compiled on both backends (nvcc 13.0 with GCC 12 for CUDA, the cu2cpp
// rewrite with GCC 12 for the CPU backend, with its access counting and with
// AddressSanitizer, optimised and not), and every name their objects reference was
// listed. What they need is here: the device memory calls the runner's recorder
// wraps are on the common list, since the labs' planted evasions use them (the
// technique graders judge those); cuDNN, which only lab 06's conv_cudnn.cu may
// call, comes from that lab's allowed_symbols. A lab that needs more adds it in its
// grading.json ("fence"); none does today. The list was pruned to what a student
// plausibly needs, and a few names a student may well use (printf, their own
// streams and events, the occupancy calculator) were added. Each group says why it
// is there. Patterns are matched against the demangled name without its parameter
// list (names.hpp); `*` stands for any run of characters.
#include "allowlist.hpp"

#include "names.hpp"

#include <cctype>

namespace convlab::fence {

namespace {

// The parts of a list, in order, as one list.
template <class T>
std::vector<T> joined(std::initializer_list<std::vector<T>> parts) {
  std::vector<T> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// What the compilers generate.
std::vector<AllowGroup> compiler_groups() {
  return {
      {kCuda,
       "nvcc's host code for a kernel launch (kernel<<<grid, block, shared, stream>>>(...)): it pushes the launch "
       "configuration, finds the kernel and launches it",
       {"__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaLaunchKernel", "__cudaGetKernel",
        "cudaLaunchKernel"}},
      {kBoth,
       "what the C++ compiler generates for exceptions (the contracts' input checks throw std::invalid_argument), "
       "function-local statics (nvcc's launch stubs keep one) and type information",
       {"__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw", "__cxa_begin_catch", "__cxa_end_catch",
        "__cxa_rethrow", "__cxa_get_exception_ptr", "__cxa_call_terminate", "__cxa_call_unexpected",
        "__cxa_pure_virtual", "__cxa_deleted_virtual", "__cxa_bad_cast", "__cxa_bad_typeid",
        "__cxa_throw_bad_array_new_length", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort",
        "_Unwind_Resume", "__gxx_personality_v0", "std::terminate", "typeinfo for *", "typeinfo name for *",
        "vtable for __cxxabiv1::*"}},
      {kBoth,
       "what the compiler emits for position-independent code, thread-local variables (the CPU backend's "
       "__shared__ arrays are thread_local), the stack protector and some integer and complex arithmetic",
       {"_GLOBAL_OFFSET_TABLE_", "__tls_get_addr", "__stack_chk_fail", "__stack_chk_guard", "__popcount?i2",
        "__clz?i2", "__ctz?i2", "__ffs?i2", "__bswap?i2", "__parity?i2", "__divti3", "__udivti3", "__modti3",
        "__umodti3", "__muloti4", "__powisf2", "__powidf2", "__mulsc3", "__muldc3", "__divsc3", "__divdc3",
        "__aarch64_*"}},
      {kBoth,
       "AddressSanitizer's instrumentation (the cpu-asan preset, and the kernel-address checks of the CPU "
       "backend's rewritten sources): every load and store is checked",
       {"__asan_load*", "__asan_store*", "__asan_report_*", "__asan_init", "__asan_version_mismatch_check_v*",
        "__asan_register_globals", "__asan_unregister_globals", "__asan_handle_no_return", "__asan_stack_malloc_*",
        "__asan_stack_free_*", "__asan_option_detect_stack_use_after_return", "__asan_memcpy", "__asan_memset",
        "__asan_memmove", "__asan_poison_stack_memory", "__asan_unpoison_stack_memory", "__asan_alloca_poison",
        "__asan_allocas_unpoison", "__asan_set_shadow_*", "__asan_shadow_memory_dynamic_address",
        // around a file's dynamic initialisation (cu2cpp registers a __constant__ array from one):
        // the init-order check
        "__asan_before_dynamic_init", "__asan_after_dynamic_init"}},
      {kCpu,
       "the CPU backend's counting of memory accesses: the kernels are compiled with GCC's ThreadSanitizer "
       "instrumentation, whose calls the CPU runtime answers (convlab_cpu/records.hpp)",
       {"__tsan_read*", "__tsan_write*", "__tsan_unaligned_*", "__tsan_volatile_*", "__tsan_atomic*", "__tsan_vptr_*",
        "__tsan_func_entry", "__tsan_func_exit", "__tsan_init"}},
      {kCpu,
       "what cu2cpp's rewrite and the CPU backend's prelude generate: a launch runs the grid "
       "(convlab_cpu::launch), kernels read their thread and block indices, wait at __syncthreads() and "
       "__syncwarp(), shuffle and vote within a warp, get their shared memory, keep their asynchronous copies until "
       "they wait for them (<cuda_pipeline.h>), and count the tensor cores' multiply-adds of the warp matrix API "
       "(<mma.h>)",
       {"convlab_cpu::detail::run_grid", "convlab_cpu::detail::thread_idx", "convlab_cpu::detail::block_idx",
        "convlab_cpu::detail::block_dim", "convlab_cpu::detail::grid_dim", "convlab_cpu::detail::tv",
        "TLS init function for convlab_cpu::detail::tv", "TLS wrapper function for convlab_cpu::detail::tv",
        "convlab_cpu::detail::dynamic_shared_memory", "convlab_cpu::detail::static_shared_memory",
        "convlab_cpu::detail::register_symbol", "convlab_cpu::detail::count_atomic", "convlab_cpu::syncthreads",
        "convlab_cpu::detail::pipeline_state", "convlab_cpu::detail::count_tensor_macs",
        "convlab_cpu::detail::syncwarp", "convlab_cpu::detail::warp_exchange"}},
  };
}

// The C++ and C libraries a kernels file uses.
std::vector<AllowGroup> library_groups() {
  return {
      {kBoth,
       "std::string and the standard exceptions: the contracts build their error messages with them",
       {"std::__cxx11::basic_string<*", "std::basic_string<*", "std::allocator<*", "std::__throw_*", "std::exception::*",
        "std::logic_error::*", "std::runtime_error::*", "std::invalid_argument::*", "std::out_of_range::*",
        "std::length_error::*", "std::domain_error::*", "std::range_error::*", "std::overflow_error::*",
        "std::underflow_error::*", "std::bad_alloc::*", "std::bad_array_new_length::*",
        "std::bad_function_call::*"}},
      {kBoth,
       "heap memory on the host (std::string, std::vector, a host-side table)",
       {"operator new", "operator new[]", "operator delete", "operator delete[]", "malloc", "calloc", "realloc",
        "free", "aligned_alloc", "posix_memalign"}},
      {kBoth,
       "copying and formatting text and printing it to the terminal (printf, fprintf(stderr, ...)): debugging "
       "output; a FILE* other than stdout and stderr cannot be had (fopen is refused)",
       {"memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp", "strchr",
        "strrchr", "strstr", "strcpy", "strncpy", "strcat", "strncat", "printf", "vprintf", "puts", "putchar",
        "fprintf", "vfprintf", "fputs", "fputc", "putc", "fwrite", "fflush", "snprintf", "vsnprintf", "sprintf",
        "vsprintf", "stdout", "stderr", "__printf_chk", "__fprintf_chk", "__vprintf_chk", "__vfprintf_chk",
        "__sprintf_chk", "__snprintf_chk", "__vsprintf_chk", "__vsnprintf_chk", "__memcpy_chk", "__memmove_chk",
        "__memset_chk", "__strcpy_chk", "__strncpy_chk", "__strcat_chk", "__strncat_chk", "__stpcpy_chk",
        "__fwrite_chk"}},
      {kBoth,
       "printing with <iostream> (std::cout, std::cerr, std::clog, std::endl, std::setprecision) and formatting "
       "with std::ostringstream: debugging output, which reaches the graders through a pipe of their own, is cut "
       "after the first lines of each test and shown in your feedback; no verdict is read from it. With GCC 12 and "
       "older <iostream> adds a global constructor, std::ios_base::Init, which the fence accepts when it is all "
       "that runs before main; GCC 13 and later refer to std::ios_base_library_init instead (the H100's Ubuntu "
       "24.04)",
       {"std::cout", "std::cerr", "std::clog", "std::ios_base::Init::*", "std::ios_base_library_init",
        "std::ios_base::ios_base",
        "std::ios_base::~ios_base", "std::basic_ios<*", "std::basic_ostream<*", "std::ostream::*",
        "std::__ostream_insert<*", "std::operator<<*", "std::endl<*", "std::flush<*", "std::ctype<char>::*",
        "std::locale::locale", "std::locale::~locale", "std::__cxx11::basic_ostringstream<*",
        "std::__cxx11::basic_stringbuf<*", "std::basic_streambuf<*", "VTT for std::__cxx11::basic_ostringstream<*",
        "vtable for std::__cxx11::basic_ostringstream<*", "vtable for std::__cxx11::basic_stringbuf<*",
        "vtable for std::basic_streambuf<*", "vtable for std::basic_ios<*"}},
      {kBoth,
       "assert(), which calls abort() when it fails: a failed assertion ends the graders' process as a crash, "
       "which fails the test",
       {"__assert_fail", "abort", "std::__glibcxx_assert_fail"}},
      {kBoth,
       "<cmath> on the host (lab 05's Jacobi solver takes a square root); device code compiles to instructions",
       {"sqrt",      "sqrtf",      "sqrtl",      "cbrt",     "cbrtf",     "exp",       "expf",       "expl",
        "exp2",      "exp2f",      "expm1",      "expm1f",   "log",       "logf",      "logl",       "log2",
        "log2f",     "log10",      "log10f",     "log1p",    "log1pf",    "pow",       "powf",       "powl",
        "sin",       "sinf",       "cos",        "cosf",     "tan",       "tanf",      "sincos",     "sincosf",
        "asin",      "asinf",      "acos",       "acosf",    "atan",      "atanf",     "atan2",      "atan2f",
        "sinh",      "sinhf",      "cosh",       "coshf",    "tanh",      "tanhf",     "asinh",      "asinhf",
        "acosh",     "acoshf",     "atanh",      "atanhf",   "fabs",      "fabsf",     "floor",      "floorf",
        "ceil",      "ceilf",      "trunc",      "truncf",   "round",     "roundf",    "lround",     "lroundf",
        "llround",   "llroundf",   "rint",       "rintf",    "lrint",     "lrintf",    "llrint",     "llrintf",
        "nearbyint", "nearbyintf", "fmod",       "fmodf",    "remainder", "remainderf", "remquo",    "remquof",
        "fma",       "fmaf",       "fmax",       "fmaxf",    "fmin",      "fminf",     "fdim",       "fdimf",
        "hypot",     "hypotf",     "erf",        "erff",     "erfc",      "erfcf",     "tgamma",     "tgammaf",
        "lgamma",    "lgammaf",    "frexp",      "frexpf",   "ldexp",     "ldexpf",    "modf",       "modff",
        "copysign",  "copysignf",  "nextafter",  "nextafterf", "scalbn",  "scalbnf",   "ilogb",      "ilogbf",
        "logb",      "logbf",      "nan",        "nanf",     "__isnan",   "__isnanf",  "__isinf",    "__isinff",
        "__finite",  "__finitef",  "__fpclassify", "__fpclassifyf", "__signbit", "__signbitf", "abs", "labs",
        "llabs",     "div",        "ldiv"}},
  };
}

// The CUDA runtime a launcher uses.
std::vector<AllowGroup> runtime_groups() {
  return {
      {kBoth,
       "errors, launch configuration and device queries: what a launcher needs to choose its grid and its "
       "shared memory, and to report a launch that failed (CONVLAB_CHECK_LAUNCH)",
       {"cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", "cudaLaunchKernel",
        "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig",
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        "cudaOccupancyAvailableDynamicSMemPerBlock", "cudaGetDevice", "cudaGetDeviceCount", "cudaDeviceGetAttribute",
        "cudaGetDeviceProperties", "cudaGetDeviceProperties_v2", "cudaDriverGetVersion", "cudaRuntimeGetVersion"}},
      {kBoth,
       "device memory of your own and copies: the runner's recorder sees each of these calls (it wraps them for "
       "the technique and timing graders), so a buffer of your own is graded, never hidden; the labs' planted "
       "evasions use them too (a filter in a global buffer, a materialised column matrix), and the technique "
       "graders, not this list, say what is wrong with that",
       {"cudaMalloc", "cudaFree", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemset", "cudaMemsetAsync",
        "cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync", "cudaMemGetInfo"}},
      {kBoth,
       "streams and events of your own, and waiting for your own work (cudaDeviceSynchronize, cudaStreamSynchronize): "
       "the graders' timer covers the whole device and names a launch on a stream other than the one they pass, "
       "and your events cannot reach the graders' timer, so none of these changes a time or a result",
       {"cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority", "cudaStreamDestroy",
        "cudaStreamSynchronize", "cudaStreamQuery", "cudaStreamWaitEvent", "cudaDeviceSynchronize", "cudaEventCreate",
        "cudaEventCreateWithFlags", "cudaEventDestroy", "cudaEventRecord", "cudaEventRecordWithFlags",
        "cudaEventSynchronize", "cudaEventQuery", "cudaEventElapsedTime", "cudaEventElapsedTime_v2"}},
  };
}

}  // namespace

const std::vector<AllowGroup>& base_allow_list() {
  static const std::vector<AllowGroup> list = joined<AllowGroup>({compiler_groups(), library_groups(), runtime_groups()});
  return list;
}

const std::vector<NvccOnly>& nvcc_only() {
  // nvcc registers the file's fat binary, kernels and __constant__ / __device__
  // variables in a start-up function (__sti____cudaRegisterAll, which also
  // atexit()s the unregistration), and replaces the host copy of every __device__
  // function by a stub that calls exit(1) (it must never run on the host).
  static const std::vector<NvccOnly> list = {
      {"__cudaRegisterFatBinary", "registration"},    {"__cudaRegisterFatBinaryEnd", "registration"},
      {"__cudaUnregisterFatBinary", "registration"},  {"__cudaRegisterFunction", "registration"},
      {"__cudaRegisterVar", "registration"},          {"__cudaInitModule", "registration"},
      {"atexit", "registration"},                     {"exit", "device-stub"},
  };
  return list;
}

const std::vector<CpuAlias>& cpu_aliases() {
  static const std::vector<CpuAlias> list = {
      {"convlab_cpu::copy_symbol",
       {"cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync"}},
      {"convlab_cpu::set_max_dynamic_shared", {"cudaFuncSetAttribute"}},
      {"convlab_cpu::set_last_error", {"cudaFuncSetAttribute"}},
  };
  return list;
}

const char* const kDefaultReason =
    "it is not on the list of what this lab's kernels may call; if your design needs it, ask your instructor, "
    "who can add it to the \"fence\" section of the lab's grading.json";

namespace {

// What a process may do to itself or the system: its settings, other processes, its end, its
// memory, threads, files, signals and identity.
std::vector<Reason> process_reasons() {
  return {
      {"the graders fix every setting before your code runs",
       {"getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv", "environ", "__environ", "_environ"}},
      {"it starts or waits for other processes, and your kernels' file runs inside the graders' process",
       {"fork", "vfork", "clone", "clone3", "__clone", "execv", "execve", "execvp", "execvpe", "execl", "execle",
        "execlp", "execveat", "fexecve", "system", "popen", "pclose", "posix_spawn*", "daemon", "setsid", "setpgid",
        "wait", "waitpid", "wait3", "wait4", "waitid"}},
      {"it ends the program, and the graders decide when their process ends and what it reports",
       {"exit", "_exit", "_Exit", "quick_exit", "std::exit", "std::quick_exit", "std::_Exit"}},
      {"it registers code to run when the program ends, after the graders' checks; a function-local static object "
       "with a destructor does this too: use a plain local variable, or a type without a destructor",
       {"atexit", "at_quick_exit", "on_exit", "__cxa_atexit", "__cxa_thread_atexit", "__cxa_thread_atexit_impl",
        "__dso_handle"}},
      {"it inspects or changes a process from the outside",
       {"ptrace", "process_vm_readv", "process_vm_writev", "prctl", "personality"}},
      {"loading libraries or looking up functions at run time would get round this check",
       {"dlopen", "dlmopen", "dlsym", "dlvsym", "dlclose", "dlerror", "dladdr", "dladdr1", "dlinfo",
        "dl_iterate_phdr", "_dl_*"}},
      {"it changes the process's memory mappings or protections, and the graders' code and data must stay as they "
       "are",
       {"mprotect", "pkey_*", "mmap", "mmap64", "munmap", "mremap", "madvise", "memfd_create", "shm_open", "shmat",
        "shmget", "brk", "sbrk"}},
      {"it makes system calls directly", {"syscall", "__syscall*"}},
      {"it starts a thread or a timer, and work that goes on after your launcher returns escapes the graders' "
       "timing and checks",
       {"pthread_*", "std::thread::*", "std::jthread::*", "thrd_*", "std::__future_base::*", "std::async*",
        "timer_create", "timer_settime"}},
      {"it reads or writes files, sockets or devices, and your kernels get their inputs and give their outputs "
       "only through the launcher's arguments",
       {"fopen",      "fopen64",    "freopen",   "freopen64",  "fdopen",     "fclose",   "open",       "open64",
        "openat",     "openat64",   "__open*",   "creat",      "creat64",    "write",    "writev",     "pwrite*",
        "read",       "readv",      "pread*",    "close",      "unlink",     "unlinkat", "remove",     "rename",
        "renameat*",  "mkdir",      "mkdirat",   "rmdir",      "opendir",    "readdir*", "scandir*",   "stat*",
        "lstat*",     "fstat*",     "__xstat*",  "__fxstat*",  "__lxstat*",  "statx",    "access",     "faccessat*",
        "chdir",      "fchdir",     "chmod",     "fchmod*",    "chown",      "fchown*",  "truncate*",  "ftruncate*",
        "dup",        "dup2",       "dup3",      "pipe",       "pipe2",      "mkfifo*",  "link",       "linkat",
        "symlink*",   "readlink*",  "realpath",  "getcwd",     "tmpfile*",   "mkstemp*", "mkdtemp",    "tmpnam*",
        "fread",      "fgets",      "fgetc",     "getc",       "getline",    "getdelim", "fscanf",     "scanf",
        "__isoc99_*", "__isoc23_*", "ioctl",     "fcntl*",     "socket",     "socketpair", "connect",  "bind",
        "listen",     "accept*",    "send*",     "recv*",      "splice",     "tee",      "inotify_*",  "fanotify_*",
        "std::basic_ifstream<*", "std::basic_ofstream<*", "std::basic_fstream<*", "std::basic_filebuf<*",
        "std::__basic_file<*", "std::filesystem::*"}},
      {"it handles or sends signals, and the graders handle time limits and crashes themselves",
       {"signal", "sigaction", "__sysv_signal", "bsd_signal", "sigprocmask", "sigaltstack", "sigsuspend", "raise",
        "kill", "killpg", "tgkill", "alarm", "setitimer", "pause"}},
      {"it changes the process's identity, limits or scheduling, which the graders set",
       {"setuid", "setgid", "seteuid", "setegid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
        "chroot", "unshare", "setns", "mount", "umount*", "setrlimit*", "prlimit*", "setpriority", "nice",
        "sched_set*"}},
  };
}

// The CUDA runtime's calls that change what the graders time or see, or go around their recorder.
std::vector<Reason> cuda_reasons() {
  return {
      {"it changes a device-wide setting or the L2 cache's policy, which the graders' timing depends on: a "
       "persisting L2 access-policy window keeps your data in the cache across the graders' flush",
       {"cudaDeviceSetLimit", "cudaDeviceSetCacheConfig", "cudaDeviceSetSharedMemConfig", "cudaStreamSetAttribute",
        "cudaStreamCopyAttributes", "cudaCtxResetPersistingL2Cache", "cudaLaunchKernelEx*", "cudaDeviceSetMemPool",
        "cudaMemPool*", "cudaDeviceSetGraphMemAttribute", "cudaDeviceGraphMemTrim", "cudaMemAdvise*",
        "cudaMemPrefetch*", "cudaDeviceFlushGPUDirectRDMAWrites"}},
      {"it changes which GPU runs or resets it, and the graders own the device and its memory",
       {"cudaDeviceReset", "cudaSetDevice", "cudaSetDeviceFlags", "cudaInitDevice", "cudaSetValidDevices",
        "cudaChooseDevice", "cudaThreadExit", "cudaDeviceEnablePeerAccess", "cudaDeviceDisablePeerAccess"}},
      {"it launches a kernel around the runner's recorder of your launches (use <<<...>>> or cudaLaunchKernel): "
       "the technique and timing graders would not see it",
       {"cudaLaunchCooperativeKernel*", "cudaLaunchCooperativeKernelMultiDevice", "cudaLaunchDevice*"}},
      {"it captures or defers work, as CUDA graphs and host callbacks do, and your launches must run while your "
       "launcher runs, where the graders see them",
       {"cudaStreamBeginCapture*", "cudaStreamEndCapture", "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo*",
        "cudaStreamUpdateCaptureDependencies*", "cudaThreadExchangeStreamCaptureMode", "cudaGraph*",
        "cudaUserObject*", "cudaLaunchHostFunc", "cudaStreamAddCallback"}},
      {"profiling and device management belong to the graders",
       {"cudaProfilerStart", "cudaProfilerStop", "cupti*", "nvml*", "nvtx*", "cuProfiler*"}},
      {"the CUDA driver API and its entry points work beneath the runtime that the graders watch",
       {"cudaGetDriverEntryPoint*", "cudaGetFuncBySymbol", "cudaGetKernel", "cudaLibrary*", "cudaKernel*",
        "cudaGetExportTable", "__cudaGetExportTable"}},
      {"it allocates memory that the graders' recorder of your calls does not see (managed, pinned, pooled or "
       "pitched memory): use cudaMalloc",
       {"cudaMallocManaged", "cudaMallocHost", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
        "cudaHostGetDevicePointer", "cudaFreeHost", "cudaMallocAsync", "cudaFreeAsync", "cudaMallocFromPoolAsync",
        "cudaMalloc3D*", "cudaMallocPitch", "cudaMallocArray", "cudaFreeArray"}},
      {"it shares memory with other processes", {"cudaIpc*"}},
      {"it copies or fills memory in a way the graders' recorder of your calls does not see: use cudaMemcpy, "
       "cudaMemcpyAsync, cudaMemset or cudaMemsetAsync",
       {"cudaMemcpy*", "cudaMemset*"}},
  };
}

// Reading input, and the graders' own code: their test framework, the CPU backend's runtime,
// their libraries, the sanitizers and the recorder's wrappers.
std::vector<Reason> grader_reasons() {
  return {
      {"it reads input (std::cin, an input stream): your kernels get their inputs only through the launcher's "
       "arguments",
       {"std::cin", "std::wcin", "std::basic_istream<*", "std::istream::*", "std::__cxx11::basic_istringstream<*",
        "std::__cxx11::basic_stringstream<*", "std::operator>>*", "std::getline<*", "std::ws<*"}},
      {"it is GoogleTest, the graders' test framework", {"testing::*"}},
      {"it sets the CPU backend's thread schedule, which the graders choose for each test: the schedule decides "
       "which missing barriers a run shows",
       {"convlab_cpu::set_schedule*"}},
      {"it is part of the CPU backend's runtime, which only the code that cu2cpp generates may call",
       {"convlab_cpu::*", "TLS init function for convlab_cpu::*", "TLS wrapper function for convlab_cpu::*"}},
      {"it is part of the graders, which your kernels may not call: write your own helper",
       {"convlab::*", "typeinfo for convlab::*", "vtable for convlab::*"}},
      {"it belongs to the graders' libraries", {"nlohmann::*", "boost::*", "CLI::*"}},
      {"it controls the sanitizers that check your code, or the counting of your memory accesses",
       {"__asan_*", "__sanitizer_*", "__lsan_*", "__ubsan_*", "__tsan_*"}},
      {"it goes around the graders' recorder of your launches, copies and allocations", {"__real_*", "__wrap_*"}},
  };
}

}  // namespace

const std::vector<Reason>& refusal_reasons() {
  static const std::vector<Reason> list = joined<Reason>({process_reasons(), cuda_reasons(), grader_reasons()});
  return list;
}

const std::vector<HeaderDefinitions>& header_definitions() {
  static const std::vector<HeaderDefinitions> list = {
      {kBoth, "convlab/check.hpp",
       {"convlab::CudaError::*", "typeinfo for convlab::CudaError", "typeinfo name for convlab::CudaError",
        "vtable for convlab::CudaError", "convlab::detail::cuda_check"}},
      {kBoth, "convlab/contract.hpp", {"convlab::require_conv1d_problem", "convlab::require_conv2d_problem"}},
      {kBoth, "convlab/device_buffer.hpp",
       {"convlab::DeviceBuffer<*", "convlab::poison_nan", "convlab::guard_nan"}},
      {kBoth, "convlab/wgmma.hpp", {"convlab::wgmma::*"}},
      {kCpu, "convlab_cpu/launch.hpp and runtime.hpp",
       {"convlab_cpu::launch<*", "convlab_cpu::dynamic_shared<*", "typeinfo for convlab_cpu::launch<*",
        "typeinfo name for convlab_cpu::launch<*", "convlab_cpu::LaunchConfig::*", "convlab_cpu::LaunchSite::*",
        "convlab_cpu::detail::ThreadView::*", "convlab_cpu::detail::static_shared<*",
        "convlab_cpu::detail::DynamicShared<*", "convlab_cpu::detail::DeviceSymbol::*",
        "convlab_cpu::detail::device_symbol<*", "convlab_cpu::kUnwrittenSharedBits",
        "TLS wrapper function for convlab_cpu::detail::tv", "TLS init function for convlab_cpu::detail::tv"}},
  };
  return list;
}

const std::vector<const char*>& c_library_variables() {
  static const std::vector<const char*> list = {
      "environ",  "stdin",   "stdout",   "stderr",  "optarg",   "optind",   "opterr",   "optopt",
      "program_invocation_name", "program_invocation_short_name", "timezone", "daylight", "tzname",
      "signgam",  "h_errno", "errno",    "sys_errlist", "sys_nerr", "sys_siglist", "obstack_alloc_failed_handler",
      "error_print_progname", "error_message_count", "error_one_per_line", "argp_program_version",
      "argp_program_bug_address", "argp_program_version_hook", "argp_err_exit_status", "re_syntax_options",
      "getdate_err", "in6addr_any", "in6addr_loopback", "loc1", "loc2", "locs"};
  return list;
}

const std::vector<const char*>& graders_answers() {
  static const std::vector<const char*> list = {"convlab::golden::*",   "convlab::*::golden::*", "convlab::*_golden",
                                                "convlab::baselines::*", "convlab::*::baseline::*",
                                                "* for convlab::*::golden::*", "* for convlab::*::baseline::*"};
  return list;
}

const char* const kGradersAnswersReason =
    "it is the graders' golden model or baseline kernel, which computes the answer your kernels must compute";

// The CUDA driver API: cuInit, cuLaunchKernel, cuGetProcAddress, ...
bool driver_api(const Name& n) {
  return !n.mangled && n.qualified.size() > 2 && starts_with(n.qualified, "cu") &&
         std::isupper(static_cast<unsigned char>(n.qualified[2]));
}

// Names of the CUDA libraries and interfaces: a definition of one in the global
// namespace could stand in for the library's.
bool cuda_name(const std::string& base) {
  for (const char* p : {"cuda", "__cuda", "cudnn", "cublas", "cufft", "curand", "cusparse", "cusolver", "cupti",
                        "nvml", "nvtx", "nvrtc", "npp"})
    if (starts_with(base, p)) return true;
  return base.size() > 2 && starts_with(base, "cu") && std::isupper(static_cast<unsigned char>(base[2]));
}

bool graders_answer(const Name& n) {
  for (const char* p : graders_answers())
    if (matches(p, n)) return true;
  return false;
}

std::string reason_for(const Name& n) {
  if (graders_answer(n)) return kGradersAnswersReason;
  if (driver_api(n)) return "the CUDA driver API and its entry points work beneath the runtime that the graders watch";
  for (const auto& r : refusal_reasons())
    for (const char* p : r.patterns)
      if (matches(p, n)) return r.why;
  return kDefaultReason;
}

}  // namespace convlab::fence
