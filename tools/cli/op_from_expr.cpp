#include "op_from_expr.hpp"

#include "ops/elementwise/expression.hpp"

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
  ElementwiseOp op;
  op.body = body;
  op.scalars = std::move(scalars);
  auto tokens = ops::tokenize_body(body);
  auto known = [&](const std::string& name) {
    auto has = [&](const std::vector<Operand>& v) {
      return std::any_of(v.begin(), v.end(), [&](const Operand& o) { return o.name == name; });
    };
    return has(op.inputs) || has(op.outputs) ||
           std::any_of(op.scalars.begin(), op.scalars.end(), [&](const Scalar& s) { return s.name == name; });
  };
  // Outputs: the identifier starting each statement when an assignment operator follows it.
  bool statement_start = true;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (statement_start && t.kind == ops::BodyToken::Kind::identifier && tokens[i + 1].kind == ops::BodyToken::Kind::symbol &&
        tokens[i + 1].text.back() == '=' && tokens[i + 1].text != "==" && !known(t.text))
      op.outputs.push_back({t.text, output_dtype});
    statement_start = t.text == ";";
  }
  const auto functions = ops::allowed_functions();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (t.kind != ops::BodyToken::Kind::identifier || known(t.text)) continue;
    if (std::find(functions.begin(), functions.end(), t.text) != functions.end()) continue;
    if (t.text == "float" || t.text == "double" || t.text == "int" || t.text == "true" || t.text == "false") continue;
    op.inputs.push_back({t.text, input_dtype});
  }
  return op;
}

}  // namespace tilejit::cli
