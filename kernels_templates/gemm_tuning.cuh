// The GEMM tuner's device helpers (src/ops/gemm/gemm_tuning.cpp): random scratch operands made on
// the device (a tuner never reads or writes a user's memory, and uploading hundreds of MB from the
// host would cost more than timing the candidates), and a count of the elements where a candidate's
// D differs from the heuristic configuration's D, so that every element is checked at memory speed.
#pragma once

#include "tilejit/dtype.cuh"

namespace tilejit {

// splitmix64 of the element's index and the seed, as a uniform float in [lo, hi).
__device__ __forceinline__ float tuning_uniform(unsigned long long seed, unsigned long long i, float lo, float hi) {
  unsigned long long z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // 24 random bits
  return lo + (hi - lo) * u;
}

// x[i] = uniform in [lo, hi) for every i < n (the whole allocation, padding included: what no
// kernel reads is harmless, and every element a kernel may read is a finite number).
template <class T>
__global__ void __launch_bounds__(256) fill_uniform_kernel(T* x, unsigned long long n, unsigned long long seed, float lo, float hi) {
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    x[i] = convert_to<T>(tuning_uniform(seed, i, lo, hi));
}

// Mirrors tilejit::ops::TuningCompareParams on the host: `batch` matrices of `lines` lines of
// `width` elements each (a row-major matrix's rows, a column-major one's columns).
struct tuning_compare_params {
  const void* x;
  const void* reference;
  long long lines, width, ld, stride;
  long long batch;
  float rtol, atol;
  unsigned long long* mismatches;
};
static_assert(sizeof(tuning_compare_params) == 72, "tuning_compare_params must match tilejit::ops::TuningCompareParams");

// Adds to *mismatches the elements where x and the reference differ by more than
// rtol * |reference| + atol, or where one is NaN or infinite and the other is not the same.
template <class T> __global__ void __launch_bounds__(256) count_mismatches_kernel(const tuning_compare_params p) {
  const T* x = static_cast<const T*>(p.x);
  const T* ref = static_cast<const T*>(p.reference);
  const unsigned long long per_matrix = static_cast<unsigned long long>(p.lines) * p.width;
  const unsigned long long total = per_matrix * p.batch;
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned int bad = 0;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const unsigned long long b = i / per_matrix, r = i % per_matrix;
    const long long at = static_cast<long long>(b) * p.stride + static_cast<long long>(r / p.width) * p.ld + static_cast<long long>(r % p.width);
    const float v = static_cast<float>(to_compute(x[at])), w = static_cast<float>(to_compute(ref[at]));
    const bool finite_v = isfinite(v), finite_w = isfinite(w);
    if (finite_v && finite_w) bad += fabsf(v - w) > p.rtol * fabsf(w) + p.atol;
    else bad += !(v == w || (isnan(v) && isnan(w)));
  }
  for (int offset = 16; offset > 0; offset /= 2) bad += __shfl_down_sync(0xffffffffu, bad, offset);
  if ((threadIdx.x & 31) == 0 && bad) atomicAdd(p.mismatches, static_cast<unsigned long long>(bad));
}

}  // namespace tilejit
