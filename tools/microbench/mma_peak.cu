// Tensor-core ceiling of mma.sync on this GPU: every warp issues long runs of independent
// m16n8k16 (bf16, f16) or m16n8k8 (tf32) MMAs from registers, no memory traffic. The figure bounds
// what any mma.sync GEMM (the `mma` kind) can reach; the wgmma kind is not bound by it.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a tools/microbench/mma_peak.cu -o build/mma_peak
#include <cstdio>
#include <cuda_runtime.h>

// Chains = independent accumulators per warp (8 cover the MMA latency; a 64x64 warp tile has 32).
template <int Kind, int kChains> __global__ void __launch_bounds__(256) mma_loop(float* out, int iters) {
  unsigned a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u};
  unsigned b[2] = {threadIdx.x * 11u, threadIdx.x * 13u};
  float d[kChains][4] = {};
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (Kind == 0)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else if constexpr (Kind == 1)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
  }
  float s = 0.f;
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// blocks_per_sm = 4 gives 8 warps per scheduler; 1 gives 2, the occupancy of a GEMM with 128x256
// tiles of 8 warps and 64x64 warp tiles.
template <int Kind, int kChains = 8> void measure(const char* name, int sms, float* out, int blocks_per_sm = 4) {
  const int iters = 4096 * 8 / kChains, blocks = sms * blocks_per_sm, threads = 256;
  const double flops_per_mma = Kind == 2 ? 2.0 * 16 * 8 * 8 : 2.0 * 16 * 8 * 16;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  mma_loop<Kind, kChains><<<blocks, threads>>>(out, iters);  // warm-up
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    mma_loop<Kind, kChains><<<blocks, threads>>>(out, iters);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    best = ms < best ? ms : best;
  }
  const double flops = flops_per_mma * kChains * iters * (double(blocks) * threads / 32);
  std::printf("mma.sync %-5s %d warps/scheduler, %2d chains: %.1f TFLOP/s (%.3f ms)\n", name, 2 * blocks_per_sm, kChains,
              flops / (best * 1e-3) / 1e12, best);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out;
  cudaMalloc(&out, sizeof(float) * sms * 4 * 256);
  measure<0>("bf16", sms, out);
  measure<1>("f16", sms, out);
  measure<2>("tf32", sms, out);
  measure<0, 32>("bf16", sms, out, 1);
  measure<0, 16>("bf16", sms, out, 1);
  measure<0, 32>("bf16", sms, out, 2);
  measure<2, 32>("tf32", sms, out, 1);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
