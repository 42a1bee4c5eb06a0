#include "ops/elementwise/host_reference.hpp"

#include "util/host_dtype.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace tilejit::ops {
namespace {

struct Value {
  bool is_int = false;
  std::int64_t i = 0;
  double f = 0;
  double as_f() const { return is_int ? static_cast<double>(i) : f; }
  std::int64_t as_i() const {
    if (is_int) return i;
    if (std::isnan(f)) return 0;
    if (f >= 9.2233720368547758e18) return std::numeric_limits<std::int64_t>::max();
    if (f <= -9.2233720368547758e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(f);
  }
  static Value of_int(std::int64_t v) { return {true, v, 0}; }
  static Value of_float(double v) { return {false, 0, v}; }
};

bool is_int_dtype(DType t) { return !dtype_is_float(t); }

Value literal(const std::string& text) {
  bool is_float = text.find_first_of(".eE") != std::string::npos && text.find_first_of("xX") == std::string::npos;
  if (!is_float && (text.back() == 'f' || text.back() == 'F') && text.find_first_of("xX") == std::string::npos) is_float = true;
  if (is_float) return Value::of_float(std::strtod(text.c_str(), nullptr));
  return Value::of_int(static_cast<std::int64_t>(std::strtoull(text.c_str(), nullptr, 0)));
}

class Evaluator {
 public:
  explicit Evaluator(std::vector<Value>& vars) : vars_(vars) {}

  Value eval(const BodyExpr& e) const {
    switch (e.kind) {
      case BodyExpr::Kind::number: return literal(e.text);
      case BodyExpr::Kind::variable: return vars_[static_cast<std::size_t>(e.variable)];
      case BodyExpr::Kind::unary: return unary(e.text, eval(e.args[0]));
      case BodyExpr::Kind::binary:
        if (e.text == "&&") return Value::of_int(truthy(eval(e.args[0])) && truthy(eval(e.args[1])));
        if (e.text == "||") return Value::of_int(truthy(eval(e.args[0])) || truthy(eval(e.args[1])));
        return binary(e.text, eval(e.args[0]), eval(e.args[1]));
      case BodyExpr::Kind::ternary: {
        Value a = eval(e.args[1]), b = eval(e.args[2]);
        bool c = truthy(eval(e.args[0]));
        if (a.is_int && b.is_int) return c ? a : b;  // C++: common type of the branches
        return Value::of_float(c ? a.as_f() : b.as_f());
      }
      case BodyExpr::Kind::call: return call(e);
    }
    return {};
  }

  static Value binary(const std::string& op, Value a, Value b) {
    if (a.is_int && b.is_int) {
      std::int64_t x = a.i, y = b.i;
      if (op == "+") return Value::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y)));
      if (op == "-") return Value::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y)));
      if (op == "*") return Value::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y)));
      // Division by zero is undefined on the device; the reference must not crash on it.
      if (op == "/") return Value::of_int(y == 0 || (y == -1 && x == std::numeric_limits<std::int64_t>::min()) ? 0 : x / y);
      if (op == "%") return Value::of_int(y == 0 || y == -1 ? 0 : x % y);
      if (op == "&") return Value::of_int(x & y);
      if (op == "|") return Value::of_int(x | y);
      if (op == "^") return Value::of_int(x ^ y);
      if (op == "<<") return Value::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << (y & 63)));
      if (op == ">>") return Value::of_int(x >> (y & 63));
      if (op == "==") return Value::of_int(x == y);
      if (op == "!=") return Value::of_int(x != y);
      if (op == "<") return Value::of_int(x < y);
      if (op == "<=") return Value::of_int(x <= y);
      if (op == ">") return Value::of_int(x > y);
      if (op == ">=") return Value::of_int(x >= y);
    }
    double x = a.as_f(), y = b.as_f();
    if (op == "+") return Value::of_float(x + y);
    if (op == "-") return Value::of_float(x - y);
    if (op == "*") return Value::of_float(x * y);
    if (op == "/") return Value::of_float(x / y);
    if (op == "%") return Value::of_float(std::fmod(x, y));
    if (op == "==") return Value::of_int(x == y);
    if (op == "!=") return Value::of_int(x != y);
    if (op == "<") return Value::of_int(x < y);
    if (op == "<=") return Value::of_int(x <= y);
    if (op == ">") return Value::of_int(x > y);
    if (op == ">=") return Value::of_int(x >= y);
    // Bitwise operators on floating values do not compile on the device either.
    return binary(op, Value::of_int(a.as_i()), Value::of_int(b.as_i()));
  }

 private:
  static bool truthy(const Value& v) { return v.is_int ? v.i != 0 : v.f != 0; }
  static Value unary(const std::string& op, Value a) {
    if (op == "-") return a.is_int ? Value::of_int(-a.i) : Value::of_float(-a.f);
    if (op == "+") return a;
    if (op == "!") return Value::of_int(!truthy(a));
    return Value::of_int(~a.as_i());
  }
  Value call(const BodyExpr& e) const {
    std::vector<Value> args;
    for (const auto& a : e.args) args.push_back(eval(a));
    const std::string& f = e.text;
    auto need = [&](std::size_t n) {
      if (args.size() != n)
        throw InvalidArgument(fmt::format("elementwise body: '{}' takes {} argument{}, {} given", f, n, n == 1 ? "" : "s", args.size()));
    };
    bool all_int = true;
    for (const auto& a : args) all_int = all_int && a.is_int;
    double x = args[0].as_f();
    if (f == "float") return need(1), Value::of_float(static_cast<float>(x));
    if (f == "double") return need(1), Value::of_float(x);
    if (f == "int") return need(1), Value::of_int(static_cast<std::int32_t>(args[0].is_int ? args[0].i : Value::of_float(x).as_i()));
    if ((f == "min" || f == "max") && all_int) {
      need(2);
      return Value::of_int(f == "min" ? std::min(args[0].i, args[1].i) : std::max(args[0].i, args[1].i));
    }
    if (f == "abs" && all_int) return need(1), Value::of_int(std::llabs(args[0].i));
    if (f == "isnan") return need(1), Value::of_int(std::isnan(x));
    if (f == "isinf") return need(1), Value::of_int(std::isinf(x));
    if (f == "isfinite") return need(1), Value::of_int(std::isfinite(x));
    if (f == "signbit") return need(1), Value::of_int(std::signbit(x));
    if (args.size() == 1) {
      static const std::pair<const char*, double (*)(double)> kUnary[] = {
          {"abs", [](double v) { return std::fabs(v); }},  {"fabs", [](double v) { return std::fabs(v); }},
          {"sqrt", [](double v) { return std::sqrt(v); }}, {"rsqrt", [](double v) { return 1.0 / std::sqrt(v); }},
          {"cbrt", [](double v) { return std::cbrt(v); }}, {"exp", [](double v) { return std::exp(v); }},
          {"exp2", [](double v) { return std::exp2(v); }}, {"exp10", [](double v) { return std::pow(10.0, v); }},
          {"expm1", [](double v) { return std::expm1(v); }}, {"log", [](double v) { return std::log(v); }},
          {"log2", [](double v) { return std::log2(v); }}, {"log10", [](double v) { return std::log10(v); }},
          {"log1p", [](double v) { return std::log1p(v); }}, {"sin", [](double v) { return std::sin(v); }},
          {"cos", [](double v) { return std::cos(v); }},   {"tan", [](double v) { return std::tan(v); }},
          {"asin", [](double v) { return std::asin(v); }}, {"acos", [](double v) { return std::acos(v); }},
          {"atan", [](double v) { return std::atan(v); }}, {"sinh", [](double v) { return std::sinh(v); }},
          {"cosh", [](double v) { return std::cosh(v); }}, {"tanh", [](double v) { return std::tanh(v); }},
          {"asinh", [](double v) { return std::asinh(v); }}, {"acosh", [](double v) { return std::acosh(v); }},
          {"atanh", [](double v) { return std::atanh(v); }}, {"erf", [](double v) { return std::erf(v); }},
          {"erfc", [](double v) { return std::erfc(v); }}, {"floor", [](double v) { return std::floor(v); }},
          {"ceil", [](double v) { return std::ceil(v); }}, {"round", [](double v) { return std::round(v); }},
          {"trunc", [](double v) { return std::trunc(v); }}, {"rint", [](double v) { return std::nearbyint(v); }},
          {"sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
          {"relu", [](double v) { return v > 0 ? v : 0.0; }},
          {"silu", [](double v) { return v / (1.0 + std::exp(-v)); }},
          {"gelu", [](double v) { return 0.5 * v * (1.0 + std::erf(v * 0.70710678118654752440)); }},
          {"gelu_tanh", [](double v) { return 0.5 * v * (1.0 + std::tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v))); }}};
      for (const auto& [name, fn] : kUnary)
        if (f == name) return Value::of_float(fn(x));
    }
    if (args.size() == 2) {
      double y = args[1].as_f();
      if (f == "min" || f == "fmin") return Value::of_float(std::fmin(x, y));
      if (f == "max" || f == "fmax") return Value::of_float(std::fmax(x, y));
      if (f == "pow") return Value::of_float(std::pow(x, y));
      if (f == "atan2") return Value::of_float(std::atan2(x, y));
      if (f == "fmod") return Value::of_float(std::fmod(x, y));
      if (f == "hypot") return Value::of_float(std::hypot(x, y));
      if (f == "copysign") return Value::of_float(std::copysign(x, y));
    }
    if (args.size() == 3 && f == "fma") return Value::of_float(std::fma(x, args[1].as_f(), args[2].as_f()));
    throw InvalidArgument(fmt::format("elementwise body: '{}' with {} arguments has no host reference", f, args.size()));
  }

  std::vector<Value>& vars_;
};

}  // namespace

HostReference::HostReference(const ElementwiseOp& op) : op_(op), body_(validate_op(op)) {}

void HostReference::run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs, std::size_t n) const {
  const std::size_t ni = op_.inputs.size(), no = op_.outputs.size();
  std::vector<Value> vars(ni + no + op_.scalars.size());
  for (std::size_t s = 0; s < op_.scalars.size(); ++s) {
    const ScalarValue& v = op_.scalars[s].value;
    vars[ni + no + s] = v.is_float() ? Value::of_float(v.dtype() == DType::f32 ? static_cast<float>(v.as_double()) : v.as_double())
                                     : Value::of_int(v.dtype() == DType::i32 ? static_cast<std::int32_t>(v.as_int()) : v.as_int());
  }
  Evaluator ev(vars);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < ni; ++k) {
      DType t = op_.inputs[k].dtype;
      double v = util::load_element(t, inputs[k], i);
      vars[k] = is_int_dtype(t) ? Value::of_int(t == DType::i64 ? static_cast<const std::int64_t*>(inputs[k])[i]
                                                                : static_cast<std::int64_t>(v))
                                : Value::of_float(v);
    }
    for (std::size_t k = 0; k < no; ++k)
      vars[ni + k] = is_int_dtype(op_.outputs[k].dtype) ? Value::of_int(0) : Value::of_float(0);
    for (const auto& st : body_.statements) {
      Value& out = vars[ni + static_cast<std::size_t>(st.output)];
      Value v = ev.eval(st.value);
      if (st.assign_op != "=") v = Evaluator::binary(st.assign_op.substr(0, st.assign_op.size() - 1), out, v);
      // Assignment converts to the output's compute type.
      if (out.is_int) {
        // int/long long output: a floating value truncates and saturates (PTX cvt.rzi), NaN -> 0;
        // an integer value converts as C++ does (wraps to 32 bits for int).
        const bool wide = op_.outputs[static_cast<std::size_t>(st.output)].dtype == DType::i64;
        std::int64_t iv;
        if (v.is_int) {
          iv = wide ? v.i : static_cast<std::int32_t>(v.i);
        } else if (wide) {
          iv = v.as_i();
        } else {
          iv = std::isnan(v.f) ? 0 : v.f >= 2147483647.0 ? 2147483647 : v.f <= -2147483648.0 ? -2147483648ll : static_cast<std::int64_t>(v.f);
        }
        out = Value::of_int(iv);
      } else {
        out = Value::of_float(v.as_f());
      }
    }
    for (std::size_t k = 0; k < no; ++k) {
      const Value& v = vars[ni + k];
      if (v.is_int) util::store_element_from_int(op_.outputs[k].dtype, outputs[k], i, v.i);
      else util::store_element_from_float(op_.outputs[k].dtype, outputs[k], i, v.f);
    }
  }
}

}  // namespace tilejit::ops
