// The parameter sizes a cubin records (read without a driver, so that loading a kernel makes no
// failing driver call), for kernels NVRTC compiles here, and what a damaged image gives.
#include "jit/cubin_info.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "test_support.hpp"
#include "util/settings.hpp"

#include <random>

namespace tilejit::jit {
namespace {

class CubinInfo : public ::testing::TestWithParam<std::string> {
 protected:
  CompiledKernel compile() {
    TemplateSet templates;
    NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
    CompileRequest req;
    req.program_name = "cubin_info";
    req.source = R"(
struct forty { char bytes[40]; };
struct alignas(16) sixteen { float v[4]; };
extern "C" __global__ void mixed(int a, double b, float* p, forty s, char c, sixteen q) {
  if (p) p[0] = a + b + s.bytes[3] + c + q.v[1];
}
extern "C" __global__ void none() {}
template <int N> __global__ void scaled(const float* x, float* y, unsigned long long n) {
  if (threadIdx.x < n) y[threadIdx.x] = N * x[threadIdx.x];
}
)";
    req.name_expressions = {"mixed", "none", "scaled<3>"};
    req.options = compiler.options(GetParam(), {}, false);
    return compiler.compile(req);
  }
};

TEST_P(CubinInfo, ParameterSizesOfCompiledKernels) {
  const CompiledKernel k = compile();
  ASSERT_EQ(k.lowered_names.size(), 3u);
  EXPECT_EQ(cubin_parameter_sizes(k.cubin, k.lowered_names[0]), (std::vector<std::size_t>{4, 8, 8, 40, 1, 16}));
  // No parameters: an empty list, or no answer (the caller then asks the driver); never a wrong one.
  const auto none = cubin_parameter_sizes(k.cubin, k.lowered_names[1]);
  if (none) {
    EXPECT_TRUE(none->empty());
  }
  EXPECT_EQ(cubin_parameter_sizes(k.cubin, k.lowered_names[2]), (std::vector<std::size_t>{8, 8, 8}));
  EXPECT_EQ(cubin_parameter_sizes(k.cubin, "no_such_kernel"), std::nullopt);
}

TEST_P(CubinInfo, DamagedImagesGiveNoAnswerOrStayInside) {
  const CompiledKernel k = compile();
  const std::string& symbol = k.lowered_names[0];
  EXPECT_EQ(cubin_parameter_sizes("", symbol), std::nullopt);
  EXPECT_EQ(cubin_parameter_sizes("not an ELF image at all, though long enough to have a header of sixty-four bytes", symbol),
            std::nullopt);
  // Every truncation: no answer, or the right one (the records can end before the image does).
  const std::vector<std::size_t> right{4, 8, 8, 40, 1, 16};
  for (std::size_t n = 0; n < k.cubin.size(); n += 7) {
    const auto got = cubin_parameter_sizes(std::string_view(k.cubin).substr(0, n), symbol);
    if (got) {
      EXPECT_EQ(*got, right) << n;
    }
  }
  // Random bytes written over the image: whatever the answer, the reader stays inside the image
  // (run under a sanitizer to see it) and returns.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bad = k.cubin;
    for (int i = 0; i < 8; ++i) bad[rng() % bad.size()] = static_cast<char>(rng());
    (void)cubin_parameter_sizes(bad, symbol);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, CubinInfo, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace tilejit::jit
