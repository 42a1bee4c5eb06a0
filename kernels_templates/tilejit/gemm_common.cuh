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

// A per-tensor scale of 8-bit inputs or output (a device pointer, read at each launch), 1 where null.
__device__ __forceinline__ float tensor_scale(const float* s) { return s ? *s : 1.f; }

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

// A tile's vectors along the kernel's columns (a bias[n]) as floats in shared memory, for kernels that
// stage them (Cfg::TILE_VECTORS, gemm_wgmma.cuh): vector j's element for kernel column c at
// values[j * BN + c - c0]; values is null in kernels that stage none.
struct epilogue_tile {
  const float* values;
  long long c0;
  int pair_col;  // the column of the output pair being computed (c, c + 1; c even), less c0
  // The chunk of the staged M x N input (Cfg::epilogue::STAGED_INPUT_SLOT) in one of D's staging
  // buffers: rows from r0 and columns from chunk_c0 (kernel coordinates), 128 bytes a row, swizzled
  // as D's (sm90::swizzle128_offset); null in kernels and tiles that stage none.
  const char* input_chunk;
  long long r0, chunk_c0;
  int pair;  // the byte offset in input_chunk of the output pair being computed (columns c, c + 1; c even)
};

// Element (r, c) (kernel coordinates) of the staged input, from its chunk in shared memory.
// Both outputs of a pair read the pair's two elements as one integer at the same address (the
// compiler then reads it once) and take theirs.
template <class T> __device__ __forceinline__ float staged_input(const epilogue_tile& t, long long r, long long c) {
  (void)r;
  using Bits = typename conditional<sizeof(T) == 1, unsigned short, typename conditional<sizeof(T) == 2, unsigned, unsigned long long>::type>::type;
  using Half = typename conditional<sizeof(T) == 1, unsigned char, typename conditional<sizeof(T) == 2, unsigned short, unsigned>::type>::type;
  const Bits pair = *reinterpret_cast<const Bits*>(t.input_chunk + t.pair);
  const Half bits = static_cast<Half>((c - t.chunk_c0) & 1 ? pair >> (8 * sizeof(T)) : pair);
  T v;
  *reinterpret_cast<Half*>(&v) = bits;
  return static_cast<float>(to_compute(v));
}

// A float vector along the kernel's columns: read from the tile's staged copy where the kernel stages
// its vectors (Staged), else as any epilogue vector. `offset`: where this vector's slice starts in
// the tile's copy.
template <class T, bool Inside, bool Staged> struct epilogue_column_vector {
  epilogue_vector<T, Inside> global;
  const float* staged;
  long long c0;
  int pair_col;
  __device__ __forceinline__ epilogue_column_vector(const epilogue_operand& o, long long batch, long long n, const epilogue_tile& tile,
                                                    int offset)
      : global(o, batch, n), staged(tile.values + offset), c0(tile.c0), pair_col(tile.pair_col) {}
  // Staged: both outputs of a pair read the pair's two floats as one 64-bit word at the same address
  // (the compiler then reads it once) and take theirs.
  __device__ __forceinline__ float operator[](long long i) const {
    if constexpr (Staged) {
      const unsigned long long two = *reinterpret_cast<const unsigned long long*>(staged + pair_col);
      return __uint_as_float(static_cast<unsigned>((i - c0) & 1 ? two >> 32 : two));
    } else {
      return global[i];
    }
  }
};

// Elements [c0, c0 + cols) of an epilogue vector of `extent` elements, as floats, into dst (0 past
// its end), copied by the 32 lanes of one warp.
template <class T>
__device__ __forceinline__ void stage_vector_slice(const epilogue_operand& o, long long batch, long long extent, long long c0, int cols,
                                                   float* dst, int lane) {
  const T* v = static_cast<const T*>(o.ptr) + batch * o.batch_stride;
  for (int i = lane; i < cols; i += 32) dst[i] = c0 + i < extent ? static_cast<float>(to_compute(v[c0 + i])) : 0.f;
}

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
// `tile`: the tile's staged vectors, in kernels that stage them; StagedInput: the M x N input the
// epilogue stages is read from tile.input_chunk.
template <class Cfg, bool Inside = false, bool StagedInput = false>
__device__ __forceinline__ float epilogue_value(const gemm_params& p, long long batch, long long r, long long c, float acc,
                                                const epilogue_tile& tile = epilogue_tile{nullptr, 0, 0, nullptr, 0, 0, 0}) {
  return Cfg::epilogue::template apply<Cfg, Inside, StagedInput>(p, batch, r, c, acc, tile);
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
