// RMSNorm on tilejit's tile API, a user kernel compiled at run time (tilejit::Runtime::program):
//   y[r, c] = x[r, c] / sqrt(mean_c(x[r, c]^2) + eps) * w[c]
// One block per row; the row is walked in tiles of Tile elements (the last one masked), twice: once
// for the sum of squares (tiles::sum, over the whole block), once to scale. Tile and the element
// type are template arguments chosen when the program is made, e.g. "rms_norm<1024, float>" or
// "rms_norm<2048, __nv_bfloat16>"; launch rows blocks of Tile / 4 threads (at most 256).
#include <tilejit/tile.cuh>

template <int Tile, class T>
__global__ void rms_norm(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, long long cols, float eps) {
  namespace ct = tilejit::tiles;
  const long long row = ct::bid().x;
  const auto xs = ct::partition_view{ct::tensor_span{x + row * cols, ct::extents{cols}}, ct::shape<Tile>{}};
  const auto ws = ct::partition_view{ct::tensor_span{w, ct::extents{cols}}, ct::shape<Tile>{}};
  const auto ys = ct::partition_view{ct::tensor_span{y + row * cols, ct::extents{cols}}, ct::shape<Tile>{}};
  float squares = 0.f;
  for (long long t = 0; t < xs.num_tiles(); ++t) {
    const auto xt = xs.load_masked(t);  // past the row's end: zeros, which add nothing
    squares += ct::sum(ct::map([](T v) { const float f = tilejit::to_compute(v); return f * f; }, xt));
  }
  const float scale = rsqrtf(squares / static_cast<float>(cols) + eps);
  for (long long t = 0; t < xs.num_tiles(); ++t) {
    const auto scaled = xs.load_masked(t) * scale * ws.load_masked(t);
    ys.store_masked(ct::convert<T>(scaled), t);
  }
}
