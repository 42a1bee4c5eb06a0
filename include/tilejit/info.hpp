// What tilejit reports about a device, a compiled kernel and a runtime's caches: plain data, a leaf
// header (no runtime types), shared by the JIT core and the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tilejit {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;
  std::size_t l2_bytes = 0;
  int max_shared_memory_per_block_optin = 0;
  int max_threads_per_block = 0;
};

// What one compile produced; returned by the compile-only entry points.
struct CompiledKernelInfo {
  std::string program_name;   // e.g. "elementwise_z_eq_x_plus_y"
  std::string kernel_name;    // C++ name expression of the instantiation
  std::string lowered_name;   // symbol in the cubin
  std::string arch;           // e.g. "sm_90a"
  std::string key;            // 32 hex digits of the kernel key
  std::vector<std::string> options;
  std::string source;         // the instantiated source handed to NVRTC
  double compile_ms = 0;      // 0 when it came from a cache
  std::size_t cubin_bytes = 0;
  bool from_cache = false;
  // NVRTC's log of this compile: compiler warnings and ptxas's advisories, such as "(C7511) Potential
  // Performance Loss: wgmma.mma_async instructions are serialized ..." (those are also logged at warn
  // level). Empty when nothing was reported or the kernel came from a cache.
  std::string compile_log;
};

// This process's counters for one Runtime.
struct RuntimeStats {
  std::uint64_t memory_hits = 0;  // kernel found compiled in memory
  std::uint64_t disk_hits = 0;    // kernel loaded from the disk cache
  std::uint64_t compiles = 0;     // NVRTC compiles performed
  double compile_seconds = 0;
  // Kernel another Runtime of this process had compiled or read from disk (a Runtime per device:
  // each kernel is compiled once in the process for every device of its arch).
  std::uint64_t shared_hits = 0;
};

}  // namespace tilejit
