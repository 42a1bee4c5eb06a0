// Rotary position embedding (RoPE), a fused elementwise kernel with its own index pattern, written
// as a user kernel: x holds tokens x heads x HeadDim values (row-major), and each pair of elements
// i and i + HeadDim / 2 of a head is rotated by the angle pos[token] * base^(-2i / HeadDim):
//   y[i]        = x[i] cos - x[i + half] sin
//   y[i + half] = x[i + half] cos + x[i] sin
// One thread per pair; the head dimension and element type are template arguments ("rope<128, float>").
#include <tilejit/dtype.cuh>

template <int HeadDim, class T>
__global__ void rope(const T* __restrict__ x, const int* __restrict__ pos, T* __restrict__ y, long long tokens, int heads,
                     float base) {
  static_assert(HeadDim % 2 == 0, "rope: the head dimension must be even");
  constexpr int kHalf = HeadDim / 2;
  const long long pair = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long pairs = tokens * heads * kHalf;
  if (pair >= pairs) return;
  const int i = static_cast<int>(pair % kHalf);            // which pair inside the head
  const long long head_row = pair / kHalf;                 // token * heads + head
  const long long token = head_row / heads;
  const long long at = head_row * HeadDim + i;
  // base^(-2i / HeadDim) in float, as most model code computes it.
  const float inv_freq = exp2f(-2.f * static_cast<float>(i) / static_cast<float>(HeadDim) * log2f(base));
  float s, c;
  sincosf(static_cast<float>(pos[token]) * inv_freq, &s, &c);
  const float a = tilejit::to_compute(x[at]), b = tilejit::to_compute(x[at + kHalf]);
  y[at] = tilejit::convert_to<T>(a * c - b * s);
  y[at + kHalf] = tilejit::convert_to<T>(b * c + a * s);
}
