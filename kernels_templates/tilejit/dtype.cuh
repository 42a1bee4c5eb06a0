// Element types on the device: the compute type each storage type is seen as, and the conversion
// rules of elementwise bodies (documented in include/tilejit/elementwise.hpp).
#pragma once

#include "tilejit/meta.cuh"

// The half-precision headers are the largest part of what NVRTC parses for a small kernel; a
// generated source that uses neither type defines TILEJIT_NO_HALF_TYPES and skips them.
#ifndef TILEJIT_NO_HALF_TYPES
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif
// The 8-bit float header only where a source uses e4m3 or e5m2 (it defines TILEJIT_FP8_TYPES).
#ifdef TILEJIT_FP8_TYPES
#include <cuda_fp8.h>
#endif

namespace tilejit {

using i8 = signed char;
using u8 = unsigned char;
using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;
#ifndef TILEJIT_NO_HALF_TYPES
using f16 = __half;
using bf16 = __nv_bfloat16;
#endif
#ifdef TILEJIT_FP8_TYPES
using e4m3 = __nv_fp8_e4m3;
using e5m2 = __nv_fp8_e5m2;
#endif

template <class T> struct compute_type { using type = T; };
#ifndef TILEJIT_NO_HALF_TYPES
template <> struct compute_type<f16> { using type = float; };
template <> struct compute_type<bf16> { using type = float; };
#endif
#ifdef TILEJIT_FP8_TYPES
template <> struct compute_type<e4m3> { using type = float; };
template <> struct compute_type<e5m2> { using type = float; };
#endif
template <> struct compute_type<i8> { using type = int; };
template <> struct compute_type<u8> { using type = int; };
// The type an element of storage type T has inside an elementwise body.
template <class T> using compute_t = typename compute_type<T>::type;

template <class T> struct int_limits;
// (Functions, not data members: see bool_constant in meta.cuh.)
template <> struct int_limits<i8> {
  __host__ __device__ static constexpr i8 lo() { return -128; }
  __host__ __device__ static constexpr i8 hi() { return 127; }
};
template <> struct int_limits<u8> {
  __host__ __device__ static constexpr u8 lo() { return 0; }
  __host__ __device__ static constexpr u8 hi() { return 255; }
};
template <> struct int_limits<i32> {
  __host__ __device__ static constexpr i32 lo() { return -2147483647 - 1; }
  __host__ __device__ static constexpr i32 hi() { return 2147483647; }
};
template <> struct int_limits<i64> {
  __host__ __device__ static constexpr i64 lo() { return -9223372036854775807ll - 1; }
  __host__ __device__ static constexpr i64 hi() { return 9223372036854775807ll; }
};

template <class T> struct is_floating : bool_constant<false> {};
template <> struct is_floating<float> : bool_constant<true> {};
template <> struct is_floating<double> : bool_constant<true> {};

// Floating -> integer: truncate toward zero, saturate, NaN -> 0. (From)hi may round up to the next
// power of two, and every From value at or above it is out of range, so the comparison is exact.
template <class To, class From>
__host__ __device__ constexpr To saturate_to_int(From x) {
  return x != x                               ? To(0)
         : x >= static_cast<From>(int_limits<To>::hi()) ? int_limits<To>::hi()
         : x <= static_cast<From>(int_limits<To>::lo()) ? int_limits<To>::lo()
                                                       : static_cast<To>(x);
}

// Storage -> compute type (exact).
template <class T> __device__ __forceinline__ compute_t<T> to_compute(T x) { return static_cast<compute_t<T>>(x); }
#ifndef TILEJIT_NO_HALF_TYPES
template <> __device__ __forceinline__ float to_compute<f16>(f16 x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_compute<bf16>(bf16 x) { return __bfloat162float(x); }
#endif
#ifdef TILEJIT_FP8_TYPES
template <> __device__ __forceinline__ float to_compute<e4m3>(e4m3 x) { return static_cast<float>(x); }
template <> __device__ __forceinline__ float to_compute<e5m2>(e5m2 x) { return static_cast<float>(x); }
#endif

// Compute value -> storage type, by the documented rules.
template <class To> struct converter {
  template <class From> __host__ __device__ static constexpr To apply(From x) {
    if constexpr (is_floating<From>::value && !is_floating<To>::value) return saturate_to_int<To>(x);
    else return static_cast<To>(x);
  }
};
#ifndef TILEJIT_NO_HALF_TYPES
template <> struct converter<f16> {
  __device__ static f16 apply(float x) { return __float2half_rn(x); }
  __device__ static f16 apply(double x) { return __double2half(x); }
  template <class I> __device__ static f16 apply(I x) { return __float2half_rn(static_cast<float>(x)); }
};
template <> struct converter<bf16> {
  __device__ static bf16 apply(float x) { return __float2bfloat16_rn(x); }
  __device__ static bf16 apply(double x) { return __double2bfloat16(x); }
  template <class I> __device__ static bf16 apply(I x) { return __float2bfloat16_rn(static_cast<float>(x)); }
};
#endif
#ifdef TILEJIT_FP8_TYPES
// To 8-bit floats: round to nearest even, saturate to the largest finite value (infinities too),
// NaN stays NaN (the __NV_SATFINITE conversions of cuda_fp8.h); a double converts directly, not
// through float.
template <class F8> struct fp8_converter {
  __device__ static F8 apply(float x) { return F8(x); }
  __device__ static F8 apply(double x) { return F8(x); }
  template <class I> __device__ static F8 apply(I x) { return F8(static_cast<float>(x)); }
};
template <> struct converter<e4m3> : fp8_converter<e4m3> {};
template <> struct converter<e5m2> : fp8_converter<e5m2> {};
#endif
template <class To, class From> __host__ __device__ constexpr To convert_to(From x) { return converter<To>::apply(x); }

}  // namespace tilejit
