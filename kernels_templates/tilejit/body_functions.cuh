// What a body in the elementwise language can call beyond the CUDA math functions, and how a
// named scalar reaches the device: shared by elementwise kernels and GEMM epilogues, whose bodies
// are the same language.
#pragma once

#include "tilejit/dtype.cuh"

namespace tilejit {

// Helpers an elementwise body may call besides the CUDA math functions (see
// tilejit::elementwise_functions() on the host for the full list).
namespace elementwise_functions {
// The floating type an argument computes in: itself for float and double, double for integers.
template <class T> struct floating_of { using type = double; };
template <> struct floating_of<float> { using type = float; };
template <class T> using floating_t = typename floating_of<T>::type;

template <class T> __device__ __forceinline__ floating_t<T> sigmoid(T x) {
  using F = floating_t<T>;
  return F(1) / (F(1) + ::exp(-F(x)));
}
template <class T> __device__ __forceinline__ T relu(T x) { return x > T(0) ? x : T(0); }
template <class T> __device__ __forceinline__ floating_t<T> silu(T x) {
  using F = floating_t<T>;
  return F(x) / (F(1) + ::exp(-F(x)));
}
// Exact GELU, x * Phi(x).
template <class T> __device__ __forceinline__ floating_t<T> gelu(T x) {
  using F = floating_t<T>;
  return F(0.5) * F(x) * (F(1) + ::erf(F(x) * F(0.70710678118654752440)));
}
// The tanh approximation of GELU.
template <class T> __device__ __forceinline__ floating_t<T> gelu_tanh(T x) {
  using F = floating_t<T>;
  const F v = F(x);
  return F(0.5) * v * (F(1) + ::tanh(F(0.79788456080286535588) * (v + F(0.044715) * v * v * v)));
}

// 2^e and 1 / d in one hardware instruction each (ex2.approx, rcp.approx: relative error about 2^-22).
__device__ __forceinline__ float exp2_approx(float e) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(e));
  return r;
}
__device__ __forceinline__ float rcp_approx(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}

// Float GELU in about 16 instructions where the erf form takes about 30: a GEMM epilogue's cost is its instruction
// count (the tensor cores wait for it), and 1 + erf(x) cancels for negative x, where erff's form loses
// every digit (gelu(-5): 5% off; below -5.9: 0). x Phi(x) = relu(x) - |x| h with h = Phi(-|x|) =
// erfc(z) / 2, z = |x| / sqrt(2), written as t exp(-z^2 + P(t)), t = 1 / (1 + z / 2): P is a degree-7
// Chebyshev interpolant of log(erfc(z) / t) + z^2 over t in [0, 1] (a smooth function; its coefficients
// below are scaled to base 2, the 1/2 of h folded into the constant; degree 6 would give 2.4e-5). |x| is
// clamped to 16 (h is 0 in float beyond), so that +Inf gives Inf and -Inf 0. Against float64: relative
// error under 6e-6 for x >= -8 (5.1e-6 measured on the H200), under 1e-12 absolute below; NaN stays NaN.
template <> __device__ __forceinline__ float gelu<float>(float x) {
  float a, relu;
#if __CUDA_ARCH__ >= 800
  // min.NaN / max.NaN (sm_80 on) keep a NaN, which fminf / fmaxf would replace.
  asm("{\n .reg .f32 ax;\n abs.f32 ax, %2;\n min.NaN.f32 %0, ax, 0f41800000;\n max.NaN.f32 %1, %2, 0f00000000;\n}"
      : "=f"(a), "=f"(relu)
      : "f"(x));
#else
  a = fabsf(x) < 16.f ? fabsf(x) : (x != x ? x : 16.f);
  relu = x > 0.f || x != x ? x : 0.f;
#endif
  const float t = rcp_approx(fmaf(0.35355339059327376f, a, 1.f));  // 1 / (1 + z / 2)
  const float u = a * 0.84932180028801907f;                           // z sqrt(log2(e)): -u^2 = -z^2 log2(e)
  float p = -2.550708652e-01f;
  p = fmaf(p, t, 1.018342972e+00f);
  p = fmaf(p, t, -1.333280802e+00f);
  p = fmaf(p, t, 4.084485471e-01f);
  p = fmaf(p, t, -1.165134832e-02f);
  p = fmaf(p, t, 5.570042729e-01f);
  p = fmaf(p, t, 1.441948175e+00f);
  p = fmaf(p, t, -2.825742245e+00f);
  const float h = t * exp2_approx(fmaf(-u, u, p));
  return fmaf(-a, h, relu);
}
// Float tanh-GELU as x * sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3): 7 instructions, and no
// cancellation in 1 + tanh(u) for negative x (the tanh form's relative error reaches 1e-3 at x = -5).
template <> __device__ __forceinline__ float gelu_tanh<float>(float x) {
  // 2u log2(e) = x (k1 + k2 x^2)
  const float k1 = 2.3022082f, k2 = 0.10294324f;
  return x * rcp_approx(1.f + exp2_approx(-x * fmaf(k2, x * x, k1)));
}

// Math functions of integer arguments compute in double, as C++'s <cmath> does (CUDA declares only
// float and double overloads, so tanh(i) would otherwise be ambiguous). An exact-match template
// loses to CUDA's own overloads for floating arguments.
#define TILEJIT_INTEGER_MATH_1(f)                                                             \
  template <class I, class = typename enable_if<is_integral<I>::value>::type>               \
  __device__ __forceinline__ double f(I x) {                                                 \
    return ::f(static_cast<double>(x));                                                      \
  }
// Two-argument functions of different argument types (pow(y, 2.0) for a float y, pow(x, 2)) or of
// integers, which CUDA's float and double overloads leave ambiguous.
#define TILEJIT_INTEGER_MATH_2(f)                                                                        \
  template <class A, class B, class = typename enable_if<!is_same<A, B>::value || is_integral<A>::value>::type> \
  __device__ __forceinline__ auto f(A a, B b) {                                                         \
    using R = typename select_math_type<A, B>::type;                                                    \
    return ::f(static_cast<R>(a), static_cast<R>(b));                                                   \
  }
// A float and an integer: float; anything else (a double, two integers): double.
template <class A, class B> struct select_math_type {
  using type = typename conditional<(is_same<A, float>::value && is_integral<B>::value) ||
                                        (is_integral<A>::value && is_same<B, float>::value),
                                    float, double>::type;
};
TILEJIT_INTEGER_MATH_1(sqrt) TILEJIT_INTEGER_MATH_1(rsqrt) TILEJIT_INTEGER_MATH_1(cbrt) TILEJIT_INTEGER_MATH_1(exp)
TILEJIT_INTEGER_MATH_1(exp2) TILEJIT_INTEGER_MATH_1(exp10) TILEJIT_INTEGER_MATH_1(expm1) TILEJIT_INTEGER_MATH_1(log)
TILEJIT_INTEGER_MATH_1(log2) TILEJIT_INTEGER_MATH_1(log10) TILEJIT_INTEGER_MATH_1(log1p) TILEJIT_INTEGER_MATH_1(sin)
TILEJIT_INTEGER_MATH_1(cos) TILEJIT_INTEGER_MATH_1(tan) TILEJIT_INTEGER_MATH_1(asin) TILEJIT_INTEGER_MATH_1(acos)
TILEJIT_INTEGER_MATH_1(atan) TILEJIT_INTEGER_MATH_1(sinh) TILEJIT_INTEGER_MATH_1(cosh) TILEJIT_INTEGER_MATH_1(tanh)
TILEJIT_INTEGER_MATH_1(asinh) TILEJIT_INTEGER_MATH_1(acosh) TILEJIT_INTEGER_MATH_1(atanh) TILEJIT_INTEGER_MATH_1(erf)
TILEJIT_INTEGER_MATH_1(erfc) TILEJIT_INTEGER_MATH_1(floor) TILEJIT_INTEGER_MATH_1(ceil) TILEJIT_INTEGER_MATH_1(round)
TILEJIT_INTEGER_MATH_1(trunc) TILEJIT_INTEGER_MATH_1(rint) TILEJIT_INTEGER_MATH_1(fabs)
TILEJIT_INTEGER_MATH_2(pow) TILEJIT_INTEGER_MATH_2(atan2) TILEJIT_INTEGER_MATH_2(fmod) TILEJIT_INTEGER_MATH_2(hypot)
TILEJIT_INTEGER_MATH_2(copysign) TILEJIT_INTEGER_MATH_2(fmin) TILEJIT_INTEGER_MATH_2(fmax)
#undef TILEJIT_INTEGER_MATH_1
#undef TILEJIT_INTEGER_MATH_2
template <class I, class = typename enable_if<is_integral<I>::value>::type> __device__ __forceinline__ bool isnan(I) { return false; }
template <class I, class = typename enable_if<is_integral<I>::value>::type> __device__ __forceinline__ bool isinf(I) { return false; }
template <class I, class = typename enable_if<is_integral<I>::value>::type> __device__ __forceinline__ bool isfinite(I) { return true; }
template <class I, class = typename enable_if<is_integral<I>::value>::type> __device__ __forceinline__ bool signbit(I x) { return x < 0; }
// fma of mixed or integer arguments, in double (as C++ promotes them).
template <class A, class B, class C,
          class = typename enable_if<!(is_same<A, B>::value && is_same<B, C>::value) || is_integral<A>::value>::type>
__device__ __forceinline__ double fma(A a, B b, C c) { return ::fma(double(a), double(b), double(c)); }
// min and max of two different types (max(x, 0) for a float x, min(i, 3ll) for an int i), which
// CUDA's overloads leave ambiguous: computed in the type C++ gives a + b. Where CUDA declares the exact
// pair, its non-template overload wins; equal types always use CUDA's own.
#define TILEJIT_MIXED_MIN_MAX(f)                                                                            \
  template <class A, class B, class = typename enable_if<!is_same<A, B>::value>::type>                     \
  __device__ __forceinline__ auto f(A a, B b) {                                                            \
    using R = decltype(a + b);                                                                             \
    return ::f(static_cast<R>(a), static_cast<R>(b));                                                     \
  }
TILEJIT_MIXED_MIN_MAX(min) TILEJIT_MIXED_MIN_MAX(max)
#undef TILEJIT_MIXED_MIN_MAX
}  // namespace elementwise_functions

// One named scalar; the host writes the member of the scalar's dtype.
union elementwise_scalar {
  double f64;
  float f32;
  long long i64;
  int i32;
};

}  // namespace tilejit
