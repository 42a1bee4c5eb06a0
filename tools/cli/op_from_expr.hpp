// Builds an ElementwiseOp from a body alone: assigned names are outputs, other names inputs.
#pragma once

#include <tilejit/elementwise.hpp>

#include <string>
#include <vector>

namespace tilejit::cli {

// NAME=VALUE (f32) or NAME:DTYPE=VALUE.
std::vector<Scalar> parse_scalars(const std::vector<std::string>& specs);
ElementwiseOp op_from_expression(const std::string& body, DType input_dtype, DType output_dtype, std::vector<Scalar> scalars);

}  // namespace tilejit::cli
