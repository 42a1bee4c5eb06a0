// Every GEMM kind x dtype x a set of configurations and layouts compiles for sm_80 and sm_90a.
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>

#include <array>
#include <vector>

namespace tilejit {
namespace {

GemmProblem stand_in(DType t, MathMode math, const char* layout, bool bias, Activation act) {
  GemmProblem p;
  p.m = p.n = p.k = 512;
  p.a = {1 << 20, t, layout[0] == 'N' ? Layout::row_major : Layout::col_major};
  p.b = {1 << 20, t, layout[1] == 'N' ? Layout::row_major : Layout::col_major};
  p.d = {1 << 20, t == DType::f32 ? DType::f32 : DType::bf16, Layout::row_major};
  p.math = math;
  if (bias) p.epilogue.bias = 1 << 20;
  p.epilogue.activation = act;
  return p;
}

struct Case {
  const char* config;
  DType dtype;
  MathMode math;
  const char* layout;
};

class GemmCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmCompile, KindsDtypesConfigs) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  const Case cases[] = {
      {"mma:128x128x32:64x32:3", DType::bf16, MathMode::exact, "NN"}, {"mma:128x128x32:64x32:3", DType::bf16, MathMode::exact, "TT"},
      {"mma:128x128x32:64x32:3", DType::f16, MathMode::exact, "NT"},  {"mma:128x128x32:64x32:3", DType::f16, MathMode::exact, "TN"},
      {"mma:128x128x16:64x32:3", DType::f32, MathMode::tf32, "NT"},   {"mma:128x128x16:64x32:3", DType::f32, MathMode::tf32, "TN"},
      {"puzzle33", DType::f32, MathMode::tf32, "NN"},                 {"mma:64x64x32:32x32:2", DType::f32, MathMode::tf32, "TT"},
      {"puzzle33-tiled", DType::f32, MathMode::exact, "NN"},          {"simt:128x128x8:64x32:2", DType::f32, MathMode::exact, "TT"},
      {"simt:64x64x8:32x16:2", DType::bf16, MathMode::exact, "NT"},
  };
  for (const auto& c : cases) {
    GemmConfig cfg = GemmConfig::parse(c.config);
    auto info = rt.compile_gemm(stand_in(c.dtype, c.math, c.layout, false, Activation::none), &cfg);
    EXPECT_GT(info.cubin_bytes, 0u) << c.config;
    EXPECT_EQ(info.arch, GetParam());
  }
  // The epilogue variants and an unaligned (element-wise copy) variant.
  GemmConfig cfg = GemmConfig::parse("mma:64x64x32:32x32:2");
  for (Activation act : {Activation::relu, Activation::gelu, Activation::silu})
    EXPECT_GT(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, "NT", true, act), &cfg).cubin_bytes, 0u);
  GemmProblem odd = stand_in(DType::f16, MathMode::exact, "NN", false, Activation::none);
  odd.m = odd.n = odd.k = 4095;
  auto info = rt.compile_gemm(odd, &cfg);
  EXPECT_NE(info.program_name.find("_v2x2"), std::string::npos) << info.program_name;
  // The heuristic's choice compiles too.
  EXPECT_GT(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, "NN", false, Activation::none)).cubin_bytes, 0u);
}

TEST_P(GemmCompile, InvalidConfigThrowsBeforeCompiling) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  GemmConfig bad = GemmConfig::parse("mma:128x128x24:64x64:3");
  EXPECT_THROW(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, "NN", false, Activation::none), &bad), InvalidArgument);
  EXPECT_EQ(rt.stats().compiles, 0u);
}

INSTANTIATE_TEST_SUITE_P(Archs, GemmCompile, ::testing::Values("sm_80", "sm_90a"),
                         [](const auto& param_info) { return param_info.param; });

// Every wgmma instantiation the kind can make (each input type x each generated N x one and two m64
// blocks per warpgroup x an epilogue) compiles for sm_90a: inline PTX that NVRTC mishandles has
// crashed the whole process before (issue 5), and this is where such a crash shows.
// Kind gemv: every input dtype (8-bit on sm_90a only), both B layouts (their two loops), A in both
// layouts, 1 to 8 rows, runs loaded whole and element by element, the fixed epilogue and an 8-bit D.
TEST_P(GemmCompile, GemvEveryDtypeAndLayout) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  struct Input {
    DType dtype;
    const char* k_major;  // B column-major
    const char* n_major;  // B row-major
  };
  const bool hopper = GetParam() == std::string("sm_90a");
  std::vector<Input> inputs = {{DType::f32, "gemv:1x8x128:1x1:4", "gemv:2x32x8:2x16:4"},
                               {DType::f16, "gemv:4x16x256:4x2:4", "gemv:1x32x8:1x32:4"},
                               {DType::bf16, "gemv:1x8x256:1x1:4", "gemv:8x64x16:8x16:2"}};
  if (hopper) inputs.push_back({DType::e4m3, "gemv:1x8x512:1x1:4", "gemv:4x32x32:4x16:4"});
  for (const Input& in : inputs)
    for (const char* layout : {"NT", "TT", "NN", "TN"}) {
      GemmConfig cfg = GemmConfig::parse(layout[1] == 'T' ? in.k_major : in.n_major);
      for (std::int64_t k : {512, 515}) {  // 515: runs loaded element by element
        GemmProblem p = stand_in(in.dtype, MathMode::exact, layout, k == 512, k == 512 ? Activation::gelu : Activation::none);
        p.m = cfg.bm == 1 ? 1 : 5, p.k = k;
        if (in.dtype == DType::e4m3 && k == 515) p.d.dtype = DType::e4m3;
        const auto info = rt.compile_gemm(p, &cfg);
        EXPECT_GT(info.cubin_bytes, 0u) << cfg.to_string() << " " << layout;
        EXPECT_NE(info.program_name.find("gemm_gemv_"), std::string::npos) << info.program_name;
        EXPECT_EQ(info.program_name.find("tf32"), std::string::npos) << info.program_name;  // f32 stays exact
      }
    }
  // Swapped: a matrix times a vector (N = 1) with a bias along D's rows of the user's problem.
  for (const char* layout : {"NT", "TT"}) {
    GemmProblem p = stand_in(DType::bf16, MathMode::exact, layout, true, Activation::gelu);
    p.n = 1;
    GemmConfig cfg = GemmConfig::parse("gemv:1x8x256:1x1:4:sw");
    if (layout[0] == 'T') cfg = GemmConfig::parse("gemv:1x32x16:1x16:4:sw");  // A column-major: A^T is N-major
    const auto info = rt.compile_gemm(p, &cfg);
    EXPECT_NE(info.program_name.find("_sw"), std::string::npos) << info.program_name;
  }
  if (!hopper) {
    GemmProblem e = stand_in(DType::e4m3, MathMode::exact, "NT", false, Activation::none);
    GemmConfig cfg = GemmConfig::parse("gemv:1x8x512:1x1:4");
    EXPECT_THROW(rt.compile_gemm(e, &cfg), InvalidArgument);
  }
}

TEST(GemmCompileWgmma, EveryInstantiation) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  struct Input {
    DType dtype;
    MathMode math;
    int bk;
  };
  for (const Input in : {Input{DType::bf16, MathMode::exact, 64}, Input{DType::f16, MathMode::exact, 64}, Input{DType::f32, MathMode::tf32, 32}})
    for (int bn : {64, 128, 192, 256}) {
      const int wm = bn <= 128 ? 128 : 64;  // two m64 blocks while the accumulators fit 128 registers
      for (int consumers : {1, 2}) {
        if (wm * consumers > 256) continue;
        GemmConfig cfg{GemmKind::wgmma, wm * consumers, bn, in.bk, wm, bn, 3};
        GemmProblem p = stand_in(in.dtype, in.math, "NT", bn == 192, bn == 64 ? Activation::gelu : Activation::none);
        const auto info = rt.compile_gemm(p, &cfg);
        EXPECT_GT(info.cubin_bytes, 0u) << cfg.to_string();
        EXPECT_EQ(info.arch, "sm_90a");
        EXPECT_NE(info.program_name.find("gemm_wgmma"), std::string::npos) << info.program_name;
        EXPECT_NE(info.program_name.find("_dtma"), std::string::npos) << info.program_name;  // D through TMA stores
        if (bn == 128) {  // and D element by element
          p.d.layout = Layout::col_major;
          EXPECT_EQ(rt.compile_gemm(p, &cfg).program_name.find("_dtma"), std::string::npos);
        }
        if (in.dtype != DType::f32 && consumers == 2) {  // M-major A, N-major B (transposed wgmma operands)
          for (const char* layout : {"NN", "TN", "TT"})
            EXPECT_GT(rt.compile_gemm(stand_in(in.dtype, in.math, layout, false, Activation::none), &cfg).cubin_bytes, 0u) << layout;
        }
      }
    }
}

TEST(GemmCompileWgmma, TwoAndFourSwizzleRowsOfK) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  GemmConfig half{GemmKind::wgmma, 64, 128, 128, 64, 128, 4}, tf32{GemmKind::wgmma, 64, 128, 64, 64, 128, 4};
  GemmConfig four{GemmKind::wgmma, 64, 64, 256, 64, 64, 3};
  for (const char* layout : {"NT", "NN", "TT"}) {
    EXPECT_GT(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, layout, false, Activation::none), &half).cubin_bytes, 0u);
    EXPECT_GT(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, layout, false, Activation::none), &four).cubin_bytes, 0u);
  }
  EXPECT_GT(rt.compile_gemm(stand_in(DType::f32, MathMode::tf32, "NT", false, Activation::none), &tf32).cubin_bytes, 0u);
}

TEST(GemmCompileWgmma, PingPong) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  for (const char* cfg : {"wgmma:128x128x64:128x128:4:pp", "wgmma:64x256x64:64x256:4:pp"})
    for (const char* layout : {"NT", "NN"}) {
      GemmConfig c = GemmConfig::parse(cfg);
      EXPECT_NE(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, layout, false, Activation::none), &c).program_name.find("_pp"),
                std::string::npos);
    }
  GemmConfig tf32 = GemmConfig::parse("wgmma:128x128x32:128x128:4:pp");
  EXPECT_GT(rt.compile_gemm(stand_in(DType::f32, MathMode::tf32, "NT", false, Activation::none), &tf32).cubin_bytes, 0u);
}

TEST(GemmCompileWgmma, ClusterOfTwoWithMulticast) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  for (const char* cfg : {"wgmma:128x256x64:64x256:4:c2", "wgmma:64x128x64:64x128:8:c2", "wgmma:128x128x64:128x128:5:pp:c2"})
    for (const char* layout : {"NT", "NN", "TN", "TT"}) {
      GemmConfig c = GemmConfig::parse(cfg);
      EXPECT_NE(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, layout, false, Activation::none), &c).program_name.find("_c2"),
                std::string::npos);
    }
  GemmConfig tf32 = GemmConfig::parse("wgmma:128x256x32:64x256:4:c2");
  EXPECT_GT(rt.compile_gemm(stand_in(DType::f32, MathMode::tf32, "NT", false, Activation::none), &tf32).cubin_bytes, 0u);
}

TEST(GemmCompileWgmma, Tf32ColumnMajorAThroughRegisters) {
  // A column-major tf32 A read from registers (ra), with one and two m64 blocks per consumer,
  // ping-pong and K halves; NN swapped onto it; the heuristic's pick for TT, TN and NN is ra.
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  for (const char* cfg : {"wgmma:128x256x32:64x256:4:ra", "wgmma:128x128x32:128x128:4:pp:ra", "wgmma:64x128x32:64x128:8:kh:ra"})
    for (const char* layout : {"TT", "TN"}) {
      GemmConfig c = GemmConfig::parse(cfg);
      EXPECT_NE(rt.compile_gemm(stand_in(DType::f32, MathMode::tf32, layout, false, Activation::none), &c).program_name.find("_ra"),
                std::string::npos);
    }
  GemmConfig swapped = GemmConfig::parse("wgmma:128x256x32:64x256:4:sw:ra");
  EXPECT_NE(rt.compile_gemm(stand_in(DType::f32, MathMode::tf32, "NN", true, Activation::gelu), &swapped).program_name.find("_sw"),
            std::string::npos);
  for (const char* layout : {"TT", "TN", "NN"}) {
    const CompiledKernelInfo info = rt.compile_gemm(stand_in(DType::f32, MathMode::tf32, layout, false, Activation::none));
    EXPECT_NE(info.program_name.find("_ra"), std::string::npos) << layout << " " << info.program_name;
  }
}

TEST(GemmCompileWgmma, ThreeConsumersWhereTheirRegistersFit) {
  // 512 threads leave ptxas 128 registers each: every 3-consumer tile that validation accepts must
  // compile, and the 64x256 one (128 accumulators) is refused before NVRTC sees it.
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  for (int bn : {64, 128, 192}) {
    GemmConfig cfg{GemmKind::wgmma, 192, bn, 64, 64, bn, 3};
    EXPECT_GT(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, "NT", false, Activation::none), &cfg).cubin_bytes, 0u)
        << cfg.to_string();
  }
  GemmConfig too_big{GemmKind::wgmma, 192, 256, 64, 64, 256, 3};
  EXPECT_THROW(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, "NT", false, Activation::none), &too_big), InvalidArgument);
}

TEST(GemmCompileWgmma, SwappedDecodeShapesWithNarrowTiles) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  // TN, TT: a column-major A is the kernel's narrow N-major B, read with 32- / 64-byte swizzles.
  for (const char* cfg : {"wgmma:64x16x128:64x16:8:sw", "wgmma:64x32x128:64x32:8:k2:sw"})
    for (const char* layout : {"NT", "NN", "TN", "TT"}) {
      GemmConfig c = GemmConfig::parse(cfg);
      GemmProblem p = stand_in(DType::bf16, MathMode::exact, layout, false, Activation::gelu);
      p.m = 16;
      const auto info = rt.compile_gemm(p, &c);
      EXPECT_NE(info.program_name.find("_sw"), std::string::npos) << info.program_name;
      EXPECT_EQ(info.program_name.find("_dtma"), std::string::npos) << info.program_name;  // D^T is column-major
    }
  GemmConfig tf32 = GemmConfig::parse("wgmma:64x16x64:64x16:8:sw");
  GemmProblem p = stand_in(DType::f32, MathMode::tf32, "NT", false, Activation::none);
  p.m = 8;
  EXPECT_GT(rt.compile_gemm(p, &tf32).cubin_bytes, 0u);
}

TEST(GemmCompileWgmma, KHalves) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  GemmConfig c = GemmConfig::parse("wgmma:64x128x64:64x128:8:kh");
  for (const char* layout : {"NT", "NN", "TT"})
    EXPECT_NE(rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, layout, true, Activation::relu), &c).program_name.find("_kh"),
              std::string::npos);
  GemmProblem col_d = stand_in(DType::f16, MathMode::exact, "NT", false, Activation::none);
  col_d.d.layout = Layout::col_major;  // element stores: the shared region holds the accumulators only
  EXPECT_GT(rt.compile_gemm(col_d, &c).cubin_bytes, 0u);
  GemmConfig tf32 = GemmConfig::parse("wgmma:64x128x32:64x128:8:kh");
  EXPECT_GT(rt.compile_gemm(stand_in(DType::f32, MathMode::tf32, "NT", false, Activation::none), &tf32).cubin_bytes, 0u);
}

TEST(GemmCompileWgmma, NeedsTheArchSpecificTarget) {
  RuntimeOptions o;
  o.arch = "sm_90";
  Runtime rt(o);
  GemmConfig cfg = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  try {
    rt.compile_gemm(stand_in(DType::bf16, MathMode::exact, "NT", false, Activation::none), &cfg);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sm_90a"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt.stats().compiles, 0u);
}

}  // namespace
}  // namespace tilejit

namespace tilejit {
namespace {

// What the heuristic picks for a column-major D (the row-major D^T, its bias along rows) and for
// tf32 in every layout (transposed operands) compiles for sm_90a, and says so in its source.
TEST(GemmCompileWgmma, ColumnMajorDAndTf32InEveryLayout) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    GemmProblem col_d = stand_in(DType::bf16, MathMode::exact, layout, true, Activation::gelu);
    col_d.m = col_d.n = col_d.k = 4096;
    col_d.d.layout = Layout::col_major;
    const CompiledKernelInfo info = rt.compile_gemm(col_d);
    EXPECT_NE(info.program_name.find("_sw"), std::string::npos) << layout << ": " << info.program_name;
    EXPECT_NE(info.program_name.find("_dtma"), std::string::npos) << layout << ": " << info.program_name;
    // The epilogue of the swapped kernel reads the bias at the user's column, the kernel's row.
    EXPECT_NE(info.source.find("SWAPPED = 1"), std::string::npos) << info.source;
    EXPECT_NE(info.source.find("d = gelu(acc + bias[n])"), std::string::npos) << info.source;
    GemmProblem tf32 = stand_in(DType::f32, MathMode::tf32, layout, false, Activation::none);
    tf32.m = tf32.n = tf32.k = 4096;
    const CompiledKernelInfo t = rt.compile_gemm(tf32);
    // The kernel's B is K-major (TN's a copy); its A K-major (NT) or column-major through registers
    // (NN swapped, TN, TT).
    const bool nt = std::string(layout) == "NT";
    EXPECT_NE(t.program_name.find(nt ? "gemm_wgmma_f32tf32_NT_" : "gemm_wgmma_f32tf32_TT_"), std::string::npos) << layout << ": " << t.program_name;
    EXPECT_EQ(t.program_name.find("_ra") != std::string::npos, !nt) << layout << ": " << t.program_name;
  }
}


// 8-bit inputs: every pair of e4m3 and e5m2 with the heuristic's kernels for square, unaligned,
// decode and column-major-D shapes, and the forced configurations of the 16-bit path.
TEST(GemmCompileWgmma, EightBitInputs) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  for (auto [a, b] : {std::pair{DType::e4m3, DType::e4m3}, std::pair{DType::e4m3, DType::e5m2}, std::pair{DType::e5m2, DType::e4m3},
                      std::pair{DType::e5m2, DType::e5m2}}) {
    GemmProblem p = stand_in(a, MathMode::exact, "NT", false, Activation::none);
    p.b.dtype = b;
    p.m = p.n = p.k = 4096;
    const CompiledKernelInfo info = rt.compile_gemm(p);
    EXPECT_GT(info.cubin_bytes, 0u);
    EXPECT_NE(info.source.find("TILEJIT_FP8_TYPES"), std::string::npos);
    EXPECT_NE(info.program_name.find(std::string("gemm_wgmma_") + std::string(dtype_name(a)) +
                                     (a == b ? std::string("_NT") : "x" + std::string(dtype_name(b)) + "_NT")),
              std::string::npos)
        << info.program_name;
  }
  for (const char* layout : {"NN", "TN", "TT"})
    for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{4095, 4095, 4095}, {16, 8192, 8192}, {1, 4096, 4096}}) {
      GemmProblem p = stand_in(DType::e4m3, MathMode::exact, layout, true, Activation::gelu);
      p.m = m, p.n = n, p.k = k;
      const CompiledKernelInfo info = rt.compile_gemm(p);
      EXPECT_NE(info.program_name.find("_NT_"), std::string::npos) << layout << ": " << info.program_name;  // K-major copies
    }
  GemmProblem col_d = stand_in(DType::e5m2, MathMode::exact, "TN", false, Activation::none);
  col_d.m = col_d.n = col_d.k = 4096;
  col_d.d.layout = Layout::col_major;
  EXPECT_NE(rt.compile_gemm(col_d).program_name.find("_sw"), std::string::npos);
  for (const char* cfg : {"wgmma:128x256x128:64x256:4:c2", "wgmma:128x128x128:128x128:4:pp", "wgmma:128x128x128:128x128:4:kh",
                          "wgmma:128x128x128:64x128:4:k3", "wgmma:64x16x256:64x16:8:sw", "wgmma:64x128x512:64x128:2"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    EXPECT_GT(rt.compile_gemm(stand_in(DType::e4m3, MathMode::exact, "NT", false, Activation::none), &c).cubin_bytes, 0u) << cfg;
  }
  // Block scales: the heuristic's tiles and the K-halves, split-K and cluster forms.
  GemmProblem blocks = stand_in(DType::e4m3, MathMode::exact, "NN", true, Activation::gelu);
  blocks.m = blocks.n = blocks.k = 4096;
  blocks.scale_mode = ScaleMode::blocks;
  blocks.scale_a = blocks.scale_b = 1 << 22;
  const CompiledKernelInfo b = rt.compile_gemm(blocks);
  EXPECT_NE(b.program_name.find("_bs"), std::string::npos) << b.program_name;
  EXPECT_NE(b.source.find("BLOCK_SCALES = true"), std::string::npos);
  for (const char* cfg : {"wgmma:64x128x128:64x128:8:kh", "wgmma:128x128x128:64x128:4:k3", "wgmma:128x128x128:64x128:4:c2"}) {
    GemmConfig c = GemmConfig::parse(cfg);
    EXPECT_GT(rt.compile_gemm(blocks, &c).cubin_bytes, 0u) << cfg;
  }
}

// A Runtime for sm_90a over an empty cache directory whose compiles neither cache answers
// (TILEJIT_ALWAYS_COMPILE): ptxas runs for every kernel, and its log is kept.
struct CompilingRuntime {
  test::TempDir cache;
  test::ScopedEnv dir{"TILEJIT_CACHE_DIR", cache.path().string()};
  test::ScopedEnv always{"TILEJIT_ALWAYS_COMPILE", "1"};
  Runtime rt{RuntimeOptions{.arch = "sm_90a"}};
};

// The heuristic's kernels for the problems the benchmarks hold up keep their MMA pipeline: ptxas
// reports no wgmma serialization or injected wait in their NVRTC logs (a kernel change that makes
// ptxas serialize every wgmma still compiles and runs correctly, only much slower: a prepared
// experiment did so on 2026-12-07 without anyone noticing).
TEST(GemmCompileWgmma, TheHeuristicsKernelsKeepTheirMmaPipeline) {
  CompilingRuntime compiling;
  Runtime& rt = compiling.rt;
  auto expect_pipelined = [&](const GemmProblem& p, const std::string& what) {
    const CompiledKernelInfo info = rt.compile_gemm(p);
    EXPECT_FALSE(info.from_cache) << what;
    EXPECT_EQ(info.compile_log.find("Potential Performance Loss"), std::string::npos) << what << ": " << info.compile_log;
    EXPECT_EQ(info.compile_log.find("warpgroup.wait is injected"), std::string::npos) << what << ": " << info.compile_log;
  };
  for (const char* layout : {"NT", "NN", "TN", "TT"}) {
    GemmProblem p = stand_in(DType::bf16, MathMode::exact, layout, false, Activation::none);
    p.m = p.n = p.k = 4096;
    expect_pipelined(p, std::string("bf16 4096^3 ") + layout);
  }
  GemmProblem f16 = stand_in(DType::f16, MathMode::exact, "TN", false, Activation::none);
  f16.m = f16.n = f16.k = 8192;
  expect_pipelined(f16, "f16 8192^3 TN");
  GemmProblem body = stand_in(DType::bf16, MathMode::exact, "NT", false, Activation::none);
  body.m = body.n = body.k = 4096;
  body.epilogue.vectors = {{.name = "bias", .ptr = 1 << 23, .dtype = DType::f32, .axis = EpilogueAxis::column},
                           {.name = "scale", .ptr = 1 << 24, .dtype = DType::f32, .axis = EpilogueAxis::row}};
  body.epilogue.inputs = {{.name = "residual", .matrix = {1 << 25, DType::bf16, Layout::row_major}}};
  for (const char* b : {"d = gelu(acc + bias[n])", "d = acc * scale[m] + residual", "d = gelu(acc + bias[n]) * scale[m] + residual"}) {
    body.epilogue.body = b;
    expect_pipelined(body, b);
  }
  GemmProblem fp8 = stand_in(DType::e4m3, MathMode::exact, "NT", false, Activation::none);
  fp8.m = fp8.n = fp8.k = 4096;
  expect_pipelined(fp8, "e4m3 4096^3");
  fp8.scale_mode = ScaleMode::blocks;
  fp8.scale_a = fp8.scale_b = 1 << 22;
  expect_pipelined(fp8, "e4m3 4096^3 block scales");
  GemmProblem tf32 = stand_in(DType::f32, MathMode::tf32, "NN", false, Activation::none);
  tf32.m = tf32.n = tf32.k = 4096;
  expect_pipelined(tf32, "tf32 4096^3 NN");
  for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{16, 8192, 8192}, {128, 8192, 8192}, {1000, 1000, 1000}}) {
    GemmProblem p = stand_in(DType::bf16, MathMode::exact, "NT", false, Activation::none);
    p.m = m, p.n = n, p.k = k;
    expect_pipelined(p, fmt::format("bf16 {}x{}x{}", m, n, k));
  }
}

// The log reaches CompiledKernelInfo::compile_log when the kernel is compiled here (the check above
// would pass vacuously otherwise): a user kernel with an unused variable draws NVRTC's warning.
TEST(GemmCompileWgmma, CompileLogCarriesNvrtcsWarnings) {
  CompilingRuntime compiling;
  Runtime& rt = compiling.rt;
  KernelSource src{.name = "warns", .text = "extern \"C\" __global__ void warns(float* x) { int unused; x[0] = 1.f; }\n"};
  const CompiledKernelInfo info = rt.compile_program(src, {"warns"}, "");
  EXPECT_NE(info.compile_log.find("unused"), std::string::npos) << info.compile_log;
}

}  // namespace
}  // namespace tilejit
