// What every GEMM kernel shares: its parameter block, element access by layout, the order in which
// blocks walk the tiles, and the fused epilogue.
#pragma once

#include "tilejit/dtype.cuh"
#include "tilejit/grid_dependency.cuh"
#include "tilejit/meta.cuh"

namespace tilejit {

// The kernel's only parameter (layouts, dtypes and tiles are template parameters).
struct gemm_params {
  const void* a;
  const void* b;
  const void* c;
  void* d;
  const void* bias;
  long long m, n, k;
  long long lda, ldb, ldc, ldd;
  long long stride_a, stride_b, stride_c, stride_d;  // elements between the matrices of a batch
  float alpha, beta;
  int tiles_m, tiles_n;  // tile counts (the grid is tiles_m * tiles_n blocks per batch, or persistent)
  int batch, split_k;  // split_k: slices of K (wgmma) of each tile from whole_tiles on
  int whole_tiles;     // wgmma: tiles [0, whole_tiles) (of all batches, in walking order) are not split
  int reserved;
  void* workspace;     // partial tiles of the split tiles, then one arrival counter per (split tile, consumer warpgroup)
};
static_assert(sizeof(gemm_params) == 168, "gemm_params must match tilejit::ops::GemmParams on the host");

enum gemm_activation { act_none = 0, act_relu = 1, act_gelu = 2, act_silu = 3 };

template <int Act> __device__ __forceinline__ float activate(float x) {
  if constexpr (Act == act_relu) return x > 0.f ? x : 0.f;
  else if constexpr (Act == act_gelu) return 0.5f * x * (1.f + erff(x * 0.70710678118654752440f));
  else if constexpr (Act == act_silu) return x / (1.f + __expf(-x));
  else return x;
}

// Element (r, c) of a matrix that is row-major (RowMajor) or column-major, leading dimension ld.
template <bool RowMajor> __device__ __forceinline__ long long offset_of(long long r, long long c, long long ld) {
  return RowMajor ? r * ld + c : c * ld + r;
}

// Coordinates of output tile `pid` of a tiles_m x tiles_n grid: groups of GroupM tile rows are walked
// column by column, so that tiles computed at the same time share rows of A and columns of B in L2.
template <int GroupM> __device__ __forceinline__ void tile_coords(int pid, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = GroupM * tiles_n;
  const int group = pid / per_group;
  const int first_m = group * GroupM;
  const int rows = min(tiles_m - first_m, GroupM);
  tile_m = first_m + (pid % per_group) % rows;
  tile_n = (pid % per_group) / rows;
}

// The tile of this block, in a grid of one block per tile.
template <int GroupM> __device__ __forceinline__ void tile_of_block(const gemm_params& p, int& tile_m, int& tile_n) {
  tile_coords<GroupM>(static_cast<int>(blockIdx.x), p.tiles_m, p.tiles_n, tile_m, tile_n);
}

// act(alpha * acc + beta * C + bias) for output (r, c), which lies inside D. Cfg::BIAS_ROW: the bias
// has one value per row (a swapped kernel's D^T, whose rows are the user's columns).
template <class Cfg>
__device__ __forceinline__ float epilogue_value(const gemm_params& p, long long batch, long long r, long long c, float acc) {
  float v = p.alpha * acc;
  if (p.beta != 0.f) {
    const auto* C = static_cast<const typename Cfg::TC*>(p.c) + batch * p.stride_c;
    v += p.beta * to_compute(C[offset_of<Cfg::C_ROW>(r, c, p.ldc)]);
  }
  // The bias runs along D's columns; a kernel computing D^T (swapped operands) adds it along rows.
  if constexpr (Cfg::HAS_BIAS) v += static_cast<float>(to_compute(static_cast<const typename Cfg::TBias*>(p.bias)[Cfg::BIAS_ROW ? r : c]));
  return activate<Cfg::ACT>(v);
}

// D = act(alpha * acc + beta * C + bias) for one element, converted to D's dtype.
template <class Cfg>
__device__ __forceinline__ void store_output(const gemm_params& p, long long batch, long long r, long long c, float acc) {
  if (r >= p.m || c >= p.n) return;
  auto* D = static_cast<typename Cfg::TD*>(p.d) + batch * p.stride_d;
  D[offset_of<Cfg::D_ROW>(r, c, p.ldd)] = convert_to<typename Cfg::TD>(epilogue_value<Cfg>(p, batch, r, c, acc));
}

}  // namespace tilejit
