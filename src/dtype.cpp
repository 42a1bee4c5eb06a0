#include <tilejit/dtype.hpp>
#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <utility>

namespace tilejit {

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
    case DType::e4m3: return "e4m3";
    case DType::e5m2: return "e5m2";
  }
  return "?";
}

std::size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::i8:
    case DType::u8:
    case DType::e4m3:
    case DType::e5m2: return 1;
  }
  return 0;
}

bool dtype_is_float(DType t) noexcept {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16 || t == DType::e4m3 || t == DType::e5m2;
}

DType parse_dtype(std::string_view name) {
  static const std::pair<std::string_view, DType> kNames[] = {
      {"f32", DType::f32},      {"float32", DType::f32}, {"float", DType::f32},    {"f64", DType::f64},
      {"float64", DType::f64},  {"double", DType::f64},  {"f16", DType::f16},      {"float16", DType::f16},
      {"half", DType::f16},     {"bf16", DType::bf16},   {"bfloat16", DType::bf16}, {"i32", DType::i32},
      {"int32", DType::i32},    {"int", DType::i32},     {"i64", DType::i64},      {"int64", DType::i64},
      {"i8", DType::i8},        {"int8", DType::i8},     {"u8", DType::u8},        {"uint8", DType::u8},
      {"e4m3", DType::e4m3},    {"fp8_e4m3", DType::e4m3}, {"float8_e4m3fn", DType::e4m3}, {"e5m2", DType::e5m2},
      {"fp8_e5m2", DType::e5m2}, {"float8_e5m2", DType::e5m2}};
  for (const auto& [n, t] : kNames)
    if (n == name) return t;
  throw InvalidArgument(fmt::format("unknown dtype '{}': expected one of f32, f64, f16, bf16, i32, i64, i8, u8, e4m3, e5m2", name));
}

}  // namespace tilejit
