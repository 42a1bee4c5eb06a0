// The kernel cache: memory (single flight: one compile per key however many threads ask at once)
// in front of NVRTC. Returns Kernels that load their module on the device at first use.
#pragma once

#include "jit/kernel_key.hpp"
#include "jit/module.hpp"
#include "jit/nvrtc_compiler.hpp"

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tilejit::jit {

struct KernelRequest {
  std::string family;  // "elementwise", "gemm", ...
  std::string arch;
  CompileRequest compile;
};

// A compiled kernel; its module is loaded on first use.
class Kernel {
 public:
  Kernel(KernelKey key, KernelRequest request, CompiledKernel compiled, bool from_cache)
      : key_(std::move(key)), request_(std::move(request)), compiled_(std::move(compiled)), from_cache_(from_cache) {}

  const KernelKey& key() const noexcept { return key_; }
  const KernelRequest& request() const noexcept { return request_; }
  const CompiledKernel& compiled() const noexcept { return compiled_; }
  bool from_cache() const noexcept { return from_cache_; }

  // The function on `device`, loading the module the first time (the caller made ctx current).
  CUfunction function(int device) {
    CUfunction fn = function_.load(std::memory_order_acquire);
    return fn ? fn : load(device);
  }

 private:
  CUfunction load(int device);
  KernelKey key_;
  KernelRequest request_;
  CompiledKernel compiled_;
  bool from_cache_;
  std::mutex load_mutex_;
  Module module_;
  std::atomic<CUfunction> function_{nullptr};
};

struct KernelCacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t compiles = 0;
  double compile_seconds = 0;
};

class KernelCache {
 public:
  KernelCache(const NvrtcCompiler& compiler, bool always_compile)
      : compiler_(compiler), always_compile_(always_compile) {}

  KernelKey key_for(const KernelRequest& request) const;
  // Memory hit, or a compile (only one per key at a time; others wait for it and share the result).
  // `compiled` (optional) is set to whether this call compiled the kernel.
  std::shared_ptr<Kernel> get(const KernelRequest& request, bool* compiled = nullptr);
  KernelCacheStats stats() const;
  // Drops every entry (Kernels still held elsewhere stay alive).
  void clear();
  const NvrtcCompiler& compiler() const noexcept { return compiler_; }

 private:
  std::shared_ptr<Kernel> build(KernelKey key, const KernelRequest& request);

  const NvrtcCompiler& compiler_;
  bool always_compile_;
  mutable std::mutex mutex_;
  std::unordered_map<util::Hash128, std::shared_future<std::shared_ptr<Kernel>>, util::Hash128Hasher> entries_;
  std::atomic<std::uint64_t> memory_hits_{0};
  std::atomic<std::uint64_t> compiles_{0};
  std::atomic<std::uint64_t> compile_microseconds_{0};
};

}  // namespace tilejit::jit
