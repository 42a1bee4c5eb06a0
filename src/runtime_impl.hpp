// Runtime::Impl: the facade's state, internal to the library. The JIT core of its device
// (jit::Context) and the plan registries of the ops behind the one-call entry points; Runtime's
// methods call down into them and nothing below knows Runtime.
#pragma once

#include "jit/context.hpp"
#include "ops/elementwise/elementwise_internal.hpp"
#include "ops/gemm/gemm_internal.hpp"

#include <tilejit/runtime.hpp>

#include <memory>

namespace tilejit {

struct Runtime::Impl {
  explicit Impl(const RuntimeOptions& options);
  ~Impl();
  // Plans hold the context, never this Impl: the registries below keep plans, and a plan owning its
  // registry's owner would be a cycle that keeps both alive past the Runtime and the process's exit.
  std::shared_ptr<jit::Context> jit;
  ops::ElementwisePlans elementwise_plans;  // Runtime::elementwise
  ops::GemmPlans gemm_plans;                // Runtime::gemm
};

namespace detail {
// For in-tree tools and tests that look inside a Runtime (its JIT core, its registries).
struct RuntimeAccess {
  static Runtime::Impl& impl(const Runtime& rt) noexcept { return *rt.impl_; }
  static jit::Context& jit(const Runtime& rt) noexcept { return *rt.impl_->jit; }
};
}  // namespace detail

}  // namespace tilejit
