// jit::Context: the op-agnostic JIT core of one device: settings, the device and its primary
// context, the kernel templates, NVRTC, the memory and disk caches, and the warm-ups that hide
// their start-up. Knows no operation: the ops (src/ops) and users' programs are its clients, and
// Runtime (the facade) owns one.
#pragma once

#include "jit/disk_cache.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "jit/template_registry.hpp"
#include "util/settings.hpp"

#include <tilejit/info.hpp>

#include <cuda.h>

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace tilejit::jit {

struct ContextOptions {
  std::optional<int> device;        // default: TILEJIT_DEVICE, else 0
  std::optional<std::string> arch;  // default: TILEJIT_ARCH, else from the device
};

class Context {
 public:
  // Reads TILEJIT_* (a bad value throws InvalidArgument); touches no driver.
  explicit Context(const ContextOptions& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  util::Settings settings;
  int device_ordinal = 0;
  std::optional<std::string> arch_override;
  TemplateSet templates;
  std::unique_ptr<DiskCache> disk;  // null when TILEJIT_CACHE=off
  NvrtcCompiler compiler;
  KernelCache cache;

  // The device, initialised at first need. `why` says what is missing when !ok.
  struct DeviceState {
    bool ok = false;
    std::string why;
    CUdevice device = 0;
    CUcontext context = nullptr;
    DeviceInfo info;
    // GEMM kernels launch with programmatic dependent launch (sm_90+, unless TILEJIT_PDL=0).
    bool programmatic_launch = false;
  };
  const DeviceState& device_state();  // never throws
  CUcontext context();                // throws DriverError when there is no usable device
  // The target for kernels that need no (arch_specific: that need) arch-specific features, or the
  // override; throws DriverError without a device and without an override.
  std::string arch(bool arch_specific);

  // Computes the constant parts of every kernel key (NVRTC build, toolkit header digest, template
  // digests) on a background thread, then runs `host_path` there (a client's first-call host code,
  // so that its page faults and first allocations land off the first disk hit the user waits for).
  // Started by the owner once, right after construction.
  void start_key_warm_up(std::function<void()> host_path);

  // Contexts alive in this process; tests use it to show that no context outlives its owners.
  static int live_count() noexcept;
  // Whether the NVRTC warm-up has started (never without a driver).
  bool nvrtc_warm_up_started() const noexcept { return nvrtc_warmup_.valid(); }

 private:
  // NVRTC's start-up (about 100 ms on the H200's machines) runs on another thread from the start of
  // the device set-up, once the driver library is found, so that it overlaps cuInit and the context
  // creation that come before any launch instead of landing on the first compile
  // (TILEJIT_NVRTC_WARMUP=0 turns it off). Not at construction: NVRTC registers exit handlers as it
  // compiles, and a process exiting during that compile with a Runtime it never destroyed crashed
  // inside NVRTC. Without a driver it never starts; with one, the device set-up (cuInit and context
  // creation, 200-350 ms there) outlasts it.
  void start_nvrtc_warm_up();

  std::future<void> key_warmup_;
  std::future<void> nvrtc_warmup_;
  std::once_flag device_once_;
  DeviceState device_;
};

// What a compile-only entry point reports about a kernel; compiled_here: this call compiled it.
CompiledKernelInfo describe_kernel(const Kernel& kernel, bool compiled_here);

}  // namespace tilejit::jit
