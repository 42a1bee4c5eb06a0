// The typed accessor for TILEJIT_* variables: defaults, parsing, and errors naming the variable.
#include "test_support.hpp"
#include "util/settings.hpp"

#include <tilejit/error.hpp>

namespace tilejit {
namespace {

using test::ScopedEnv;

TEST(Settings, ParsesSizes) {
  EXPECT_EQ(util::parse_size("2G"), 2ull << 30);
  EXPECT_EQ(util::parse_size("500M"), 500ull << 20);
  EXPECT_EQ(util::parse_size("64k"), 64ull << 10);
  EXPECT_EQ(util::parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(util::parse_size("1234"), 1234u);
  EXPECT_FALSE(util::parse_size("lots"));
  EXPECT_FALSE(util::parse_size("12Q"));
  EXPECT_FALSE(util::parse_size(""));
  EXPECT_FALSE(util::parse_size("99999999999999999999T"));
}

TEST(Settings, Defaults) {
  ScopedEnv home("HOME", "/home/someone");
  ::unsetenv("XDG_CACHE_HOME");
  for (const char* v : {"TILEJIT_CACHE_DIR", "TILEJIT_CACHE", "TILEJIT_CACHE_MAX_SIZE", "TILEJIT_ARCH", "TILEJIT_DEVICE",
                        "TILEJIT_LOG_LEVEL", "TILEJIT_GEMM_CONFIG", "TILEJIT_TEMPLATE_DIR", "TILEJIT_CUDA_HOME", "CUDA_HOME",
                        "TILEJIT_DUMP_DIR", "TILEJIT_ALWAYS_COMPILE", "TILEJIT_LIBCUDA", "TILEJIT_NVRTC_WARMUP", "TILEJIT_AUTOTUNE"})
    ::unsetenv(v);
  auto s = util::Settings::from_environment();
  EXPECT_EQ(s.cache_dir, "/home/someone/.cache/tilejit");
  EXPECT_EQ(s.cache, util::CacheMode::on);
  EXPECT_EQ(s.cache_max_size, 2ull << 30);
  EXPECT_FALSE(s.arch);
  EXPECT_EQ(s.device, 0);
  EXPECT_EQ(s.log_level, util::LogLevel::warn);
  EXPECT_EQ(s.cuda_home, "/usr/local/cuda");
  EXPECT_FALSE(s.always_compile);
  for (const auto& row : s.rows) EXPECT_FALSE(row.from_environment) << row.variable;
  EXPECT_TRUE(s.nvrtc_warmup);
  EXPECT_EQ(s.autotune, util::AutotuneMode::cached);
  EXPECT_GE(s.rows.size(), 14u);
}

TEST(Settings, XdgCacheHomeAndCudaHome) {
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  ScopedEnv cuda("CUDA_HOME", "/opt/cuda");
  ::unsetenv("TILEJIT_CACHE_DIR");
  ::unsetenv("TILEJIT_CUDA_HOME");
  auto s = util::Settings::from_environment();
  EXPECT_EQ(s.cache_dir, "/xdg/tilejit");
  EXPECT_EQ(s.cuda_home, "/opt/cuda");
  ScopedEnv tj("TILEJIT_CUDA_HOME", "/opt/tj-cuda");
  EXPECT_EQ(util::Settings::from_environment().cuda_home, "/opt/tj-cuda");
}

TEST(Settings, ReadsEveryVariable) {
  ScopedEnv a("TILEJIT_CACHE_DIR", "/tmp/c"), b("TILEJIT_CACHE", "readonly"), c("TILEJIT_CACHE_MAX_SIZE", "500M"),
      d("TILEJIT_ARCH", "sm_90a"), e("TILEJIT_DEVICE", "3"), f("TILEJIT_LOG_LEVEL", "debug"),
      g("TILEJIT_GEMM_CONFIG", "puzzle33"), h("TILEJIT_ALWAYS_COMPILE", "1"), i("TILEJIT_DUMP_DIR", "/tmp/d"),
      j("TILEJIT_PDL", "0"), k("TILEJIT_AUTOTUNE", "on");
  auto s = util::Settings::from_environment();
  EXPECT_EQ(s.cache_dir, "/tmp/c");
  EXPECT_EQ(s.cache, util::CacheMode::readonly);
  EXPECT_EQ(s.cache_max_size, 500ull << 20);
  EXPECT_EQ(s.arch, "sm_90a");
  EXPECT_EQ(s.device, 3);
  EXPECT_EQ(s.log_level, util::LogLevel::debug);
  EXPECT_EQ(s.gemm_config, "puzzle33");
  EXPECT_TRUE(s.always_compile);
  EXPECT_EQ(s.dump_dir, "/tmp/d");
  EXPECT_FALSE(s.programmatic_launch);
  EXPECT_EQ(s.autotune, util::AutotuneMode::on);
  int from_env = 0;
  for (const auto& row : s.rows) from_env += row.from_environment;
  EXPECT_EQ(from_env, 11);
  ScopedEnv off("TILEJIT_AUTOTUNE", "off");
  EXPECT_EQ(util::Settings::from_environment().autotune, util::AutotuneMode::off);
}

struct BadVar {
  const char* var;
  const char* value;
  const char* expected;
};
void PrintTo(const BadVar& b, std::ostream* os) { *os << b.var << "=" << b.value; }

class RejectsBadValue : public ::testing::TestWithParam<BadVar> {};
TEST_P(RejectsBadValue, NamingTheVariable) {
  const auto& p = GetParam();
  ScopedEnv env(p.var, p.value);
  try {
    util::Settings::from_environment();
    FAIL() << p.var << "=" << p.value << " accepted";
  } catch (const InvalidArgument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(p.var), std::string::npos) << msg;
    EXPECT_NE(msg.find(p.expected), std::string::npos) << msg;
  }
}
INSTANTIATE_TEST_SUITE_P(Values, RejectsBadValue,
                         ::testing::Values(BadVar{"TILEJIT_CACHE_MAX_SIZE", "lots", "500M, 2G"},
                                           BadVar{"TILEJIT_CACHE", "maybe", "on, off"},
                                           BadVar{"TILEJIT_ARCH", "hopper", "sm_80, sm_90"},
                                           BadVar{"TILEJIT_ARCH", "sm_9", "sm_80"},
                                           BadVar{"TILEJIT_DEVICE", "-1", "device ordinal"},
                                           BadVar{"TILEJIT_DEVICE", "one", "device ordinal"},
                                           BadVar{"TILEJIT_LOG_LEVEL", "loud", "trace, debug"},
                                           BadVar{"TILEJIT_ALWAYS_COMPILE", "sometimes", "1/on/true"},
                                           BadVar{"TILEJIT_PDL", "perhaps", "1/on/true"},
                                           BadVar{"TILEJIT_AUTOTUNE", "yes", "off (the heuristic only), cached"},
                                           BadVar{"TILEJIT_AUTOTUNE", "ON", "off (the heuristic only), cached"},
                                           BadVar{"TILEJIT_GEMM_CONFIG", "mma:12x", "KIND:BMxBNxBK:WMxWN:STAGES"},
                                           BadVar{"TILEJIT_GEMM_CONFIG", "wgmma:128x256x64:64x256:4:zz", "not an extra part"}),
                         [](const auto& param_info) { return "value" + std::to_string(param_info.index); });

TEST(Settings, ArchNames) {
  for (const char* ok : {"sm_80", "sm_86", "sm_90", "sm_90a", "sm_100a", "sm_120f"}) EXPECT_TRUE(util::is_valid_arch(ok)) << ok;
  for (const char* bad : {"sm_", "sm_9", "compute_90", "sm_90b", "90", "sm_70", "sm_1000"}) EXPECT_FALSE(util::is_valid_arch(bad)) << bad;
}

}  // namespace
}  // namespace tilejit
