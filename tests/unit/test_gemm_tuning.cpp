// GEMM tuning without a device: shape classes, candidate sets, tuning records, their keys and the
// rule that picks a configuration.
#include "ops/gemm/gemm_internal.hpp"
#include "ops/gemm/gemm_tuning.hpp"

#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>

#include <gtest/gtest.h>

#include <set>

namespace tilejit {
namespace {

GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k, DType t = DType::bf16, Layout a = Layout::row_major,
                    Layout b = Layout::col_major) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = {1 << 20, t, a};
  p.b = {1 << 20, t, b};
  p.d = {1 << 21, ops::is_8bit_float(t) ? DType::bf16 : t, Layout::row_major};
  return p;
}

TEST(GemmShapeClass, BucketsSizesInHalfOctaves) {
  const std::string c4096 = gemm_shape_class(problem(4096, 4096, 4096));
  EXPECT_NE(c4096.find("m=2^12 n=2^12 k=2^12 batch=1"), std::string::npos) << c4096;
  EXPECT_EQ(c4096, gemm_shape_class(problem(5000, 4504, 5792)));  // [4096, 5793)
  EXPECT_NE(c4096, gemm_shape_class(problem(5793, 4096, 4096)));  // the upper half octave
  EXPECT_NE(gemm_shape_class(problem(5793, 4096, 4096)).find("m=2^12.5"), std::string::npos);
  EXPECT_NE(c4096, gemm_shape_class(problem(4095, 4096, 4096)));  // below 2^12
  for (std::int64_t m : {1, 2, 7, 16})
    EXPECT_NE(gemm_shape_class(problem(m, 4096, 4096)).find("m=" + std::to_string(m) + " "), std::string::npos) << m;
  EXPECT_NE(gemm_shape_class(problem(17, 4096, 4096)).find("m=2^4 "), std::string::npos);
  EXPECT_NE(gemm_shape_class(problem(23, 4096, 4096)).find("m=2^4.5 "), std::string::npos);
}

TEST(GemmShapeClass, NamesDtypesLayoutsAlignmentAndEpilogue) {
  const GemmProblem base = problem(4096, 4096, 4096);
  const std::string c = gemm_shape_class(base);
  EXPECT_NE(c.find("a=bf16/row/16 b=bf16/col/16 c=- d=bf16/row/16"), std::string::npos) << c;
  std::set<std::string> classes{c};
  auto differs = [&](GemmProblem p, const char* what) { EXPECT_TRUE(classes.insert(gemm_shape_class(p)).second) << what; };
  GemmProblem p = base;
  p.a.dtype = p.b.dtype = p.d.dtype = DType::f16;
  differs(p, "dtype");
  p = base, p.a.layout = Layout::col_major;
  differs(p, "A's layout");
  p = base, p.d.layout = Layout::col_major;
  differs(p, "D's layout");
  p = base, p.a.ld = 4100;  // rows 8-byte aligned only
  differs(p, "A's alignment");
  p = base, p.d.ptr += 2;
  differs(p, "D's pointer alignment");
  p = base, p.beta = 1.f;
  differs(p, "C read");
  p = base, p.epilogue.bias = 1 << 22, p.epilogue.activation = Activation::gelu;
  differs(p, "bias + gelu");
  p = base, p.epilogue = tooling::gemm_epilogue_from_body("d = acc * 2", DType::bf16, {});
  differs(p, "a body");
  p = base, p.epilogue = tooling::gemm_epilogue_from_body("d = acc * 3", DType::bf16, {});
  differs(p, "another body");
  p = base, p.batch = 4, p.a.batch_stride = 4096 * 4096, p.b.batch_stride = 4096 * 4096, p.d.batch_stride = 4096 * 4096;
  differs(p, "a batch");
  // Pointers beyond their alignment make no class of their own.
  p = base, p.a.ptr = 1 << 24;
  EXPECT_EQ(gemm_shape_class(p), c);
}

TEST(GemmTuningCandidates, ValidDistinctAndTheHeuristicsFirst) {
  struct Case {
    GemmProblem p;
    const char* arch;
  };
  GemmProblem colmajor_d = problem(4096, 4096, 4096);
  colmajor_d.d.layout = Layout::col_major;
  GemmProblem blocks = problem(4096, 4096, 4096, DType::e4m3);
  blocks.scale_mode = ScaleMode::blocks, blocks.scale_a = 1 << 23, blocks.scale_b = 1 << 23;
  GemmProblem tf32 = problem(4096, 4096, 4096, DType::f32, Layout::row_major, Layout::row_major);
  tf32.math = MathMode::tf32;
  for (const Case& c : {Case{problem(4096, 4096, 4096), "sm_90a"}, Case{problem(1000, 1000, 1000), "sm_90a"},
                        Case{problem(16, 8192, 8192), "sm_90a"}, Case{problem(4095, 4095, 4095, DType::f16, Layout::col_major, Layout::row_major), "sm_90a"},
                        Case{colmajor_d, "sm_90a"}, Case{blocks, "sm_90a"}, Case{problem(1024, 1024, 1024, DType::e4m3), "sm_90a"}, Case{tf32, "sm_90a"},
                        Case{problem(2048, 2048, 2048), "sm_80"}, Case{problem(512, 512, 512, DType::f32), "sm_90a"}}) {
    SCOPED_TRACE(gemm_shape_class(c.p) + " " + c.arch);
    const auto list = gemm_tuning_candidates(c.p, c.arch, 132);
    std::printf("%zu candidates: %s %s\n", list.size(), gemm_shape_class(c.p).c_str(), c.arch);
    ASSERT_FALSE(list.empty());
    EXPECT_EQ(list.front(), choose_gemm_config(c.p, c.arch, 132));
    EXPECT_LE(list.size(), 60u);
    std::set<std::string> names;
    for (const auto& cfg : list) {
      EXPECT_TRUE(names.insert(cfg.to_string()).second) << cfg.to_string() << " twice";
      EXPECT_NO_THROW(validate_gemm_config(cfg, c.p, c.arch)) << cfg.to_string();
      if (c.p.scale_mode == ScaleMode::blocks) {
        EXPECT_EQ(cfg.bk, 128);
      }
      if (std::string(c.arch) == "sm_80") {
        EXPECT_NE(cfg.kind, GemmKind::wgmma);
      }
    }
  }
  // Enough choice where the heuristic has one rule: tiles, stages, clusters, split-K for few tiles,
  // swapped narrow tiles for decode shapes.
  const auto square = gemm_tuning_candidates(problem(4096, 4096, 4096), "sm_90a", 132);
  EXPECT_GE(square.size(), 15u);
  EXPECT_TRUE(std::any_of(square.begin(), square.end(), [](const GemmConfig& c) { return c.cluster == 2; }));
  const auto decode = gemm_tuning_candidates(problem(16, 8192, 8192), "sm_90a", 132);
  EXPECT_GE(std::count_if(decode.begin(), decode.end(), [](const GemmConfig& c) { return c.swap_ab && c.bn == 16; }), 4);
  EXPECT_TRUE(std::any_of(decode.begin(), decode.end(), [](const GemmConfig& c) { return c.split_k > 1; }));
  // Kind gemv for 1 to 8 rows, in both B layouts and 8-bit too; not past 8 rows.
  auto gemvs = [](const std::vector<GemmConfig>& list) {
    return std::count_if(list.begin(), list.end(), [](const GemmConfig& c) { return c.kind == GemmKind::gemv; });
  };
  EXPECT_EQ(gemvs(decode), 0);
  for (const GemmProblem& q : {problem(1, 4096, 4096), problem(1, 4096, 4096, DType::bf16, Layout::row_major, Layout::row_major),
                               problem(5, 8192, 8192, DType::e4m3), problem(3, 4096, 1000, DType::f32, Layout::row_major, Layout::row_major)}) {
    const auto list = gemm_tuning_candidates(q, "sm_90a", 132);
    EXPECT_GE(gemvs(list), 6) << gemm_shape_class(q);  // (8-bit: two exceed the registers a lane may hold)
    EXPECT_LE(list.size(), 60u) << gemm_shape_class(q);
  }
  // A matrix times a vector (N = 1): the same, swapped.
  const auto column = gemm_tuning_candidates(problem(4096, 1, 4096), "sm_90a", 132);
  EXPECT_GE(std::count_if(column.begin(), column.end(), [](const GemmConfig& c) { return c.kind == GemmKind::gemv && c.swap_ab; }), 6);
}

ops::TuningRecord record(std::initializer_list<std::pair<const char*, double>> times, const char* heuristic) {
  ops::TuningRecord r;
  r.shape_class = "gemm test";
  r.m = 64, r.n = 128, r.k = 256;
  r.heuristic = heuristic;
  for (auto [config, ms] : times) r.measurements.push_back({config, ms, ms > 0, ms > 0 ? "" : "it failed", 1700000000});
  return r;
}

TEST(GemmTuningRecord, RoundTripsThroughItsPayload) {
  auto r = record({{"wgmma:128x256x64:64x256:4", 1.5}, {"wgmma:128x128x64:64x128:4", 0}}, "wgmma:128x256x64:64x256:4");
  ops::choose_tuned(r, 0.02);
  std::string problem;
  auto back = ops::decode_tuning_record(ops::encode_tuning_record(r), &problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->shape_class, r.shape_class);
  EXPECT_EQ(back->k, 256);
  EXPECT_EQ(back->chosen, r.chosen);
  ASSERT_EQ(back->measurements.size(), 2u);
  EXPECT_EQ(back->measurements[1].error, "it failed");
  EXPECT_FALSE(back->measurements[1].ok);
  for (const char* bad : {"", "{", "[]", "{\"format\":2}", R"({"format":1,"class":"x"})"}) {
    EXPECT_FALSE(ops::decode_tuning_record(bad, &problem)) << bad;
    EXPECT_NE(problem.find("not a tuning record"), std::string::npos);
  }
  // A configuration this library cannot read is not a record it uses.
  std::string odd = ops::encode_tuning_record(r);
  odd.replace(odd.find("wgmma:128x128x64"), 5, "vgmma");
  EXPECT_FALSE(ops::decode_tuning_record(odd, &problem));
}

TEST(GemmTuningRecord, MergeKeepsEarlierCandidates) {
  auto old = record({{"simt:64x64x8:32x16:2", 3.0}, {"mma:64x64x32:32x32:4", 2.0}}, "simt:64x64x8:32x16:2");
  auto fresh = record({{"mma:64x64x32:32x32:4", 1.0}, {"mma:128x128x32:64x64:3", 1.8}}, "simt:64x64x8:32x16:2");
  ops::merge_tuning_records(old, fresh);
  ASSERT_EQ(old.measurements.size(), 3u);  // one new, one replaced, one kept
  EXPECT_EQ(old.measurements[0].ms, 3.0);
  EXPECT_EQ(old.measurements[1].ms, 1.0);
  EXPECT_EQ(old.measurements[2].config, "mma:128x128x32:64x64:3");
  ops::choose_tuned(old, 0.02);
  EXPECT_EQ(old.chosen, "mma:64x64x32:32x32:4");
  EXPECT_NE(old.why.find("3.000x"), std::string::npos) << old.why;
}

TEST(GemmTuningRecord, AnotherProblemOfTheClassReplacesTheTimes) {
  auto old = record({{"simt:64x64x8:32x16:2", 3.0}, {"mma:64x64x32:32x32:4", 2.0}}, "simt:64x64x8:32x16:2");
  auto fresh = record({{"mma:128x128x32:64x64:3", 1.8}}, "simt:64x64x8:32x16:2");
  fresh.k = 300;
  ops::merge_tuning_records(old, fresh);
  ASSERT_EQ(old.measurements.size(), 1u);
  EXPECT_EQ(old.k, 300);
  EXPECT_EQ(old.measurements[0].config, "mma:128x128x32:64x64:3");
}

TEST(GemmTuningRecord, TheHeuristicStaysUnlessClearlyBeaten) {
  auto r = record({{"simt:64x64x8:32x16:2", 1.0}, {"simt:128x64x8:64x32:2", 0.99}}, "simt:64x64x8:32x16:2");
  ops::choose_tuned(r, 0.02);
  EXPECT_EQ(r.chosen, "simt:64x64x8:32x16:2") << r.why;
  EXPECT_NE(r.why.find("within 2%"), std::string::npos) << r.why;
  r.measurements[1].ms = 0.97;
  ops::choose_tuned(r, 0.02);
  EXPECT_EQ(r.chosen, "simt:128x64x8:64x32:2") << r.why;
  // Failures never win, however fast they were.
  r.measurements[1].ok = false;
  ops::choose_tuned(r, 0.02);
  EXPECT_EQ(r.chosen, "simt:64x64x8:32x16:2");
  r.measurements[0].ok = false;
  ops::choose_tuned(r, 0.02);
  EXPECT_EQ(r.chosen, "simt:64x64x8:32x16:2");
  EXPECT_NE(r.why.find("no candidate ran correctly"), std::string::npos);
}

TEST(GemmTuningKey, NamesTheDeviceTheSoftwareAndTheClass) {
  const ops::TuningIdentity id{"NVIDIA H200", 132, "cuda 13000 module 580.65.06", "13.0.48", "0.1.0", "abc", "sm_90a"};
  const auto key = ops::tuning_key(id, "gemm x");
  for (const char* part : {"NVIDIA H200", "multiprocessors 132", "cuda 13000 module 580.65.06", "nvrtc 13.0.48", "library 0.1.0",
                           "gemm-templates abc", "arch sm_90a", "class gemm x"})
    EXPECT_NE(key.text.find(part), std::string::npos) << part;
  std::set<std::string> keys{key.hash.hex()};
  auto differs = [&](ops::TuningIdentity other, const std::string& cls = "gemm x") {
    EXPECT_TRUE(keys.insert(ops::tuning_key(other, cls).hash.hex()).second);
  };
  auto o = id;
  o.device = "NVIDIA H100 80GB HBM3", differs(o);
  o = id, o.multiprocessors = 114, differs(o);
  o = id, o.driver = "cuda 13000 module 580.95.05", differs(o);
  o = id, o.nvrtc = "13.1.0", differs(o);
  o = id, o.library = "0.2.0", differs(o);
  o = id, o.templates = "abd", differs(o);
  differs(id, "gemm y");
}

}  // namespace
}  // namespace tilejit
