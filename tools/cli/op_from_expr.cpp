#include "op_from_expr.hpp"

#include <tilejit/tooling.hpp>

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace tilejit::cli {

std::vector<Scalar> parse_scalars(const std::vector<std::string>& specs) {
  std::vector<Scalar> out;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InvalidArgument(fmt::format("--scalar '{}': expected NAME=VALUE or NAME:DTYPE=VALUE", spec));
    std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
    DType dtype = DType::f32;
    if (auto colon = name.find(':'); colon != std::string::npos) {
      dtype = parse_dtype(name.substr(colon + 1));
      name = name.substr(0, colon);
    }
    double v = 0;
    try {
      std::size_t used = 0;
      v = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception&) {
      throw InvalidArgument(fmt::format("--scalar '{}': '{}' is not a number", spec, value));
    }
    out.push_back({name, ScalarValue::of(dtype, v)});
  }
  return out;
}

ElementwiseOp op_from_expression(const std::string& body, DType input_dtype, DType output_dtype, std::vector<Scalar> scalars) {
  return tooling::elementwise_op_from_body(body, input_dtype, output_dtype, std::move(scalars));
}

}  // namespace tilejit::cli
