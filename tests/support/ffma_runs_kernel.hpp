// A kernel whose SASS has long runs of FFMA for the FFMA-run pass (jit/ffma_interleave.hpp): the
// compile tests check what the pass changes, the GPU test that the results keep every bit.
#pragma once

namespace tilejit {

// 64 accumulators updated by one scale per block: ptxas makes each block one run of 64 FFMAs,
// the scale kept in the reuse cache (the shape of a block-scaled GEMM's promotion).
inline constexpr const char* kFfmaRunsKernel = R"(
extern "C" __global__ void promote(float* out, const float* partial, const float* scale, int blocks) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
  float acc[64], p[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f, p[i] = partial[static_cast<long long>(i) * threads + t];
  for (int b = 0; b < blocks; ++b) {
    const float s = scale[b];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += p[i] * s;
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) out[static_cast<long long>(i) * threads + t] = acc[i];
}
)";

}  // namespace tilejit
