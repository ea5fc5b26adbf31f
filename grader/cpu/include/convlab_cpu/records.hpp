/// @file records.hpp
/// @brief What the student's code did on the CPU backend: a record of every kernel
/// launch, with exact counts of its memory accesses by memory space, and of every
/// allocation and copy it made through the runtime.
///
/// The counts come from the compiler: the CPU backend builds the rewritten student
/// sources with GCC's `-fsanitize=thread` instrumentation, so the compiled code calls
/// `__tsan_read4(address)` (and the other sizes, `__tsan_write4`, and the atomics) at
/// every load and store it makes; no ThreadSanitizer runtime is linked: the CPU runtime
/// defines those functions and, while a counted kernel runs, classifies each address:
///   - global: inside a `cudaMalloc`/`cudaMallocHost` allocation or a `__device__` variable;
///   - shared: inside the running block's shared memory (static `__shared__` and dynamic);
///   - constant: inside a `__constant__` variable;
///   - anything else (the thread's stack, `threadIdx`, host memory) is not counted.
/// A count is of memory instructions after optimisation (`-O3`): one per scalar or
/// vector access (a `float4` load is one load of 16 bytes; a struct copy may be one
/// access of its size), a value the compiler keeps in a register is not reloaded, and
/// `memcpy` inside a kernel is not counted. Atomics (`atomicAdd`, ...) are counted apart
/// from loads and stores. Only files built for counting are counted: the launching file
/// decides (a kernel is defined in the file that launches it).
///
/// A build with AddressSanitizer (preset `cpu-asan`) cannot instrument the student's
/// code this way: there access_counts_available() is false and every launch record
/// says `counted == false`; the other fields of the records are filled in every build.
///
/// Records accumulate from the start of the process until clear_records(); a grader
/// clears them, calls the student's launcher, then reads them:
/// @code
///   convlab_cpu::clear_records();
///   conv1d_tiled_loop(d_in, d_out, problem, stream);  // the student's launcher
///   for (const convlab_cpu::LaunchRecord& r : convlab_cpu::launch_records())
///     if (r.counted)
///       std::printf("%s: %.2f global loads, %.2f shared loads per output\n", r.kernel.c_str(),
///                   double(r.global.loads) / n, double(r.shared.loads) / n);
/// @endcode
#pragma once

#include "convlab_cpu/runtime.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace convlab_cpu {

/// Where an address lies, as the GPU would see it.
enum class MemorySpace {
  global,    ///< device memory: cudaMalloc, cudaMallocHost, `__device__` variables
  shared,    ///< the running block's shared memory
  constant,  ///< `__constant__` variables
  other,     ///< anything else: host memory, the thread's stack and registers
};
/// "global", "shared", "constant" or "other".
const char* to_string(MemorySpace space);

/// Memory accesses of one kind of memory (or of one allocation or symbol).
struct AccessCount {
  std::uint64_t loads = 0;        ///< load instructions
  std::uint64_t load_bytes = 0;   ///< bytes they read
  std::uint64_t stores = 0;       ///< store instructions
  std::uint64_t store_bytes = 0;  ///< bytes they wrote
  std::uint64_t atomics = 0;      ///< atomic read-modify-writes (atomicAdd, atomicCAS, ...)
  AccessCount& operator+=(const AccessCount& o);
  bool any() const { return loads || stores || atomics; }
};

/// The accesses a launch made to one allocation or one `__constant__`/`__device__` variable.
struct RangeAccess {
  const void* base = nullptr;  ///< the allocation's or the variable's first byte
  std::size_t bytes = 0;       ///< its size
  MemorySpace space = MemorySpace::global;
  std::string symbol;          ///< the variable's name as the source declares it; empty for an allocation
  bool pinned_host = false;    ///< a cudaMallocHost allocation (host memory the GPU maps)
  AccessCount count;
};

/// One kernel launch, `kernel<<<grid, block, shared, stream>>>(...)`, as the runtime saw it.
struct LaunchRecord {
  std::uint64_t sequence = 0;  ///< position among all launch and memory records
  std::string kernel;          ///< the name written before <<< (e.g. `conv1d_tiled_kernel<3>`)
  std::string file;            ///< where the launch is written
  int line = 0;
  dim3 grid, block;
  std::size_t dynamic_shared_bytes = 0;  ///< the third launch argument
  std::size_t static_shared_bytes = 0;   ///< `__shared__` variables a block reached (the largest block)
  cudaStream_t stream = nullptr;         ///< the fourth launch argument
  /// cudaSuccess; a configuration error (no block ran) or the error a block raised while running.
  cudaError_t error = cudaSuccess;
  std::uint64_t blocks_run = 0;   ///< blocks that ran (all of the grid unless the launch failed)
  std::uint64_t threads_run = 0;  ///< threads of those blocks
  std::uint64_t barriers = 0;     ///< `__syncthreads()` calls, summed over threads
  /// Multiply-adds done by the warp matrix API's mma_sync (tensor cores), counted once per warp:
  /// 16 x 16 x 8 per call of an m16n16k8 fragment. Counted in every build, as barriers are.
  std::uint64_t tensor_macs = 0;
  /// True when the memory access counts below are exact: the kernel's source was built for
  /// counting (see access_counts_available()). False: they are zero and mean nothing.
  bool counted = false;
  AccessCount global, shared, constant;  ///< accesses by memory space
  std::vector<RangeAccess> ranges;       ///< per allocation and variable touched, by address
};

/// What a memory call did.
enum class MemoryOp {
  malloc,              ///< cudaMalloc
  malloc_host,         ///< cudaMallocHost
  free,                ///< cudaFree
  free_host,           ///< cudaFreeHost
  memcpy,              ///< cudaMemcpy, cudaMemcpyAsync
  memset,              ///< cudaMemset, cudaMemsetAsync
  memcpy_to_symbol,    ///< cudaMemcpyToSymbol(Async)
  memcpy_from_symbol,  ///< cudaMemcpyFromSymbol
};
/// "malloc", "memcpy", "memcpy_to_symbol", ...
const char* to_string(MemoryOp op);

/// One call of the runtime's memory API.
struct MemoryRecord {
  std::uint64_t sequence = 0;  ///< position among all launch and memory records
  MemoryOp op = MemoryOp::memcpy;
  cudaError_t result = cudaSuccess;            ///< what the call returned
  cudaMemcpyKind kind = cudaMemcpyHostToHost;  ///< the direction passed (copies)
  const void* dst = nullptr;  ///< destination; the allocation (malloc, malloc_host); the freed pointer (free)
  const void* src = nullptr;  ///< source (copies)
  std::size_t bytes = 0;      ///< bytes copied, set or allocated
  std::size_t offset = 0;     ///< offset into the symbol (symbol copies)
  int value = 0;              ///< the byte value (memset)
  MemorySpace dst_space = MemorySpace::other;  ///< where dst lies (global, constant or other = host)
  MemorySpace src_space = MemorySpace::other;  ///< where src lies
  std::string symbol;         ///< the `__constant__`/`__device__` variable's name (symbol copies)
  bool async = false;         ///< the Async form
  cudaStream_t stream = nullptr;
};

/// False in a build that cannot count memory accesses (AddressSanitizer): then every
/// LaunchRecord has counted == false, which must be read as "unknown", not as zero.
bool access_counts_available();

/// The launches since the start or the last clear_records(), in order.
std::vector<LaunchRecord> launch_records();
/// The memory calls since the start or the last clear_records(), in order.
std::vector<MemoryRecord> memory_records();
/// Forgets every record. Counting itself goes on.
void clear_records();
/// Records not kept since the last clear_records(), because a list was full.
std::uint64_t dropped_records();
/// How many records each list keeps (a bound on memory); 0 restores the default, 65536.
void set_record_limit(std::size_t limit);

/// Where `address` lies now (global, constant or other; shared only inside a kernel).
MemorySpace space_of(const void* address);

}  // namespace convlab_cpu
