#include "jit/kernel_cache.hpp"

#include "jit/driver.hpp"
#include "util/log.hpp"

namespace tilejit::jit {

CUfunction Kernel::load(int device) {
  std::lock_guard lock(load_mutex_);
  if (CUfunction fn = function_.load(std::memory_order_acquire)) return fn;
  module_ = Module(compiled_.cubin, request_.compile.name_expression, device);
  CUfunction fn = module_.function(compiled_.lowered_name, device);
  function_.store(fn, std::memory_order_release);
  return fn;
}

KernelKey KernelCache::key_for(const KernelRequest& r) const {
  KernelKeyParts parts;
  parts.family = r.family;
  parts.entry_template = r.compile.entry_template;
  parts.template_digest = compiler_.templates().digest(r.compile.entry_template);
  parts.toolkit_digest = compiler_.toolkit_headers_digest();
  parts.arch = r.arch;
  parts.nvrtc_version = NvrtcCompiler::version();
  parts.options = r.compile.options;
  parts.name_expression = r.compile.name_expression;
  parts.source = r.compile.source;
  return KernelKey::from(parts);
}

std::shared_ptr<Kernel> KernelCache::build(KernelKey key, const KernelRequest& request) {
  CompiledKernel compiled = compiler_.compile(request.compile);
  compiles_.fetch_add(1, std::memory_order_relaxed);
  compile_microseconds_.fetch_add(static_cast<std::uint64_t>(compiled.compile_ms * 1000), std::memory_order_relaxed);
  return std::make_shared<Kernel>(std::move(key), request, std::move(compiled), false);
}

std::shared_ptr<Kernel> KernelCache::get(const KernelRequest& request, bool* compiled) {
  KernelKey key = key_for(request);
  if (compiled) *compiled = true;
  if (always_compile_) return build(std::move(key), request);

  std::promise<std::shared_ptr<Kernel>> promise;
  std::shared_future<std::shared_ptr<Kernel>> future;
  bool owner = false;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key.hash);
    if (it != entries_.end()) {
      future = it->second;
    } else {
      owner = true;
      future = promise.get_future().share();
      entries_.emplace(key.hash, future);
    }
  }
  if (!owner) {
    std::shared_ptr<Kernel> kernel = future.get();  // rethrows the owner's failure
    if (kernel->key().text == key.text) {
      if (compiled) *compiled = false;
      memory_hits_.fetch_add(1, std::memory_order_relaxed);
      return kernel;
    }
    // A 128-bit collision: never hand out the wrong kernel; compile this one uncached.
    util::log().warn("kernel key collision on {}; compiling without caching", key.hash.hex());
    return build(std::move(key), request);
  }
  try {
    auto kernel = build(key, request);
    promise.set_value(kernel);
    return kernel;
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      entries_.erase(key.hash);  // a later call may try again
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

KernelCacheStats KernelCache::stats() const {
  return {memory_hits_.load(), compiles_.load(), static_cast<double>(compile_microseconds_.load()) * 1e-6};
}

}  // namespace tilejit::jit

namespace tilejit::jit {
void KernelCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}
}  // namespace tilejit::jit
