// What every GEMM kernel shares: its parameter block, element access by layout, the order in which
// blocks walk the tiles, and the fused epilogue's device side.
#pragma once

#include "tilejit/body_functions.cuh"
#include "tilejit/dtype.cuh"
#include "tilejit/grid_dependency.cuh"
#include "tilejit/meta.cuh"

namespace tilejit {

// An operand of the epilogue: a vector (ld unused) or an M x N matrix, and the elements between the
// operands of a batch.
struct epilogue_operand {
  const void* ptr;
  long long ld;
  long long batch_stride;
};
// What an epilogue body reads and writes beside the GEMM's own operands (see GemmEpilogue): its
// vectors and matrix inputs, its outputs beside D, its named scalars.
struct gemm_epilogue_params {
  epilogue_operand in[8];
  epilogue_operand out[3];
  elementwise_scalar scalar[8];
};
static_assert(sizeof(gemm_epilogue_params) == 328, "gemm_epilogue_params must match tilejit::ops::EpilogueParams on the host");

// The kernel's parameter block (layouts, dtypes, tiles and the epilogue's code are template parameters).
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
  // 8-bit inputs (wgmma): per-tensor scales, one f32 each on the device, or null (1); the product is
  // scale_a * scale_b * A B. Device pointers: the values may change between launches.
  const float* scale_a;
  const float* scale_b;
  const float* scale_d;  // an 8-bit D: outputs times *scale_d before their conversion, or null (1)
  gemm_epilogue_params epilogue;
};
static_assert(sizeof(gemm_params) == 520, "gemm_params must match tilejit::ops::GemmParams on the host");

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

// *p in its compute type where `valid`, else 0, with no branch: the load always happens, from
// `fallback` (an element that exists) where not valid. Straight-line code lets the compiler issue a
// chunk's reads together and read a vector element once for every output that uses it; a load
// behind a branch waits for its own latency.
template <class T> __device__ __forceinline__ compute_t<T> load_or_zero(const T* p, const T* fallback, bool valid) {
  const compute_t<T> v = to_compute(*(valid ? p : fallback));
  return valid ? v : compute_t<T>(0);
}

// Element i of an epilogue vector, in its compute type; 0 past its end (a tile's rows and columns
// past D's edge read nothing). Inside: every i read is known to be within the vector.
template <class T, bool Inside = false> struct epilogue_vector {
  const T* values;
  long long extent;
  __device__ __forceinline__ epilogue_vector(const epilogue_operand& o, long long batch, long long n)
      : values(static_cast<const T*>(o.ptr) + batch * o.batch_stride), extent(n) {}
  __device__ __forceinline__ compute_t<T> operator[](long long i) const {
    if constexpr (Inside) return to_compute(values[i]);
    else return load_or_zero(values + i, values, i < extent);
  }
};

// Element (m, n) of an epilogue matrix (RowMajor or column-major, its ld and batch stride), 0 where
// not `valid` (outside D).
template <class T, bool RowMajor>
__device__ __forceinline__ compute_t<T> epilogue_load(const epilogue_operand& o, long long batch, long long m, long long n, bool valid) {
  const T* base = static_cast<const T*>(o.ptr) + batch * o.batch_stride;
  return load_or_zero(base + (RowMajor ? m * o.ld + n : n * o.ld + m), base, valid);
}

template <class T, bool RowMajor, class V>
__device__ __forceinline__ void epilogue_store(const epilogue_operand& o, long long batch, long long m, long long n, V v) {
  static_cast<T*>(const_cast<void*>(o.ptr))[batch * o.batch_stride + (RowMajor ? m * o.ld + n : n * o.ld + m)] = convert_to<T>(v);
}

// D's value for the kernel's output (r, c) from the accumulator: the generated epilogue (the body of
// GemmEpilogue, or its fixed form act(alpha * acc + beta * C + bias)), which also writes the
// epilogue's other outputs. Outside D it reads nothing and writes nothing.
// Inside: the caller knows (r, c) lies inside D (a tile away from D's edges), so the epilogue's
// reads need no bounds checks, and their addresses fold into offsets from one base per row.
template <class Cfg, bool Inside = false>
__device__ __forceinline__ float epilogue_value(const gemm_params& p, long long batch, long long r, long long c, float acc) {
  return Cfg::epilogue::template apply<Cfg, Inside>(p, batch, r, c, acc);
}

// D's element (r, c), an epilogue value converted to D's dtype; nothing outside D.
template <class Cfg>
__device__ __forceinline__ void store_value(const gemm_params& p, long long batch, long long r, long long c, float value) {
  if (r >= p.m || c >= p.n) return;
  auto* D = static_cast<typename Cfg::TD*>(p.d) + batch * p.stride_d;
  D[offset_of<Cfg::D_ROW>(r, c, p.ldd)] = convert_to<typename Cfg::TD>(value);
}

// D's element (r, c) from the accumulator through the epilogue, converted to D's dtype.
template <class Cfg>
__device__ __forceinline__ void store_output(const gemm_params& p, long long batch, long long r, long long c, float acc) {
  if (r >= p.m || c >= p.n) return;
  store_value<Cfg>(p, batch, r, c, epilogue_value<Cfg>(p, batch, r, c, acc));
}

}  // namespace tilejit
