// GEMM configurations: the string form, presets, the rules that reject a configuration (before any
// compile), problem validation, and the heuristic.
#include "ops/gemm/gemm_internal.hpp"
#include "ops/gemm/wgmma_launch.hpp"

#include <tilejit/error.hpp>
#include <tilejit/gemm.hpp>

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

namespace tilejit {
namespace {

GemmProblem problem(DType t, MathMode math = MathMode::exact, std::int64_t m = 1024, std::int64_t n = 1024, std::int64_t k = 1024) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = {4096, t, Layout::row_major};
  p.b = {8192, t, Layout::row_major};
  p.d = {16384, t, Layout::row_major};
  p.math = math;
  return p;
}

// What validation says of `cfg` for `p` on sm_90a: "" when it accepts it.
std::string broken_rule(const char* cfg, const GemmProblem& p) {
  try {
    validate_gemm_config(GemmConfig::parse(cfg), p, "sm_90a");
  } catch (const InvalidArgument& e) {
    return std::string(e.what());
  }
  return std::string();
}

TEST(GemmConfig, ParsesAndPrints) {
  auto c = GemmConfig::parse("mma:128x64x32:32x32:1");
  EXPECT_EQ(c.kind, GemmKind::mma);
  EXPECT_EQ(c.bm, 128);
  EXPECT_EQ(c.bn, 64);
  EXPECT_EQ(c.bk, 32);
  EXPECT_EQ(c.wm, 32);
  EXPECT_EQ(c.wn, 32);
  EXPECT_EQ(c.stages, 1);
  EXPECT_EQ(c.threads(), 256);
  EXPECT_EQ(c.to_string(), "mma:128x64x32:32x32:1");
  GemmConfig seed = c;
  seed.tf32 = true;  // the seed's kernel takes f32 inputs as tf32
  EXPECT_EQ(GemmConfig::parse("puzzle33"), seed);
  EXPECT_EQ(seed.to_string(), "mma:128x64x32:32x32:1:tf32");
  EXPECT_EQ(GemmConfig::parse(seed.to_string()), seed);
  auto t = GemmConfig::parse("puzzle33-tiled");
  EXPECT_EQ(t.to_string(), "simt:32x32x32:1x32:1");
  EXPECT_EQ(t.threads(), 1024);
  EXPECT_EQ(GemmConfig::parse(GemmConfig::parse("simt:128x128x8:64x32:2").to_string()).to_string(), "simt:128x128x8:64x32:2");
  const GemmConfig every = GemmConfig::parse("wgmma:128x128x32:64x128:4:k2:c2:sw:kh:tf32:ra:pp:t2");  // each extra once, any order
  EXPECT_TRUE(every.a_registers && every.pingpong && every.k_halves && every.swap_ab && every.tf32);
  EXPECT_EQ(every.to_string(), "wgmma:128x128x32:64x128:4:k2:t2:pp:c2:sw:kh:tf32:ra");
  EXPECT_EQ(GemmConfig::parse(every.to_string()), every);
}

struct BadString {
  const char* text;
  const char* expected;
};
void PrintTo(const BadString& b, std::ostream* os) { *os << b.text; }
class RejectsBadString : public ::testing::TestWithParam<BadString> {};
TEST_P(RejectsBadString, NamingTheForm) {
  try {
    GemmConfig::parse(GetParam().text);
    FAIL() << "accepted " << GetParam().text;
  } catch (const InvalidArgument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
    EXPECT_NE(msg.find("KIND:BMxBNxBK:WMxWN:STAGES"), std::string::npos) << msg;
  }
}
INSTANTIATE_TEST_SUITE_P(Strings, RejectsBadString,
                         ::testing::Values(BadString{"tensor:128x64x32:32x32:1", "unknown kind 'tensor'"},
                                           BadString{"mma:128x64:32x32:1", "needs 3 numbers"},
                                           BadString{"mma:128x64x32:32x32", "four ':'-separated parts"},
                                           BadString{"mma:128xAx32:32x32:1", "not a number list"},
                                           BadString{"mma:128x64x32:32x32:1:2", "not an extra part"},
                                           BadString{"", "four ':'-separated parts"},
                                           BadString{"wgmma128x128x64:64x128:4", "four ':'-separated parts"}),
                         [](const auto& param_info) { return "string" + std::to_string(param_info.index); });

struct BadConfig {
  const char* config;
  DType dtype;
  MathMode math;
  const char* arch;
  const char* expected;
};
void PrintTo(const BadConfig& b, std::ostream* os) { *os << b.config; }
class RejectsBadConfig : public ::testing::TestWithParam<BadConfig> {};
TEST_P(RejectsBadConfig, NamingTheRule) {
  const auto& b = GetParam();
  try {
    validate_gemm_config(GemmConfig::parse(b.config), problem(b.dtype, b.math), b.arch);
    FAIL() << "accepted " << b.config;
  } catch (const InvalidArgument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(b.expected), std::string::npos) << msg;
    EXPECT_NE(msg.find("is invalid"), std::string::npos) << msg;
  }
}
INSTANTIATE_TEST_SUITE_P(
    Rules, RejectsBadConfig,
    ::testing::Values(
        BadConfig{"mma:128x64x32:48x32:3", DType::bf16, MathMode::exact, "sm_90a", "WM=48 does not divide BM=128"},
        BadConfig{"mma:128x64x32:32x48:3", DType::bf16, MathMode::exact, "sm_90a", "WN=48 does not divide BN=64"},
        BadConfig{"simt:256x256x8:16x16:2", DType::f32, MathMode::exact, "sm_90a", "more than 1024"},
        BadConfig{"mma:128x128x32:64x64:0", DType::f16, MathMode::exact, "sm_90a", "stages=0"},
        BadConfig{"mma:128x128x32:64x64:9", DType::f16, MathMode::exact, "sm_90a", "stages=9"},
        BadConfig{"mma:128x128x32:64x64:3", DType::f32, MathMode::exact, "sm_90a", "kind mma needs f16, bf16 or tf32"},
        BadConfig{"simt:128x128x8:64x32:2", DType::f32, MathMode::tf32, "sm_90a", "MathMode::tf32 needs kind mma"},
        BadConfig{"mma:128x128x24:64x64:3", DType::bf16, MathMode::exact, "sm_90a", "BK=24 must be a multiple of the mma K (16"},
        BadConfig{"mma:128x128x12:64x64:3", DType::f32, MathMode::tf32, "sm_90a", "BK=12 must be a multiple of the mma K (8"},
        BadConfig{"mma:128x120x32:64x40:3", DType::bf16, MathMode::exact, "sm_90a", "multiples of 16x16"},
        BadConfig{"mma:256x256x64:128x128:4", DType::bf16, MathMode::exact, "sm_90a", "accumulator registers"},
        BadConfig{"mma:256x256x64:64x64:8", DType::bf16, MathMode::exact, "sm_90a", "bytes of shared memory"},
        BadConfig{"mma:128x256x64:64x64:4", DType::bf16, MathMode::exact, "sm_86", "more than the 101376 an sm_86 block"},
        BadConfig{"simt:128x128x8:24x32:2", DType::f32, MathMode::exact, "sm_90a", "WM=24 does not divide BM=128"},
        BadConfig{"simt:6x6x8:3x3:1", DType::f32, MathMode::exact, "sm_90a", "no layout of 32 lanes"},
        BadConfig{"simt:128x128x8:128x128:2", DType::f32, MathMode::exact, "sm_90a", "exceeds 128 registers"},
        BadConfig{"mma:0x64x32:32x32:1", DType::bf16, MathMode::exact, "sm_90a", "must be positive"},
        BadConfig{"simt:128x128x1:64x32:2", DType::f32, MathMode::exact, "sm_90a", "must divide among the 256 threads"},
        BadConfig{"wgmma:128x256x64:64x256:4", DType::bf16, MathMode::exact, "sm_90", "needs the sm_90a target"},
        BadConfig{"wgmma:128x256x64:64x256:4", DType::f32, MathMode::exact, "sm_90a", "kind wgmma needs f16, bf16 or tf32"},
        BadConfig{"wgmma:128x256x32:64x256:4", DType::bf16, MathMode::exact, "sm_90a", "BK must be 64, 128 or 256 for bf16"},
        BadConfig{"wgmma:192x256x64:64x256:3", DType::bf16, MathMode::exact, "sm_90a", "too few for 128 accumulators"},
        BadConfig{"wgmma:128x256x16:64x256:4", DType::f32, MathMode::tf32, "sm_90a", "BK must be 32, 64 or 128 for tf32"},
        BadConfig{"wgmma:128x256x64:64x128:4", DType::bf16, MathMode::exact, "sm_90a", "WN must equal BN=256"},
        BadConfig{"wgmma:128x128x64:32x128:4", DType::f16, MathMode::exact, "sm_90a", "WM=32 must be 64 or 128"},
        BadConfig{"wgmma:256x256x64:128x256:4", DType::bf16, MathMode::exact, "sm_90a", "accumulator registers"},
        BadConfig{"wgmma:128x256x64:64x256:1", DType::bf16, MathMode::exact, "sm_90a", "at least 2 stages"},
        BadConfig{"wgmma:128x256x32:64x256:4", DType::f32, MathMode::exact, "sm_90a", "--math tf32"},
        BadConfig{"mma:128x128x32:64x64:3", DType::f32, MathMode::exact, "sm_90a", "tf32 part"},
        // kind gemv (problem(): A and B row-major, so B is N-major)
        BadConfig{"gemv:4x32x8:2x32:4", DType::bf16, MathMode::exact, "sm_90a", "BM = WM rows of D per block, 1 to 8, not 4x2"},
        BadConfig{"gemv:16x32x8:16x32:4", DType::bf16, MathMode::exact, "sm_90a", "1 to 8, not 16x16"},
        BadConfig{"gemv:1x96x8:1x32:4", DType::bf16, MathMode::exact, "sm_90a", "BN / WN = 3 warps along N must divide them"},
        BadConfig{"gemv:1x32x16:1x32:4", DType::bf16, MathMode::exact, "sm_90a", "takes BK = 8 rows a step, not 16"},
        BadConfig{"gemv:1x48x8:1x48:4", DType::bf16, MathMode::exact, "sm_90a", "WN=48 must be a power of two of runs of 8"},
        BadConfig{"gemv:8x16x32:8x16:4", DType::e4m3, MathMode::exact, "sm_90a", "more than 64 sums per lane"},
        BadConfig{"gemv:8x256x1:8x256:4", DType::bf16, MathMode::exact, "sm_90a", "exceed 48 KB of shared memory"},
        BadConfig{"gemv:1x32x8:1x32:9", DType::bf16, MathMode::exact, "sm_90a", "stages=9"},
        BadConfig{"gemv:1x32x8:1x32:4:k2", DType::bf16, MathMode::exact, "sm_90a", "split-K (kS) exists for kind wgmma only"},
        BadConfig{"gemv:1x32x8:1x32:4:pp", DType::bf16, MathMode::exact, "sm_90a", "ping-pong (pp) exists for kind wgmma only"},
        BadConfig{"mma:128x128x32:64x64:3:sw", DType::bf16, MathMode::exact, "sm_90a", "swapped operands (sw) exist for kinds wgmma and gemv only"}),
    [](const auto& param_info) { return "config" + std::to_string(param_info.index); });

TEST(GemmConfig, WgmmaParsesAndSaysWhichOperandsNeedPacking) {
  auto c = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  EXPECT_EQ(c.kind, GemmKind::wgmma);
  EXPECT_EQ(c.to_string(), "wgmma:128x256x64:64x256:4");
  EXPECT_EQ(c.threads(), 384);  // a producer and two consumer warpgroups
  GemmProblem p = problem(DType::bf16);
  p.b.layout = Layout::col_major;
  EXPECT_NO_THROW(validate_gemm_config(c, p, "sm_90a"));
  EXPECT_EQ(ops::tma_unready_reason(p, true), "");
  EXPECT_EQ(ops::tma_unready_reason(p, false), "");
  GemmProblem q = p;
  q.a.ptr += 8;
  EXPECT_NE(ops::tma_unready_reason(q, true).find("not on a 16-byte boundary"), std::string::npos);
  EXPECT_NO_THROW(validate_gemm_config(c, q, "sm_90a"));  // packed at launch
  q = p;
  q.k = 0;
  EXPECT_THROW(validate_gemm_config(c, q, "sm_90a"), InvalidArgument);
  EXPECT_NE(choose_gemm_config(q, "sm_90a", 132).kind, GemmKind::wgmma);  // K = 0: the heuristic takes another kind
  q = p;
  q.k = 1023;  // rows of 2046 bytes
  EXPECT_NE(ops::tma_unready_reason(q, true).find("leading dimension 1023"), std::string::npos);
  EXPECT_NE(ops::tma_unready_reason(q, false).find("leading dimension 1023"), std::string::npos);
  q = p;
  q.b.layout = Layout::row_major;
  q.n = 1001;  // row-major B: lines of N
  EXPECT_NE(ops::tma_unready_reason(q, false).find("leading dimension 1001"), std::string::npos);
  EXPECT_EQ(ops::tma_unready_reason(q, true), "");
  q = p;
  q.batch = 2;
  q.a.batch_stride = 1024 * 1024 - 8;
  q.b.batch_stride = 1024 * 1024;
  EXPECT_NE(ops::tma_unready_reason(q, true).find("batch stride"), std::string::npos);
  EXPECT_EQ(ops::tma_unready_reason(q, false), "");
}

TEST(GemmConfig, SplitKIsAFifthPart) {
  auto c = GemmConfig::parse("wgmma:64x128x64:64x128:8:k2");
  EXPECT_EQ(c.split_k, 2);
  EXPECT_EQ(c.to_string(), "wgmma:64x128x64:64x128:8:k2");
  EXPECT_EQ(GemmConfig::parse("wgmma:64x128x64:64x128:8").split_k, 1);
  EXPECT_THROW(GemmConfig::parse("wgmma:64x128x64:64x128:8:x2"), InvalidArgument);
  EXPECT_THROW(GemmConfig::parse("wgmma:64x128x64:64x128:8:k"), InvalidArgument);
  GemmProblem p = problem(DType::bf16);
  p.b.layout = Layout::col_major;
  auto rule = [&](const char* cfg) { return broken_rule(cfg, p); };
  EXPECT_EQ(rule("wgmma:64x128x64:64x128:8:k4"), "");
  EXPECT_NE(rule("wgmma:64x128x64:64x128:8:k17").find("between k1 and k16"), std::string::npos);
  EXPECT_NE(rule("mma:128x128x32:64x64:3:k2").find("kind wgmma only"), std::string::npos);
}

TEST(GemmConfig, PingPongIsAFifthPart) {
  auto c = GemmConfig::parse("wgmma:128x128x64:128x128:4:pp");
  EXPECT_TRUE(c.pingpong);
  EXPECT_EQ(c.to_string(), "wgmma:128x128x64:128x128:4:pp");
  EXPECT_EQ(c.threads(), 384);  // a producer and two alternating consumer warpgroups
  EXPECT_THROW(GemmConfig::parse("wgmma:128x128x64:128x128:4:p"), InvalidArgument);
  GemmProblem p = problem(DType::bf16);
  p.b.layout = Layout::col_major;
  EXPECT_NO_THROW(validate_gemm_config(c, p, "sm_90a"));
  EXPECT_THROW(validate_gemm_config(GemmConfig::parse("wgmma:128x128x64:64x128:4:pp"), p, "sm_90a"), InvalidArgument);
  EXPECT_THROW(validate_gemm_config(GemmConfig::parse("mma:128x128x32:64x64:3:pp"), p, "sm_90a"), InvalidArgument);
}

TEST(GemmConfig, ClusterIsAnExtraPart) {
  auto c = GemmConfig::parse("wgmma:128x256x64:64x256:4:c2");
  EXPECT_EQ(c.cluster, 2);
  EXPECT_EQ(c.to_string(), "wgmma:128x256x64:64x256:4:c2");
  EXPECT_EQ(GemmConfig::parse("wgmma:128x256x64:64x256:4").cluster, 1);
  EXPECT_THROW(GemmConfig::parse("wgmma:128x256x64:64x256:4:c2:c2"), InvalidArgument);
  GemmProblem p = problem(DType::bf16);
  p.b.layout = Layout::col_major;
  EXPECT_EQ(broken_rule("wgmma:128x256x64:64x256:4:c2", p), "");
  EXPECT_EQ(broken_rule("wgmma:64x64x64:64x64:4:c2", p), "");
  EXPECT_NE(broken_rule("wgmma:128x256x64:64x256:4:c3", p).find("c1 or c2"), std::string::npos);
  EXPECT_NE(broken_rule("mma:128x128x32:64x64:3:c2", p).find("kind wgmma only"), std::string::npos);
  EXPECT_EQ(broken_rule("wgmma:128x128x64:128x128:4:pp:c2", p), "");
  EXPECT_NE(broken_rule("wgmma:64x128x64:64x128:8:k2:c2", p).find("split-K (kS) do not combine"), std::string::npos);
  GemmProblem n_major = p;
  n_major.b.layout = Layout::row_major;
  EXPECT_NE(broken_rule("wgmma:64x64x64:64x64:4:c2", n_major).find("multiple of 128"), std::string::npos);
  EXPECT_EQ(broken_rule("wgmma:64x128x64:64x128:4:c2", n_major), "");
}

// Random configuration strings, each parsed and, when it parses, validated against a few problems on
// both targets: InvalidArgument or acceptance, nothing else (no other exception, no crash).
TEST(GemmConfig, RandomStringsAreAcceptedOrRefusedCleanly) {
  const std::vector<std::string> pieces = {"wgmma", "mma", "simt", "puzzle33", ":", ":", "x", "x", "0", "1", "8", "16", "64", "128",
                                           "256", "4096", "-3", "99999999999", "k", "t", "c", "pp", "sw", "kh", "k2", "c2", " ", ""};
  const GemmProblem problems[] = {problem(DType::bf16), problem(DType::f32, MathMode::tf32, 16, 8192, 8192),
                                  problem(DType::f16, MathMode::exact, 7, 1, 4095), problem(DType::f32)};
  std::mt19937 rng(std::random_device{}());
  int parsed = 0;
  const std::vector<std::string> kinds = {"wgmma", "mma", "simt"}, numbers = {"0", "1", "3", "8", "16", "24", "32", "48", "64", "96",
                                                                               "128", "192", "256", "512", "1024", "-64", "4294967360"},
                                 extras = {"k2", "k4", "k0", "t2", "t3", "pp", "c2", "c3", "sw", "kh", "k2:c2", "pp:c2", "sw:kh", "x"};
  auto pick = [&](const std::vector<std::string>& from) { return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)]; };
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    if (i % 2) {  // token soup
      const int n = std::uniform_int_distribution<int>(1, 14)(rng);
      for (int t = 0; t < n; ++t) text += pick(pieces);
    } else {  // well-formed but arbitrary: what validation must judge
      text = pick(kinds) + ":" + pick(numbers) + "x" + pick(numbers) + "x" + pick(numbers) + ":" + pick(numbers) + "x" + pick(numbers) +
             ":" + pick(numbers);
      if (i % 3 == 0) text += ":" + pick(extras);
    }
    try {
      const GemmConfig c = GemmConfig::parse(text);
      ++parsed;
      for (const GemmProblem& p : problems)
        for (const char* arch : {"sm_80", "sm_90a"}) {
          try {
            validate_gemm_config(c, p, arch);
          } catch (const InvalidArgument&) {
          }
        }
    } catch (const InvalidArgument&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "'" << text << "' threw something other than InvalidArgument: " << e.what();
    }
  }
  RecordProperty("parsed", parsed);
}

TEST(GemmConfig, PresetsAreValid) {
  EXPECT_NO_THROW(validate_gemm_config(GemmConfig::parse("puzzle33"), problem(DType::f32, MathMode::tf32), "sm_90a"));
  EXPECT_NO_THROW(validate_gemm_config(GemmConfig::parse("puzzle33-tiled"), problem(DType::f32), "sm_90a"));
  EXPECT_NO_THROW(validate_gemm_config(GemmConfig::parse("puzzle33"), problem(DType::f32, MathMode::tf32), "sm_80"));
}

// What validate_gemm says of `p`: "" when it accepts it.
std::string msg(const GemmProblem& p) {
  try {
    validate_gemm(p);
  } catch (const InvalidArgument& e) {
    return std::string(e.what());
  }
  return std::string();
}

TEST(GemmProblem, ValidationNamesTheArgument) {
  EXPECT_EQ(msg(problem(DType::bf16)), "");
  auto p = problem(DType::bf16);
  p.m = -1;
  EXPECT_NE(msg(p).find("must not be negative"), std::string::npos);
  p = problem(DType::bf16);
  p.b.dtype = DType::f16;
  EXPECT_NE(msg(p).find("A and B must have one dtype"), std::string::npos);
  p = problem(DType::i32);
  EXPECT_NE(msg(p).find("dtype i32 is not supported"), std::string::npos);
  p = problem(DType::e4m3);  // 8-bit inputs and an 8-bit D
  EXPECT_EQ(msg(p), "");
  p = problem(DType::bf16);  // an 8-bit D needs 8-bit inputs
  p.d.dtype = DType::e4m3;
  EXPECT_NE(msg(p).find("GEMM D: dtype e4m3 is not supported (f32, f16 or bf16; e4m3 or e5m2 with 8-bit inputs)"), std::string::npos)
      << msg(p);
  p = problem(DType::f16, MathMode::tf32);
  EXPECT_NE(msg(p).find("tf32 applies to f32 inputs"), std::string::npos);
  p = problem(DType::bf16);
  p.a.ld = 100;
  EXPECT_NE(msg(p).find("GEMM A: leading dimension 100 is smaller than 1024"), std::string::npos);
  p = problem(DType::bf16);
  p.b.ptr = 0;
  EXPECT_NE(msg(p).find("GEMM B: null pointer"), std::string::npos);
  p = problem(DType::bf16);
  p.d.ptr = 16385;
  EXPECT_NE(msg(p).find("not aligned"), std::string::npos);
  p = problem(DType::bf16);
  p.batch = 0;
  EXPECT_NE(msg(p).find("batch 0"), std::string::npos);
  p = problem(DType::bf16);
  p.beta = 1.f;
  p.c = p.d;
  p.c.layout = Layout::col_major;
  EXPECT_NE(msg(p).find("C aliases D"), std::string::npos);
  p = problem(DType::bf16);
  p.m = 0;
  p.a.ptr = p.b.ptr = p.d.ptr = 0;
  EXPECT_EQ(msg(p), "");  // nothing to compute: no pointers needed
}

// 8-bit inputs: any pair of e4m3 and e5m2, a 16- or 32-bit D, per-tensor scales for them only, and
// Hopper only, kinds wgmma and gemv (another target or kind is refused by name).
TEST(GemmProblem, EightBitInputs) {
  auto fp8 = [](DType a, DType b) {
    GemmProblem p = problem(a);
    p.b.dtype = b;
    p.d.dtype = DType::bf16;
    return p;
  };
  for (DType a : {DType::e4m3, DType::e5m2})
    for (DType b : {DType::e4m3, DType::e5m2}) EXPECT_EQ(msg(fp8(a, b)), "") << dtype_name(a) << " x " << dtype_name(b);
  GemmProblem p = fp8(DType::e4m3, DType::bf16);
  EXPECT_NE(msg(p).find("A is e4m3 and B is bf16"), std::string::npos) << msg(p);
  p = fp8(DType::e4m3, DType::e4m3);
  p.c = p.d;
  p.c.dtype = DType::e4m3;
  p.beta = 1.f;
  p.c.ptr = 1 << 20;
  EXPECT_NE(msg(p).find("GEMM C: dtype e4m3 is not supported"), std::string::npos) << msg(p);
  p = fp8(DType::e4m3, DType::e4m3);
  p.scale_a = 1 << 20, p.scale_b = (1 << 20) + 4;
  EXPECT_EQ(msg(p), "");
  p.scale_b = (1 << 20) + 2;
  EXPECT_NE(msg(p).find("GEMM scale_b: pointer 0x100002 is not aligned"), std::string::npos) << msg(p);
  p = problem(DType::bf16);
  p.scale_a = 1 << 20;
  EXPECT_NE(msg(p).find("GEMM scale_a: per-tensor scales apply to 8-bit float inputs"), std::string::npos) << msg(p);
  p = fp8(DType::e4m3, DType::e4m3);  // bf16 D
  p.scale_d = 1 << 20;
  EXPECT_NE(msg(p).find("GEMM scale_d: an output scale applies to an 8-bit D"), std::string::npos) << msg(p);
  p.d.dtype = DType::e5m2;
  EXPECT_EQ(msg(p), "");
  // Targets and kinds.
  p = fp8(DType::e4m3, DType::e5m2);
  for (const char* arch : {"sm_80", "sm_89", "sm_90"}) {
    try {
      choose_gemm_config(p, arch, 132);
      ADD_FAILURE() << arch << ": expected InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("the target is ") + arch), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("sm_90a"), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(broken_rule("mma:128x128x32:64x64:3", p).find("8-bit float inputs (e4m3 x e5m2) run on kinds wgmma and gemv only"), std::string::npos)
      << broken_rule("mma:128x128x32:64x64:3", p);
  EXPECT_NE(broken_rule("wgmma:128x256x64:64x256:4", p).find("BK must be 128, 256 or 512 for e4m3"), std::string::npos)
      << broken_rule("wgmma:128x256x64:64x256:4", p);
  EXPECT_EQ(broken_rule("wgmma:128x256x128:64x256:4", p), "");
}

TEST(GemmProblem, EightBitBlockScales) {
  GemmProblem p = problem(DType::e4m3);
  p.d.dtype = DType::bf16;
  p.scale_mode = ScaleMode::blocks;
  EXPECT_NE(msg(p).find("GEMM scale_a: block scales (ScaleMode::blocks) need both scale_a and scale_b"), std::string::npos) << msg(p);
  p.scale_a = p.scale_b = 1 << 24;
  EXPECT_EQ(msg(p), "");
  GemmProblem h = problem(DType::bf16);
  h.scale_mode = ScaleMode::blocks;
  EXPECT_NE(msg(h).find("block scales (ScaleMode::blocks) apply to 8-bit float inputs"), std::string::npos) << msg(h);
  EXPECT_NE(broken_rule("wgmma:128x128x256:64x128:2", p).find("need BK = 128, not 256"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:256x256x128:128x256:2", p).find("need BN dividing 128 (or 256 with WM = 64), not 256"), std::string::npos);
  EXPECT_EQ(broken_rule("wgmma:128x256x128:64x256:3", p), "");  // 128-column halves
  EXPECT_NE(broken_rule("wgmma:64x256x128:64x256:4", p).find("take 128-row tiles of two consumer warpgroups"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:128x256x128:64x256:3:c2", p).find("without pp, kh, clusters or K slices"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:128x256x128:64x256:3:k2", p).find("without pp, kh, clusters or K slices"), std::string::npos);
  EXPECT_EQ(broken_rule("wgmma:192x128x128:64x128:4", p), "");  // three consumers, one 128-column block each
  EXPECT_NE(broken_rule("wgmma:192x128x128:64x128:4:c2", p).find("without pp, kh, clusters or K slices"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:192x64x128:64x64:4", p).find("with 3 consumer warpgroups take 192x128 tiles"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:128x192x128:64x192:3", p).find("not 192"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:64x16x128:64x16:8:sw", p).find("do not combine with swapped operands"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:128x128x128:128x128:4:pp", p).find("at most 64 fit"), std::string::npos);
  EXPECT_EQ(broken_rule("wgmma:128x128x128:64x128:4", p), "");
  for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{4096, 4096, 4096}, {16, 8192, 8192}, {1000, 1000, 1000}}) {
    GemmProblem q = problem(DType::e4m3, MathMode::exact, m, n, k);
    q.b.layout = Layout::col_major;
    q.a.ld = q.b.ld = 0;
    q.d.dtype = DType::bf16;
    q.d.layout = Layout::col_major;  // not computed swapped: block scales
    q.scale_mode = ScaleMode::blocks;
    const GemmConfig c = choose_gemm_config(q, "sm_90a", 132);
    EXPECT_EQ(c.bk, 128) << c.to_string();
    EXPECT_EQ(c.bn, m == 4096 ? 256 : 128) << c.to_string();  // 128x256 tiles for large problems
    EXPECT_FALSE(c.swap_ab) << c.to_string();
    EXPECT_NO_THROW(validate_gemm_config(c, q, "sm_90a")) << c.to_string();
  }
}

TEST(GemmHeuristic, EightBitInputsTakeWgmmaWithK128AndKMajorCopies) {
  for (const char* layout : {"NT", "NN", "TN", "TT"})
    for (auto [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{4096, 4096, 4096}, {4095, 4095, 4095}, {128, 8192, 8192},
                                                                   {16, 8192, 8192}, {1, 4096, 4096}, {100, 200, 300}}) {
      GemmProblem p = problem(DType::e4m3, MathMode::exact, m, n, k);
      p.a.layout = layout[0] == 'N' ? Layout::row_major : Layout::col_major;
      p.b.layout = layout[1] == 'N' ? Layout::row_major : Layout::col_major;
      p.d.dtype = DType::bf16;
      p.a.ld = p.b.ld = 0;
      const GemmConfig c = choose_gemm_config(p, "sm_90a", 132);
      EXPECT_EQ(c.kind, GemmKind::wgmma) << layout << " " << m << "x" << n << "x" << k << ": " << c.to_string();
      EXPECT_GE(c.bk, 128) << c.to_string();
      EXPECT_NO_THROW(validate_gemm_config(c, p, "sm_90a")) << c.to_string();
      // The kernel reads both operands K-major: the others are transposed copies.
      const GemmProblem q = ops::wgmma_kernel_problem(c, p);
      EXPECT_EQ(q.a.layout, Layout::row_major) << layout << " " << c.to_string();
      EXPECT_EQ(q.b.layout, Layout::col_major) << layout << " " << c.to_string();
    }
}

// Sizes whose products overflow 64 bits once crashed the heuristic (SIGFPE at 2^40 cubed); now each
// size, and the bytes each matrix spans, are bounded before anything else looks at them.
TEST(GemmProblem, SizesAndSpansThatCannotExistAreRefused) {
  auto p = problem(DType::bf16, MathMode::exact, std::int64_t{1} << 40, std::int64_t{1} << 40, std::int64_t{1} << 40);
  EXPECT_NE(msg(p).find("must each be at most 2147483647"), std::string::npos) << msg(p);
  p = problem(DType::bf16, MathMode::exact, 2147483647, 2147483647, 2);
  EXPECT_NE(msg(p).find("GEMM D: a row-major 2147483647x2147483647 matrix"), std::string::npos) << msg(p);
  p = problem(DType::bf16);
  p.a.ld = std::int64_t{1} << 62;  // (rows - 1) * ld overflows
  EXPECT_NE(msg(p).find("GEMM A:"), std::string::npos) << msg(p);
  EXPECT_NE(msg(p).find("spans more than 2^48 bytes"), std::string::npos) << msg(p);
  p = problem(DType::bf16);
  p.batch = 65535;
  p.b.batch_stride = std::int64_t{1} << 40;
  EXPECT_NE(msg(p).find("GEMM B:"), std::string::npos) << msg(p);
  p = problem(DType::bf16);
  p.d.ptr = ~CUdeviceptr{0} - 1023;  // aligned, but D would run past the end of the address space
  EXPECT_NE(msg(p).find("GEMM D:"), std::string::npos) << msg(p);
  // Large legal shapes still pass.
  EXPECT_EQ(msg(problem(DType::bf16, MathMode::exact, 1, 1, 2147483647)), "");
  EXPECT_EQ(msg(problem(DType::f32, MathMode::exact, 65536, 65536, 65536)), "");
}

TEST(GemmProblem, RunPointersReplaceThePlansIncludingItsBias) {
  GemmProblem planned = problem(DType::bf16);
  planned.beta = 0.5f;
  planned = ops::normalized(planned);  // without a C, beta applies to D: C is D
  planned.epilogue.bias = 1 << 24;
  GemmProblem p = ops::with_pointers(planned, GemmPointers{.a = 1 << 26, .d = 1 << 27, .bias = 1 << 28});
  EXPECT_EQ(p.a.ptr, CUdeviceptr{1} << 26);
  EXPECT_EQ(p.b.ptr, planned.b.ptr);  // 0 keeps the plan's
  EXPECT_EQ(p.d.ptr, CUdeviceptr{1} << 27);
  EXPECT_EQ(p.c.ptr, p.d.ptr);  // a C that was D follows D
  EXPECT_EQ(p.epilogue.bias, CUdeviceptr{1} << 28);
  EXPECT_EQ(ops::with_pointers(planned, GemmPointers{}).epilogue.bias, planned.epilogue.bias);
  planned.epilogue.bias = 0;
  try {
    ops::with_pointers(planned, GemmPointers{.bias = 1 << 28});
    FAIL() << "a bias was accepted by a plan without one";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("made without a bias"), std::string::npos) << e.what();
  }
}

TEST(GemmHeuristic, PicksByDtypeAndSize) {
  // Without wgmma (the generic sm_90 target, as on sm_80): mma.sync and SIMT configurations.
  std::string why;
  auto big = choose_gemm_config(problem(DType::bf16, MathMode::exact, 8192, 8192, 8192), "sm_90", 132, &why);
  EXPECT_EQ(big.to_string(), "mma:128x256x32:64x64:4");
  EXPECT_NE(why.find("large"), std::string::npos);
  auto medium = choose_gemm_config(problem(DType::bf16, MathMode::exact, 2048, 2048, 2048), "sm_90", 132, &why);
  EXPECT_EQ(medium.to_string(), "mma:128x128x32:64x64:4");  // 128 tiles of 128x256 would leave SMs idle
  auto small = choose_gemm_config(problem(DType::f16, MathMode::exact, 256, 256, 4096), "sm_90", 132, &why);
  EXPECT_EQ(small.bm, 64);
  EXPECT_NE(why.find("small"), std::string::npos);
  auto exact = choose_gemm_config(problem(DType::f32, MathMode::exact, 4096, 4096, 4096), "sm_90", 132, &why);
  EXPECT_EQ(exact.to_string(), "simt:256x128x16:64x64:2");
  auto tf32 = choose_gemm_config(problem(DType::f32, MathMode::tf32, 4096, 4096, 4096), "sm_90", 132, &why);
  EXPECT_EQ(tf32.to_string(), "mma:128x128x32:64x64:3");
  for (auto p : {problem(DType::bf16, MathMode::exact, 8192, 8192, 8192), problem(DType::f32, MathMode::tf32, 8192, 8192, 64),
                 problem(DType::f32, MathMode::exact, 3, 5, 7), problem(DType::f16, MathMode::exact, 16, 8192, 8192)})
    for (const char* arch : {"sm_80", "sm_86", "sm_90a"})
      EXPECT_NO_THROW(validate_gemm_config(choose_gemm_config(p, arch, 132), p, arch)) << arch;
}

TEST(GemmHeuristic, PicksWgmmaOnHopperWhereItsRulesHold) {
  std::string why;
  GemmProblem nt = problem(DType::bf16, MathMode::exact, 8192, 8192, 8192);
  nt.b.layout = Layout::col_major;
  EXPECT_EQ(choose_gemm_config(nt, "sm_90a", 132, &why).to_string(), "wgmma:128x256x64:64x256:4");
  EXPECT_NE(why.find("wgmma"), std::string::npos);
  EXPECT_EQ(choose_gemm_config(nt, "sm_80", 132).kind, GemmKind::mma);  // no wgmma before Hopper
  GemmProblem tf32 = nt;
  tf32.a.dtype = tf32.b.dtype = tf32.d.dtype = DType::f32;
  tf32.math = MathMode::tf32;
  EXPECT_EQ(choose_gemm_config(tf32, "sm_90a", 132).to_string(), "wgmma:128x256x32:64x256:4");
  GemmProblem odd = nt;
  odd.m = odd.n = odd.k = 4095;  // rows of 8190 bytes: packed for TMA, worth it at this size
  EXPECT_EQ(choose_gemm_config(odd, "sm_90a", 132).kind, GemmKind::wgmma);
  odd.m = 64;  // packing B (4095 x 4095) for 64 rows of output costs more than it saves
  EXPECT_EQ(choose_gemm_config(odd, "sm_90a", 132).kind, GemmKind::mma);
  EXPECT_EQ(choose_gemm_config(problem(DType::bf16, MathMode::exact, 8192, 8192, 8192), "sm_90a", 132).kind, GemmKind::wgmma);  // NN
  // tf32 wgmma reads K-major operands only from shared memory: a column-major A goes through
  // registers (ra), a row-major B is transposed into the workspace at launch; NN runs swapped (its
  // B^T is a column-major A, its A^T a column-major B), so that no operand is transposed. With D
  // column-major the kernel computes the row-major D^T where that transposes no more operands.
  struct Tf32Case {
    Layout a, b, d;
    const char* config;
    bool transposed_b;  // the kernel's B, transposed at launch
  };
  const Layout R = Layout::row_major, C = Layout::col_major;
  for (const Tf32Case& t : {Tf32Case{R, R, R, "wgmma:128x256x32:64x256:4:sw:ra", false}, Tf32Case{C, R, R, "wgmma:128x256x32:64x256:4:ra", true},
                            Tf32Case{C, C, R, "wgmma:128x256x32:64x256:4:ra", false}, Tf32Case{R, C, R, "wgmma:128x256x32:64x256:4", false},
                            Tf32Case{R, R, C, "wgmma:128x256x32:64x256:4:sw:ra", false}, Tf32Case{C, R, C, "wgmma:128x256x32:64x256:4:sw:ra", true},
                            Tf32Case{C, C, C, "wgmma:128x256x32:64x256:4:ra", false}, Tf32Case{R, C, C, "wgmma:128x256x32:64x256:4:sw", false}}) {
    GemmProblem tf32_other = problem(DType::f32, MathMode::tf32, 8192, 8192, 8192);
    tf32_other.a.layout = t.a, tf32_other.b.layout = t.b, tf32_other.d.layout = t.d;
    const std::string name = std::string(layout_name(t.a)).append(layout_name(t.b)).append(" D ").append(layout_name(t.d));
    const GemmConfig c = choose_gemm_config(tf32_other, "sm_90a", 132);
    EXPECT_EQ(c.to_string(), t.config) << name;
    const GemmProblem seen = c.swap_ab ? ops::swapped_ab(tf32_other) : tf32_other;
    EXPECT_FALSE(ops::wgmma_transposes_a(c, seen)) << name;
    EXPECT_EQ(ops::wgmma_transposes_b(c, seen), t.transposed_b) << name;
    const GemmProblem kq = ops::wgmma_kernel_problem(c, ops::normalized(tf32_other));
    EXPECT_EQ(kq.a.layout, c.a_registers ? C : R) << name;  // as the kernel reads them
    EXPECT_EQ(kq.b.layout, C) << name;
    EXPECT_EQ(kq.a.ld, 8192);
    EXPECT_EQ(kq.b.ld, 8192);
    EXPECT_NO_THROW(validate_gemm_config(c, tf32_other, "sm_90a")) << name;
  }
  // The forced transposing form of a column-major A stays valid; ra is refused where it cannot apply.
  GemmProblem tt = problem(DType::f32, MathMode::tf32, 4096, 4096, 4096);
  tt.a.layout = tt.b.layout = C;
  EXPECT_NO_THROW(validate_gemm_config(GemmConfig::parse("wgmma:128x256x32:64x256:4"), tt, "sm_90a"));
  EXPECT_TRUE(ops::wgmma_transposes_a(GemmConfig::parse("wgmma:128x256x32:64x256:4"), tt));
  auto refusal = [](const char* config, const GemmProblem& q) {
    try {
      validate_gemm_config(GemmConfig::parse(config), q, "sm_90a");
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  GemmProblem nt_tf32 = tt;
  nt_tf32.a.layout = R;
  EXPECT_NE(refusal("wgmma:128x256x32:64x256:4:ra", nt_tf32).find("reads a column-major (M-major) A"), std::string::npos);
  GemmProblem tt_bf16 = problem(DType::bf16, MathMode::exact, 4096, 4096, 4096);
  tt_bf16.a.layout = tt_bf16.b.layout = C;
  EXPECT_NE(refusal("wgmma:128x256x64:64x256:4:ra", tt_bf16).find("ra) is for tf32 inputs"), std::string::npos);
  EXPECT_NE(refusal("mma:128x128x32:64x64:3:ra", tt).find("exists for kind wgmma only"), std::string::npos);
  EXPECT_NE(refusal("wgmma:128x128x64:128x128:3:ra", tt).find("fragment registers"), std::string::npos);
  GemmProblem decode = nt;
  decode.m = 48;  // above the swapped decode shapes: one 64-row tile, 128 tiles 64 wide for 132 SMs
  EXPECT_EQ(choose_gemm_config(decode, "sm_90a", 132).to_string(), "wgmma:64x64x64:64x64:8");
  decode.n = 4096;  // 64 tiles 64 wide: two slices of K
  EXPECT_EQ(choose_gemm_config(decode, "sm_90a", 132).to_string(), "wgmma:64x64x64:64x64:8:k2");
  for (const auto& [m, n] : {std::pair{40, 11008}, std::pair{33, 14336}, std::pair{64, 65536}}) {
    GemmProblem wide = decode;  // one 64-row tile, N wide enough to fill the device: 64x128 tiles, no split
    wide.m = m, wide.n = n;
    EXPECT_EQ(choose_gemm_config(wide, "sm_90a", 132).to_string(), "wgmma:64x128x64:64x128:8") << m << "x" << n;
  }
  decode.m = 65;  // two rows of tiles: 64x128 tiles as before
  EXPECT_EQ(choose_gemm_config(decode, "sm_90a", 132).to_string(), "wgmma:64x128x64:64x128:8:k2");
  for (auto q : {nt, tf32, problem(DType::f16, MathMode::exact, 16, 8192, 8192)})
    EXPECT_NO_THROW(validate_gemm_config(choose_gemm_config(q, "sm_90a", 132), q, "sm_90a"));
}

TEST(GemmHeuristic, ClustersOfTwoWhereBsLinesStartOffSectorsAtAboutAWave) {
  // 64x128 tiles of about a wave: a B with lines 16 bytes off 32-byte boundaries (N of a row-major
  // B, K of a column-major one) takes clusters of two; A's lines do not matter, nor aligned ones.
  auto with = [](std::int64_t m, std::int64_t n, std::int64_t k, const char* layout) {
    GemmProblem p = problem(DType::bf16, MathMode::exact, m, n, k);
    p.a.layout = layout[0] == 'N' ? Layout::row_major : Layout::col_major;
    p.b.layout = layout[1] == 'N' ? Layout::row_major : Layout::col_major;
    std::string why;
    const GemmConfig c = choose_gemm_config(p, "sm_90a", 132, &why);
    EXPECT_NO_THROW(validate_gemm_config(c, p, "sm_90a")) << why;
    return c.to_string();
  };
  EXPECT_EQ(with(1024, 1000, 1024, "NN"), "wgmma:64x128x128:64x128:4:c2");   // B's lines: N = 1000
  EXPECT_EQ(with(1024, 1000, 1024, "NT"), "wgmma:64x128x64:64x128:8");       // B's lines: K = 1024
  EXPECT_EQ(with(1024, 1024, 1000, "NT"), "wgmma:64x128x128:64x128:4:c2");   // K = 1000
  EXPECT_EQ(with(1000, 1024, 1024, "TN"), "wgmma:64x128x64:64x128:8");       // only A's lines are off
  EXPECT_EQ(with(1024, 1024, 1008, "NT"), "wgmma:64x128x64:64x128:8");       // 2016 bytes: on 32-byte boundaries
  // Larger: 128x256 tiles in clusters of two where their waves are nearly full, else B is packed.
  EXPECT_EQ(with(2040, 2040, 2040, "NT"), "wgmma:128x256x64:64x256:4:c2");   // 128 tiles: one wave
  EXPECT_EQ(with(4088, 4088, 4088, "NN"), "wgmma:128x256x64:64x256:4:c2");   // 512: 97% of 4 waves
  EXPECT_EQ(with(8184, 8184, 8184, "TT"), "wgmma:128x256x64:64x256:4:c2");
  // 288 tiles of 128x256: 73% of 3 waves; 384 of 128x192 fill 97%, in clusters where B's tile splits
  // into 128-byte halves (column-major B), packed where it does not.
  EXPECT_EQ(with(3000, 3000, 3000, "NT"), "wgmma:128x192x64:64x192:4:c2");
  EXPECT_EQ(with(3000, 3000, 3000, "TT"), "wgmma:128x192x64:64x192:4:c2");
  EXPECT_EQ(with(3000, 3000, 3000, "NN"), "wgmma:128x192x64:64x192:4");
  EXPECT_EQ(with(3000, 3000, 3000, "TN"), "wgmma:128x192x64:64x192:4");
  EXPECT_EQ(with(4096, 4096, 4096, "NT"), "wgmma:128x256x64:64x256:4");      // B on 128-byte boundaries
  EXPECT_EQ(with(2000, 2000, 2000, "NT"), "wgmma:128x256x64:64x256:4:c2");   // off 128 bytes: one wave
  EXPECT_EQ(with(2000, 2000, 2000, "TN"), "wgmma:128x256x64:64x256:4:c2");
  EXPECT_EQ(with(4000, 4000, 4000, "NT"), "wgmma:128x256x64:64x256:4");      // four waves: not measured
  EXPECT_EQ(with(2048, 2048, 2048, "NT"), "wgmma:128x128x64:64x128:4");      // aligned: as it was
  EXPECT_EQ(with(4096, 4088, 4096, "NT"), "wgmma:128x256x64:64x256:4");      // only D's lines are off
  EXPECT_EQ(with(5000, 3000, 1999, "NN"), "wgmma:128x256x64:64x256:4:c2");   // N = 3000: 91% of 7 waves
  EXPECT_EQ(with(5000, 3000, 1999, "NT"), "wgmma:128x256x64:64x256:4");      // K odd: TMA cannot read B
  EXPECT_EQ(with(4095, 4095, 4095, "NN"), "wgmma:128x256x64:64x256:4");      // nor here: packed anyway
  // Too few tiles for a wave: split-K, which clusters do not combine with, wins.
  EXPECT_EQ(with(256, 256, 4000, "NT").find(":c2"), std::string::npos);
  GemmProblem f16 = problem(DType::f16, MathMode::exact, 1000, 1000, 1000);
  EXPECT_EQ(choose_gemm_config(f16, "sm_90a", 132).cluster, 2);
  GemmProblem tf32 = problem(DType::f32, MathMode::tf32, 1000, 1000, 1000);  // not measured: as it was
  EXPECT_EQ(choose_gemm_config(tf32, "sm_90a", 132).cluster, 1);
}

TEST(GemmLaunch, PacksBWhoseLinesStartOffSectorsOnLargerProblems) {
  const GemmConfig plain = GemmConfig::parse("wgmma:128x128x64:64x128:4");
  auto nt = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    GemmProblem p = problem(DType::bf16, MathMode::exact, m, n, k);
    p.b.layout = Layout::col_major;  // K-major: lines of K
    return p;
  };
  EXPECT_TRUE(ops::wgmma_packs_b_for_speed(plain, nt(2040, 2040, 2040)));
  EXPECT_TRUE(ops::wgmma_packs_b_for_speed(plain, nt(4088, 4088, 4088)));
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(plain, nt(2000, 2000, 2000)));  // 4000 bytes: on 32-byte boundaries
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(plain, nt(4096, 4096, 4096)));
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(plain, nt(1000, 1000, 1000)));  // M <= 1024: not worth the copy
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(GemmConfig::parse("wgmma:128x128x64:64x128:4:c2"), nt(2040, 2040, 2040)));
  GemmProblem rows = nt(2048, 2040, 2048);  // a row-major B: lines of N
  rows.b.layout = Layout::row_major;
  EXPECT_TRUE(ops::wgmma_packs_b_for_speed(plain, rows));
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(plain, nt(2048, 2040, 2048)));  // lines of K = 2048
  GemmProblem moved = nt(2048, 2048, 2048);
  moved.b.ptr += 16;  // the pointer alone
  EXPECT_TRUE(ops::wgmma_packs_b_for_speed(plain, moved));
  GemmProblem batched = nt(2048, 2048, 2048);
  batched.batch = 2, batched.b.batch_stride = 2048 * 2048 + 8;  // the batch stride alone
  EXPECT_TRUE(ops::wgmma_packs_b_for_speed(plain, batched));
  GemmProblem f32 = problem(DType::f32, MathMode::tf32, 2040, 2040, 2042);
  f32.b.layout = Layout::col_major;
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(plain, f32));  // 16-bit inputs only (measured there)
  // The swapped decode path: the kernel's B is the user's narrow M x K A, in 16- or 32-row tiles.
  GemmProblem decode = problem(DType::bf16, MathMode::exact, 16, 8192, 1000);
  decode.b.layout = Layout::col_major;
  const GemmConfig swapped = choose_gemm_config(decode, "sm_90a", 132);
  ASSERT_TRUE(swapped.swap_ab) << swapped.to_string();
  const GemmProblem kernel_view = ops::wgmma_kernel_problem(swapped, decode);
  EXPECT_TRUE(ops::b_lines_off_sectors(kernel_view));  // K = 1000: 2000-byte lines
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(swapped, kernel_view));
  EXPECT_FALSE(ops::wgmma_packs_b_for_speed(GemmConfig::parse("wgmma:128x64x64:64x64:8"), nt(2040, 2040, 2040)));
}

TEST(GemmLaunch, TmaL2PromotionByLinePitch) {
  // Line pitches off 128-byte boundaries (bf16 ld 1000, 2040, 1008, 4088) ask L2 for 128 bytes at a
  // time; aligned ones keep 256.
  for (const std::uint64_t bytes : {2000ull, 4080ull, 2016ull, 8176ull, 16ull, 192ull})
    EXPECT_EQ(ops::tma_l2_promotion(bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_128B) << bytes;
  for (const std::uint64_t bytes : {128ull, 2048ull, 8192ull, 4096ull * 4})
    EXPECT_EQ(ops::tma_l2_promotion(bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B) << bytes;
}

TEST(GemmHeuristic, TileWidthByWaves) {
  // 16-bit wgmma: of 128x256, 128x192 and 128x128 tiles, the fewest weighed waves, when at least 10%
  // cheaper (what tuning found on the H200); the large shapes the heuristic was measured on keep
  // 128x256 tiles, and the other kinds and dtypes are left as they were.
  struct Case {
    std::int64_t m, n, k;
    const char* expected;
  };
  for (const Case& c : {Case{3072, 3072, 3072, "wgmma:128x192x64:64x192:4"}, Case{1536, 1536, 1536, "wgmma:128x192x64:64x192:4"},
                        Case{1536, 1536, 6144, "wgmma:128x192x64:64x192:4"}, Case{768, 3072, 768, "wgmma:128x192x64:64x192:4"},
                        Case{512, 11008, 4096, "wgmma:128x192x64:64x192:4"}, Case{4096, 4096, 4096, "wgmma:128x256x64:64x256:4"},
                        Case{6144, 6144, 6144, "wgmma:128x256x64:64x256:4"}, Case{8192, 8192, 8192, "wgmma:128x256x64:64x256:4"},
                        Case{12288, 4096, 4096, "wgmma:128x256x64:64x256:4"}, Case{4095, 4095, 4095, "wgmma:128x256x64:64x256:4"},
                        Case{7168, 7168, 7168, "wgmma:128x256x64:64x256:4"},
                        Case{2048, 2048, 2048, "wgmma:128x128x64:64x128:4"}, Case{1000, 1000, 1000, "wgmma:64x128x128:64x128:4:c2"},
                        Case{1008, 1008, 1008, "wgmma:64x128x64:64x128:8"}, Case{1024, 1024, 1024, "wgmma:64x128x64:64x128:8"}}) {
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      GemmProblem p = problem(DType::bf16, MathMode::exact, c.m, c.n, c.k);
      p.a.layout = layout[0] == 'N' ? Layout::row_major : Layout::col_major;
      p.b.layout = layout[1] == 'N' ? Layout::row_major : Layout::col_major;
      std::string why;
      const GemmConfig got = choose_gemm_config(p, "sm_90a", 132, &why);
      EXPECT_EQ(got.to_string(), c.expected) << c.m << "x" << c.n << "x" << c.k << " " << layout << ": " << why;
      EXPECT_NO_THROW(validate_gemm_config(got, p, "sm_90a"));
      if (got.bn == 192) {
        EXPECT_NE(why.find("waves"), std::string::npos) << why;
      }
    }
  }
  for (const char* layout : {"NN", "NT", "TN", "TT", "NT:c"}) {  // M of one 64-row tile: 64-wide tiles, every layout
    GemmProblem p = problem(DType::f16, MathMode::exact, 64, 8192, 4096);
    p.a.layout = layout[0] == 'N' ? Layout::row_major : Layout::col_major;
    p.b.layout = layout[1] == 'N' ? Layout::row_major : Layout::col_major;
    if (layout[2]) p.d.layout = Layout::col_major;
    const GemmConfig got = choose_gemm_config(p, "sm_90a", 132);
    EXPECT_NO_THROW(validate_gemm_config(got, p, "sm_90a")) << layout;
    if (!layout[2]) {
      EXPECT_EQ(got.to_string(), "wgmma:64x64x64:64x64:8") << layout;
    }
  }
  GemmProblem tf32 = problem(DType::f32, MathMode::tf32, 3072, 3072, 3072);  // tf32: not measured, as it was
  EXPECT_EQ(choose_gemm_config(tf32, "sm_90a", 132).bn, 256);
  GemmProblem fp8 = problem(DType::e4m3, MathMode::exact, 3072, 3072, 3072);
  fp8.b.layout = Layout::col_major, fp8.d.dtype = DType::bf16;
  EXPECT_EQ(choose_gemm_config(fp8, "sm_90a", 132).bn, 256);
  EXPECT_EQ(choose_gemm_config(problem(DType::bf16, MathMode::exact, 3072, 3072, 3072), "sm_80", 108).kind, GemmKind::mma);
}

TEST(GemmHeuristic, EpiloguesReadingAnMxNInputKeepTheCooperativeTiles) {
  // A body reading an M x N input (a residual) keeps the 128x256 tiles of the plain GEMM: 128x128
  // ping-pong won on the H200 but lost 5-15% on an H100 (docs/benchmarks.md, 2026-12-05), so it is
  // left to tuning. Ping-pong stays a valid configuration for such a problem.
  auto with_residual = [](GemmProblem p) {
    p.epilogue.body = "d = acc + residual";
    p.epilogue.inputs = {{"residual", MatrixRef{1 << 24, p.d.dtype, Layout::row_major}}};
    return p;
  };
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    for (const auto& shape : {std::array<std::int64_t, 3>{4096, 4096, 4096}, std::array<std::int64_t, 3>{12288, 4096, 4096}}) {
      GemmProblem p = problem(DType::bf16, MathMode::exact, shape[0], shape[1], shape[2]);
      p.a.layout = layout[0] == 'N' ? Layout::row_major : Layout::col_major;
      p.b.layout = layout[1] == 'N' ? Layout::row_major : Layout::col_major;
      const GemmConfig plain = choose_gemm_config(p, "sm_90a", 132);
      EXPECT_EQ(plain.to_string(), "wgmma:128x256x64:64x256:4") << layout;
      const GemmProblem r = with_residual(p);
      std::string why;
      EXPECT_EQ(choose_gemm_config(r, "sm_90a", 132, &why).to_string(), plain.to_string()) << layout << ": " << why;
      GemmConfig pp{GemmKind::wgmma, 128, 128, 64, 128, 128, 5};
      pp.pingpong = true;
      EXPECT_NO_THROW(validate_gemm_config(pp, r, "sm_90a")) << layout;
    }
  }
}

TEST(GemmHeuristic, ColumnMajorDIsComputedAsRowMajorDTransposed) {
  // D column-major: the kernel computes the row-major D^T = B^T A^T (TMA-stored), with the tiles a
  // row-major D of the swapped shape gets; every A/B layout, a bias (per row of D^T), tf32.
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    GemmProblem p = problem(DType::bf16, MathMode::exact, 4096, 2048, 4096);
    p.a.layout = layout[0] == 'N' ? Layout::row_major : Layout::col_major;
    p.b.layout = layout[1] == 'N' ? Layout::row_major : Layout::col_major;
    p.d.layout = Layout::col_major;
    p.epilogue.bias = 1 << 20;
    std::string why;
    const GemmConfig c = choose_gemm_config(p, "sm_90a", 132, &why);
    GemmProblem row = ops::swapped_ab(p);
    EXPECT_EQ(row.d.layout, Layout::row_major);
    GemmConfig expected = choose_gemm_config(row, "sm_90a", 132);
    expected.swap_ab = true;
    EXPECT_EQ(c, expected) << layout << ": " << c.to_string();
    EXPECT_NE(why.find("D column-major"), std::string::npos) << why;
    EXPECT_NO_THROW(validate_gemm_config(c, p, "sm_90a"));
    EXPECT_TRUE(ops::wgmma_d_tma(c, ops::wgmma_kernel_problem(c, p))) << layout;  // D^T through TMA stores
  }
  GemmProblem narrow = problem(DType::bf16, MathMode::exact, 8192, 16, 8192);  // D^T is a decode shape: its swap
  narrow.b.layout = Layout::col_major;
  narrow.d.layout = Layout::col_major;
  const GemmConfig nc = choose_gemm_config(narrow, "sm_90a", 132);
  EXPECT_EQ(nc.kind, GemmKind::wgmma);
  EXPECT_FALSE(nc.swap_ab);  // swapped twice: the kernel computes D directly with 16-wide tiles
  EXPECT_EQ(nc.bn, 16);
  EXPECT_NO_THROW(validate_gemm_config(nc, narrow, "sm_90a"));
  GemmProblem sm80 = narrow;
  sm80.m = sm80.n = 4096;
  EXPECT_EQ(choose_gemm_config(sm80, "sm_80", 108).kind, GemmKind::mma);  // no wgmma: D written as it is
}

TEST(GemmHeuristic, SwapsOperandsForDecodeShapes) {
  std::string why;
  GemmProblem nt = problem(DType::bf16, MathMode::exact, 16, 8192, 8192);
  nt.b.layout = Layout::col_major;
  EXPECT_EQ(choose_gemm_config(nt, "sm_90a", 132, &why).to_string(), "wgmma:64x16x128:64x16:8:sw");
  EXPECT_NE(why.find("D^T = B^T A^T"), std::string::npos) << why;
  GemmProblem nn = nt;
  nn.b.layout = Layout::row_major;  // B^T is then an M-major A operand: fine for f16/bf16
  EXPECT_EQ(choose_gemm_config(nn, "sm_90a", 132).to_string(), "wgmma:64x16x128:64x16:8:sw");
  GemmProblem m32 = nt;
  m32.m = 32, m32.n = 4096, m32.k = 4096;  // 64 tiles of 64 rows of N: two slices of K
  EXPECT_EQ(choose_gemm_config(m32, "sm_90a", 132).to_string(), "wgmma:64x32x128:64x32:8:k2:sw");
  GemmProblem tf32 = nt;
  tf32.a.dtype = tf32.b.dtype = tf32.d.dtype = DType::f32;
  tf32.math = MathMode::tf32;
  EXPECT_EQ(choose_gemm_config(tf32, "sm_90a", 132).to_string(), "wgmma:64x16x64:64x16:8:sw");
  GemmProblem tn = nt;
  tn.a.layout = Layout::col_major;  // A^T is an N-major B, transposed at launch for the 16-wide tiles
  EXPECT_EQ(choose_gemm_config(tn, "sm_90a", 132).to_string(), "wgmma:64x16x128:64x16:8:sw");
  GemmProblem tt = tn;
  tt.b.layout = Layout::row_major;
  EXPECT_EQ(choose_gemm_config(tt, "sm_90a", 132).to_string(), "wgmma:64x16x128:64x16:8:sw");
  GemmProblem tf32_tn = tf32;
  tf32_tn.b.layout = Layout::row_major;  // B^T is an M-major A, read through registers (ra) as it is
  EXPECT_EQ(choose_gemm_config(tf32_tn, "sm_90a", 132).to_string(), "wgmma:64x16x64:64x16:8:sw:ra");
  GemmProblem biased = nt;
  biased.epilogue.bias = 1 << 20;  // a bias along D's columns runs along D^T's rows
  EXPECT_EQ(choose_gemm_config(biased, "sm_90a", 132).to_string(), "wgmma:64x16x128:64x16:8:sw");
  EXPECT_FALSE(choose_gemm_config(nt, "sm_90", 132).swap_ab);  // no wgmma without sm_90a
  for (auto q : {nt, nn, m32, tf32, tn, tt, tf32_tn, biased})
    EXPECT_NO_THROW(validate_gemm_config(choose_gemm_config(q, "sm_90a", 132), q, "sm_90a"));
}

TEST(GemmConfig, SwappedOperands) {
  auto c = GemmConfig::parse("wgmma:64x16x128:64x16:8:sw");
  EXPECT_TRUE(c.swap_ab);
  EXPECT_EQ(c.to_string(), "wgmma:64x16x128:64x16:8:sw");
  EXPECT_EQ(GemmConfig::parse("wgmma:64x32x128:64x32:8:sw:k2").to_string(), "wgmma:64x32x128:64x32:8:k2:sw");
  GemmProblem p = problem(DType::bf16, MathMode::exact, 16, 8192, 4096);
  p.b.layout = Layout::col_major;
  const GemmProblem q = ops::swapped_ab(ops::normalized(p));
  EXPECT_EQ(q.m, 8192);
  EXPECT_EQ(q.n, 16);
  EXPECT_EQ(q.a.ptr, p.b.ptr);
  EXPECT_EQ(q.b.ptr, p.a.ptr);
  EXPECT_EQ(q.a.layout, Layout::row_major);  // B^T of a column-major B
  EXPECT_EQ(q.b.layout, Layout::col_major);  // A^T of a row-major A: K-major
  EXPECT_EQ(q.d.layout, Layout::col_major);
  EXPECT_EQ(q.a.ld, 4096);
  EXPECT_EQ(q.d.ld, 8192);
  EXPECT_EQ(broken_rule("wgmma:64x16x128:64x16:8:sw", p), "");
  GemmProblem tn = p;
  tn.a.layout = Layout::col_major;  // A^T is N-major: bf16 narrow tiles read it as it is
  EXPECT_EQ(broken_rule("wgmma:64x16x128:64x16:8:sw", tn), "");
  const GemmConfig c16 = GemmConfig::parse("wgmma:64x16x128:64x16:8:sw");
  EXPECT_FALSE(ops::wgmma_transposes_b(c16, ops::swapped_ab(ops::normalized(tn))));
  const GemmProblem kq = ops::wgmma_kernel_problem(c16, ops::normalized(tn));
  EXPECT_EQ(kq.b.layout, Layout::row_major);  // N-major, one {16, BK} box per stage
  EXPECT_EQ(kq.b.ptr, tn.a.ptr);
  GemmProblem tn7 = tn;  // M = 7: a 14-byte row pitch TMA cannot take; transposed rather than packed
  tn7.m = 7;
  tn7.a.ld = 7;
  EXPECT_TRUE(ops::wgmma_transposes_b(c16, ops::swapped_ab(ops::normalized(tn7))));
  EXPECT_EQ(ops::wgmma_kernel_problem(c16, ops::normalized(tn7)).b.layout, Layout::col_major);
  // tf32 reads K-major only: its N-major A^T is transposed into the workspace at launch.
  GemmProblem tn32 = problem(DType::f32, MathMode::tf32, 16, 8192, 4096);
  tn32.a.layout = Layout::col_major;
  tn32.b.layout = Layout::col_major;
  const GemmConfig c32 = GemmConfig::parse("wgmma:64x16x64:64x16:8:sw");
  EXPECT_TRUE(ops::wgmma_transposes_b(c32, ops::swapped_ab(ops::normalized(tn32))));
  const GemmProblem kq32 = ops::wgmma_kernel_problem(c32, ops::normalized(tn32));
  EXPECT_EQ(kq32.b.layout, Layout::col_major);  // the K-major copy the kernel reads
  EXPECT_EQ(kq32.b.ld, 4096);
  EXPECT_EQ(kq32.b.batch_stride, 4096 * 16);
  EXPECT_EQ(kq32.b.ptr, tn32.a.ptr);  // the copy's source, replaced by the workspace at launch
  EXPECT_FALSE(ops::wgmma_transposes_b(c16, q));  // a row-major A needs no copy
  GemmProblem biased = p;
  biased.epilogue.bias = 1 << 20;  // per row of D^T (BIAS_ROW)
  EXPECT_EQ(broken_rule("wgmma:64x16x128:64x16:8:sw", biased), "");
  EXPECT_NE(broken_rule("mma:64x64x32:32x32:3:sw", p).find("kinds wgmma and gemv only"), std::string::npos);
  // Narrow tiles also serve a narrow N directly, with a column-major B.
  GemmProblem narrow = problem(DType::bf16, MathMode::exact, 8192, 16, 4096);
  narrow.b.layout = Layout::col_major;
  EXPECT_EQ(broken_rule("wgmma:64x16x128:64x16:8", narrow), "");
  narrow.b.layout = Layout::row_major;  // read N-major as it is
  EXPECT_EQ(broken_rule("wgmma:64x16x128:64x16:8", narrow), "");
  EXPECT_FALSE(ops::wgmma_transposes_b(GemmConfig::parse("wgmma:64x16x128:64x16:8"), ops::normalized(narrow)));
  EXPECT_NE(broken_rule("wgmma:64x48x64:64x48:8", narrow).find("16, 32, 64"), std::string::npos);
}

TEST(GemmConfig, OneRowOrColumnOperandsAreTakenInTheirKMajorLayout) {
  // A decode step's activation: one row of A stored column-major with ld 1 is the row-major row.
  GemmProblem tn = problem(DType::bf16, MathMode::exact, 1, 4096, 4096);
  tn.a.layout = Layout::col_major;
  tn.b.layout = Layout::col_major;
  const GemmProblem n = ops::normalized(tn);
  EXPECT_EQ(n.a.layout, Layout::row_major);
  EXPECT_EQ(n.a.ld, 4096);
  EXPECT_EQ(n.a.ptr, tn.a.ptr);
  GemmProblem nn = tn;
  nn.a.layout = Layout::row_major;
  nn.a.ld = 0;
  EXPECT_EQ(choose_gemm_config(n, "sm_90a", 132).to_string(), choose_gemm_config(ops::normalized(nn), "sm_90a", 132).to_string());
  // A column given explicitly with a wider ld is strided: it keeps its layout.
  GemmProblem strided = tn;
  strided.a.ld = 8;
  EXPECT_EQ(ops::normalized(strided).a.layout, Layout::col_major);
  EXPECT_EQ(ops::normalized(strided).a.ld, 8);
  // One column of B stored row-major is that column column-major (K-major).
  GemmProblem tt = problem(DType::bf16, MathMode::exact, 4096, 1, 4096);
  const GemmProblem nb = ops::normalized(tt);
  EXPECT_EQ(nb.b.layout, Layout::col_major);
  EXPECT_EQ(nb.b.ld, 4096);
  // One row of D column-major is D row-major; C read at D (no C given) follows it.
  GemmProblem dc = tn;
  dc.d.layout = Layout::col_major;
  dc.beta = 0.5f;
  const GemmProblem nd = ops::normalized(dc);
  EXPECT_EQ(nd.d.layout, Layout::row_major);
  EXPECT_EQ(nd.d.ld, 4096);
  EXPECT_EQ(nd.c.ptr, nd.d.ptr);
  EXPECT_EQ(nd.c.layout, Layout::row_major);
  EXPECT_NO_THROW(validate_gemm(nd));
  // Larger M: nothing changes.
  GemmProblem wide = problem(DType::bf16, MathMode::exact, 2, 4096, 4096);
  wide.a.layout = Layout::col_major;
  EXPECT_EQ(ops::normalized(wide).a.layout, Layout::col_major);
}

TEST(GemmConfig, DecodeTf32WithARowMajorBRunsSwappedWithBThroughRegisters) {
  // tf32 wgmma reads K-major operands only from shared memory: a row-major B, swapped into the
  // kernel's A (B^T, M-major), goes through registers as it is instead of the 64x128 tiles.
  for (const auto& [m, n, a_layout] : {std::tuple{1, 4096, Layout::row_major}, std::tuple{16, 8192, Layout::col_major},
                                       std::tuple{32, 8192, Layout::row_major}}) {
    GemmProblem p = problem(DType::f32, MathMode::tf32, m, n, n);
    p.a.layout = a_layout;
    p.b.layout = Layout::row_major;
    const GemmConfig c = choose_gemm_config(ops::normalized(p), "sm_90a", 132);
    EXPECT_TRUE(c.swap_ab) << m << ": " << c.to_string();
    EXPECT_TRUE(c.a_registers) << m << ": " << c.to_string();
    EXPECT_EQ(c.bn, m <= 16 ? 16 : 32) << c.to_string();
    EXPECT_NO_THROW(validate_gemm_config(c, ops::normalized(p), "sm_90a")) << c.to_string();
    p.b.layout = Layout::col_major;  // K-major B: swapped, read from shared memory
    const GemmConfig k = choose_gemm_config(ops::normalized(p), "sm_90a", 132);
    EXPECT_TRUE(k.swap_ab && !k.a_registers) << k.to_string();
  }
}

TEST(GemmVariant, StagesADTmaCannotWriteWhenItPays) {
  const auto c = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  GemmProblem p = problem(DType::bf16, MathMode::exact, 4095, 4095, 4095);
  p.b.layout = Layout::col_major;
  const GemmProblem n = ops::normalized(p);
  EXPECT_FALSE(ops::wgmma_tma_store(c, n));  // 8190-byte rows
  EXPECT_TRUE(ops::wgmma_stage_d(c, n));
  EXPECT_TRUE(ops::gemm_variant(c, n).d_tma);
  GemmProblem small = p;
  small.m = small.n = 300;  // a copy of D costs more than element stores save
  EXPECT_FALSE(ops::wgmma_stage_d(c, ops::normalized(small)));
  EXPECT_FALSE(ops::gemm_variant(c, ops::normalized(small)).d_tma);
  GemmProblem col = p;
  col.d.layout = Layout::col_major;  // element stores
  EXPECT_FALSE(ops::wgmma_stage_d(c, ops::normalized(col)));
  GemmProblem aligned = p;
  aligned.m = aligned.n = aligned.k = 4096;  // TMA writes D in place
  EXPECT_FALSE(ops::wgmma_stage_d(c, ops::normalized(aligned)));
  EXPECT_TRUE(ops::gemm_variant(c, ops::normalized(aligned)).d_tma);
  EXPECT_GT(ops::gemm_shared_bytes(c, n), ops::gemm_shared_bytes(c, ops::normalized(small)));  // staging buffers
}

// A plan's shared memory holds D's staging buffers wherever some D pointer would use them: its
// kernels for other pointers (GemmPlan::run) launch with the plan's shared memory.
TEST(GemmVariant, SharedMemoryHoldsDStagingForAnyDPointer) {
  const auto c = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  GemmProblem p = problem(DType::bf16, MathMode::exact, 320, 320, 512);  // too small to stage D for element stores
  p.b.layout = Layout::col_major;
  GemmProblem odd_d = p;
  odd_d.d.ptr += 2;  // the plan's own D takes element stores; an aligned one takes TMA stores
  EXPECT_FALSE(ops::gemm_variant(c, ops::normalized(odd_d)).d_tma);
  EXPECT_TRUE(ops::gemm_variant(c, ops::normalized(p)).d_tma);
  EXPECT_EQ(ops::gemm_shared_bytes(c, ops::normalized(odd_d)), ops::gemm_shared_bytes(c, ops::normalized(p)));
}

// Epilogue vectors along the kernel's columns are staged per tile in shared memory where the
// configuration allows (64 columns or more, no K halves, no cluster) and they fit beside its stages;
// a swapped kernel stages the per-row vectors (its columns are the user's rows).
TEST(GemmVariant, StagesColumnVectorsWhereTheyFit) {
  GemmProblem p = problem(DType::bf16, MathMode::exact, 4096, 4096, 4096);
  p.b.layout = Layout::col_major;
  p.epilogue.body = "d = gelu(acc + bias[n]) * scale[m]";
  p.epilogue.vectors = {{.name = "bias", .ptr = 0x10000, .dtype = DType::bf16, .axis = EpilogueAxis::column},
                        {.name = "scale", .ptr = 0x20000, .dtype = DType::f32, .axis = EpilogueAxis::row}};
  const GemmProblem n = ops::normalized(p);
  GemmProblem plain = n;
  plain.epilogue = {};
  const auto cfg = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  EXPECT_EQ(ops::wgmma_tile_vectors(cfg, n), 1);
  EXPECT_EQ(ops::gemm_shared_bytes(cfg, n), ops::gemm_shared_bytes(cfg, plain) + 32 + 256 * 4);  // barriers + one buffer
  EXPECT_LE(ops::gemm_shared_bytes(cfg, n), ops::arch_shared_memory_limit("sm_90a"));
  const auto pp = GemmConfig::parse("wgmma:128x128x64:128x128:5:pp");
  EXPECT_EQ(ops::wgmma_tile_vectors(pp, n), 1);
  EXPECT_EQ(ops::gemm_shared_bytes(pp, n), ops::gemm_shared_bytes(pp, plain) + 32 + 2 * 128 * 4);  // a buffer per consumer
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("wgmma:128x256x64:64x256:4:c2"), n), 0);  // clusters: global reads
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("wgmma:64x128x64:64x128:8:kh"), n), 0);   // K halves
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("mma:128x128x32:64x32:3"), n), 0);
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("wgmma:64x32x64:64x32:8:sw"), n), 0);  // narrow decode tiles
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("wgmma:128x256x64:64x256:4:sw"), n), 1);  // scale[m] along its columns
  GemmProblem blocks = n;
  blocks.a.dtype = blocks.b.dtype = DType::e4m3;
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("wgmma:128x256x128:64x256:4"), blocks), 1);
  blocks.scale_mode = ScaleMode::blocks;
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("wgmma:128x256x128:64x256:4"), blocks), 0);  // producer at 24 registers
  // Where the stages leave no room, the vectors stay in global memory and the stages stay.
  const auto full = GemmConfig::parse("wgmma:128x256x64:64x256:4");
  GemmProblem three = n;
  for (const char* name : {"b1", "b2", "b3"})
    three.epilogue.vectors.push_back({.name = name, .ptr = 0x30000, .dtype = DType::f32, .axis = EpilogueAxis::column});
  EXPECT_EQ(ops::wgmma_tile_vectors(full, three), 0);
  EXPECT_EQ(ops::gemm_shared_bytes(full, three), ops::gemm_shared_bytes(full, plain));
  // The fixed form's bias.
  GemmProblem fixed = plain;
  fixed.epilogue.bias = 0x40000;
  fixed.epilogue.activation = Activation::gelu;
  EXPECT_EQ(ops::wgmma_tile_vectors(cfg, fixed), 1);
  EXPECT_EQ(ops::wgmma_tile_vectors(GemmConfig::parse("wgmma:128x256x64:64x256:4:sw"), fixed), 0);  // along the swapped rows
}

TEST(GemmConfig, KHalves) {
  auto c = GemmConfig::parse("wgmma:64x128x64:64x128:8:kh");
  EXPECT_TRUE(c.k_halves);
  EXPECT_EQ(c.to_string(), "wgmma:64x128x64:64x128:8:kh");
  EXPECT_EQ(c.threads(), 384);  // a producer and two consumers of the same tile
  GemmProblem p = problem(DType::bf16, MathMode::exact, 1000, 1000, 1000);
  p.b.layout = Layout::col_major;
  EXPECT_EQ(broken_rule("wgmma:64x128x64:64x128:8:kh", p), "");
  EXPECT_NE(broken_rule("wgmma:128x128x64:64x128:4:kh", p).find("WM must equal BM"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:64x128x64:64x128:8:k2:kh", p).find("K halves (kh) combine with neither"), std::string::npos);
  EXPECT_NE(broken_rule("mma:64x128x32:32x64:3:kh", p).find("kind wgmma only"), std::string::npos);
  // The second consumer's 64 x 128 accumulators (32 KB) pass through the D staging region, which is
  // as large: the same shared memory as two consumers of 64 rows each; without TMA stores of D the
  // region is there for the accumulators alone.
  const GemmProblem n = ops::normalized(p);
  EXPECT_EQ(ops::gemm_shared_bytes(c, n), ops::gemm_shared_bytes(GemmConfig::parse("wgmma:128x128x64:64x128:8"), n) -
                                              8 * 64 * 64 * 2);
  GemmProblem col_d = p;
  col_d.d.layout = Layout::col_major;
  EXPECT_EQ(ops::gemm_shared_bytes(c, ops::normalized(col_d)), ops::gemm_shared_bytes(c, n));
}

TEST(GemmConfig, TailSplit) {
  auto c = GemmConfig::parse("wgmma:128x256x64:64x256:4:t3");
  EXPECT_EQ(c.tail_split, 3);
  EXPECT_EQ(c.to_string(), "wgmma:128x256x64:64x256:4:t3");
  GemmProblem p = problem(DType::bf16, MathMode::exact, 12288, 4096, 4096);
  p.b.layout = Layout::col_major;
  EXPECT_EQ(broken_rule("wgmma:128x256x64:64x256:4:t3", p), "");
  EXPECT_NE(broken_rule("wgmma:128x256x64:64x256:4:t9", p).find("between t1 and t8"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:128x256x64:64x256:4:k2:t3", p).find("tail split (tS) combines with neither"), std::string::npos);
  EXPECT_NE(broken_rule("wgmma:128x128x64:128x128:4:pp:t2", p).find("tail split (tS) combines with neither"), std::string::npos);
  EXPECT_NE(broken_rule("mma:128x128x32:64x64:3:t2", p).find("kind wgmma only"), std::string::npos);
  EXPECT_THROW(GemmConfig::parse("wgmma:128x256x64:64x256:4:t2:t3"), InvalidArgument);
  // Measured slower on the H200: the heuristic never picks it.
  EXPECT_EQ(choose_gemm_config(p, "sm_90a", 132).tail_split, 1);
}

TEST(GemmConfig, Gemv) {
  const GemmConfig c = GemmConfig::parse("gemv:1x8x256:1x1:4");
  EXPECT_EQ(c.kind, GemmKind::gemv);
  EXPECT_EQ(c.threads(), 256);
  EXPECT_EQ(c.to_string(), "gemv:1x8x256:1x1:4");
  EXPECT_EQ(ops::gemm_shared_bytes(c, problem(DType::bf16)), 0);  // static shared memory only
  // B column-major (K-major): BK is 32 lanes of runs of at most 16 bytes.
  GemmProblem p = problem(DType::bf16, MathMode::exact, 1, 4096, 4096);
  p.b.layout = Layout::col_major;
  EXPECT_EQ(broken_rule("gemv:1x8x256:1x1:4", p), "");
  EXPECT_EQ(broken_rule("gemv:4x16x128:4x2:4", p), "");
  EXPECT_NE(broken_rule("gemv:1x8x512:1x1:4", p).find("BK=512 must be 32 lanes times a power-of-two run of at most 16 bytes (256 for bf16)"),
            std::string::npos);
  EXPECT_NE(broken_rule("gemv:1x8x96:1x1:4", p).find("power-of-two run"), std::string::npos);
  EXPECT_NE(broken_rule("gemv:1x64x256:1x8:4", p).find("more than 128 values per lane"), std::string::npos);
  EXPECT_NE(broken_rule("gemv:8x128x256:8x16:1", p).find("more than 64 sums per lane"), std::string::npos);
  // 8-bit inputs: per-tensor scales only, on Hopper's target; runs of 16 one-byte elements.
  GemmProblem e = p;
  e.a.dtype = e.b.dtype = DType::e4m3;
  e.d.dtype = DType::bf16;
  EXPECT_EQ(broken_rule("gemv:1x8x512:1x1:4", e), "");
  e.scale_mode = ScaleMode::blocks;
  EXPECT_NE(broken_rule("gemv:1x8x512:1x1:4", e).find("per-tensor scales only"), std::string::npos);
  // Loads: a run as one access where the operand aligns every run, else element by element.
  const GemmConfig k_major = GemmConfig::parse("gemv:1x8x256:1x1:4"), n_major = GemmConfig::parse("gemv:1x32x8:1x32:4");
  EXPECT_EQ(ops::gemv_run_b(k_major, p), 8);
  EXPECT_EQ(ops::gemm_variant(k_major, ops::normalized(p)).b_vec, 8);
  EXPECT_EQ(ops::gemm_variant(k_major, ops::normalized(p)).a_vec, 8);
  GemmProblem odd = p;
  odd.k = 4095;  // B's columns 8190 bytes apart
  EXPECT_EQ(ops::gemm_variant(k_major, ops::normalized(odd)).b_vec, 1);
  GemmProblem rows = problem(DType::bf16, MathMode::exact, 3, 4096, 4096);  // B row-major
  EXPECT_EQ(ops::gemv_run_b(n_major, rows), 8);
  EXPECT_EQ(ops::gemm_variant(n_major, ops::normalized(rows)).b_vec, 8);
  EXPECT_EQ(ops::gemm_variant(n_major, ops::normalized(rows)).a_vec, 1);  // A is read an element a row at a time
  rows.b.ptr += 2;
  EXPECT_EQ(ops::gemm_variant(n_major, ops::normalized(rows)).b_vec, 1);
  EXPECT_EQ(ops::gemv_run_b(GemmConfig::parse("gemv:1x4x32:1x4:4"), rows), 4);  // WN narrower than 16 bytes
  EXPECT_EQ(broken_rule("gemv:1x4x32:1x4:4", rows), "");
  // Swapped (sw): a matrix times a vector, N = 1, runs as D^T = B^T A^T, whose one row is the
  // vector and whose B is A^T (K-major for a row-major A).
  GemmProblem column = problem(DType::bf16, MathMode::exact, 4096, 1, 4096);
  column.b.layout = Layout::col_major;
  const GemmConfig swapped = GemmConfig::parse("gemv:1x8x256:1x1:4:sw");
  EXPECT_EQ(broken_rule("gemv:1x8x256:1x1:4:sw", column), "");
  const GemmProblem q = ops::wgmma_kernel_problem(swapped, ops::normalized(column));
  EXPECT_EQ(q.m, 1);
  EXPECT_EQ(q.n, 4096);
  EXPECT_EQ(q.b.layout, Layout::col_major);
  EXPECT_NE(broken_rule("gemv:1x32x8:1x32:4:sw", column).find("column-major (K-major) B"), std::string::npos);
}

TEST(GemmVariant, CopiesFollowAlignment) {
  auto p = problem(DType::bf16);
  const auto c = GemmConfig::parse("mma:128x128x32:64x32:3");
  EXPECT_EQ(ops::gemm_variant(c, ops::normalized(p)).a_vec, 16);
  p.k = p.n = 4095;  // rows of 8190 bytes: 2-byte copies only
  EXPECT_EQ(ops::gemm_variant(c, ops::normalized(p)).a_vec, 2);
  EXPECT_EQ(ops::gemm_variant(c, ops::normalized(p)).b_vec, 2);
  p.k = p.n = 4094;  // 8188 bytes: 4-byte cp.async
  EXPECT_EQ(ops::gemm_variant(c, ops::normalized(p)).a_vec, 4);
  p = problem(DType::bf16);
  p.a.ptr += 8;
  EXPECT_EQ(ops::gemm_variant(c, ops::normalized(p)).a_vec, 8);
}

}  // namespace
}  // namespace tilejit
