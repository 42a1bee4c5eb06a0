// The kernel cache: memory (single flight: one compile per key however many threads ask at once)
// in front of NVRTC. Returns Kernels that load their module on the device at first use. Each
// Runtime has its own (its own context, modules and plans); a cubin one of them compiled or read
// from disk is handed to the others of the process (one Runtime per device) through a table of
// the process, so that a kernel is compiled once in a process for every device of its arch.
#pragma once

#include "jit/disk_cache.hpp"
#include "jit/kernel_key.hpp"
#include "jit/module.hpp"
#include "jit/nvrtc_compiler.hpp"

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace tilejit::jit {

struct KernelRequest {
  std::string family;  // "elementwise", "gemm", ...
  std::string arch;
  CompileRequest compile;
  std::string dtypes;  // for cache listings, e.g. "f32,f32->f32"
  std::string config;  // for cache listings, e.g. "tile=1024 threads=256 vec=4"
};

class KernelCache;

// A compiled kernel; its module is loaded on first use.
class Kernel {
 public:
  Kernel(KernelKey key, KernelRequest request, CompiledKernel compiled, bool from_disk, KernelCache* cache)
      : Kernel(std::move(key), std::move(request), std::make_shared<const CompiledKernel>(std::move(compiled)), from_disk, cache) {}
  // A cubin shared with the Kernels of the process's other caches (other devices): not copied.
  Kernel(KernelKey key, KernelRequest request, std::shared_ptr<const CompiledKernel> compiled, bool from_disk, KernelCache* cache)
      : key_(std::move(key)), request_(std::move(request)), compiled_(std::move(compiled)), from_disk_(from_disk), cache_(cache) {}

  const KernelKey& key() const noexcept { return key_; }
  const KernelRequest& request() const noexcept { return request_; }
  const CompiledKernel& compiled() const noexcept { return *compiled_; }
  const std::shared_ptr<const CompiledKernel>& compiled_shared() const noexcept { return compiled_; }
  bool from_disk() const noexcept { return from_disk_; }

  // The (first) function on `device`, loading the module the first time (the caller made ctx current).
  CUfunction function(int device) {
    CUfunction fn = function_.load(std::memory_order_acquire);
    return fn ? fn : load(device);
  }
  // The function of name expression `index` (a program may export several).
  CUfunction function(int device, std::size_t index);

 private:
  CUfunction load(int device);
  KernelKey key_;
  KernelRequest request_;
  std::shared_ptr<const CompiledKernel> compiled_;
  bool from_disk_;
  KernelCache* cache_;
  std::mutex load_mutex_;
  Module module_;
  std::vector<CUfunction> functions_;  // one per name expression, set before function_
  std::atomic<CUfunction> function_{nullptr};
};

// Values by key, each made once however many threads ask at once: claim() gives the first caller of
// a key the promise to make it (make()), and every caller the future it arrives in. A value that
// fails to be made is forgotten (a later claim tries again) and its waiters get the exception.
template <class T> class SingleFlight {
 public:
  struct Claim {
    std::shared_future<T> future;
    std::optional<std::promise<T>> promise;  // set for the caller that is to make the value
  };
  Claim claim(const util::Hash128& key) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return {it->second, std::nullopt};
    std::promise<T> promise;
    std::shared_future<T> future = promise.get_future().share();
    entries_.emplace(key, future);
    return {std::move(future), std::move(promise)};
  }
  // Fulfils a claim: the value `make_value()` returns goes to every waiter and is returned.
  template <class Make> T make(const util::Hash128& key, std::promise<T>& promise, Make&& make_value) {
    try {
      T value = make_value();
      promise.set_value(value);
      return value;
    } catch (...) {
      forget(key);
      promise.set_exception(std::current_exception());
      throw;
    }
  }
  void forget(const util::Hash128& key) {
    std::lock_guard lock(mutex_);
    entries_.erase(key);
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<util::Hash128, std::shared_future<T>, util::Hash128Hasher> entries_;
};

struct KernelCacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t compiles = 0;
  double compile_seconds = 0;
  std::uint64_t shared_hits = 0;  // compiled (or read from disk) for another cache of this process
};

class KernelCache {
 public:
  // `disk` may be null (TILEJIT_CACHE=off); it must outlive the cache.
  KernelCache(const NvrtcCompiler& compiler, DiskCache* disk, bool always_compile);
  ~KernelCache();

  KernelKey key_for(const KernelRequest& request) const;
  KernelKeyParts key_parts(const KernelRequest& request) const;
  // Memory hit, or a compile (only one per key at a time; others wait for it and share the result).
  // `compiled` (optional) is set to whether this call compiled the kernel.
  std::shared_ptr<Kernel> get(const KernelRequest& request, bool* compiled = nullptr);
  KernelCacheStats stats() const;
  // Drops every entry (Kernels still held elsewhere stay alive).
  void clear();
  const NvrtcCompiler& compiler() const noexcept { return compiler_; }
  DiskCache* disk() const noexcept { return disk_; }
  // A launch served from memory without a lookup here (a plan found by Runtime::elementwise).
  void note_memory_hit() noexcept {
    memory_hits_.fetch_add(1, std::memory_order_relaxed);
    unflushed_memory_hits_.fetch_add(1, std::memory_order_relaxed);
  }
  // Adds this process's pending memory-hit count to the shared counters.
  void flush_counters();
  // The driver refused a cubin that came from disk: drop the entry and compile it again.
  CompiledKernel recompile_rejected(const Kernel& kernel);

  // How long a process waits for another one compiling the same kernel before compiling itself.
  static constexpr std::chrono::milliseconds kLockTimeout{120000};

 private:
  std::shared_ptr<Kernel> build(KernelKey key, const KernelRequest& request, bool* compiled);
  std::shared_ptr<Kernel> build_here(KernelKey key, const KernelRequest& request, bool* compiled);
  CompiledKernel compile(const KernelKey& key, const KernelRequest& request);

  const NvrtcCompiler& compiler_;
  DiskCache* disk_;
  bool always_compile_;
  std::atomic<std::uint64_t> unflushed_memory_hits_{0};
  std::atomic<std::uint64_t> unflushed_disk_hits_{0};
  std::atomic<std::uint64_t> disk_hits_{0};
  SingleFlight<std::shared_ptr<Kernel>> entries_;
  std::atomic<std::uint64_t> memory_hits_{0};
  std::atomic<std::uint64_t> compiles_{0};
  std::atomic<std::uint64_t> shared_hits_{0};
  std::atomic<std::uint64_t> compile_microseconds_{0};
};

}  // namespace tilejit::jit
