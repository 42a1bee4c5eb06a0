#include "util/host_dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tilejit::util {

std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf (>= 65520)
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half of the smallest subnormal
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(exp - 150) and a half subnormal counts units of 2^-24: drop 126 - exp bits.
    const int total = 126 - static_cast<int>(exp);
    std::uint32_t h = mant >> total;
    const std::uint32_t rem = mant & ((1u << total) - 1);
    const std::uint32_t half = 1u << (total - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = ((abs - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
  const std::uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  float out;
  if (exp == 0) {
    out = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -out : out;
  }
  std::uint32_t x = exp == 31 ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13));
  std::memcpy(&out, &x, 4);
  return out;
}

std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<std::uint16_t>(x >> 16);
}

float bf16_bits_to_float(std::uint16_t b) {
  std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
  float out;
  std::memcpy(&out, &x, 4);
  return out;
}

namespace {
// An 8-bit float with `mbits` mantissa bits, smallest normal exponent `emin`, largest finite value
// `max_finite` (code max_code) and NaN code nan_code.
struct Fp8Format {
  int mbits, emin;
  double max_finite;
  std::uint8_t max_code, nan_code;
  bool has_inf;
};
constexpr Fp8Format kE4m3{3, -6, 448.0, 0x7e, 0x7f, false};
constexpr Fp8Format kE5m2{2, -14, 57344.0, 0x7b, 0x7f, true};

std::uint8_t encode_fp8(const Fp8Format& f, double v) {
  if (std::isnan(v)) return f.nan_code;
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(v);
  if (a >= f.max_finite) return sign | f.max_code;
  if (a == 0) return sign;
  // The spacing of representable values around a: 2^(exponent - mbits), subnormals below 2^emin.
  const int e = std::max(std::ilogb(a), f.emin);
  const double n = std::nearbyint(std::ldexp(a, f.mbits - e));  // ties to even (default rounding)
  const double value = std::ldexp(n, e - f.mbits);
  if (value >= f.max_finite) return sign | f.max_code;
  if (value == 0) return sign;
  const int ve = std::ilogb(value);
  if (ve < f.emin) return sign | static_cast<std::uint8_t>(std::ldexp(value, f.mbits - f.emin));  // subnormal
  const auto mant = static_cast<std::uint8_t>(std::ldexp(value, f.mbits - ve) - std::ldexp(1.0, f.mbits));
  return sign | static_cast<std::uint8_t>((ve - f.emin + 1) << f.mbits) | mant;
}

double decode_fp8(const Fp8Format& f, std::uint8_t b) {
  const bool negative = (b & 0x80) != 0;
  const int exp_field = (b & 0x7f) >> f.mbits, mant = b & ((1 << f.mbits) - 1);
  const int exp_max = 0x7f >> f.mbits;
  double v;
  if (f.has_inf && exp_field == exp_max) v = mant == 0 ? HUGE_VAL : std::nan("");
  else if (!f.has_inf && (b & 0x7f) == 0x7f) v = std::nan("");
  else if (exp_field == 0) v = std::ldexp(mant, f.emin - f.mbits);
  else v = std::ldexp(mant + (1 << f.mbits), exp_field - 1 + f.emin - f.mbits);
  return negative ? -v : v;
}
}  // namespace

std::uint8_t double_to_e4m3_bits(double v) { return encode_fp8(kE4m3, v); }
std::uint8_t double_to_e5m2_bits(double v) { return encode_fp8(kE5m2, v); }
double e4m3_bits_to_double(std::uint8_t b) { return decode_fp8(kE4m3, b); }
double e5m2_bits_to_double(std::uint8_t b) { return decode_fp8(kE5m2, b); }

double load_element(DType t, const void* base, std::size_t i) {
  switch (t) {
    case DType::f32: return static_cast<const float*>(base)[i];
    case DType::f64: return static_cast<const double*>(base)[i];
    case DType::f16: return half_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::bf16: return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::i32: return static_cast<const std::int32_t*>(base)[i];
    case DType::i64: return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
    case DType::i8: return static_cast<const std::int8_t*>(base)[i];
    case DType::u8: return static_cast<const std::uint8_t*>(base)[i];
    case DType::e4m3: return e4m3_bits_to_double(static_cast<const std::uint8_t*>(base)[i]);
    case DType::e5m2: return e5m2_bits_to_double(static_cast<const std::uint8_t*>(base)[i]);
  }
  return 0;
}

namespace {
template <class I> I saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}
}  // namespace

void store_element_from_float(DType t, void* base, std::size_t i, double v) {
  switch (t) {
    case DType::f32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
    case DType::f64: static_cast<double*>(base)[i] = v; break;
    case DType::f16: static_cast<std::uint16_t*>(base)[i] = float_to_half_bits(static_cast<float>(v)); break;
    case DType::bf16: static_cast<std::uint16_t*>(base)[i] = float_to_bf16_bits(static_cast<float>(v)); break;
    case DType::i32: static_cast<std::int32_t*>(base)[i] = saturate<std::int32_t>(v); break;
    case DType::i64: static_cast<std::int64_t*>(base)[i] = saturate<std::int64_t>(v); break;
    case DType::i8: static_cast<std::int8_t*>(base)[i] = saturate<std::int8_t>(v); break;
    case DType::u8: static_cast<std::uint8_t*>(base)[i] = saturate<std::uint8_t>(v); break;
    // Through float, as the device's outputs of 16- and 8-bit floats are (their compute type is float).
    case DType::e4m3: static_cast<std::uint8_t*>(base)[i] = double_to_e4m3_bits(static_cast<float>(v)); break;
    case DType::e5m2: static_cast<std::uint8_t*>(base)[i] = double_to_e5m2_bits(static_cast<float>(v)); break;
  }
}

void store_element_from_int(DType t, void* base, std::size_t i, std::int64_t v) {
  switch (t) {
    case DType::i32: static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v); break;
    case DType::i64: static_cast<std::int64_t*>(base)[i] = v; break;
    case DType::i8: static_cast<std::int8_t*>(base)[i] = static_cast<std::int8_t>(v); break;
    case DType::u8: static_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(v); break;
    default: store_element_from_float(t, base, i, static_cast<double>(v)); break;
  }
}

}  // namespace tilejit::util
