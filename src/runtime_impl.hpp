// Runtime::Impl: settings, the JIT core and the device of one Runtime. Internal to the library.
#pragma once

#include "jit/disk_cache.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "jit/template_registry.hpp"
#include "util/settings.hpp"

#include <tilejit/runtime.hpp>

#include <cuda.h>

#include <array>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilejit {
namespace detail {
struct ElementwisePlanState;
struct GemmPlanState;
}

// A GEMM problem without its pointers, and the stream of a Runtime::gemm call: the key of the plans
// Runtime::gemm keeps, compared whole (a hash collision is a miss, never another problem's plan).
struct GemmSignature {
  std::array<std::uint64_t, 16> words{};
  friend bool operator==(const GemmSignature&, const GemmSignature&) = default;
  struct Hash {
    std::size_t operator()(const GemmSignature& s) const noexcept;
  };
};

// What compile_elementwise / compile_gemm report about a kernel; compiled_here: this call compiled it.
CompiledKernelInfo describe_kernel(const jit::Kernel& kernel, bool compiled_here);

struct Runtime::Impl {
  explicit Impl(const RuntimeOptions& options);
  ~Impl();

  util::Settings settings;
  int device_ordinal = 0;
  std::optional<std::string> arch_override;
  jit::TemplateSet templates;
  std::unique_ptr<jit::DiskCache> disk;  // null when TILEJIT_CACHE=off
  jit::NvrtcCompiler compiler;
  jit::KernelCache cache;

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
  std::string arch(bool arch_specific);

  // Computes the constant parts of every kernel key (NVRTC build, toolkit header digest, template
  // digests) on a background thread started by the constructor, so that a fresh process's first
  // cache lookup, which comes after its context creation, finds them ready.
  std::future<void> key_warmup;
  void warm_up_first_call_host_path();

  // NVRTC's start-up (about 100 ms on the H200's machines) runs on another thread from the start of
  // the device set-up, once the driver library is found, so that it overlaps cuInit and the context
  // creation that come before any launch instead of landing on the first compile
  // (TILEJIT_NVRTC_WARMUP=0 turns it off). Not at construction: NVRTC registers exit handlers as it
  // compiles, and a process exiting during that compile with a Runtime it never destroyed crashed
  // inside NVRTC. Without a driver it never starts; with one, the device set-up (cuInit and context
  // creation, 200-350 ms there) outlasts it.
  std::future<void> nvrtc_warmup;
  void start_nvrtc_warm_up();

  // Elementwise plans by op signature, for Runtime::elementwise. These plans live inside the Impl,
  // so they hold it through unowned() and never own it: an owning pointer would be a cycle that
  // keeps the Impl (its modules, context and warm-up thread) alive past the Runtime and the process's
  // exit.
  std::mutex plans_mutex;
  std::unordered_map<std::uint64_t, std::vector<std::shared_ptr<detail::ElementwisePlanState>>> elementwise_plans;
  // GEMM plans by problem signature (everything but the pointers, and the stream), for Runtime::gemm.
  // Bounded: a program that makes a stream per request would otherwise add a plan (and perhaps a
  // workspace) per stream forever. Past the bound the map starts over; plans in use stay alive with
  // their callers, and new ones find their kernels in the memory cache.
  static constexpr std::size_t kMaxGemmPlans = 1024;
  std::unordered_map<GemmSignature, std::shared_ptr<detail::GemmPlanState>, GemmSignature::Hash> gemm_plans;

  // A pointer to this Impl that does not keep it alive, for the plans above.
  std::shared_ptr<Impl> unowned() noexcept { return std::shared_ptr<Impl>(std::shared_ptr<Impl>(), this); }

  // Impls alive in this process; tests use it to show that no Impl outlives its Runtime.
  static int live_count() noexcept;

 private:
  std::once_flag device_once_;
  DeviceState device_;
};

}  // namespace tilejit
