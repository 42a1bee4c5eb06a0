// Host data for checks: random fills per dtype and the relative error against a reference.
#pragma once

#include <tilejit/dtype.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilejit::cli {

// Fills `count` elements of dtype t with random values (floats uniform in [-2, 2), integers in
// [-100, 100], u8 in [0, 255]), never all zeros; `seed` makes each fill fresh.
void fill_random(DType t, void* data, std::size_t count, std::uint64_t seed);

// ||out - ref|| / ||ref|| over `count` elements (both dtype t); NaN or Inf mismatches give +inf.
double relative_error(DType t, const void* out, const void* ref, std::size_t count);

// The tolerance a dtype's result must meet against a float64 reference.
double tolerance(DType t);

}  // namespace tilejit::cli
