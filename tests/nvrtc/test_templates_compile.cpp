// Every device template compiles on its own under NVRTC, for sm_80 and sm_90a (no GPU needed).
#include "jit/nvrtc_compiler.hpp"
#include "test_support.hpp"
#include "util/settings.hpp"

#include <tilejit/error.hpp>

namespace tilejit::jit {
namespace {

class TemplatesCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(TemplatesCompile, GemmOperandPackingInstantiates) {
  TemplateSet templates;
  NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
  for (int bytes : {1, 2, 4})
    for (const std::string kernel : {"copy", "transpose", "transpose_narrow", "transpose_bytes"}) {
      if (kernel == "transpose_bytes" && bytes != 1) continue;  // 1-byte elements only, not a template
      CompileRequest req;
      req.program_name = "gemm_" + kernel + "_" + std::to_string(bytes);
      req.entry_template = "gemm_pack.cuh";
      req.source = "#include \"gemm_pack.cuh\"\n";
      req.name_expressions = {kernel == "transpose_bytes" ? std::string("tilejit::transpose_bytes_kernel")
                                                          : "tilejit::" + kernel + "_matrix_kernel<" + std::to_string(bytes) + ">"};
      req.options = compiler.options(GetParam());
      CompiledKernel k;
      ASSERT_NO_THROW(k = compiler.compile(req)) << kernel << " " << bytes;
      ASSERT_EQ(k.lowered_names.size(), 1u);
      EXPECT_FALSE(k.lowered_names[0].empty());
    }
}

TEST_P(TemplatesCompile, Alone) {
  TemplateSet templates;
  NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
  for (const std::string& path : templates.paths()) {
    CompileRequest req;
    req.program_name = "alone_" + path;
    for (auto& c : req.program_name)
      if (c == '/' || c == '.') c = '_';
    req.entry_template = path;
    req.source = "#include \"" + path + "\"\n";
    req.options = compiler.options(GetParam());
    CompiledKernel k;
    ASSERT_NO_THROW(k = compiler.compile(req)) << path << " for " << GetParam();
    EXPECT_FALSE(k.cubin.empty());
  }
}

TEST_P(TemplatesCompile, SeedVectorAddInstantiates) {
  TemplateSet templates;
  NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
  CompileRequest req{.program_name = "vector_add_1024", .entry_template = "examples/vector_add.cuh",
                     .source = "#include \"examples/vector_add.cuh\"\n", .name_expressions = {"tilejit::examples::vector_add<1024>"},
                     .options = compiler.options(GetParam())};
  auto k = compiler.compile(req);
  EXPECT_EQ(k.lowered_names, std::vector<std::string>{"_ZN7tilejit8examples10vector_addILi1024EEEvPKfS3_Pfy"});
  EXPECT_GT(k.cubin.size(), 1000u);
}

TEST_P(TemplatesCompile, ConversionRulesHoldAtCompileTime) {
  TemplateSet templates;
  NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
  const char* source = R"(#include "tilejit/dtype.cuh"
#include "tilejit/meta.cuh"
using namespace tilejit;
static_assert(is_same<compute_t<f16>, float>::value, "f16 computes in float");
static_assert(is_same<compute_t<bf16>, float>::value, "bf16 computes in float");
static_assert(is_same<compute_t<i8>, int>::value, "i8 computes in int");
static_assert(is_same<compute_t<u8>, int>::value, "u8 computes in int");
static_assert(is_same<compute_t<i64>, long long>::value, "i64 computes in long long");
static_assert(is_same<compute_t<double>, double>::value, "f64 computes in double");
static_assert(convert_to<i8>(300.7f) == 127, "float -> i8 saturates");
static_assert(convert_to<i8>(-300.0f) == -128, "float -> i8 saturates below");
static_assert(convert_to<i8>(-2.9f) == -2, "float -> int truncates toward zero");
static_assert(convert_to<u8>(-1.0) == 0, "double -> u8 saturates at 0");
static_assert(convert_to<i32>(3e10f) == 2147483647, "float -> i32 saturates");
static_assert(convert_to<i64>(-1e30) == -9223372036854775807ll - 1, "double -> i64 saturates");
static_assert(convert_to<u8>(300) == 44, "int -> u8 keeps the low 8 bits");
static_assert(convert_to<i8>(200) == -56, "int -> i8 wraps");
static_assert(convert_to<float>(3) == 3.0f, "int -> float");
)";
  CompileRequest req{.program_name = "conversion_rules", .entry_template = "tilejit/tile.cuh", .source = source,
                     .options = compiler.options(GetParam())};
  EXPECT_NO_THROW(compiler.compile(req));
}

TEST_P(TemplatesCompile, ShapeRulesAreStaticAssertsInWords) {
  TemplateSet templates;
  NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
  CompileRequest req{.program_name = "bad_tile", .entry_template = "tilejit/tile.cuh",
                     .source = "#include \"tilejit/tile.cuh\"\n"
                               "__global__ void k() { tilejit::tiles::tile<float, tilejit::tiles::shape<100>, "
                               "tilejit::tiles::block_layout<32, 4>> t; (void)t; }\n",
                     .options = compiler.options(GetParam())};
  try {
    compiler.compile(req);
    FAIL() << "a tile of 100 over 32 threads x 4 compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("the tile size must be a multiple of Threads * Vec"), std::string::npos) << e.log();
    EXPECT_EQ(e.program_name(), "bad_tile");
    EXPECT_FALSE(e.options().empty());
    EXPECT_NE(std::string(e.what()).find("bad_tile"), std::string::npos);
  }
}

// Every 8-bit float wgmma wrapper (m64nNk32, A and B each e4m3 or e5m2) instantiated in one kernel:
// ptxas checks each instruction's spelling and operand count. (wgmma exists on sm_90a only.)
TEST(TemplatesCompileSm90a, Fp8WgmmaWrappersInstantiate) {
  TemplateSet templates;
  NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
  std::string calls;
  for (int n : {16, 32, 64, 128, 192, 256})
    for (const char* type : {"e4m3", "e4m3_e5m2", "e5m2_e4m3", "e5m2"})
      calls += "  { float d[" + std::to_string(n / 2) + "] = {}; tilejit::sm90::wgmma_op<" + std::to_string(n) + ", tilejit::sm90::wgmma_" +
               type + ">::run<0, 0>(d, a, b, 1); for (float v : d) sink += v; }\n";
  CompileRequest req;
  req.program_name = "fp8_wgmma_wrappers";
  req.entry_template = "tilejit/wgmma_ops.cuh";
  req.source = "#include \"tilejit/wgmma_ops.cuh\"\n"
               "extern \"C\" __global__ void fp8_wgmma(unsigned long long a, unsigned long long b, float* out) {\n"
               "  float sink = 0;\n" +
               calls + "  *out = sink;\n}\n";
  req.options = compiler.options("sm_90a");
  CompiledKernel k;
  ASSERT_NO_THROW(k = compiler.compile(req));
  EXPECT_GT(k.cubin.size(), 10000u);
}

INSTANTIATE_TEST_SUITE_P(Archs, TemplatesCompile, ::testing::Values("sm_80", "sm_90a"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace tilejit::jit
