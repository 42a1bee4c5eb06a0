// The vectorAdd of the CUDA Tile C++ seed, written on tilejit's tile API: tiles of Tile elements,
// a masked load and store for the last, partial tile. Launch with (n + Tile - 1) / Tile blocks of
// vector_add_threads<Tile> threads.
#pragma once

#include "tilejit/tile.cuh"

namespace tilejit {
namespace examples {

template <int Tile> constexpr int vector_add_threads = tiles::default_layout<tiles::shape<Tile>>::threads;

template <int Tile>
__global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                           unsigned long long n) {
  namespace ct = tilejit::tiles;
  using namespace ct::literals;
  const int bx = ct::bid().x;
  // cuMemAlloc returns 256-byte aligned pointers, so 16-byte alignment holds for whole arrays.
  auto a_tile = ct::partition_view{ct::tensor_span{ct::assume_aligned(a, 16_ic), ct::extents{n}}, ct::shape<Tile>{}}
                    .load_masked(bx);
  auto b_tile = ct::partition_view{ct::tensor_span{ct::assume_aligned(b, 16_ic), ct::extents{n}}, ct::shape<Tile>{}}
                    .load_masked(bx);
  auto out_tile = a_tile + b_tile;
  auto out_view = ct::partition_view{ct::tensor_span{ct::assume_aligned(out, 16_ic), ct::extents{n}}, ct::shape<Tile>{}};
  out_view.store_masked(out_tile, bx);
}

}  // namespace examples
}  // namespace tilejit
