// Kind gemv's index arithmetic checked on the host, without a GPU: kernels_templates/gemm_gemv.cuh
// compiled by g++ over shim.hpp (one std::thread per CUDA thread, barriers for __syncthreads and the
// warp shuffles). f32 and bf16 inputs, both B layouts, every lane and warp arrangement, vector and
// element paths, tails in M, N and K, padded leading dimensions, batches with gaps that must stay
// unwritten; D against a float64 reference. Not part of the build (a development check; the GPU
// tests are tests/gpu/test_gemm_gemv_gpu.cpp):
//   g++ -std=c++20 -O1 -w -I kernels_templates -I /usr/local/cuda/include -o /tmp/gemv_emu \
//     docs/experiments/gemv_host_emulation/emu.cpp -lpthread && /tmp/gemv_emu
// Run on 2026-12-08 (thirty-seventh session): 69 cases (54 f32, 15 bf16), every relative error 7.2e-9 to 2.1e-7.
#include "shim.hpp"
#include "gemm_gemv.cuh"
#include <cstdio>
#include <random>

struct emu_epilogue {
  template <class Cfg, bool INSIDE = false, bool STAGED = false>
  static float apply(const tilejit::gemm_params& p, long long, long long, long long, float acc, const tilejit::epilogue_tile&) { return p.alpha * acc; }
};
template <int BM_, int BN_, int BK_, int WN_, int ST_, bool AR, bool BR, bool DR, int AV, int BV, class T = float> struct Cfg {
  using TA = T; using TB = T; using TC = float; using TD = float;
  enum : int { BM = BM_, BN = BN_, BK = BK_, WM = BM_, WN = WN_, STAGES = ST_ };
  enum : bool { A_ROW = AR, B_ROW = BR, C_ROW = true, D_ROW = DR };
  enum : int { A_VEC = AV, B_VEC = BV };
  enum : int { TILE_VECTORS = 0 };
  using epilogue = emu_epilogue;
};

// Buffers 16-byte aligned, as device allocations are (a run of 16 bytes loads as one access).
template <class T> struct aligned16 {
  using value_type = T;
  aligned16() = default;
  template <class U> aligned16(const aligned16<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(16))); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t(16)); }
  friend bool operator==(const aligned16&, const aligned16&) { return true; }
};

template <class C> double run_case(long long M, long long N, long long K, long long lda_pad, long long ldb_pad, int batch) {
  tilejit::gemm_params p{};
  p.m = M, p.n = N, p.k = K, p.alpha = 1.f, p.batch = batch;
  p.lda = (C::A_ROW ? K : M) + lda_pad, p.ldb = (C::B_ROW ? N : K) + ldb_pad, p.ldd = C::D_ROW ? N : M;
  const long long a_el = (C::A_ROW ? M : K) * p.lda, b_el = (C::B_ROW ? K : N) * p.ldb, d_el = M * N;
  p.stride_a = a_el + 8, p.stride_b = b_el + 16, p.stride_d = d_el + 3;  // A and B batches 16-byte aligned
  using T = typename C::TA;
  std::vector<T, aligned16<T>> A(p.stride_a * batch + 64), B(p.stride_b * batch + 64);
  std::vector<float> D(p.stride_d * batch + 64, NAN);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : A) x = T(u(rng));
  for (auto& x : B) x = T(u(rng));
  // 16-byte aligned bases (vectors need it)
  p.a = A.data(), p.b = B.data(), p.d = D.data();
  p.tiles_m = (M + C::BM - 1) / C::BM, p.tiles_n = (N + C::BN - 1) / C::BN;
  const int threads = 256;
  for (int bz = 0; bz < batch; ++bz)
    for (int bx = 0; bx < p.tiles_m * p.tiles_n; ++bx) {
      emu_block_barrier = std::make_unique<std::barrier<>>(threads);
      emu_warp_barriers.clear();
      for (int w = 0; w < 8; ++w) emu_warp_barriers.push_back(std::make_unique<std::barrier<>>(32));
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
          threadIdx.x = t, blockIdx.x = bx, blockIdx.y = bz;
          tilejit::gemm_gemv_kernel<C>(p);
        });
      for (auto& t : ts) t.join();
    }
  double num = 0, den = 0;
  for (int bz = 0; bz < batch; ++bz)
    for (long long m = 0; m < M; ++m)
      for (long long n = 0; n < N; ++n) {
        double ref = 0;
        for (long long k = 0; k < K; ++k)
          ref += double(float(A[bz * p.stride_a + (C::A_ROW ? m * p.lda + k : k * p.lda + m)])) *
                 double(float(B[bz * p.stride_b + (C::B_ROW ? k * p.ldb + n : n * p.ldb + k)]));
        const double got = D[bz * p.stride_d + (C::D_ROW ? m * p.ldd + n : n * p.ldd + m)];
        if (!std::isfinite(got)) return INFINITY;
        num += (got - ref) * (got - ref), den += ref * ref;
      }
  // nothing written past D's matrices: the gaps between batches stay NaN
  for (int bz = 0; bz < batch; ++bz)
    for (long long i = d_el; i < p.stride_d; ++i)
      if (!std::isnan(D[bz * p.stride_d + i])) return -1;
  return std::sqrt(num / den);
}

#define CASE(...) do { double e = run_case<Cfg<__VA_ARGS__>>(M, N, K, pa, pb, batch); std::printf("%-70s %lldx%lldx%lld pad %lld/%lld b%d: %.2e %s\n", #__VA_ARGS__, M, N, K, pa, pb, batch, e, (e >= 0 && e < 1e-5) ? "ok" : "BAD"); } while (0)

int main() {
  struct S { long long M, N, K, pa, pb; int batch; };
  for (S s : {S{1, 100, 300, 0, 0, 1}, S{3, 37, 9, 0, 0, 2}, S{5, 64, 1031, 0, 0, 1}, S{8, 33, 515, 1, 1, 1}, S{2, 1, 700, 0, 0, 1}, S{3, 64, 1032, 0, 0, 2}}) {
    const long long M = s.M, N = s.N, K = s.K, pa = s.pa, pb = s.pb;
    const int batch = s.batch;
    const bool al = (K % 4 == 0) && pa == 0 && pb == 0;  // f32 runs of 4 aligned
    // K-major B: lanes along K, run 4 (BK 128)
    if (al) { CASE(1, 8, 128, 1, 4, true, false, true, 4, 4); CASE(4, 16, 128, 2, 2, true, false, false, 4, 4); }
    CASE(1, 8, 128, 1, 4, true, false, true, 1, 1);
    CASE(8, 8, 64, 2, 2, false, false, true, 1, 1);   // run 2, warps 4 along N x 2 along K
    CASE(4, 4, 32, 1, 3, true, false, true, 1, 1);    // run 1, 4 x 2 warps, 3 steps
    // N-major B: run min(4, WN)
    const bool aln = (N % 4 == 0) && pb == 0;
    if (aln) { CASE(1, 16, 8, 16, 4, true, true, true, 1, 4); CASE(4, 32, 4, 32, 2, false, true, false, 1, 4); }
    CASE(1, 16, 8, 16, 4, true, true, true, 1, 1);
    CASE(8, 16, 16, 8, 4, true, true, true, 1, 1);    // lanes_n 2, 2 warps along N x 4 along K
    CASE(2, 8, 32, 4, 3, false, true, true, 1, 1);    // run 4 = WN, lanes_n 1, BK 32
    CASE(1, 128, 1, 128, 2, true, true, true, 1, 1);  // lanes_n 32, BK 1, 8 warps along K
    // bf16 (the products are exact in f32; sums in another order differ by rounding only)
    const bool al8 = K % 8 == 0 && pa == 0 && pb == 0, aln8 = N % 8 == 0 && pb == 0;
    if (al8) CASE(1, 8, 256, 1, 4, true, false, true, 8, 8, __nv_bfloat16);
    CASE(4, 16, 256, 2, 2, true, false, true, 1, 1, __nv_bfloat16);
    if (aln8) CASE(1, 16, 16, 16, 8, true, true, true, 1, 8, __nv_bfloat16);
    CASE(4, 32, 16, 16, 4, false, true, false, 1, 1, __nv_bfloat16);
  }
}
