// Internal to the elementwise implementation (and in-tree tools that time it): the host mirror of
// the kernel's parameter block and the kernel request for one configuration.
#pragma once

#include "jit/kernel_cache.hpp"
#include "runtime_impl.hpp"

#include <tilejit/elementwise.hpp>

namespace tilejit::ops {

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

// The request that compiles `op` with a resolved configuration and a vector width for `arch`.
jit::KernelRequest elementwise_request(const Runtime::Impl& rt, const ElementwiseOp& op, const ElementwiseConfig& config,
                                       int vector_width, const std::string& arch);

}  // namespace tilejit::ops
