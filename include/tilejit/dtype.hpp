// Element types understood by tilejit kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tilejit {

enum class DType : std::uint8_t { f32, f64, f16, bf16, i32, i64, i8, u8 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16,
                                       DType::i32, DType::i64, DType::i8,  DType::u8};

// Short name as used in configuration strings and the CLI: "f32", "bf16", ...
std::string_view dtype_name(DType t) noexcept;
// Size of one element in bytes.
std::size_t dtype_size(DType t) noexcept;
// True for f32, f64, f16, bf16.
bool dtype_is_float(DType t) noexcept;
// Parses a dtype name; also accepts common aliases (float, half, bfloat16, int32, ...).
// Throws InvalidArgument naming the accepted forms.
DType parse_dtype(std::string_view name);

}  // namespace tilejit
