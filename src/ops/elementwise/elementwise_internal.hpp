// The elementwise operation on the JIT core: the host mirror of the kernel's parameter block, the
// kernel request for one configuration, plans, and the registry of plans behind
// Runtime::elementwise. Knows jit::Context, never the Runtime facade.
#pragma once

#include "jit/context.hpp"

#include <tilejit/elementwise.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tilejit {
namespace detail {
struct ElementwisePlanState;
}

namespace ops {

// Host mirror of tilejit::elementwise_params in kernels_templates/elementwise.cuh.
union ElementwiseScalarSlot {
  double f64;
  float f32;
  long long i64;
  int i32;
};
struct ElementwiseParams {
  const void* in[kMaxElementwiseInputs];
  void* out[kMaxElementwiseOutputs];
  long long n;
  ElementwiseScalarSlot scalar[kMaxElementwiseScalars];
};
static_assert(sizeof(ElementwiseParams) == 168, "must match elementwise_params in elementwise.cuh");
// A scalar's value in its slot, by its dtype (the rest of the slot zeroed).
void write_scalar(ElementwiseScalarSlot& slot, const ScalarValue& value);

// The request that compiles `op` with a resolved configuration and a vector width for `arch`.
jit::KernelRequest elementwise_request(const jit::Context& jit, const ElementwiseOp& op, const ElementwiseConfig& config,
                                       int vector_width, const std::string& arch);

// A plan: `op` validated, its configuration resolved; kernels compiled at first use per alignment.
std::shared_ptr<detail::ElementwisePlanState> make_elementwise_plan(std::shared_ptr<jit::Context> jit, const ElementwiseOp& op,
                                                                    const ElementwiseConfig& config);
// The plan's launch path (ElementwisePlan::run): checks, then one cuLaunchKernel.
void run_elementwise_plan(detail::ElementwisePlanState& plan, DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n,
                          std::span<const ScalarValue> scalars, CUstream stream);
// The kernel a launch with the configuration's vector width would use, compiled or from a cache.
CompiledKernelInfo compile_elementwise(std::shared_ptr<jit::Context> jit, const ElementwiseOp& op, const ElementwiseConfig& config);

// The host code of an elementwise op's first call up to the disk read (validation, code generation,
// key, an entry's encoding and decoding), run once off the caller's thread by the key warm-up: their
// first run in a process costs page faults, lazy symbol binding and first allocations (0.2 ms on
// the development machine against 0.03 ms for a second op).
void warm_up_first_call_host_path(const jit::Context& jit);

// The plans behind Runtime::elementwise, by op signature (body, names, dtypes; scalar values come
// with each call).
class ElementwisePlans {
 public:
  void run(const std::shared_ptr<jit::Context>& jit, const ElementwiseOp& op, DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n,
           CUstream stream);
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, std::vector<std::shared_ptr<detail::ElementwisePlanState>>> plans_;
};

}  // namespace ops
}  // namespace tilejit
