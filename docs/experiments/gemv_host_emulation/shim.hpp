// Host emulation of the CUDA built-ins gemm_gemv.cuh uses: one std::thread per CUDA thread.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>
#include <memory>
#include <algorithm>
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(x) alignas(x)
struct emu_dim3 { unsigned x = 0, y = 0, z = 0; };
inline thread_local emu_dim3 threadIdx, blockIdx;
inline std::unique_ptr<std::barrier<>> emu_block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> emu_warp_barriers;
inline float emu_shfl[1024];
inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }
inline float __shfl_xor_sync(unsigned, float v, int s) {
  const unsigned t = threadIdx.x, w = t / 32;
  emu_warp_barriers[w]->arrive_and_wait();
  emu_shfl[t] = v;
  emu_warp_barriers[w]->arrive_and_wait();
  const float r = emu_shfl[(t & ~31u) | ((t % 32) ^ s)];
  return r;
}
using std::min;
using std::max;
#include <cstring>
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
