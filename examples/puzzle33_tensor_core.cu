// The first seed's Puzzle 33, written as a user kernel against tilejit's public kernel API and its
// sm_80 tensor-core helpers: C = A B for row-major f32 A (M x K), B (K x N) and C (M x N), on the
// tensor cores in tf32 (mma.sync m16n8k8). A block computes a BM x BN tile of C with
// (BM / WM) x (BN / WN) warps, each a WM x WN tile of 16 x 8 mma tiles; the A and B tiles of each
// BK step go from global to shared memory with cp.async (4 bytes each, zero-filled past the
// matrix's edges, so any M, N, K work), two stages deep, in dynamic shared memory of
// 4 * (2 * BM * (BK + 4) + 2 * BK * (BN + 8)) bytes (55296 for the seed's shape: above the default
// 48 KB, so raise the kernel's limit with Kernel::set_max_dynamic_shared_bytes first). The seed's
// shape: "puzzle33<128, 64, 32, 32, 32>" (8 warps of 32 x 32); grid ((N + BN - 1) / BN,
// (M + BM - 1) / BM), (BM / WM) * (BN / WN) * 32 threads.
#include <tilejit/mma_sm80.cuh>

template <int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    puzzle33(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  namespace sm80 = tilejit::sm80;
  constexpr int kWarpsN = BN / WN, kThreads = (BM / WM) * kWarpsN * 32;
  constexpr int kMi = WM / 16, kNj = WN / 8;  // mma tiles per warp
  // Rows padded by 4 (A) and 8 (B) floats: the fragment loads of a warp then hit 32 distinct banks.
  constexpr int kLdA = BK + 4, kLdB = BN + 8;
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "puzzle33: tiles must divide");
  static_assert((BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0, "puzzle33: the tiles must divide among the threads");
  extern __shared__ float smem[];
  float* As[2] = {smem, smem + BM * kLdA};
  float* Bs[2] = {smem + 2 * BM * kLdA, smem + 2 * BM * kLdA + BK * kLdB};

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int warp_m = (warp / kWarpsN) * WM, warp_n = (warp % kWarpsN) * WN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  auto load_stage = [&](int stage, int k0) {
#pragma unroll
    for (int i = threadIdx.x; i < BM * BK; i += kThreads) {
      const int r = i / BK, c = i % BK;
      const bool in = m0 + r < M && k0 + c < K;
      sm80::cp_async<4>(&As[stage][r * kLdA + c], in ? A + static_cast<long long>(m0 + r) * K + k0 + c : A, in ? 4 : 0);
    }
#pragma unroll
    for (int i = threadIdx.x; i < BK * BN; i += kThreads) {
      const int r = i / BN, c = i % BN;
      const bool in = k0 + r < K && n0 + c < N;
      sm80::cp_async<4>(&Bs[stage][r * kLdB + c], in ? B + static_cast<long long>(k0 + r) * N + n0 + c : B, in ? 4 : 0);
    }
    sm80::cp_async_commit();
  };

  float acc[kMi][kNj][4] = {};
  const int ktiles = (K + BK - 1) / BK;
  load_stage(0, 0);
  for (int kt = 0; kt < ktiles; ++kt) {
    const int stage = kt % 2;
    if (kt + 1 < ktiles) {
      load_stage(stage ^ 1, (kt + 1) * BK);
      sm80::cp_async_wait<1>();  // this step's stage has landed; the next one is in flight
    } else {
      sm80::cp_async_wait<0>();
    }
    __syncthreads();
    const float* as = As[stage];
    const float* bs = Bs[stage];
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      unsigned a[kMi][4], b[kNj][2];
#pragma unroll
      for (int i = 0; i < kMi; ++i) {
        const float* p = as + (warp_m + i * 16 + g) * kLdA + kk + t;
        a[i][0] = sm80::to_tf32(__float_as_uint(p[0]));
        a[i][1] = sm80::to_tf32(__float_as_uint(p[8 * kLdA]));
        a[i][2] = sm80::to_tf32(__float_as_uint(p[4]));
        a[i][3] = sm80::to_tf32(__float_as_uint(p[8 * kLdA + 4]));
      }
#pragma unroll
      for (int j = 0; j < kNj; ++j) {
        const float* p = bs + (kk + t) * kLdB + warp_n + j * 8 + g;
        b[j][0] = sm80::to_tf32(__float_as_uint(p[0]));
        b[j][1] = sm80::to_tf32(__float_as_uint(p[4 * kLdB]));
      }
#pragma unroll
      for (int i = 0; i < kMi; ++i)
#pragma unroll
        for (int j = 0; j < kNj; ++j) sm80::mma_op<float>::run(acc[i][j], a[i], b[j]);
    }
    __syncthreads();  // every warp is done with this stage before the next copy overwrites it
  }
#pragma unroll
  for (int i = 0; i < kMi; ++i)
#pragma unroll
    for (int j = 0; j < kNj; ++j) {
      const int r = m0 + warp_m + i * 16 + g, c = n0 + warp_n + j * 8 + 2 * t;
      if (r < M && c < N) C[static_cast<long long>(r) * N + c] = acc[i][j][0];
      if (r < M && c + 1 < N) C[static_cast<long long>(r) * N + c + 1] = acc[i][j][1];
      if (r + 8 < M && c < N) C[static_cast<long long>(r + 8) * N + c] = acc[i][j][2];
      if (r + 8 < M && c + 1 < N) C[static_cast<long long>(r + 8) * N + c + 1] = acc[i][j][3];
    }
}
