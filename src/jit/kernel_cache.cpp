#include "jit/kernel_cache.hpp"

#include "jit/driver.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

namespace tilejit::jit {
namespace {

// Cubins of the process's kernel caches, by key: the first cache that needs a kernel builds it
// (disk or NVRTC) and the others of the process wait for it and share it (single flight across
// caches, as each cache's own table is across threads). Entries live while some cache does: when
// the last one goes, so does every cubin. Only a cache's first request of a key comes here, never
// a launch.
struct SharedCubins {
  struct Cubin {
    std::string key_text;
    std::shared_ptr<const CompiledKernel> compiled;  // the first cache's Kernel's own (no copy)
    bool from_disk = false;
  };
  SingleFlight<std::shared_ptr<const Cubin>> table;
  std::atomic<int> caches{0};
};

SharedCubins& shared_cubins() {
  static SharedCubins* table = new SharedCubins;  // never destroyed: caches may outlive static destruction order
  return *table;
}

}  // namespace

KernelCache::KernelCache(const NvrtcCompiler& compiler, DiskCache* disk, bool always_compile)
    : compiler_(compiler), disk_(disk), always_compile_(always_compile) {
  shared_cubins().caches.fetch_add(1);
}

CUfunction Kernel::load(int device) {
  std::lock_guard lock(load_mutex_);
  if (CUfunction fn = function_.load(std::memory_order_acquire)) return fn;
  try {
    module_ = Module(compiled_->cubin, request_.compile.program_name, device);
  } catch (const DriverError& e) {
    // A cached cubin the driver refuses is treated as a corrupt entry: removed and compiled again.
    const bool image_refused = e.code() == CUDA_ERROR_INVALID_IMAGE || e.code() == CUDA_ERROR_NO_BINARY_FOR_GPU ||
                               e.code() == CUDA_ERROR_INVALID_PTX || e.code() == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
                               e.code() == CUDA_ERROR_INVALID_SOURCE;
    if (!from_disk_ || !cache_ || !image_refused) throw;
    util::log().warn("the driver refused cached kernel {} ({}); compiling it again", request_.compile.program_name, e.what());
    compiled_ = std::make_shared<const CompiledKernel>(cache_->recompile_rejected(*this));
    from_disk_ = false;
    module_ = Module(compiled_->cubin, request_.compile.program_name, device);
  }
  if (compiled_->lowered_names.empty())
    throw Error(fmt::format("kernel program {} exports no kernel (no name expression)", request_.compile.program_name));
  std::vector<CUfunction> fns;
  for (const auto& name : compiled_->lowered_names) fns.push_back(module_.function(name, device));
  functions_ = std::move(fns);
  function_.store(functions_.front(), std::memory_order_release);
  return functions_.front();
}

CUfunction Kernel::function(int device, std::size_t index) {
  if (index >= request_.compile.name_expressions.size())
    throw InvalidArgument(fmt::format("kernel program {} has {} kernels; there is no kernel {}", request_.compile.program_name,
                                      request_.compile.name_expressions.size(), index));
  function(device);  // loads the module and every function once
  return functions_[index];
}

KernelKeyParts KernelCache::key_parts(const KernelRequest& r) const {
  KernelKeyParts parts;
  parts.family = r.family;
  parts.entry_template = r.compile.entry_template.empty() ? std::string("user") : r.compile.entry_template;
  if (!r.compile.entry_template.empty() && r.compile.include_templates.empty() && r.compile.headers.empty()) {
    parts.template_digest = compiler_.templates().digest(r.compile.entry_template);
  } else {
    // Every library template's closure digest and every header of the program's own, by name.
    std::string all;
    if (!r.compile.entry_template.empty())
      all += fmt::format("template {} {}\n", r.compile.entry_template, compiler_.templates().digest(r.compile.entry_template).hex());
    for (const auto& t : r.compile.include_templates) all += fmt::format("template {} {}\n", t, compiler_.templates().digest(t).hex());
    for (const auto& h : r.compile.headers) all += fmt::format("header {} {} {}\n", h.path, h.text.size(), util::hash128(h.text).hex());
    parts.template_digest = util::hash128(all);
  }
  parts.toolkit_digest = compiler_.toolkit_headers_digest();
  parts.arch = r.arch;
  parts.nvrtc_version = NvrtcCompiler::version();
  parts.options = r.compile.options;
  parts.name_expressions = r.compile.name_expressions;
  parts.source = r.compile.source;
  return parts;
}

KernelKey KernelCache::key_for(const KernelRequest& r) const { return KernelKey::from(key_parts(r)); }

KernelCache::~KernelCache() {
  flush_counters();
  if (shared_cubins().caches.fetch_sub(1) == 1) shared_cubins().table.clear();
}

// Hits are counted in this process and added to the shared counters with the next compile or when
// the cache goes away: a hit itself never waits for the counters' file lock.
void KernelCache::flush_counters() {
  if (!disk_ || !disk_->enabled()) return;
  disk_->flush_uses();
  CacheCounters c;
  c.memory_hits = unflushed_memory_hits_.exchange(0);
  c.disk_hits = unflushed_disk_hits_.exchange(0);
  if (c.memory_hits || c.disk_hits) disk_->add_counters(c);
}

CompiledKernel KernelCache::compile(const KernelKey& key, const KernelRequest& request) {
  CompiledKernel compiled = compiler_.compile(request.compile);
  compiles_.fetch_add(1, std::memory_order_relaxed);
  const auto us = static_cast<std::uint64_t>(compiled.compile_ms * 1000);
  compile_microseconds_.fetch_add(us, std::memory_order_relaxed);
  if (disk_ && disk_->enabled()) {
    CacheCounters c;
    c.misses = 1;
    c.compiles = 1;
    c.compile_us = us;
    c.memory_hits = unflushed_memory_hits_.exchange(0);
    c.disk_hits = unflushed_disk_hits_.exchange(0);
    disk_->add_counters(c);
    DiskEntry entry;
    entry.key_text = key.text;
    entry.cubin = compiled.cubin;
    entry.meta = {request.family,         request.compile.program_name, request.compile.name_expressions,
                  compiled.lowered_names, request.dtypes,             request.config,
                  request.arch,        NvrtcCompiler::version(),     request.compile.options,
                  compiled.compile_ms,
                  std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()};
    disk_->publish(key, entry);
  }
  return compiled;
}

CompiledKernel KernelCache::recompile_rejected(const Kernel& kernel) {
  shared_cubins().table.forget(kernel.key().hash);
  if (disk_) disk_->remove_corrupt(kernel.key());
  return compile(kernel.key(), kernel.request());
}

// After a memory miss: the process's other caches (one may have the cubin, or be making it), then
// this cache's own walk (build_here). TILEJIT_ALWAYS_COMPILE compiles every time, here too.
std::shared_ptr<Kernel> KernelCache::build(KernelKey key, const KernelRequest& request, bool* compiled) {
  if (always_compile_) return build_here(std::move(key), request, compiled);
  auto claim = shared_cubins().table.claim(key.hash);
  if (!claim.promise) {
    std::shared_ptr<const SharedCubins::Cubin> cubin;
    try {
      cubin = claim.future.get();
    } catch (...) {
      cubin = nullptr;  // the other cache's build failed: this one tries on its own (and reports its own error)
    }
    if (cubin && cubin->key_text == key.text) {
      if (compiled) *compiled = false;
      shared_hits_.fetch_add(1, std::memory_order_relaxed);
      return std::make_shared<Kernel>(std::move(key), request, cubin->compiled, cubin->from_disk, this);
    }
    return build_here(std::move(key), request, compiled);  // a failed build, or a 128-bit collision
  }
  std::shared_ptr<Kernel> kernel;
  shared_cubins().table.make(key.hash, *claim.promise, [&] {
    kernel = build_here(key, request, compiled);
    return std::make_shared<const SharedCubins::Cubin>(SharedCubins::Cubin{key.text, kernel->compiled_shared(), kernel->from_disk()});
  });
  return kernel;
}

// This cache's walk: disk entry -> per-key lock across processes -> disk again (another process
// may have published it meanwhile) -> NVRTC -> publish.
std::shared_ptr<Kernel> KernelCache::build_here(KernelKey key, const KernelRequest& request, bool* compiled) {
  if (compiled) *compiled = false;
  if (disk_ && !always_compile_) {
    auto from_disk = [&](DiskEntry&& e) {
      disk_hits_.fetch_add(1, std::memory_order_relaxed);
      unflushed_disk_hits_.fetch_add(1, std::memory_order_relaxed);
      CompiledKernel k{std::move(e.cubin), e.meta.lowered_names, "", e.meta.compile_ms};
      return std::make_shared<Kernel>(std::move(key), request, std::move(k), true, this);
    };
    if (auto e = disk_->lookup(key)) return from_disk(std::move(*e));
    DiskCache::KeyLock lock = disk_->lock(key, kLockTimeout);
    if (lock.held())
      if (auto e = disk_->lookup(key)) return from_disk(std::move(*e));
    if (compiled) *compiled = true;
    CompiledKernel k = compile(key, request);
    return std::make_shared<Kernel>(std::move(key), request, std::move(k), false, this);
  }
  if (compiled) *compiled = true;
  // TILEJIT_ALWAYS_COMPILE means a real compile: NVRTC 12.9+ would otherwise answer a program it
  // has compiled before from its own cache (the driver's compute cache) where a driver is present.
  CompileRequest compile_request = request.compile;
  if (always_compile_) compile_request.options.push_back("--no-cache");
  CompiledKernel k = compiler_.compile(compile_request);
  compiles_.fetch_add(1, std::memory_order_relaxed);
  compile_microseconds_.fetch_add(static_cast<std::uint64_t>(k.compile_ms * 1000), std::memory_order_relaxed);
  return std::make_shared<Kernel>(std::move(key), request, std::move(k), false, this);
}

std::shared_ptr<Kernel> KernelCache::get(const KernelRequest& request, bool* compiled) {
  KernelKey key = key_for(request);
  if (always_compile_) return build(std::move(key), request, compiled);

  auto claim = entries_.claim(key.hash);
  if (!claim.promise) {
    std::shared_ptr<Kernel> kernel = claim.future.get();  // rethrows the owner's failure
    if (kernel->key().text == key.text) {
      if (compiled) *compiled = false;
      memory_hits_.fetch_add(1, std::memory_order_relaxed);
      unflushed_memory_hits_.fetch_add(1, std::memory_order_relaxed);
      return kernel;
    }
    // A 128-bit collision: never hand out the wrong kernel; compile this one uncached.
    util::log().warn("kernel key collision on {}; compiling without caching", key.hash.hex());
    if (compiled) *compiled = true;
    CompiledKernel k = compiler_.compile(request.compile);
    return std::make_shared<Kernel>(std::move(key), request, std::move(k), false, this);
  }
  return entries_.make(key.hash, *claim.promise, [&] { return build(key, request, compiled); });
}

KernelCacheStats KernelCache::stats() const {
  return {memory_hits_.load(), disk_hits_.load(), compiles_.load(), static_cast<double>(compile_microseconds_.load()) * 1e-6,
          shared_hits_.load()};
}

}  // namespace tilejit::jit

namespace tilejit::jit {
void KernelCache::clear() { entries_.clear(); }
}  // namespace tilejit::jit
