// GEMM tuning on the device: a tuned class serves later plans in this process and in another one
// (with no tuning there), the tuner never touches the problem's memory, bad candidates are reported
// and left out, and TILEJIT_AUTOTUNE=on tunes a class the first time a plan needs it.
#include "cli_runner.hpp"
#include "gemm_case.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace tilejit {
namespace {

GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k, DType t, Layout a, Layout b) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = {0, t, a};
  p.b = {0, t, b};
  p.d = {0, t, Layout::row_major};
  p.c = p.d;
  return p;
}

// A decode shape's candidates include kind gemv (1 to 8 rows), in both B layouts: each one runs and
// its D matches the heuristic's (the tuner compares every element), and the class's choice computes
// the right thing.
TEST(GemmTuningGpu, DecodeShapesTimeKindGemvAndItsDMatches) {
  test::TempDir dir;
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", (dir.path() / "cache").string());
  test::ScopedEnv autotune("TILEJIT_AUTOTUNE", "cached");
  Runtime rt;
  TILEJIT_REQUIRE_GPU(rt);
  for (const Layout b : {Layout::col_major, Layout::row_major}) {
    const GemmProblem p = shape(1, 4096, 2048, DType::bf16, Layout::row_major, b);
    GemmTuneOptions o;
    o.rounds = 1;
    const GemmTuneResult r = rt.tune_gemm(p, o);
    int gemvs = 0;
    for (const auto& m : r.measurements) {
      if (m.config.kind != GemmKind::gemv) continue;
      ++gemvs;
      EXPECT_TRUE(m.ok) << m.config.to_string() << ": " << m.error;
    }
    EXPECT_GE(gemvs, 6) << layout_name(b);
    cli::GemmCase gc(rt, p, false, 11);
    GemmPlan plan = rt.plan_gemm(gc.problem);
    EXPECT_EQ(plan.config(), r.chosen);
    plan.run();
    rt.synchronize();
    EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem)) << plan.config().to_string();
  }
}

TEST(GemmTuningGpu, TunedClassServesLaterPlansHereAndInAnotherProcess) {
  test::TempDir dir;
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", (dir.path() / "cache").string());
  test::ScopedEnv autotune("TILEJIT_AUTOTUNE", "cached");
  Runtime rt;
  TILEJIT_REQUIRE_GPU(rt);
  // The user's memory, with a pattern that must survive the tuning untouched.
  cli::GemmCase user(rt, shape(520, 776, 1000, DType::bf16, Layout::row_major, Layout::col_major), false, 5);
  std::vector<unsigned char> before(user.output_bytes()), after(user.output_bytes());
  for (std::size_t i = 0; i < before.size(); ++i) before[i] = static_cast<unsigned char>(i * 13 + 7);
  DeviceBuffer d = rt.alloc(before.size());
  d.upload(before.data(), before.size());
  user.problem.d.ptr = d.ptr();
  GemmTuneOptions o;
  o.candidates = {GemmConfig::parse("wgmma:128x128x64:64x128:4"), GemmConfig::parse("wgmma:64x128x64:64x128:6"),
                  GemmConfig::parse("mma:64x64x32:32x32:4"),
                  GemmConfig::parse("wgmma:64x128x32:64x128:4")};  // BK 32 is not a 128-byte row of bf16: refused, reported
  o.rounds = 2;
  const GemmTuneResult r = rt.tune_gemm(user.problem, o);
  EXPECT_TRUE(r.stored);
  EXPECT_EQ(r.key.size(), 32u);
  EXPECT_EQ(r.heuristic, choose_gemm_config(user.problem, rt.target_arch_specific(), rt.device_info().multiprocessors));
  int ok = 0;
  for (const auto& m : r.measurements) {
    ok += m.ok;
    EXPECT_TRUE(m.measured_now);
    if (m.config == GemmConfig::parse("wgmma:64x128x32:64x128:4")) {
      EXPECT_FALSE(m.ok);
      EXPECT_NE(m.error.find("BK"), std::string::npos) << m.error;
    }
    if (m.ok) {
      EXPECT_GT(m.ms, 0);
    }
  }
  EXPECT_EQ(ok, 4);  // three candidates and the heuristic's
  EXPECT_GT(r.chosen_ms, 0);
  EXPECT_GT(r.heuristic_ms, 0);
  EXPECT_TRUE(std::any_of(r.measurements.begin(), r.measurements.end(), [&](const GemmTuneMeasurement& m) { return m.ok && m.config == r.chosen; }));
  // The user's D is as it was (the tuner runs on scratch buffers of its own).
  rt.synchronize();
  d.download(after.data(), after.size());
  EXPECT_TRUE(after == before) << "the tuner wrote the problem's D";

  // (Sizes of the same class: M in [512, 724), N and K in [724, 1024), rows 16-byte aligned.)
  // A plan of this class now takes the tuned configuration, and computes the right thing.
  cli::GemmCase gc(rt, shape(600, 800, 904, DType::bf16, Layout::row_major, Layout::col_major), false, 9);
  GemmPlan plan = rt.plan_gemm(gc.problem);
  EXPECT_EQ(plan.config_origin(), GemmConfigOrigin::tuned);
  EXPECT_EQ(plan.config(), r.chosen);
  gc.reset_output();
  plan.run();
  rt.synchronize();
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem));
  // TILEJIT_GEMM_CONFIG wins over tuning, a given configuration over both.
  {
    test::ScopedEnv forced("TILEJIT_GEMM_CONFIG", "mma:64x64x32:32x32:4");
    Runtime rt2;
    EXPECT_EQ(rt2.plan_gemm(gc.problem).config_origin(), GemmConfigOrigin::environment);
  }
  EXPECT_EQ(rt.plan_gemm(gc.problem, GemmConfig::parse("mma:64x64x32:32x32:4")).config_origin(), GemmConfigOrigin::given);

  // Another process finds the result in the disk cache and tunes nothing.
  const std::string env = "TILEJIT_CACHE_DIR=" + (dir.path() / "cache").string() + " TILEJIT_LOG_LEVEL=debug";
  auto second = test::run_cli("gemm --m 700 --n 752 --k 960 --layout NT --dtype bf16 --check", env);
  EXPECT_EQ(second.code, 0) << second.out;
  EXPECT_NE(second.out.find("config " + r.chosen.to_string() + " (tuned)"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("from tuning (tuning entry " + r.key), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("tuning it now"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("PASS"), std::string::npos) << second.out;
  auto off = test::run_cli("gemm --m 700 --n 752 --k 960 --layout NT --dtype bf16 --check", env + " TILEJIT_AUTOTUNE=off");
  EXPECT_EQ(off.code, 0) << off.out;
  EXPECT_NE(off.out.find("(heuristic)"), std::string::npos) << off.out;
  // A class of its own (another layout) has no result: the heuristic's.
  auto other = test::run_cli("gemm --m 700 --n 752 --k 960 --layout NN --dtype bf16 --check", env);
  EXPECT_NE(other.out.find("(heuristic)"), std::string::npos) << other.out;

  // Tuning again with one more candidate times only it (and the heuristic's and the best again).
  GemmTuneOptions more = o;
  more.candidates.push_back(GemmConfig::parse("mma:128x128x32:64x64:3"));
  const GemmTuneResult again = rt.tune_gemm(user.problem, more);
  int now = 0, kept = 0;
  for (const auto& m : again.measurements) (m.measured_now ? now : kept) += 1;
  EXPECT_EQ(again.measurements.size(), r.measurements.size() + 1);
  EXPECT_GE(kept, 1);
  EXPECT_LE(now, 4);
}

TEST(GemmTuningGpu, AutotuneOnTunesAClassTheFirstTimeAPlanNeedsIt) {
  test::TempDir dir;
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", (dir.path() / "cache").string());
  test::ScopedEnv autotune("TILEJIT_AUTOTUNE", "on");
  Runtime rt;
  TILEJIT_REQUIRE_GPU(rt);
  // Exact f32 (SIMT kernels): a handful of candidates, so that the test stays short.
  cli::GemmCase gc(rt, shape(300, 260, 200, DType::f32, Layout::col_major, Layout::row_major), false, 3);
  GemmPlan plan = rt.plan_gemm(gc.problem);
  EXPECT_EQ(plan.config_origin(), GemmConfigOrigin::tuned);
  gc.reset_output();
  plan.run();
  rt.synchronize();
  EXPECT_LE(gc.relative_error(), cli::gemm_tolerance(gc.problem));
  auto listing = test::run_cli("cache list --kind tuning --json", "TILEJIT_CACHE_DIR=" + (dir.path() / "cache").string());
  ASSERT_EQ(listing.code, 0) << listing.out;
  EXPECT_NE(listing.out.find("\"family\": \"tuning\""), std::string::npos) << listing.out;
  // The next plan of the class (a Runtime::gemm call, too) uses it without tuning again.
  const auto compiles = rt.stats().compiles;
  EXPECT_EQ(rt.plan_gemm(gc.problem).config_origin(), GemmConfigOrigin::tuned);
  rt.gemm(gc.problem);
  rt.synchronize();
  EXPECT_EQ(rt.stats().compiles, compiles);
}

TEST(GemmTuningGpu, BadOptionsAreRefusedBeforeAnythingRuns) {
  Runtime rt;
  TILEJIT_REQUIRE_GPU(rt);
  GemmProblem p = shape(256, 256, 256, DType::f16, Layout::row_major, Layout::col_major);
  p.a.ptr = p.b.ptr = 1 << 20, p.d.ptr = p.c.ptr = 1 << 21;
  GemmTuneOptions o;
  o.rounds = 0;
  EXPECT_THROW(rt.tune_gemm(p, o), InvalidArgument);
  o.rounds = 3, o.group_ms = -1;
  EXPECT_THROW(rt.tune_gemm(p, o), InvalidArgument);
  o.group_ms = 4, o.margin = 2;
  EXPECT_THROW(rt.tune_gemm(p, o), InvalidArgument);
  GemmProblem empty = p;
  empty.m = 0;
  EXPECT_THROW(rt.tune_gemm(empty), InvalidArgument);
  GemmProblem bad = p;
  bad.a.ptr = 0;
  EXPECT_THROW(rt.tune_gemm(bad), InvalidArgument);
}

}  // namespace
}  // namespace tilejit
