// GEMM on the GPU against a float64 host reference: every dtype and math mode x layout x odd sizes,
// batches, alpha/beta, bias, each activation, C aliasing D, K = 0, several configurations.
#include "gemm_case.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <random>
#include <vector>

namespace tilejit {
namespace {

struct Math {
  DType dtype;
  MathMode math;
  const char* name;
};
constexpr Math kMaths[] = {{DType::f32, MathMode::exact, "f32"}, {DType::f32, MathMode::tf32, "tf32"},
                           {DType::f16, MathMode::exact, "f16"}, {DType::bf16, MathMode::exact, "bf16"}};
constexpr const char* kLayouts[] = {"NN", "NT", "TN", "TT"};

GemmProblem shape(const Math& m, const std::string& layout, std::int64_t M, std::int64_t N, std::int64_t K) {
  GemmProblem p;
  p.m = M, p.n = N, p.k = K;
  p.a = {0, m.dtype, layout[0] == 'N' ? Layout::row_major : Layout::col_major};
  p.b = {0, m.dtype, layout[1] == 'N' ? Layout::row_major : Layout::col_major};
  p.d = {0, m.dtype, Layout::row_major};
  p.math = m.math;
  return p;
}

std::uint64_t fresh_seed() { return std::random_device{}(); }

void expect_correct(Runtime& rt, GemmProblem p, bool bias = false, const GemmConfig* cfg = nullptr, bool separate_c = true) {
  cli::GemmCase gc(rt, p, bias, fresh_seed(), separate_c);
  GemmPlan plan = cfg ? rt.plan_gemm(gc.problem, *cfg) : rt.plan_gemm(gc.problem);
  plan.run();
  rt.synchronize();
  const double err = gc.relative_error();
  EXPECT_LE(err, cli::gemm_tolerance(gc.problem))
      << p.m << "x" << p.n << "x" << p.k << " batch " << p.batch << " " << dtype_name(p.a.dtype) << (p.math == MathMode::tf32 ? "/tf32" : "")
      << " " << layout_name(p.a.layout) << layout_name(p.b.layout) << " config " << plan.config().to_string();
}

// f16, NN, a batch of 3 with padded strides, alpha, beta with C aliasing D, relu (and a bias where the
// caller asks): the whole epilogue on 16-byte-aligned operands.
// f16 batches with gaps between the matrices, alpha, beta with C aliasing D, and an activation.
GemmProblem batched_with_epilogue(const std::string& layout = "NN", std::int64_t M = 200, std::int64_t N = 256, std::int64_t K = 136,
                                  std::int64_t batch = 3, float alpha = 0.75f, float beta = 0.5f, Activation act = Activation::relu) {
  GemmProblem p = shape(kMaths[2], layout, M, N, K);
  p.batch = batch;
  p.a.batch_stride = M * K + 8;
  p.b.batch_stride = K * N + 64;
  p.d.batch_stride = M * N + 8;
  p.alpha = alpha;
  p.beta = beta;
  p.c = p.d;
  p.epilogue.activation = act;
  return p;
}

// Three launches of one plan in a row, then the check: state a kernel leaves behind (split-K counters,
// shared regions reused tile after tile) must not spoil the next launch.
void expect_correct_in_a_row(Runtime& rt, const GemmProblem& p, const GemmConfig& c) {
  cli::GemmCase gc(rt, p, false, fresh_seed());
  GemmPlan plan = rt.plan_gemm(gc.problem, c);
  for (int i = 0; i < 3; ++i) plan.run();
  rt.synchronize();
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << c.to_string();
}

class GemmGpu : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  void SetUp() override { TILEJIT_REQUIRE_GPU(rt); }
  Runtime rt;
};

TEST_P(GemmGpu, OddSizes) {
  const Math& m = kMaths[std::get<0>(GetParam())];
  const std::string layout = kLayouts[std::get<1>(GetParam())];
  for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {7, 13, 5}, {13, 7, 33}, {65, 130, 257}, {1000, 1000, 1000}})
    expect_correct(rt, shape(m, layout, M, N, K));
}

TEST_P(GemmGpu, Unaligned4095) {
  const Math& m = kMaths[std::get<0>(GetParam())];
  expect_correct(rt, shape(m, kLayouts[std::get<1>(GetParam())], 4095, 4095, 4095));
}

TEST_P(GemmGpu, BatchAlphaBetaBiasActivations) {
  const Math& m = kMaths[std::get<0>(GetParam())];
  const std::string layout = kLayouts[std::get<1>(GetParam())];
  GemmProblem p = shape(m, layout, 96, 80, 72);
  p.batch = 3;
  p.a.batch_stride = 96 * 72 + 5;  // strides larger than one matrix
  p.b.batch_stride = 72 * 80 + 3;
  p.d.batch_stride = 96 * 80 + 7;
  p.alpha = 0.75f;
  p.beta = -1.25f;
  p.c = p.d;
  p.c.dtype = m.dtype == DType::f32 ? DType::f32 : DType::bf16;
  for (Activation act : {Activation::none, Activation::relu, Activation::gelu, Activation::silu}) {
    p.epilogue.activation = act;
    expect_correct(rt, p, true);
  }
}

INSTANTIATE_TEST_SUITE_P(MathsAndLayouts, GemmGpu, ::testing::Combine(::testing::Range(0, 4), ::testing::Range(0, 4)),
                         [](const auto& param_info) {
                           return std::string(kMaths[std::get<0>(param_info.param)].name) + "_" + kLayouts[std::get<1>(param_info.param)];
                         });

class GemmGpuMisc : public ::testing::Test {
 protected:
  void SetUp() override { TILEJIT_REQUIRE_GPU(rt); }
  Runtime rt;
};

TEST_F(GemmGpuMisc, OneRowAndOneColumnOperandsInEveryLayout) {
  // One row of A (a decode step's activation) or of D stored column-major, one column of B stored
  // row-major: with ld 1 they run as the K-major (row-major D) operands they equal; with a wider ld
  // they stay strided. Every math, every layout, D both ways, a batch.
  for (const Math& m : kMaths)
    for (const char* layout : kLayouts)
      for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1, 4096, 1024}, {1, 777, 333}, {1000, 1, 512}, {1, 1, 300}})
        for (Layout d : {Layout::row_major, Layout::col_major}) {
          GemmProblem p = shape(m, layout, M, N, K);
          p.d.layout = d;
          expect_correct(rt, p);
        }
  GemmProblem strided = shape(kMaths[3], "TN", 1, 1000, 512);
  strided.a.ld = 4;
  expect_correct(rt, strided);
  GemmProblem batched = shape(kMaths[3], "TT", 1, 2048, 520);
  batched.batch = 2;
  batched.a.batch_stride = 520 + 8;
  batched.b.batch_stride = 520 * 2048 + 64;
  batched.d.batch_stride = 2048 + 8;
  batched.d.layout = Layout::col_major;
  batched.beta = 0.5f;
  batched.c = batched.d;
  expect_correct(rt, batched);
}

TEST_F(GemmGpuMisc, CAliasesDAndKZero) {
  GemmProblem p = shape(kMaths[3], "NT", 100, 60, 40);
  p.beta = 0.5f;
  expect_correct(rt, p, false, nullptr, /*separate_c=*/false);  // D = A B + 0.5 D in place
  p.k = 0;  // D = beta * C + bias
  expect_correct(rt, p, true, nullptr, false);
  GemmProblem empty = shape(kMaths[0], "NN", 0, 10, 10);
  cli::GemmCase gc(rt, shape(kMaths[0], "NN", 1, 1, 1), false, 1);
  empty.a = gc.problem.a, empty.b = gc.problem.b, empty.d = gc.problem.d;
  EXPECT_NO_THROW(rt.gemm(empty));  // M = 0: nothing to do
}

TEST_F(GemmGpuMisc, EveryKindAndPreset) {
  for (const char* cfg : {"puzzle33", "mma:128x256x32:64x64:4", "mma:64x64x16:32x32:2", "mma:128x128x32:64x32:3"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (const Math* m : {&kMaths[1], &kMaths[2], &kMaths[3]}) {
      if (m->dtype == DType::f32 && c.bk % 8) continue;
      expect_correct(rt, shape(*m, "NN", 300, 520, 200), false, &c);
      expect_correct(rt, shape(*m, "TT", 300, 520, 200), false, &c);
    }
  }
  for (const char* cfg : {"puzzle33-tiled", "simt:128x128x8:64x32:2", "simt:64x64x8:32x16:2", "simt:128x128x16:64x32:1"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (const Math* m : {&kMaths[0], &kMaths[3]}) {
      expect_correct(rt, shape(*m, "NN", 300, 520, 200), false, &c);
      expect_correct(rt, shape(*m, "TN", 300, 520, 200), false, &c);
    }
  }
}

TEST_F(GemmGpuMisc, MixedOutputDtypesAndLeadingDimensions) {
  GemmProblem p = shape(kMaths[2], "TN", 130, 66, 70);
  p.d.dtype = DType::f32;
  p.a.ld = 140;  // column-major A: ld >= m
  p.b.ld = 72;   // row-major B: ld >= n
  p.d.ld = 70;
  expect_correct(rt, p);
  p = shape(kMaths[0], "NT", 33, 47, 29);
  p.d.dtype = DType::bf16;
  expect_correct(rt, p);
  // An odd leading dimension of a row-major D, and a column-major D, on tensor-core paths.
  for (const Math* m : {&kMaths[1], &kMaths[3]}) {
    p = shape(*m, "NT", 200, 136, 96);
    p.d.ld = 137;
    expect_correct(rt, p);
    p.d.ld = 0;
    p.d.layout = Layout::col_major;
    expect_correct(rt, p);
  }
}

TEST_F(GemmGpuMisc, PlansRunWithOtherPointersAndRuntimeGemmReusesPlans) {
  cli::GemmCase first(rt, shape(kMaths[3], "NT", 256, 256, 256), false, fresh_seed());
  cli::GemmCase second(rt, shape(kMaths[3], "NT", 256, 256, 256), false, fresh_seed());
  GemmPlan plan = rt.plan_gemm(first.problem);
  plan.run(second.problem.a.ptr, second.problem.b.ptr, 0, second.problem.d.ptr);
  rt.synchronize();
  EXPECT_LE(second.relative_error(), 1e-2);
  const auto compiles = rt.stats().compiles;
  rt.gemm(first.problem);
  rt.gemm(second.problem);
  rt.synchronize();
  EXPECT_LE(first.relative_error(), 1e-2);
  EXPECT_EQ(rt.stats().compiles, compiles);
}

// A plan made on a GPU loads its kernel when it is made; its first run must still refuse outputs that
// overlap (here D's batches, stride 0), as a plan made without a GPU does. Found 2026-12-03: a test
// with D's batch stride left at 0 ran, each matrix of the batch writing over the last.
TEST_F(GemmGpuMisc, PreparedPlansStillRefuseOverlappingOutputs) {
  GemmProblem p = shape(kMaths[3], "NT", 256, 256, 128);
  p.batch = 3;
  p.a.batch_stride = 256 * 128, p.b.batch_stride = 256 * 128;  // D's stays 0
  cli::GemmCase gc(rt, p, false, fresh_seed());
  GemmPlan plan = rt.plan_gemm(gc.problem);
  try {
    plan.run();
    ADD_FAILURE() << "a plan whose D batches overlap ran";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("outputs of the batch overlap"), std::string::npos) << e.what();
  }
  GemmPlan forced = rt.plan_gemm(gc.problem, GemmConfig::parse("wgmma:128x128x64:64x128:4"));
  EXPECT_THROW(forced.run(), InvalidArgument);
  EXPECT_THROW(rt.gemm(gc.problem), InvalidArgument);
}

// Runtime::gemm keeps one plan per problem signature; each call's own bias, C and alpha must reach
// the kernel (the plan's bias and C were used before; added without a GPU run, 2026-11-30).
TEST_F(GemmGpuMisc, RuntimeGemmAndPlansTakeEachCallsBias) {
  for (const char* layout : {"NT", "NN"}) {
    cli::GemmCase first(rt, shape(kMaths[3], layout, 256, 192, 128), true, fresh_seed());
    GemmProblem scaled = shape(kMaths[3], layout, 256, 192, 128);
    scaled.alpha = 0.5f;  // the same plan: alpha comes with each call
    cli::GemmCase second(rt, scaled, true, fresh_seed());
    rt.gemm(first.problem);
    rt.gemm(second.problem);
    rt.synchronize();
    EXPECT_LE(first.relative_error(), 1e-2) << layout;
    EXPECT_LE(second.relative_error(), 1e-2) << layout;
    cli::GemmCase third(rt, shape(kMaths[3], layout, 256, 192, 128), true, fresh_seed());
    GemmPlan plan = rt.plan_gemm(first.problem);
    plan.run(GemmPointers{.a = third.problem.a.ptr, .b = third.problem.b.ptr, .d = third.problem.d.ptr,
                          .bias = third.problem.epilogue.bias});
    rt.synchronize();
    EXPECT_LE(third.relative_error(), 1e-2) << layout;
  }
  // beta on a separate f32 C, then beta on D itself (no C): their MatrixRefs for C differ only in the
  // pointer, yet they are different plans (the second once read the first call's C).
  GemmProblem s = shape(kMaths[3], "NT", 256, 192, 128);
  s.beta = 0.5f;
  s.c = {0, DType::f32, Layout::row_major, 192};
  cli::GemmCase separate(rt, s, false, fresh_seed(), true);
  separate.problem.c.ld = 0;  // the same tight leading dimension, written as 0
  s.c = MatrixRef{};
  cli::GemmCase on_d(rt, s, false, fresh_seed(), false);
  GemmProblem no_c = on_d.problem;
  no_c.c = MatrixRef{};
  rt.gemm(separate.problem);
  rt.gemm(no_c);
  rt.synchronize();
  EXPECT_LE(separate.relative_error(), 1e-2);
  EXPECT_LE(on_d.relative_error(), 1e-2);
}

TEST_F(GemmGpuMisc, ForcedConfigFromEnvironment) {
  test::ScopedEnv env("TILEJIT_GEMM_CONFIG", "mma:64x64x32:32x32:2");
  Runtime forced;
  cli::GemmCase gc(forced, shape(kMaths[2], "NN", 200, 200, 64), false, fresh_seed());
  GemmPlan plan = forced.plan_gemm(gc.problem);
  EXPECT_EQ(plan.config().to_string(), "mma:64x64x32:32x32:2");
  plan.run();
  forced.synchronize();
  EXPECT_LE(gc.relative_error(), 1e-2);
}

// The wgmma kind (Hopper only): K-major operands (A row-major, B column-major) whose rows TMA can
// address (16-byte multiples), M and N tails, K tails inside a stage, every epilogue.
class GemmGpuWgmma : public ::testing::Test {
 protected:
  void SetUp() override {
    TILEJIT_REQUIRE_GPU(rt);
    if (rt.device_info().cc_major != 9) GTEST_SKIP() << "kind wgmma needs an sm_90 device, this is " << rt.device_info().name;
  }
  Runtime rt;
};

TEST_F(GemmGpuWgmma, ShapesAndConfigs) {
  const std::vector<std::array<std::int64_t, 3>> shapes{{1, 1, 8}, {7, 13, 24}, {65, 130, 264}, {300, 520, 200}, {1000, 1000, 1000}};
  for (const Math* m : {&kMaths[2], &kMaths[3]})
    for (const char* cfg : {"wgmma:128x256x64:64x256:4", "wgmma:128x128x64:128x128:4", "wgmma:256x128x64:128x128:3",
                            "wgmma:64x64x64:64x64:2", "wgmma:192x192x64:64x192:3", "wgmma:64x128x128:64x128:4",
                            "wgmma:64x64x256:64x64:3"}) {
      GemmConfig c = GemmConfig::parse(cfg);
      for (auto [M, N, K] : shapes) expect_correct(rt, shape(*m, "NT", M, N, K), false, &c);
    }
  for (const char* cfg : {"wgmma:128x256x32:64x256:4", "wgmma:128x128x32:128x128:3", "wgmma:64x128x64:64x128:4"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : shapes) expect_correct(rt, shape(kMaths[1], "NT", M, N, K), false, &c);
  }
}

TEST_F(GemmGpuWgmma, EveryLayout) {
  // Column-major A (M-major) and row-major B (N-major) are read by transposed wgmma operands.
  const std::vector<std::array<std::int64_t, 3>> shapes{{8, 8, 8}, {72, 136, 264}, {264, 520, 200}, {1000, 1000, 1000}};
  for (const Math* m : {&kMaths[2], &kMaths[3]})
    for (const char* layout : {"NN", "TN", "TT"})
      for (const char* cfg : {"wgmma:128x256x64:64x256:4", "wgmma:256x128x64:128x128:3", "wgmma:64x64x64:64x64:2",
                              "wgmma:64x128x128:64x128:4", "wgmma:64x64x256:64x64:3"}) {
        GemmConfig c = GemmConfig::parse(cfg);
        for (auto [M, N, K] : shapes) expect_correct(rt, shape(*m, layout, M, N, K), false, &c);
      }
}

TEST_F(GemmGpuWgmma, BiasWithoutCOnTilesAtDsEdge) {
  // beta = 0 with a TMA-written D: every tile, those on D's edge included, takes the epilogue without
  // C, whose bias reads stop at column N - 1 (TMA drops the stores past the edge). Tiles that overhang
  // M, N or both, batches whose tiles overhang into the next matrix's rows, an f32 D.
  for (const char* cfg : {"wgmma:128x256x64:64x256:4", "wgmma:64x128x64:64x128:8"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1000, 1000, 1000}, {136, 264, 64}, {8, 8, 8}})
      for (const char* layout : {"NT", "TN"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), true, &c);
    GemmProblem batch = shape(kMaths[2], "NT", 200, 264, 136);
    batch.batch = 3;
    batch.d.batch_stride = 200 * 264;
    batch.epilogue.activation = Activation::gelu;
    expect_correct(rt, batch, true, &c);
    GemmProblem f32d = shape(kMaths[3], "NN", 300, 520, 200);
    f32d.d.dtype = DType::f32;
    expect_correct(rt, f32d, true, &c);
  }
}

TEST_F(GemmGpuWgmma, PacksOperandsTmaCannotRead) {
  // Odd leading dimensions and batch strides: A and/or B are copied into an aligned workspace first.
  GemmConfig c = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  for (const char* layout : {"NT", "NN", "TT"}) {
    expect_correct(rt, shape(kMaths[3], layout, 1000, 1000, 1001), false, &c);  // K odd: both operands
    GemmProblem p = shape(kMaths[2], layout, 520, 264, 200);
    p.a.ld = (layout[0] == 'N' ? 200 : 520) + 3;  // A only
    expect_correct(rt, p, false, &c);
  }
  GemmProblem b = shape(kMaths[3], "NT", 96, 80, 72);
  b.batch = 3;
  b.a.batch_stride = 96 * 72 + 5;
  b.b.batch_stride = 72 * 80 + 3;
  b.d.batch_stride = 96 * 80 + 7;
  expect_correct(rt, b, true, &c);
}

TEST_F(GemmGpuWgmma, PacksBWhoseLinesStartOffSectors) {
  // B's lines 16 bytes off 32-byte boundaries (K or N of 1000 or 2040 bf16) with M over 1024: the
  // heuristic's pick and a given configuration copy B into 128-byte aligned lines first, though TMA
  // could read it; every layout, tails, a batch whose stride alone is off, launches in a row; and
  // at about a wave, the heuristic's clusters of two instead.
  GemmConfig c = GemmConfig::parse("wgmma:128x128x64:64x128:4");
  for (const char* layout : {"NT", "NN", "TN", "TT"}) {
    expect_correct(rt, shape(kMaths[3], layout, 1100, 1000, 1000));
    expect_correct(rt, shape(kMaths[2], layout, 2040, 520, 2040), false, &c);
    expect_correct(rt, shape(kMaths[3], layout, 1000, 1000, 1000));  // clusters of two
    expect_correct(rt, shape(kMaths[3], layout, 2040, 2040, 1000));  // 128x256 clusters of two
  }
  GemmProblem b = shape(kMaths[3], "NT", 1536, 256, 512);
  b.batch = 3;
  b.a.batch_stride = 1536 * 512;
  b.b.batch_stride = 512 * 256 + 8;  // 16 bytes past a whole matrix
  b.d.batch_stride = 1536 * 256;
  expect_correct(rt, b, true, &c);
  expect_correct_in_a_row(rt, shape(kMaths[3], "NN", 2048, 1000, 512), c);
}

TEST_F(GemmGpuWgmma, StagesDTmaCannotWrite) {
  // A row-major D with an odd leading dimension or batch stride, large enough to be written aligned
  // into the workspace and copied into place: bf16 and f32 D, every layout, tails, beta with C
  // aliasing D, a batch, launches in a row.
  GemmConfig c = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  for (const char* layout : {"NT", "NN", "TN", "TT"}) {
    GemmProblem p = shape(kMaths[3], layout, 1000, 1000, 1000);
    p.d.ld = 1003;
    expect_correct(rt, p, false, &c);
  }
  GemmProblem f32d = shape(kMaths[3], "NT", 700, 777, 512);  // 777 f32 columns: 3108-byte rows
  f32d.d.dtype = DType::f32;
  expect_correct(rt, f32d, false, &c);
  GemmProblem beta = shape(kMaths[2], "NT", 600, 1000, 300);
  beta.d.ld = 1001;
  beta.alpha = 0.5f;
  beta.beta = 2.0f;
  beta.c = beta.d;
  beta.epilogue.activation = Activation::gelu;
  expect_correct(rt, beta, true, &c);
  GemmProblem batch = shape(kMaths[3], "NT", 520, 520, 256);
  batch.batch = 2;
  batch.d.batch_stride = 520 * 520 + 3;
  expect_correct(rt, batch, false, &c);
  GemmProblem again = shape(kMaths[3], "NT", 640, 1024, 512);
  again.d.ld = 1027;
  expect_correct_in_a_row(rt, again, c);  // the staged D's workspace serves launch after launch
  // A plan made for an aligned D, run on a D two bytes off a 16-byte boundary (staged there), whose
  // result is then checked in the case's own D.
  cli::GemmCase gc(rt, shape(kMaths[3], "NT", 640, 1024, 512), false, fresh_seed());
  GemmPlan plan = rt.plan_gemm(gc.problem, c);
  DeviceBuffer spare = rt.alloc(gc.output_bytes() + 16);
  spare.fill_bytes(0xFF);
  plan.run(0, 0, 0, spare.ptr() + 2);
  rt.synchronize();
  std::vector<unsigned char> d(gc.output_bytes());
  spare.download(d.data(), d.size(), 2);
  gc.set_output(d.data(), d.size());
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem));
  // The other way round: a plan made for a small D two bytes off a 16-byte boundary (element stores,
  // no staging buffers of its own), run on an aligned D, which its kernel stores through TMA and
  // shared-memory staging: the plan's shared memory holds that staging too.
  cli::GemmCase small(rt, shape(kMaths[3], "NT", 320, 320, 512), false, fresh_seed());
  DeviceBuffer odd = rt.alloc(small.output_bytes() + 16);
  GemmProblem odd_d = small.problem;
  odd_d.d.ptr = odd.ptr() + 2;
  GemmPlan odd_plan = rt.plan_gemm(odd_d, c);
  odd_plan.run(0, 0, 0, small.problem.d.ptr);
  rt.synchronize();
  EXPECT_LE(small.relative_error(), cli::gemm_tolerance(small.problem));
}

TEST_F(GemmGpuWgmma, KHalves) {
  // Two consumers on each tile, even and odd K blocks: one K block only (the odd consumer adds
  // zeros), odd and even counts of K blocks, tails, every layout, D column-major (no staging), batches
  // with the whole epilogue, and launches in a row (the shared region is reused tile after tile).
  for (const char* cfg : {"wgmma:64x128x64:64x128:8:kh", "wgmma:128x128x64:128x128:4:kh", "wgmma:64x256x64:64x256:4:kh"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{8, 8, 8}, {300, 520, 200}, {1000, 1000, 1000}, {130, 2304, 4096}})
      for (const char* layout : {"NT", "NN", "TN", "TT"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), false, &c);
    GemmProblem col = shape(kMaths[2], "NT", 200, 136, 328);
    col.d.layout = Layout::col_major;
    expect_correct(rt, col, false, &c);
    expect_correct(rt, batched_with_epilogue(), true, &c);
  }
  GemmConfig tf32 = GemmConfig::parse("wgmma:64x128x32:64x128:8:kh");
  expect_correct(rt, shape(kMaths[1], "NT", 1000, 1000, 1000), false, &tf32);
  expect_correct_in_a_row(rt, shape(kMaths[3], "NT", 1000, 1000, 1000), GemmConfig::parse("wgmma:64x128x64:64x128:8:kh"));
  // With swapped operands and narrow tiles (decode shapes; validation accepts kh with sw): every
  // layout, so the narrow N-major B of a column-major A too. Not yet run on the H200 when written.
  for (const char* cfg : {"wgmma:64x16x128:64x16:8:kh:sw", "wgmma:64x32x128:64x32:8:kh:sw"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1, 1000, 256}, {16, 4096, 2048}, {32, 136, 264}})
      for (const char* layout : {"NT", "NN", "TN", "TT"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), false, &c);
  }
}

TEST_F(GemmGpuWgmma, SplitK) {
  // Slices of K summed by the last block of each tile; K not a multiple of the slices, slices with no
  // K block at all, every epilogue, and launches in a row (the counters must be back at zero).
  for (const char* cfg : {"wgmma:64x128x64:64x128:8:k2", "wgmma:128x128x64:64x128:4:k3", "wgmma:64x64x64:64x64:4:k4",
                          "wgmma:64x64x256:64x64:3:k2"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{16, 1024, 4096}, {7, 520, 1000}, {130, 264, 4104}, {64, 128, 64}})
      for (const char* layout : {"NT", "NN"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), false, &c);
  }
  GemmConfig c = GemmConfig::parse("wgmma:64x128x64:64x128:8:k2");
  expect_correct(rt, batched_with_epilogue("NT", 40, 384, 2048, 2, 0.5f, 2.0f, Activation::gelu), true, &c);
  expect_correct_in_a_row(rt, shape(kMaths[3], "NT", 16, 2048, 8192), c);
}

TEST_F(GemmGpuWgmma, TailSplit) {
  // The last partial wave's tiles cut into K slices: more tiles than SMs with a remainder (256, 135
  // and 4 x 72 tiles of 64x64 or 128x128), tiles on D's edges, slices with no K block (K = 64),
  // batches, beta with C aliasing D, and launches in a row (the counters must be back at zero).
  for (const char* cfg : {"wgmma:64x64x64:64x64:4:t2", "wgmma:64x64x64:64x64:4:t3", "wgmma:128x128x64:64x128:4:t4"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1000, 1000, 1000}, {1920, 1152, 520}, {1001, 1030, 64}})
      for (const char* layout : {"NT", "NN", "TT"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), false, &c);
    expect_correct(rt, batched_with_epilogue("NT", 520, 560, 1000, 4, 0.5f, 2.0f), true, &c);
    expect_correct_in_a_row(rt, shape(kMaths[3], "NT", 1000, 1000, 2048), c);
  }
}

TEST_F(GemmGpuWgmma, PingPong) {
  // Two consumers taking alternate tiles: odd and even tile counts per block, one tile only, batches.
  for (const char* cfg : {"wgmma:128x128x64:128x128:4:pp", "wgmma:64x256x64:64x256:4:pp"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{8, 8, 8}, {300, 520, 200}, {1000, 1000, 1000}, {2048, 2304, 512}})
      for (const char* layout : {"NT", "NN", "TT"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), false, &c);
    GemmProblem p = shape(kMaths[2], "NT", 96, 80, 72);
    p.batch = 3;
    p.a.batch_stride = 96 * 72 + 8;
    p.b.batch_stride = 72 * 80 + 16;
    p.d.batch_stride = 96 * 80 + 8;
    p.beta = 0.5f;
    p.c = p.d;
    p.epilogue.activation = Activation::silu;
    expect_correct(rt, p, true, &c);
  }
}

TEST_F(GemmGpuWgmma, ClusterOfTwo) {
  // Pairs of tiles sharing B through TMA multicast: an odd number of tile rows (the second block of
  // the last pair has no tile), one tile only, every layout, batches with the whole epilogue, and
  // launches in a row.
  // Ping-pong pairs too: each block's two consumers take turns, consumer c of both blocks on one pair of tiles.
  for (const char* cfg : {"wgmma:128x256x64:64x256:4:c2", "wgmma:128x128x64:64x128:4:c2", "wgmma:64x128x64:64x128:8:c2",
                          "wgmma:64x128x128:64x128:4:c2",
                          "wgmma:128x128x64:128x128:5:pp:c2", "wgmma:64x256x64:64x256:4:pp:c2"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{8, 8, 8}, {300, 520, 200}, {1000, 1000, 1000}, {2048, 2304, 512}})
      for (const char* layout : {"NT", "NN", "TN", "TT"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), false, &c);
    expect_correct(rt, batched_with_epilogue(), true, &c);
  }
  GemmConfig tf32 = GemmConfig::parse("wgmma:128x256x32:64x256:4:c2");
  expect_correct(rt, shape(kMaths[1], "NT", 1000, 1000, 1000), false, &tf32);
  expect_correct_in_a_row(rt, shape(kMaths[3], "NT", 1536, 2048, 1024), GemmConfig::parse("wgmma:128x256x64:64x256:4:c2"));
}

TEST_F(GemmGpuWgmma, Tf32ColumnMajorAThroughRegisters) {
  // A column-major tf32 A read as it is, its fragments loaded into registers by the consumers (ra):
  // every tile shape and option the kernel combines it with (one or two m64 blocks per consumer,
  // ping-pong, K halves, clusters, split-K), odd sizes (tiles on D's edges, K tails, a pitch TMA
  // cannot read: packed first), a column-major D, B row-major (transposed at launch), NN swapped
  // (D^T = B^T A^T, whose A is the user's B), batches with the epilogue, launches in a row.
  for (const char* cfg : {"wgmma:128x256x32:64x256:4:ra", "wgmma:128x128x32:64x128:4:ra", "wgmma:128x128x32:128x128:4:ra",
                          "wgmma:64x128x32:64x128:8:ra", "wgmma:128x128x32:128x128:4:pp:ra", "wgmma:64x128x32:64x128:8:kh:ra",
                          "wgmma:128x256x32:64x256:4:c2:ra", "wgmma:128x128x32:64x128:4:k2:ra", "wgmma:128x128x64:64x128:3:ra"}) {
    const GemmConfig c = GemmConfig::parse(cfg);
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{8, 8, 8}, {65, 130, 257}, {300, 520, 200}, {1000, 1000, 1000}}) {
      for (const char* layout : {"TT", "TN"}) {
        GemmProblem p = shape(kMaths[1], layout, M, N, K);
        expect_correct(rt, p, false, &c);
        p.d.layout = Layout::col_major;
        expect_correct(rt, p, false, &c);
      }
    }
    GemmConfig swapped = c;
    swapped.swap_ab = true;
    expect_correct(rt, shape(kMaths[1], "NN", 1000, 1000, 1000), false, &swapped);
    expect_correct(rt, shape(kMaths[1], "NN", 300, 520, 200), false, &swapped);
  }
  const GemmConfig ra = GemmConfig::parse("wgmma:128x256x32:64x256:4:ra");
  expect_correct(rt, shape(kMaths[1], "TT", 4095, 1000, 515), false, &ra);  // lda 4095: packed for TMA, still M-major
  GemmProblem b = shape(kMaths[1], "TT", 96, 80, 72);
  b.batch = 3;
  b.a.batch_stride = 96 * 72 + 4;
  b.b.batch_stride = 72 * 80 + 4;
  b.d.batch_stride = 96 * 80 + 4;
  b.alpha = 0.75f, b.beta = -1.25f;
  b.c = b.d;
  b.epilogue.activation = Activation::gelu;
  expect_correct(rt, b, true, &ra);
  expect_correct_in_a_row(rt, shape(kMaths[1], "TT", 1536, 2048, 1024), ra);
}

TEST_F(GemmGpuWgmma, SwappedDecodeShapes) {
  // D^T = B^T A^T with 16- or 32-wide tiles of M: M from 1 to 32, N and K with tails, every layout
  // (a column-major A is the kernel's N-major B), split-K, tf32, batches with alpha, beta (C
  // aliasing D) and an activation, the heuristic's own pick, and a narrow N computed directly (a
  // row-major B transposed the same way).
  for (const char* cfg : {"wgmma:64x16x128:64x16:8:sw", "wgmma:64x32x64:64x32:8:sw", "wgmma:64x16x128:64x16:8:k3:sw"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    // M = 8 and 24: a column-major A TMA reads in place (16- and 48-byte rows) but narrower than the
    // 16- or 32-column box (the rest reads as zeros); added without a GPU, not yet run on the H200.
    for (auto [M, N, K] :
         std::vector<std::array<std::int64_t, 3>>{{1, 1000, 256}, {7, 520, 1000}, {8, 264, 520}, {16, 4096, 2048}, {24, 200, 136}, {32, 136, 264}})
      // TN and TT: A column-major, read in place as the kernel's N-major B (or transposed into the
      // workspace where TMA cannot read it: M = 1, 7).
      for (const char* layout : {"NT", "NN", "TN", "TT"}) expect_correct(rt, shape(kMaths[3], layout, M, N, K), false, &c);
  }
  GemmConfig tf32 = GemmConfig::parse("wgmma:64x16x64:64x16:8:sw");
  expect_correct(rt, shape(kMaths[1], "NT", 9, 1000, 1000), false, &tf32);
  GemmConfig c = GemmConfig::parse("wgmma:64x16x128:64x16:8:sw");
  GemmProblem p = shape(kMaths[2], "NT", 12, 264, 200);
  p.batch = 2;
  p.a.batch_stride = 12 * 200 + 8;
  p.b.batch_stride = 200 * 264 + 8;
  p.d.batch_stride = 12 * 264 + 8;
  p.alpha = 0.5f;
  p.beta = 2.0f;
  p.c = p.d;
  p.epilogue.activation = Activation::silu;
  expect_correct(rt, p, false, &c);
  p.a.layout = Layout::col_major;  // the same batches with A column-major (24-byte rows: transposed per matrix)
  p.a.ld = 12;
  p.a.batch_stride = 12 * 200 + 8;
  expect_correct(rt, p, false, &c);
  p.a.ld = 16;  // 32-byte rows: read in place as a batched N-major B (added without a GPU, not yet run)
  p.a.batch_stride = 16 * 200 + 8;
  expect_correct(rt, p, false, &c);
  expect_correct(rt, shape(kMaths[3], "NT", 16, 8192, 1024), false, nullptr);  // the heuristic swaps
  expect_correct(rt, shape(kMaths[3], "TN", 16, 8192, 1024), false, nullptr);  // also with A column-major
  expect_correct_in_a_row(rt, shape(kMaths[3], "TT", 16, 4096, 1000), c);     // A read in place, launch after launch
  expect_correct_in_a_row(rt, shape(kMaths[3], "TT", 7, 4096, 1000), c);      // the transposed copy, launch after launch
  GemmConfig narrow = GemmConfig::parse("wgmma:64x16x128:64x16:8");
  for (const char* layout : {"NT", "NN"}) expect_correct(rt, shape(kMaths[3], layout, 1000, 16, 512), false, &narrow);
  // A row-major B is read in place where TMA can (bf16, n = 64 and 200); its K-major copy takes one
  // thread per line up to 64 columns and 32 x 32 blocks above (bf16 n = 65; tf32 n = 64 and 65).
  for (std::int64_t n : {64, 65, 200}) expect_correct(rt, shape(kMaths[3], "NN", 300, n, 272), false, &narrow);
  GemmConfig narrow_tf32 = GemmConfig::parse("wgmma:64x16x64:64x16:8");
  for (std::int64_t n : {64, 65}) expect_correct(rt, shape(kMaths[1], "NN", 300, n, 272), false, &narrow_tf32);  // 4-byte elements
}

TEST_F(GemmGpuWgmma, BatchAlphaBetaBiasActivationsAndColumnMajorD) {
  GemmConfig c = GemmConfig::parse("wgmma:128x128x64:64x128:3");
  GemmProblem p = shape(kMaths[3], "NT", 96, 80, 72);
  p.batch = 3;
  p.a.batch_stride = 96 * 72 + 8;  // 16-byte multiples, larger than one matrix
  p.b.batch_stride = 72 * 80 + 16;
  p.alpha = 0.75f;
  p.beta = -1.25f;
  // D's batch stride decides how D is written: 7 elements past a matrix, element by element; 8
  // (16 bytes), through shared memory and TMA stores.
  for (std::int64_t d_stride : {96 * 80 + 7, 96 * 80 + 8}) {
    p.d.batch_stride = d_stride;
    p.c = p.d;
    p.c.dtype = DType::bf16;
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu, Activation::silu}) {
      p.epilogue.activation = act;
      expect_correct(rt, p, true, &c);
    }
  }
  GemmProblem q = shape(kMaths[2], "NT", 200, 136, 96);
  q.d.layout = Layout::col_major;
  q.d.dtype = DType::f32;
  expect_correct(rt, q, false, &c);
  q.d.layout = Layout::row_major;  // f32 D through TMA stores (32 columns per chunk)
  expect_correct(rt, q, false, &c);
  q.d.ld = 137;                    // rows not 16-byte aligned: element stores
  expect_correct(rt, q, false, &c);
}

TEST_F(GemmGpuWgmma, PlanRunsWithOtherPointers) {
  GemmConfig c = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  cli::GemmCase first(rt, shape(kMaths[3], "NT", 512, 768, 320), false, fresh_seed());
  cli::GemmCase second(rt, shape(kMaths[3], "NT", 512, 768, 320), false, fresh_seed());
  GemmPlan plan = rt.plan_gemm(first.problem, c);
  plan.run();
  plan.run(second.problem.a.ptr, second.problem.b.ptr, 0, second.problem.d.ptr);  // new tensor maps
  rt.synchronize();
  EXPECT_LE(first.relative_error(), 1e-2);
  EXPECT_LE(second.relative_error(), 1e-2);
  // The same plan with an A that TMA cannot read in place (its rows 8 bytes off alignment inside a
  // wider buffer): packed at launch, same result.
  GemmProblem wide = shape(kMaths[3], "NT", 512, 768, 320);
  wide.a.ld = 324;
  cli::GemmCase third(rt, wide, false, fresh_seed());
  GemmProblem view = third.problem;
  GemmPlan strided = rt.plan_gemm(view, c);
  strided.run();
  rt.synchronize();
  EXPECT_LE(third.relative_error(), 1e-2);
}

}  // namespace
}  // namespace tilejit
