// GEMM as applications run it: plans captured into CUDA graphs and replayed, kernels back to back
// with programmatic dependent launch (the next GEMM reading this one's D), a column-major D in every
// layout, and tf32 on wgmma in every layout; results against the float64 host reference.
#include "cli_runner.hpp"
#include "gemm_case.hpp"
#include "test_support.hpp"

#include "jit/driver.hpp"

#include <tilejit/tilejit.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <vector>

namespace tilejit {
namespace {

using jit::check;
using jit::driver;

GemmProblem shape(DType t, MathMode math, const std::string& layout, std::int64_t M, std::int64_t N, std::int64_t K,
                  Layout d = Layout::row_major) {
  GemmProblem p;
  p.m = M, p.n = N, p.k = K;
  p.a = {0, t, layout[0] == 'N' ? Layout::row_major : Layout::col_major};
  p.b = {0, t, layout[1] == 'N' ? Layout::row_major : Layout::col_major};
  p.d = {0, t, d};
  p.math = math;
  return p;
}

std::uint64_t fresh_seed() { return std::random_device{}(); }

class GemmGpuGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    TILEJIT_REQUIRE_GPU(rt);
    rt.synchronize();  // the context is current on this thread from here on
    check(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  void TearDown() override {
    if (stream) driver().cuStreamDestroy(stream);
  }
  // Captures `work` on the stream into a graph and instantiates it.
  CUgraphExec capture(const std::function<void()>& work) {
    check(driver().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
    work();
    CUgraph graph = nullptr;
    check(driver().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    check(driver().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    driver().cuGraphDestroy(graph);
    return exec;
  }
  void replay(CUgraphExec exec) {
    check(driver().cuGraphLaunch(exec, stream), "cuGraphLaunch");
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  Runtime rt;
  CUstream stream = nullptr;
};

struct GraphCase {
  const char* what;
  GemmProblem problem;
  const char* config;  // nullptr: the heuristic's
};

std::vector<GraphCase> graph_cases() {
  std::vector<GraphCase> v;
  v.push_back({"simt exact f32", shape(DType::f32, MathMode::exact, "NN", 300, 200, 100), "simt:64x64x8:32x16:2"});
  v.push_back({"mma bf16", shape(DType::bf16, MathMode::exact, "TN", 300, 200, 100), "mma:128x128x32:64x32:3"});
  v.push_back({"wgmma bf16", shape(DType::bf16, MathMode::exact, "NT", 1024, 768, 512), nullptr});
  v.push_back({"wgmma packed A and B (ld 4095)", shape(DType::bf16, MathMode::exact, "NN", 1024, 4095, 4095), nullptr});
  v.push_back({"wgmma staged D (4095 columns)", shape(DType::f16, MathMode::exact, "NT", 1024, 4095, 512), nullptr});
  v.push_back({"wgmma split-K", shape(DType::bf16, MathMode::exact, "NT", 48, 4096, 4096), nullptr});
  v.push_back({"wgmma swapped decode, transposed B", shape(DType::bf16, MathMode::exact, "TT", 7, 4096, 1000), nullptr});
  v.push_back({"wgmma tf32, transposed A and B", shape(DType::f32, MathMode::tf32, "TN", 512, 640, 384), nullptr});
  v.push_back({"wgmma column-major D", shape(DType::bf16, MathMode::exact, "NN", 640, 512, 384, Layout::col_major), nullptr});
  v.push_back({"wgmma ping-pong", shape(DType::bf16, MathMode::exact, "NT", 512, 512, 256), "wgmma:128x128x64:128x128:4:pp"});
  v.push_back({"wgmma cluster of 2", shape(DType::bf16, MathMode::exact, "NT", 512, 512, 256), "wgmma:128x256x64:64x256:4:c2"});
  v.push_back({"wgmma ping-pong pair", shape(DType::bf16, MathMode::exact, "NT", 640, 512, 256), "wgmma:128x128x64:128x128:5:pp:c2"});
  v.push_back({"wgmma K halves", shape(DType::bf16, MathMode::exact, "NT", 256, 256, 512), "wgmma:64x128x64:64x128:8:kh"});
  v.push_back({"gemv, K-major B", shape(DType::bf16, MathMode::exact, "NT", 1, 4096, 1000), "gemv:1x8x256:1x1:4"});
  v.push_back({"gemv, N-major B", shape(DType::f16, MathMode::exact, "TN", 3, 1000, 777), "gemv:4x32x16:4x16:4"});
  return v;
}

// A plan run once, then captured (twice in one graph) and replayed: the replays write D again.
TEST_F(GemmGpuGraph, PlansOfEveryKindReplayInAGraphAfterAFirstRun) {
  for (auto& gcase : graph_cases()) {
    cli::GemmCase gc(rt, gcase.problem, false, fresh_seed());
    GemmPlan plan = gcase.config ? rt.plan_gemm(gc.problem, GemmConfig::parse(gcase.config)) : rt.plan_gemm(gc.problem);
    plan.run(stream);
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
    ASSERT_LE(gc.relative_error(), cli::gemm_tolerance(plan.problem())) << gcase.what << " " << plan.config().to_string();
    CUgraphExec exec = capture([&] {
      plan.run(stream);
      plan.run(stream);
    });
    for (int i = 0; i < 2; ++i) {
      gc.reset_output();  // poison: only the replay can put the result back
      replay(exec);
      EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(plan.problem())) << gcase.what << " replay " << i << " " << plan.config().to_string();
    }
    driver().cuGraphExecDestroy(exec);
  }
}

// A plan's first run inside a capture: plan_gemm allocated what the plan's pointers need and loaded
// its kernels, so the capture holds the launch and nothing else.
TEST_F(GemmGpuGraph, APlansFirstRunMayBeInsideACapture) {
  for (auto& gcase : graph_cases()) {
    cli::GemmCase gc(rt, gcase.problem, false, fresh_seed());
    GemmPlan plan = gcase.config ? rt.plan_gemm(gc.problem, GemmConfig::parse(gcase.config)) : rt.plan_gemm(gc.problem);
    CUgraphExec exec = capture([&] { plan.run(stream); });
    replay(exec);
    EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(plan.problem())) << gcase.what << " " << plan.config().to_string();
    driver().cuGraphExecDestroy(exec);
  }
}

// What cannot happen inside a capture is refused before anything reaches the stream, and the
// capture stays usable: Runtime::gemm's first call for a problem (it would load a kernel), and a plan
// run with pointers that need a workspace the plan's own did not.
TEST_F(GemmGpuGraph, WhatWouldAllocateDuringACaptureIsRefusedClearly) {
  cli::GemmCase gc(rt, shape(DType::bf16, MathMode::exact, "NT", 512, 512, 256), false, fresh_seed());
  check(driver().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  try {
    rt.gemm(gc.problem, stream);
    ADD_FAILURE() << "Runtime::gemm's first call inside a capture was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("captured into a CUDA graph"), std::string::npos) << e.what();
  }
  CUgraph graph = nullptr;
  EXPECT_EQ(driver().cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);  // the capture was not broken
  if (graph) driver().cuGraphDestroy(graph);
  rt.gemm(gc.problem, stream);  // outside a capture: fine, and the next call inside one is too
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  gc.reset_output();
  CUgraphExec exec = capture([&] { rt.gemm(gc.problem, stream); });
  replay(exec);
  EXPECT_LE(gc.relative_error(), 1e-2);
  driver().cuGraphExecDestroy(exec);

  // The plan's A is aligned; the same data 2 bytes further on is not: packing needs a workspace.
  GemmProblem wide = shape(DType::bf16, MathMode::exact, "NT", 512, 512, 256);
  cli::GemmCase src(rt, wide, false, fresh_seed());
  GemmPlan plan = rt.plan_gemm(src.problem);
  plan.run(stream);
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  DeviceBuffer shifted = rt.alloc(512 * 256 * 2 + 64);
  check(driver().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  try {
    plan.run(GemmPointers{.a = shifted.ptr() + 2}, stream);
    ADD_FAILURE() << "a run needing a new workspace inside a capture was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("captured into a CUDA graph"), std::string::npos) << e.what();
  }
  graph = nullptr;
  EXPECT_EQ(driver().cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  if (graph) driver().cuGraphDestroy(graph);
}

// Programmatic dependent launch: each GEMM may start before the previous kernel ends and must wait
// for it before reading. GEMM 2 reads GEMM 1's D as its A, back to back, after a memset poisons that
// A (NaN): a GEMM 2 that read early would see NaNs or stale values. Decode shapes too (M = 16, the
// swapped narrow kernels, which let the next grid launch once their last loads are issued).
TEST_F(GemmGpuGraph, BackToBackGemmsReadThePreviousOnesOutput) {
  struct Chain {
    const char* cfg;
    std::int64_t M, N, K, N2;
  };
  for (const Chain& c : {Chain{nullptr, 1024, 512, 768, 640}, Chain{"wgmma:64x128x64:64x128:8:k2", 1024, 512, 768, 640},
                         Chain{"mma:128x128x32:64x32:3", 1024, 512, 768, 640}, Chain{nullptr, 16, 4096, 1024, 2048},
                         Chain{nullptr, 7, 2048, 4096, 4096}}) {
    const char* cfg = c.cfg;
    const std::int64_t M = c.M, N = c.N, K = c.K, N2 = c.N2;
    cli::GemmCase first(rt, shape(DType::bf16, MathMode::exact, "NT", M, N, K), false, fresh_seed());
    cli::GemmCase second(rt, shape(DType::bf16, MathMode::exact, "NT", M, N2, N), false, fresh_seed());  // A: M x N, as first's D
    const GemmConfig* forced = nullptr;
    GemmConfig parsed;
    if (cfg) parsed = GemmConfig::parse(cfg), forced = &parsed;
    GemmPlan p1 = forced ? rt.plan_gemm(first.problem, *forced) : rt.plan_gemm(first.problem);
    GemmPlan p2 = forced ? rt.plan_gemm(second.problem, *forced) : rt.plan_gemm(second.problem);
    for (int i = 0; i < 5; ++i) {
      check(driver().cuMemsetD8Async(second.problem.a.ptr, 0xFF, static_cast<std::size_t>(M * N * 2), stream), "cuMemsetD8Async");
      check(driver().cuMemsetD8Async(second.problem.d.ptr, 0xFF, static_cast<std::size_t>(M * N2 * 2), stream), "cuMemsetD8Async");
      p1.run(GemmPointers{.d = second.problem.a.ptr}, stream);
      p2.run(stream);
      p1.run(GemmPointers{.d = second.problem.a.ptr}, stream);  // and again over what GEMM 2 just read
      p2.run(stream);
      check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
      second.reload_inputs();  // A as GEMM 1 wrote it
      EXPECT_LE(second.relative_error(), 1e-2) << (cfg ? cfg : "heuristic") << " M " << M << " round " << i << " " << p2.config().to_string();
      if (M <= 32) {
        EXPECT_TRUE(p1.config().swap_ab && p2.config().swap_ab) << p1.config().to_string() << " " << p2.config().to_string();
      }
    }
  }
}

// A column-major D in every layout and dtype: the heuristic computes the row-major D^T on wgmma,
// with a bias (along D^T's rows), beta with a column-major C, odd sizes and an unaligned one.
TEST_F(GemmGpuGraph, ColumnMajorDInEveryLayout) {
  for (DType t : {DType::bf16, DType::f16, DType::f32})
    for (const char* layout : {"NN", "NT", "TN", "TT"})
      for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1000, 1000, 1000}, {333, 520, 200}, {1024, 4095, 512}}) {
        GemmProblem p = shape(t, t == DType::f32 ? MathMode::tf32 : MathMode::exact, layout, M, N, K, Layout::col_major);
        p.beta = 0.5f;
        p.c = p.d;
        p.epilogue.activation = Activation::gelu;
        cli::GemmCase gc(rt, p, true, fresh_seed());
        GemmPlan plan = rt.plan_gemm(gc.problem);
        plan.run(stream);
        check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
        EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(plan.problem()))
            << dtype_name(t) << " " << layout << " " << M << "x" << N << "x" << K << " " << plan.config().to_string();
        // The kernel computes the row-major D^T, except for tf32 TT: swapped, its B (A^T) would be
        // transposed at each launch, so it writes the column-major D itself and reads A through registers.
        const bool tf32_tt = t == DType::f32 && std::string(layout) == "TT";
        if (plan.config().kind == GemmKind::wgmma) {
          EXPECT_EQ(plan.config().swap_ab, !tf32_tt) << layout << " " << plan.config().to_string();
          if (tf32_tt) {
            EXPECT_TRUE(plan.config().a_registers) << plan.config().to_string();
          }
        }
      }
}

// Decode-like shapes swap operands with a bias too: it runs along the rows of D^T (BIAS_ROW), on the
// TMA-free element epilogue of narrow tiles and with split-K.
TEST_F(GemmGpuGraph, SwappedDecodeShapesTakeABias) {
  for (const char* layout : {"NT", "TN"})
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{16, 4096, 1024}, {7, 2048, 1000}, {32, 4096, 4096}}) {
      GemmProblem p = shape(DType::bf16, MathMode::exact, layout, M, N, K);
      p.epilogue.activation = Activation::silu;
      cli::GemmCase gc(rt, p, true, fresh_seed());
      GemmPlan plan = rt.plan_gemm(gc.problem);
      EXPECT_TRUE(plan.config().swap_ab) << plan.config().to_string();
      plan.run(stream);
      check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
      EXPECT_LE(gc.relative_error(), 1e-2) << layout << " " << M << "x" << N << "x" << K << " " << plan.config().to_string();
    }
}

// tf32 on wgmma in every layout: a column-major A goes through registers, a row-major B is
// transposed into the plan's workspace at launch (NN runs swapped, on neither); batches with
// strides, odd sizes, the heuristic's and a forced configuration (which transposes A).
TEST_F(GemmGpuGraph, Tf32OnWgmmaInEveryLayout) {
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1000, 1000, 1000}, {65, 130, 257}, {512, 4095, 300}}) {
      GemmProblem p = shape(DType::f32, MathMode::tf32, layout, M, N, K);
      cli::GemmCase gc(rt, p, false, fresh_seed());
      GemmPlan plan = rt.plan_gemm(gc.problem);
      for (int i = 0; i < 2; ++i) plan.run(stream);
      check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
      EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(plan.problem())) << layout << " " << M << "x" << N << "x" << K << " "
                                                                         << plan.config().to_string();
      if (M >= 512) {
        EXPECT_EQ(plan.config().kind, GemmKind::wgmma) << layout << " " << plan.config().to_string();
      }
    }
    GemmProblem b = shape(DType::f32, MathMode::tf32, layout, 96, 80, 72);
    b.batch = 3;
    b.a.batch_stride = 96 * 72 + 5;
    b.b.batch_stride = 72 * 80 + 3;
    b.d.batch_stride = 96 * 80 + 4;
    cli::GemmCase gb(rt, b, true, fresh_seed());
    GemmPlan plan = rt.plan_gemm(gb.problem, GemmConfig::parse("wgmma:128x128x32:64x128:4"));
    plan.run(stream);
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
    EXPECT_LE(gb.relative_error(), cli::gemm_tolerance(plan.problem())) << layout << " batched";
  }
}

// `bench gemm --rotate 3` (decode shapes timed with their inputs out of L2): every row says it took
// three copies, checks its D against float64 and has a ratio; with 8-bit inputs in a layout
// cuBLASLt does not take, the reference runs its K-major problem on copies of its own.
TEST(GemmGraphGpu, BenchRotatesInputsThroughCopies) {
  Runtime rt;
  TILEJIT_REQUIRE_GPU(rt);
  test::TempDir dir;
  for (const std::string& dtype_layouts : {std::string("--dtype bf16 --layout NT,NN"), std::string("--dtype e4m3 --layout NT,NN")}) {
    const auto json = (dir.path() / "rows.json").string();
    const auto r = test::run_cli("bench gemm " + dtype_layouts + " --shapes 16x1024x512,200x264x128 --method graph --runs 1 --group-ms 2 "
                                 "--rotate 3 --out " + json);
    if (r.out.find("libcublas") != std::string::npos) GTEST_SKIP() << "no cuBLAS here: " << r.out;
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("A and B rotated through 3 copies per side"), std::string::npos) << r.out;
    std::ifstream f(json);
    const auto rows = nlohmann::json::parse(f);
    ASSERT_EQ(rows.size(), 4u) << r.out;
    for (const auto& row : rows) {
      EXPECT_EQ(row["rotate"].get<int>(), 3) << row.dump();
      if (row["reference"] != "none") {  // none: cuBLASLt refused the shape, tilejit timed alone
        EXPECT_GT(row["ratio"].get<double>(), 0.0) << row.dump();
      }
      EXPECT_LE(row["rel_error"].get<double>(), 1e-2) << row.dump();
    }
  }
}

}  // namespace
}  // namespace tilejit
