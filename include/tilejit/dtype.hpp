// Element types understood by tilejit kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tilejit {

// e4m3 and e5m2 are the 8-bit floats of Hopper (OCP FP8: e4m3 has no infinity, largest 448; e5m2
// has infinities, largest 57344); values convert to them rounding to nearest even and saturating:
// anything beyond the largest finite value (infinities included) becomes it, NaN stays NaN.
enum class DType : std::uint8_t { f32, f64, f16, bf16, i32, i64, i8, u8, e4m3, e5m2 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32,
                                       DType::i64, DType::i8,  DType::u8,  DType::e4m3, DType::e5m2};

// Short name as used in configuration strings and the CLI: "f32", "bf16", ...
std::string_view dtype_name(DType t) noexcept;
// Size of one element in bytes.
std::size_t dtype_size(DType t) noexcept;
// True for the floating dtypes: f32, f64, f16, bf16, e4m3, e5m2.
bool dtype_is_float(DType t) noexcept;
// Parses a dtype name; also accepts common aliases (float, half, bfloat16, int32, ...).
// Throws InvalidArgument naming the accepted forms.
DType parse_dtype(std::string_view name);

}  // namespace tilejit
