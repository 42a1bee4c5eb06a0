// Copies a strided matrix (or a batch of them) into a tight one whose lines start 16-byte aligned,
// so that TMA can read it: the wgmma GEMM's path for operands TMA cannot address as they are (a
// leading dimension such as 4095 bf16, a pointer off a 16-byte boundary, an odd batch stride); and
// back (Pack = false): a D that TMA cannot write is written aligned, then copied into place.
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

// Block (x, y) copies part of line y (and every gridDim.y-th line after it). Each thread moves runs
// of 16 bytes. Pack: destination lines start 16-byte aligned; a run is read element by element
// (source lines may start anywhere; the warp's loads still cover contiguous bytes) and written with
// one 16-byte store. Unpack (a staged D copied into place): the other way round.
template <int Bytes, bool Pack> __global__ void __launch_bounds__(256) copy_matrix_kernel(const pack_params p) {
  using E = typename pack_element<Bytes>::type;
  constexpr int V = 16 / Bytes;
  union run {
    uint4 vec;
    E e[V];
  };
  const E* src = static_cast<const E*>(p.src);
  E* dst = static_cast<E*>(p.dst);
  const long long total_lines = p.lines * p.batch;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x * V;
  for (long long line = blockIdx.y; line < total_lines; line += gridDim.y) {
    const long long b = line / p.lines, l = line % p.lines;
    const E* s = src + b * p.stride_src + l * p.ld_src;
    E* d = dst + b * p.stride_dst + l * p.ld_dst;
    for (long long c = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * V; c < p.width; c += step) {
      if (c + V <= p.width) {
        run r;
        if constexpr (Pack) {
#pragma unroll
          for (int j = 0; j < V; ++j) r.e[j] = s[c + j];
          *reinterpret_cast<uint4*>(d + c) = r.vec;
        } else {
          r.vec = *reinterpret_cast<const uint4*>(s + c);
#pragma unroll
          for (int j = 0; j < V; ++j) d[c + j] = r.e[j];
        }
      } else {
        for (long long j = c; j < p.width; ++j) d[j] = s[j];
      }
    }
  }
}

}  // namespace tilejit
