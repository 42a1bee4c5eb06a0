// Copies a strided matrix (or a batch of them) between two layouts: the wgmma GEMM's path for
// operands TMA cannot address as they are (a leading dimension such as 4095 bf16, a pointer off a
// 16-byte boundary, an odd batch stride: copied into a tight, 16-byte aligned workspace), and back
// for a D that TMA cannot write (written aligned into the workspace, then copied into place); and
// transposes a B that narrow tiles read K-major (tf32, or a row pitch TMA cannot take).
#pragma once

namespace tilejit {

// Mirrors tilejit::ops::PackParams on the host.
struct pack_params {
  const void* src;
  void* dst;
  long long width, lines;            // contiguous elements per line, lines per matrix
  long long ld_src, ld_dst;          // elements between lines
  long long stride_src, stride_dst;  // elements between matrices
  long long batch;
};
static_assert(sizeof(pack_params) == 72, "pack_params must match tilejit::ops::PackParams on the host");

template <int Bytes> struct pack_element;
template <> struct pack_element<2> { using type = unsigned short; };
template <> struct pack_element<4> { using type = unsigned int; };

// Block (x, y) copies part of line y (and every gridDim.y-th line after it). Each thread writes
// runs of 16 bytes that start on a 16-byte boundary of the destination line, whichever side is the
// misaligned one; the few elements before the line's first boundary are written one by one. A run
// is read element by element: the source line may start anywhere, and the warp's loads still cover
// contiguous bytes (L1 serves the eight loads per run). Copying D back into 4095-wide rows with
// element stores instead ran at a third of the speed (H200: 79 us against 28 us for 4095^2 bf16).
template <int Bytes> __global__ void __launch_bounds__(256) copy_matrix_kernel(const pack_params p) {
  using E = typename pack_element<Bytes>::type;
  constexpr int V = 16 / Bytes;
  union run {
    uint4 vec;
    E e[V];
  };
  const E* src = static_cast<const E*>(p.src);
  E* dst = static_cast<E*>(p.dst);
  const long long total_lines = p.lines * p.batch;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x * V;
  for (long long line = blockIdx.y; line < total_lines; line += gridDim.y) {
    const long long b = line / p.lines, l = line % p.lines;
    const E* s = src + b * p.stride_src + l * p.ld_src;
    E* d = dst + b * p.stride_dst + l * p.ld_dst;
    // Elements before the destination line's first 16-byte boundary (pointers are element-aligned).
    const long long head = min(static_cast<long long>((16 - (reinterpret_cast<unsigned long long>(d) & 15)) % 16 / Bytes), p.width);
    if (first < head) d[first] = s[first];
    for (long long c = head + first * V; c < p.width; c += step) {
      if (c + V <= p.width) {
        run r;
#pragma unroll
        for (int j = 0; j < V; ++j) r.e[j] = s[c + j];
        *reinterpret_cast<uint4*>(d + c) = r.vec;
      } else {
        for (long long j = c; j < p.width; ++j) d[j] = s[j];
      }
    }
  }
}

// B^T for narrow wgmma tiles that read B K-major: p.src holds p.lines lines (K) of p.width
// contiguous elements (N), p.dst gets p.width lines of p.lines. Block (x, y, z) moves 32 x 32
// blocks (lines 32y.., elements 32x..; then every gridDim.y-th block of lines and gridDim.z-th
// matrix) through shared memory, so that both the reads and the writes run along contiguous memory.
template <int Bytes> __global__ void __launch_bounds__(256) transpose_matrix_kernel(const pack_params p) {
  using E = typename pack_element<Bytes>::type;
  __shared__ E block[32][33];  // one column of padding: the transposed reads hit distinct banks
  const long long elem0 = static_cast<long long>(blockIdx.x) * 32;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
    const E* src = static_cast<const E*>(p.src) + b * p.stride_src;
    E* dst = static_cast<E*>(p.dst) + b * p.stride_dst;
    for (long long line0 = static_cast<long long>(blockIdx.y) * 32; line0 < p.lines; line0 += static_cast<long long>(gridDim.y) * 32) {
#pragma unroll
      for (int i = ty; i < 32; i += 8) {
        const long long line = line0 + i, elem = elem0 + tx;
        if (line < p.lines && elem < p.width) block[i][tx] = src[line * p.ld_src + elem];
      }
      __syncthreads();
#pragma unroll
      for (int i = ty; i < 32; i += 8) {
        const long long elem = elem0 + i, line = line0 + tx;
        if (elem < p.width && line < p.lines) dst[elem * p.ld_dst + line] = block[tx][i];
      }
      __syncthreads();  // the block is read before the next lines overwrite it
    }
  }
}

// The same for narrow sources (p.width <= 64 elements: the M of a decode shape whose A is
// column-major): one thread per source line reads the line's elements and writes each to its own
// destination line, so a warp writes 32 consecutive elements of every destination line, and the
// short source lines it reads stay in L1 after their first element. The 32 x 32 blocks above
// leave most threads idle on such sources (H200, 16 x 8192 bf16: 4.3-4.7 us, ncu).
template <int Bytes> __global__ void __launch_bounds__(128) transpose_narrow_matrix_kernel(const pack_params p) {
  using E = typename pack_element<Bytes>::type;
  const long long line = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= p.lines) return;
  for (long long b = blockIdx.y; b < p.batch; b += gridDim.y) {
    const E* src = static_cast<const E*>(p.src) + b * p.stride_src + line * p.ld_src;
    E* dst = static_cast<E*>(p.dst) + b * p.stride_dst + line;
#pragma unroll 16
    for (long long e = 0; e < p.width; ++e) dst[e * p.ld_dst] = src[e];
  }
}

}  // namespace tilejit
