/// @file gpu_model.hpp
/// @brief The two pieces of an SM that the handouts work out by hand: shared-memory
/// banks (how many passes one warp-wide access takes) and occupancy (how many
/// blocks of a kernel an H100 SM holds at once). The handouts' answers on bank
/// conflicts (labs 03 and 04) and occupancy (labs 04 and 05) are computed here.
///
/// Banks: 32 banks of 4-byte words; word w lies in bank w mod 32. A warp's access
/// takes as many passes as the largest number of *distinct* words that fall in one
/// bank (lanes reading the same word share one read, a broadcast).
///
/// Occupancy on an H100 (compute capability 9.0): 65,536 registers, 228 KB of
/// shared memory (at most 227 KB for one block, and 1 KB reserved per block), 2048
/// threads (64 warps) and 32 blocks per SM. Registers are handed out per warp in
/// units of 256, so a thread's count rounds up to a multiple of 8.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace convlab::handout {

/// Passes of one warp-wide shared-memory access to 4-byte words at `words`
/// (word addresses, one per active lane): the largest number of distinct words
/// in one of the 32 banks; 1 means conflict-free, 0 an empty access.
inline int bank_passes(const std::vector<long long>& words) {
  std::map<int, std::set<long long>> by_bank;
  for (long long w : words) by_bank[int(((w % 32) + 32) % 32)].insert(w);
  int worst = 0;
  for (const auto& [bank, distinct] : by_bank) worst = std::max(worst, int(distinct.size()));
  return worst;
}

/// The H100's per-SM limits (compute capability 9.0).
struct H100Sm {
  static constexpr int registers = 65536;
  static constexpr int register_unit = 256;            ///< registers per warp come in units of 256
  static constexpr int shared_bytes = 228 * 1024;
  static constexpr int shared_bytes_per_block_max = 227 * 1024;
  static constexpr int shared_reserved_per_block = 1024;
  static constexpr int threads = 2048;
  static constexpr int warps = 64;
  static constexpr int blocks = 32;
  static constexpr int max_registers_per_thread = 255;
};

/// What limits a kernel's blocks on one SM, each resource on its own, and the result.
struct Occupancy {
  int registers_allocated = 0;  ///< per thread, rounded up to the allocation unit
  int by_threads = 0, by_registers = 0, by_shared = 0, by_blocks = H100Sm::blocks;
  int blocks = 0;               ///< the smallest of the four
  int warps = 0;                ///< blocks x warps per block
  double percent = 0;           ///< warps / 64
  std::string limiter;          ///< "registers", "shared memory", "threads" or "blocks"
};

/// Blocks of `threads` threads using `registers` registers per thread and
/// `shared_bytes` of shared memory per block that one H100 SM runs at once.
inline Occupancy h100_occupancy(int threads, int registers, int shared_bytes) {
  Occupancy o;
  const int warps_per_block = (threads + 31) / 32;
  o.registers_allocated = (registers + 7) / 8 * 8;
  const int per_warp = (o.registers_allocated * 32 + H100Sm::register_unit - 1) / H100Sm::register_unit *
                       H100Sm::register_unit;
  o.by_threads = H100Sm::warps / warps_per_block;
  o.by_registers = per_warp == 0 ? H100Sm::blocks : H100Sm::registers / (per_warp * warps_per_block);
  o.by_shared = H100Sm::shared_bytes / (shared_bytes + H100Sm::shared_reserved_per_block);
  o.blocks = std::min({o.by_threads, o.by_registers, o.by_shared, o.by_blocks});
  o.limiter = o.blocks == o.by_registers ? "registers"
              : o.blocks == o.by_shared  ? "shared memory"
              : o.blocks == o.by_threads ? "threads"
                                         : "blocks";
  o.warps = o.blocks * warps_per_block;
  o.percent = 100.0 * o.warps / H100Sm::warps;
  return o;
}

/// The most registers per thread (a multiple of 8, or the limit of 255) with which `blocks`
/// blocks of `threads` threads fit the register file: what `__launch_bounds__(threads,
/// blocks)` leaves the compiler.
inline int h100_registers_for(int threads, int blocks) {
  const int warps_per_block = (threads + 31) / 32;
  const int per_thread = H100Sm::registers / (blocks * warps_per_block * 32);
  return std::min(H100Sm::max_registers_per_thread, per_thread / 8 * 8);
}

}  // namespace convlab::handout
