// Elementwise kernels: outputs = Op(inputs, scalars) over n elements, written on the tile API.
//
// The runtime generates only the Op (a struct holding the scalars, with the user's body as its call
// operator) and one explicit instantiation of elementwise_kernel; everything else lives here.
#pragma once

#include "tilejit/tile.cuh"

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

// One scalar parameter; the host writes the member of the scalar's dtype.
union elementwise_scalar {
  double f64;
  float f32;
  long long i64;
  int i32;
};

// The kernel's only parameter: operands, element count, scalars (168 bytes).
struct elementwise_params {
  const void* in[8];
  void* out[4];
  long long n;
  elementwise_scalar scalar[8];
};
static_assert(sizeof(elementwise_params) == 168, "elementwise_params must match tilejit::ops::ElementwiseParams on the host");

template <class Op, class Inputs, class Outputs, int Threads, int Vec, int Tile> struct elementwise_impl;

template <class Op, class... In, class... Out, int Threads, int Vec, int Tile>
struct elementwise_impl<Op, type_list<In...>, type_list<Out...>, Threads, Vec, Tile> {
  static_assert(sizeof...(In) >= 1 && sizeof...(In) <= 8, "elementwise: 1 to 8 inputs");
  static_assert(sizeof...(Out) >= 1 && sizeof...(Out) <= 4, "elementwise: 1 to 4 outputs");
  static_assert(Tile % (Threads * Vec) == 0, "elementwise: Tile must be a multiple of Threads * Vec");

  using layout = tiles::block_layout<Threads, Vec>;
  using shape = tiles::shape<Tile>;
  // The runtime launches only when every operand is aligned to min(16, Vec * sizeof(T)) bytes.
  template <class T> using align_for = tiles::static_min<16, Vec * int(sizeof(T))>;
  template <class T>
  using view_t = tiles::partition_view<tiles::tensor_span<T, tiles::extents<i64>, align_for<T>::value>, shape, layout>;

  template <class T> __device__ static view_t<T> view(T* p, i64 n) {
    return view_t<T>(tiles::tensor_span<T, tiles::extents<i64>, align_for<T>::value>(
        tiles::assume_aligned<align_for<T>::value>(p), tiles::extents<i64>(n)));
  }

  // One tile: load every input (all loads in flight before the first use), apply Op element by
  // element in compute types, convert and store every output. Reading all inputs before any store
  // also makes in-place operations (an output aliasing an input) safe.
  template <bool Masked, int... Is, int... Os>
  __device__ static void step(const Op& op, const elementwise_params& p, i64 t, index_seq<Is...>, index_seq<Os...>) {
    tuple<tiles::tile<In, shape, layout>...> ins;
    ((get<Is>(ins) = Masked ? view(static_cast<const In*>(p.in[Is]), p.n).load_masked(t)
                            : view(static_cast<const In*>(p.in[Is]), p.n).load(t)),
     ...);
    tuple<tiles::tile<compute_t<Out>, shape, layout>...> outs;
    constexpr int kFragment = tiles::tile<float, shape, layout>::fragment;
#pragma unroll
    for (int j = 0; j < kFragment; ++j) {
      ((get<Os>(outs).v[j] = compute_t<Out>(0)), ...);
      op(to_compute(get<Is>(ins).v[j])..., get<Os>(outs).v[j]...);
    }
    (store<Masked, Out>(p.out[Os], p.n, t, get<Os>(outs)), ...);
  }

  template <bool Masked, class T>
  __device__ static void store(void* out, i64 n, i64 t, const tiles::tile<compute_t<T>, shape, layout>& value) {
    auto v = view(static_cast<T*>(out), n);
    tiles::tile<T, shape, layout> converted;
#pragma unroll
    for (int j = 0; j < converted.fragment; ++j) converted.v[j] = convert_to<T>(value.v[j]);
    if (Masked) v.store_masked(converted, t);
    else v.store(converted, t);
  }
};

// Threads threads per block, Vec elements per vector access, Tile elements per block tile. Blocks
// walk the tiles with a grid stride, so any n up to 2^63 works with any grid.
template <class Op, class Inputs, class Outputs, int Threads, int Vec, int Tile>
__global__ void __launch_bounds__(Threads) elementwise_kernel(const elementwise_params p) {
  using impl = elementwise_impl<Op, Inputs, Outputs, Threads, Vec, Tile>;
  const Op op(p.scalar);
  const i64 full_tiles = p.n / Tile;
  const i64 tiles = (p.n + Tile - 1) / Tile;
  for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    if (t < full_tiles)
      impl::template step<false>(op, p, t, make_index_seq<Inputs::size>(), make_index_seq<Outputs::size>());
    else
      impl::template step<true>(op, p, t, make_index_seq<Inputs::size>(), make_index_seq<Outputs::size>());
  }
}

}  // namespace tilejit
