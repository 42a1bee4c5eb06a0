// 8-bit float GEMM (e4m3, e5m2) on Hopper against a float64 reference over the dequantized inputs:
// every pair of input types, every layout (operands that are not K-major are transposed into the
// plan's workspace), odd and unaligned sizes, the configurations of the 16-bit path (split-K,
// ping-pong, clusters, K halves, swapped decode shapes), per-tensor scales that change between
// launches and graph replays, batches, the fixed epilogue and bodies, a column-major D.
#include "gemm_case.hpp"
#include "gemm_shape.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>

#include <fmt/format.h>

#include <random>
#include <vector>

namespace tilejit {
namespace {

std::uint64_t fresh_seed() { return std::random_device{}(); }

using test::describe;
using test::shape;

void expect_correct(Runtime& rt, const GemmProblem& p, const GemmConfig* cfg = nullptr, bool bias = false) {
  cli::GemmCase gc(rt, p, bias, fresh_seed());
  GemmPlan plan = cfg ? rt.plan_gemm(gc.problem, *cfg) : rt.plan_gemm(gc.problem);
  plan.run();
  rt.synchronize();
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << describe(gc.problem, plan);
}

class Fp8GemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    TILEJIT_REQUIRE_GPU(rt);
    if (rt.device_info().cc_major != 9) GTEST_SKIP() << "8-bit GEMM needs an sm_90 device, this is " << rt.device_info().name;
  }
  Runtime rt;
};

constexpr DType kE4 = DType::e4m3, kE5 = DType::e5m2;

TEST_F(Fp8GemmGpu, EveryPairLayoutAndOddSize) {
  const std::vector<std::array<std::int64_t, 3>> sizes{{1, 1, 1}, {7, 13, 5}, {13, 7, 33}, {65, 130, 257}, {300, 520, 200}, {1000, 1000, 1000}};
  for (auto [a, b] : {std::pair{kE4, kE4}, std::pair{kE4, kE5}, std::pair{kE5, kE4}, std::pair{kE5, kE5}})
    for (const char* layout : {"NT", "NN", "TN", "TT"})
      for (auto [M, N, K] : sizes) expect_correct(rt, shape(a, b, layout, M, N, K));
}

TEST_F(Fp8GemmGpu, OutputDtypesAndColumnMajorD) {
  for (DType d : {DType::f32, DType::f16, DType::bf16})
    for (const char* layout : {"NT", "TN:c", "NT:c", "NN:c"}) expect_correct(rt, shape(kE4, kE4, layout, 520, 264, 392, d));
}

TEST_F(Fp8GemmGpu, UnalignedAndLarge) {
  // 4095: every row of A and B is 4095 bytes, off 16: packed (K-major) or transposed into the
  // workspace; D's rows are staged for TMA and copied into place.
  for (const char* layout : {"NT", "NN", "TT"}) expect_correct(rt, shape(kE4, kE4, layout, 4095, 4095, 4095));
  expect_correct(rt, shape(kE4, kE4, "NT", 4096, 4096, 4096));
  GemmProblem p = shape(kE4, kE4, "NT", 520, 264, 300);
  p.a.ld = 300 + 5;  // A's rows off 16 bytes inside a wider buffer
  expect_correct(rt, p);
}

TEST_F(Fp8GemmGpu, ConfigurationsOfThe16BitPath) {
  const std::vector<std::array<std::int64_t, 3>> sizes{{65, 130, 264}, {300, 520, 200}, {1000, 1000, 1000}, {1536, 2048, 1024}};
  for (const char* cfg : {"wgmma:128x256x128:64x256:4", "wgmma:128x256x128:64x256:4:c2", "wgmma:128x128x128:128x128:4:pp",
                          "wgmma:128x128x128:128x128:4:kh", "wgmma:128x128x128:64x128:4:k3", "wgmma:128x128x128:64x128:4:t2",
                          "wgmma:64x64x256:64x64:3", "wgmma:64x128x256:64x128:4", "wgmma:256x128x128:128x128:3",
                          "wgmma:128x192x128:64x192:4", "wgmma:64x128x512:64x128:2"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : sizes) expect_correct(rt, shape(kE4, kE4, "NT", M, N, K), &c);
    expect_correct(rt, shape(kE5, kE4, "TN", 300, 520, 200), &c);
  }
}

TEST_F(Fp8GemmGpu, DecodeShapes) {
  // The heuristic's swapped kernels (D^T = B^T A^T in 16- or 32-wide tiles of M), every layout.
  for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1, 4096, 4096}, {7, 1000, 520}, {16, 8192, 1024}, {32, 2048, 4096}})
    for (const char* layout : {"NT", "NN", "TN", "TT"}) expect_correct(rt, shape(kE4, kE4, layout, M, N, K));
  GemmConfig split = GemmConfig::parse("wgmma:64x16x256:64x16:8:k3:sw");
  expect_correct(rt, shape(kE4, kE4, "NT", 12, 4096, 2048), &split);
}

TEST_F(Fp8GemmGpu, BatchAlphaBetaBiasActivationsAndBodies) {
  // Every layout: a transposed operand is transposed matrix by matrix (batch strides with gaps).
  for (const char* layout : {"NT", "NN", "TN", "TT"}) {
    GemmProblem p = shape(kE4, kE4, layout, 96, 80, 160);
    p.batch = 3;
    p.a.batch_stride = 96 * 160 + 16;
    p.b.batch_stride = 160 * 80 + 32;
    p.d.batch_stride = 96 * 80 + 8;
    p.alpha = 0.75f;
    p.beta = -1.25f;
    p.c = p.d;
    for (Activation act : {Activation::none, Activation::gelu}) {
      p.epilogue.activation = act;
      expect_correct(rt, p, nullptr, true);
    }
  }
  GemmProblem q = shape(kE4, kE5, "TN", 300, 264, 520);
  q.epilogue = tooling::gemm_epilogue_from_body("d = gelu(acc + bias[n]) * scale[m] + residual", DType::bf16, {});
  expect_correct(rt, q);
}

TEST_F(Fp8GemmGpu, ScalesAreReadAtEveryLaunch) {
  cli::GemmCase gc(rt, shape(kE4, kE4, "NN", 520, 264, 392), false, fresh_seed());
  GemmPlan plan = rt.plan_gemm(gc.problem);
  plan.run();
  rt.synchronize();
  ASSERT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << describe(gc.problem, plan);
  // New values behind the same pointers: the next launch (and a graph replay) uses them.
  gc.write_scales(3.0f, -0.5f);
  gc.reset_output();
  plan.run();
  rt.synchronize();
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << "after the scales changed";
  CUstream stream = nullptr;
  tooling::check(tooling::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  tooling::check(tooling::driver().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  plan.run(stream);
  tooling::check(tooling::driver().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  tooling::check(tooling::driver().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  gc.write_scales(0.125f, 5.0f);
  gc.reset_output();
  tooling::check(tooling::driver().cuGraphLaunch(exec, stream), "cuGraphLaunch");
  tooling::check(tooling::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << "graph replay after the scales changed";
  tooling::driver().cuGraphExecDestroy(exec);
  tooling::driver().cuGraphDestroy(graph);
  tooling::driver().cuStreamDestroy(stream);
}

TEST_F(Fp8GemmGpu, PlansAndRuntimeGemmTakeEachCallsScales) {
  cli::GemmCase first(rt, shape(kE4, kE4, "NT", 264, 520, 200), false, fresh_seed());
  cli::GemmCase second(rt, shape(kE4, kE4, "NT", 264, 520, 200), false, fresh_seed());
  // A plan without scales computes A B; given the second case's scales at run time, it uses them.
  GemmProblem unscaled = first.problem;
  unscaled.scale_a = unscaled.scale_b = 0;
  first.set_scales(1.f, 1.f);
  GemmPlan plan = rt.plan_gemm(unscaled);
  plan.run();
  plan.run(GemmPointers{.a = second.problem.a.ptr, .b = second.problem.b.ptr, .d = second.problem.d.ptr,
                        .scale_a = second.problem.scale_a, .scale_b = second.problem.scale_b});
  rt.synchronize();
  EXPECT_LE(first.relative_error(), cli::gemm_tolerance(first.problem)) << "plan, no scales";
  EXPECT_LE(second.relative_error(), cli::gemm_tolerance(second.problem)) << "plan, the run's scales";
  // Runtime::gemm: one plan for both calls, each with its own scales (none for the first).
  cli::GemmCase third(rt, shape(kE4, kE4, "NT", 264, 520, 200), false, fresh_seed());
  cli::GemmCase fourth(rt, shape(kE4, kE4, "NT", 264, 520, 200), false, fresh_seed());
  GemmProblem none = third.problem;
  none.scale_a = none.scale_b = 0;
  third.set_scales(1.f, 1.f);
  rt.gemm(none);
  rt.gemm(fourth.problem);
  rt.synchronize();
  EXPECT_LE(third.relative_error(), cli::gemm_tolerance(third.problem)) << "Runtime::gemm, no scales";
  EXPECT_LE(fourth.relative_error(), cli::gemm_tolerance(fourth.problem)) << "Runtime::gemm, the call's scales";
}

// An 8-bit D with an output scale: through TMA stores (BN 128, 256), element by element (BN 64, a
// column-major D), staged (4095), swapped decode tiles, split-K, block scales, an epilogue.
TEST_F(Fp8GemmGpu, EightBitOutputs) {
  for (DType d : {kE4, kE5}) {
    for (const char* layout : {"NT", "NN", "TN:c"})
      for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{7, 13, 5}, {300, 520, 200}, {1000, 1000, 1000}})
        expect_correct(rt, shape(kE4, kE4, layout, M, N, K, d));
    for (const char* cfg : {"wgmma:128x256x128:64x256:3", "wgmma:64x128x128:64x128:8", "wgmma:128x64x128:64x64:4",
                            "wgmma:128x128x128:64x128:4:k3"}) {
      GemmConfig c = GemmConfig::parse(cfg);
      expect_correct(rt, shape(kE4, kE5, "NT", 1000, 1000, 1000, d), &c);
    }
  }
  expect_correct(rt, shape(kE4, kE4, "NT", 4095, 4095, 4095, kE4));
  expect_correct(rt, shape(kE4, kE4, "NT", 16, 8192, 2048, kE4));
  GemmProblem blocks = shape(kE4, kE4, "NT", 520, 264, 392, kE4);
  blocks.scale_mode = ScaleMode::blocks;
  expect_correct(rt, blocks);
  GemmProblem fused = shape(kE4, kE4, "TN", 300, 264, 520, kE4);
  fused.epilogue.activation = Activation::gelu;
  expect_correct(rt, fused, nullptr, true);
}

// Scales per block of 128 along K (A per row, B per 128 x 128 block): random per block, so that a
// scale applied to the wrong K block, row or column block fails. K tails inside a scale block.
TEST_F(Fp8GemmGpu, BlockScales) {
  auto blocks = [](DType a, DType b, const char* layout, std::int64_t M, std::int64_t N, std::int64_t K) {
    GemmProblem p = shape(a, b, layout, M, N, K);
    p.scale_mode = ScaleMode::blocks;
    return p;
  };
  const std::vector<std::array<std::int64_t, 3>> sizes{{1, 1, 1}, {7, 13, 5}, {65, 130, 257}, {300, 520, 200}, {1000, 1000, 1000}};
  for (const char* layout : {"NT", "NN", "TN", "TT", "NT:c"})
    for (auto [M, N, K] : sizes) expect_correct(rt, blocks(kE4, kE4, layout, M, N, K));
  for (const char* cfg : {"wgmma:128x128x128:64x128:4", "wgmma:64x128x128:64x128:8", "wgmma:128x64x128:64x64:4", "wgmma:192x128x128:64x128:3",
                          "wgmma:192x128x128:64x128:4", "wgmma:64x128x128:64x128:8:kh", "wgmma:128x128x128:64x128:4:k3", "wgmma:128x128x128:64x128:4:c2",
                          "wgmma:128x128x128:64x128:4:t2", "wgmma:128x256x128:64x256:3", "wgmma:128x256x128:64x256:4"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{300, 520, 200}, {1000, 1000, 1000}, {1536, 2048, 1024}})
      expect_correct(rt, blocks(kE4, kE4, "NT", M, N, K), &c);
    expect_correct(rt, blocks(kE5, kE4, "TN", 264, 300, 520), &c);
  }
  expect_correct(rt, blocks(kE4, kE4, "NT", 16, 4096, 4096));  // decode-like: not swapped
  GemmProblem p = blocks(kE4, kE4, "NN", 96, 200, 300);
  p.batch = 3;
  p.a.batch_stride = 96 * 300 + 16;
  p.b.batch_stride = 300 * 200 + 16;
  p.d.batch_stride = 96 * 200 + 8;
  p.alpha = 0.5f;
  p.beta = 1.5f;
  p.c = p.d;
  p.epilogue.activation = Activation::silu;
  expect_correct(rt, p, nullptr, true);
}

}  // namespace
}  // namespace tilejit
