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
template <> struct pack_element<1> { using type = unsigned char; };  // e4m3, e5m2
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

// B^T as above for 1-byte elements (e4m3, e5m2), whose element-by-element moves ran at about 0.6 TB/s
// (H200, 4096^2: 50 us beside a 106 us GEMM). Block (x, y, z) moves 64 x 64-byte blocks through
// shared memory: each thread reads 16 bytes of a source line, then transposes a 4 x 4-byte block in
// registers (four 4-byte shared reads, byte permutes) and writes 4 bytes to each of 4 destination
// lines. Source lines that do not start on 16 bytes (a leading dimension such as 4095) and the
// edges of the matrix move byte by byte.
__global__ void __launch_bounds__(256) transpose_bytes_kernel(const pack_params p) {
  constexpr int kTile = 64;
  constexpr int kPitchWords = kTile / 4 + 1;  // one word of padding: a column of words spreads over the banks
  __shared__ unsigned int block[kTile][kPitchWords];
  const long long elem0 = static_cast<long long>(blockIdx.x) * kTile;
  const int row = threadIdx.x / 4, part = threadIdx.x % 4;              // loading: a tile line, its 16-byte quarter
  const int sub_line = threadIdx.x % 16, sub_elem = threadIdx.x / 16;  // storing: a 4 x 4 block (16 per warp along lines)
  for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
    const unsigned char* src = static_cast<const unsigned char*>(p.src) + b * p.stride_src;
    unsigned char* dst = static_cast<unsigned char*>(p.dst) + b * p.stride_dst;
    for (long long line0 = static_cast<long long>(blockIdx.y) * kTile; line0 < p.lines;
         line0 += static_cast<long long>(gridDim.y) * kTile) {
      {  // source line line0 + row, elements elem0 + 16 part ..
        const long long line = line0 + row, elem = elem0 + part * 16;
        const unsigned char* from = src + line * p.ld_src + elem;
        uint4 v;
        if (line < p.lines && elem + 16 <= p.width && (reinterpret_cast<unsigned long long>(from) & 15) == 0) {
          v = *reinterpret_cast<const uint4*>(from);
        } else {
          union {
            uint4 vec;
            unsigned char b[16];
          } run;
#pragma unroll
          for (int i = 0; i < 16; ++i) run.b[i] = line < p.lines && elem + i < p.width ? from[i] : 0;
          v = run.vec;
        }
        unsigned int* to = &block[row][part * 4];
        to[0] = v.x, to[1] = v.y, to[2] = v.z, to[3] = v.w;
      }
      __syncthreads();
      {  // source lines line0 + 4 sub_line .. + 3 (word w[i] of line i), elements elem0 + 4 sub_elem .. + 3
        unsigned int w[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) w[i] = block[sub_line * 4 + i][sub_elem];
        // out[j]: element j of the four source lines, i.e. 4 bytes of destination line elem0 + 4 sub_elem + j.
        const unsigned int lo01 = __byte_perm(w[0], w[1], 0x5140), hi01 = __byte_perm(w[0], w[1], 0x7362);
        const unsigned int lo23 = __byte_perm(w[2], w[3], 0x5140), hi23 = __byte_perm(w[2], w[3], 0x7362);
        const unsigned int out[4] = {__byte_perm(lo01, lo23, 0x5410), __byte_perm(lo01, lo23, 0x7632), __byte_perm(hi01, hi23, 0x5410),
                                     __byte_perm(hi01, hi23, 0x7632)};
        const long long line = line0 + sub_line * 4;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const long long elem = elem0 + sub_elem * 4 + j;
          if (elem >= p.width) break;
          unsigned char* to = dst + elem * p.ld_dst + line;
          if (line + 4 <= p.lines && (reinterpret_cast<unsigned long long>(to) & 3) == 0) {
            *reinterpret_cast<unsigned int*>(to) = out[j];
          } else {
            for (int i = 0; i < 4 && line + i < p.lines; ++i) to[i] = static_cast<unsigned char>(out[j] >> (8 * i));
          }
        }
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
