// Kind gemv on the GPU against a float64 host reference: every input dtype (8-bit with per-tensor
// scales, on sm_90), every A/B layout and D both ways, 1 to 8 rows with tails in M, N and K, a matrix
// times vectors through swapped operands, runs
// loaded whole and element by element (leading dimensions and pointers off their alignment), batches
// with gaps, alpha, beta with C, the fixed epilogue, an 8-bit D, launches in a row.
#include "gemm_case.hpp"
#include "gemm_shape.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>

#include <random>
#include <vector>

namespace tilejit {
namespace {

std::uint64_t fresh_seed() { return std::random_device{}(); }

using test::describe;
using test::shape;

// A gemv configuration for `rows` rows per block: 16-byte runs of B (along K for a column-major B,
// along N for a row-major one). `wide`: two columns per warp (K-major) or 4 lanes per row (N-major)
// instead of one column or 2 lanes. (A one-column B stored row-major with ld 1 is read as the
// column-major B it equals: see normalized().)
// `k_major`: the kernel's B is column-major; `extra`: parts after the four (":sw").
GemmConfig gemv_config(DType b, bool k_major, int rows, bool wide, const char* extra = "") {
  const int es = static_cast<int>(dtype_size(b)), run = 16 / es;
  if (k_major) {
    const int wn = wide ? 2 : 1;
    return GemmConfig::parse(fmt::format("gemv:{}x{}x{}:{}x{}:4{}", rows, 8 * wn, 32 * run, rows, wn, extra));
  }
  const int lanes_n = wide ? 4 : 2, wn = run * lanes_n;
  return GemmConfig::parse(fmt::format("gemv:{}x{}x{}:{}x{}:4{}", rows, 2 * wn, 32 / lanes_n, rows, wn, extra));
}
GemmConfig gemv_config(const GemmProblem& p, int rows, bool wide) {
  return gemv_config(p.b.dtype, p.b.layout == Layout::col_major || (p.n == 1 && p.b.ld <= 1), rows, wide);
}

// A batch of 3 of `p` with gaps between the matrices, alpha, beta with a C laid out as D, and GELU.
GemmProblem batched(GemmProblem p) {
  p.batch = 3;
  p.a.batch_stride = p.m * p.k + 8;
  p.b.batch_stride = p.k * p.n + 64;
  p.d.batch_stride = p.m * p.n + 8;
  p.alpha = 0.75f, p.beta = -1.25f;
  p.c = p.d;
  p.epilogue.activation = Activation::gelu;
  return p;
}

void expect_correct(Runtime& rt, const GemmProblem& p, const GemmConfig& cfg, bool bias = false, int launches = 1) {
  cli::GemmCase gc(rt, p, bias, fresh_seed());
  GemmPlan plan = rt.plan_gemm(gc.problem, cfg);
  ASSERT_EQ(plan.config().kind, GemmKind::gemv);
  for (int i = 0; i < launches; ++i) plan.run();
  rt.synchronize();
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << describe(gc.problem, plan);
}

class GemmGpuGemv : public ::testing::Test {
 protected:
  void SetUp() override { TILEJIT_REQUIRE_GPU(rt); }
  bool hopper() const { return rt.device_info().cc_major == 9; }
  Runtime rt;
};

struct Inputs {
  DType a, b, d;
  MathMode math;
};

TEST_F(GemmGpuGemv, EveryDtypeLayoutAndTail) {
  std::vector<Inputs> inputs = {{DType::f32, DType::f32, DType::f32, MathMode::exact},
                                {DType::f16, DType::f16, DType::f16, MathMode::exact},
                                {DType::bf16, DType::bf16, DType::bf16, MathMode::exact},
                                {DType::bf16, DType::bf16, DType::f32, MathMode::exact}};
  if (hopper()) {
    inputs.push_back({DType::e4m3, DType::e4m3, DType::bf16, MathMode::exact});
    inputs.push_back({DType::e5m2, DType::e4m3, DType::f16, MathMode::exact});
  }
  // Tails: N and K off the runs and off the block's steps; M off the block's rows.
  const std::vector<std::array<std::int64_t, 3>> sizes{{1, 4096, 4096}, {1, 777, 333}, {3, 1000, 515}, {8, 520, 1031}, {5, 37, 9}, {2, 1, 700}};
  for (const Inputs& in : inputs)
    for (const char* layout : {"NT", "TT", "NN", "TN", "NT:c", "NN:c"})
      for (auto [M, N, K] : sizes) {
        GemmProblem p = shape(in.a, in.b, layout, M, N, K, in.d);
        p.math = in.math;
        const int rows = M == 1 ? 1 : M <= 4 ? 4 : dtype_size(in.b) == 1 && p.b.layout == Layout::row_major ? 4 : 8;
        expect_correct(rt, p, gemv_config(p, rows, (M + N) % 2 == 0));
      }
}

TEST_F(GemmGpuGemv, UnalignedRunsBatchesAlphaBetaBias) {
  for (const char* layout : {"NT", "TT", "NN", "TN"}) {
    // Leading dimensions one element past tight and a pointer 2 bytes in: every run element by element.
    GemmProblem p = shape(DType::bf16, DType::bf16, layout, 3, 1000, 1000, DType::bf16);
    p.a.ld = (p.a.layout == Layout::row_major ? p.k : p.m) + 1;
    p.b.ld = (p.b.layout == Layout::row_major ? p.n : p.k) + 1;
    expect_correct(rt, p, gemv_config(p, 4, true));
    const GemmProblem q = batched(shape(DType::f16, DType::f16, layout, 4, 520, 264, DType::f16));
    expect_correct(rt, q, gemv_config(q, 4, false), true);
    // f32 exact, 8 rows, a separate bf16 C: three launches in a row (nothing carried between them).
    GemmProblem r = shape(DType::f32, DType::f32, layout, 8, 300, 2000, DType::f32);
    r.beta = 0.5f;
    r.c = {0, DType::bf16, Layout::row_major};
    expect_correct(rt, r, gemv_config(r, 8, true), false, 3);
  }
}

// A matrix times one to three vectors (N = 1 to 3) with swapped operands: the kernel computes
// D^T = B^T A^T, whose B is A^T (K-major for a row-major A, N-major for a column-major one), with a
// bias along the user's columns, alpha, beta and a batch.
TEST_F(GemmGpuGemv, SwappedMatrixTimesVectors) {
  std::vector<Inputs> inputs = {{DType::f32, DType::f32, DType::f32, MathMode::exact}, {DType::bf16, DType::bf16, DType::bf16, MathMode::exact}};
  if (hopper()) inputs.push_back({DType::e4m3, DType::e4m3, DType::bf16, MathMode::exact});
  for (const Inputs& in : inputs)
    for (const char* layout : {"NT", "TT", "NN", "TN", "NT:c"})
      for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{4096, 1, 4096}, {1000, 1, 515}, {777, 3, 333}}) {
        GemmProblem p = shape(in.a, in.b, layout, M, N, K, in.d);
        const int rows = N == 1 ? 1 : 4;
        const GemmConfig cfg = gemv_config(in.b, p.a.layout == Layout::row_major, rows, M % 2 == 0, ":sw");
        expect_correct(rt, p, cfg, N == 1);
      }
  expect_correct(rt, batched(shape(DType::f16, DType::f16, "NT", 520, 2, 264, DType::f16)), gemv_config(DType::f16, true, 2, true, ":sw"), true);
}

TEST_F(GemmGpuGemv, EightBitOutputAndScales) {
  if (!hopper()) GTEST_SKIP() << "8-bit GEMM needs an sm_90 device, this is " << rt.device_info().name;
  for (const char* layout : {"NT", "NN"}) {
    GemmProblem p = shape(DType::e4m3, DType::e4m3, layout, 1, 2048, 1024, DType::e4m3);
    expect_correct(rt, p, gemv_config(p, 1, false));
    // Scales that change between launches reach the kernel without a new plan.
    GemmProblem q = shape(DType::e4m3, DType::e5m2, layout, 2, 1500, 800, DType::bf16);
    cli::GemmCase gc(rt, q, false, fresh_seed());
    GemmPlan plan = rt.plan_gemm(gc.problem, gemv_config(q, 4, true));
    for (auto [sa, sb] : {std::pair{0.5f, 2.0f}, std::pair{3.0f, 0.125f}}) {
      gc.write_scales(sa, sb);
      gc.reset_output();
      plan.run();
      rt.synchronize();
      EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << describe(gc.problem, plan) << " scales " << sa << " " << sb;
    }
  }
}

}  // namespace
}  // namespace tilejit
