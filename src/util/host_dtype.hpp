// Host-side element conversions (f16/bf16 round to nearest even; integer rules of elementwise bodies),
// used by host references and data generation in the CLI and the tests.
#pragma once

#include <tilejit/dtype.hpp>

#include <cstddef>
#include <cstdint>

namespace tilejit::util {

std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t b);
// 8-bit floats (OCP FP8, as cuda_fp8.h's __NV_SATFINITE conversions): round to nearest even,
// saturate to the largest finite value (448 for e4m3, 57344 for e5m2; infinities too), NaN -> NaN.
std::uint8_t double_to_e4m3_bits(double v);
std::uint8_t double_to_e5m2_bits(double v);
double e4m3_bits_to_double(std::uint8_t b);
double e5m2_bits_to_double(std::uint8_t b);

// Element i of an array of dtype t, as a double (exact for every dtype but i64 beyond 2^53).
double load_element(DType t, const void* base, std::size_t i);
// Stores a floating value into element i by the conversion rules: round to nearest for floating
// dtypes (through float for the 16- and 8-bit ones, whose compute type is float); truncate toward
// zero, saturate and NaN -> 0 for integer dtypes.
void store_element_from_float(DType t, void* base, std::size_t i, double v);
// Stores an integer value: exact or wrap-around for integer dtypes, rounded for floating ones.
void store_element_from_int(DType t, void* base, std::size_t i, std::int64_t v);

}  // namespace tilejit::util
