// A float64 host evaluator of elementwise bodies: the reference the CLI's --check and the GPU tests
// compare against. Floating compute values are held in double, integers in int64.
#pragma once

#include "ops/elementwise/expression.hpp"

#include <tilejit/elementwise.hpp>

#include <cstddef>
#include <vector>

namespace tilejit::ops {

class HostReference {
 public:
  explicit HostReference(const ElementwiseOp& op);
  // Evaluates elements [0, n): inputs[k] and outputs[k] are host arrays of the op's dtypes.
  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs, std::size_t n) const;

 private:
  ElementwiseOp op_;
  ParsedBody body_;
};

}  // namespace tilejit::ops
