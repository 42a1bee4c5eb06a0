// Elementwise kernels: outputs = Op(inputs, scalars) over n elements, written on the tile API.
//
// The runtime generates only the Op (a struct holding the scalars, with the user's body as its call
// operator) and one explicit instantiation of elementwise_kernel; everything else lives here.
#pragma once

#include "tilejit/body_functions.cuh"
#include "tilejit/tile.cuh"

namespace tilejit {



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
