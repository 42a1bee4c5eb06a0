// Users' own kernels through the public API (include/tilejit/kernel.hpp), compile-only (no GPU):
// the examples, several name expressions in one program, the key following the program's headers
// and the library templates it includes, the disk cache serving a fresh runtime, compile errors
// with NVRTC's log, bad input refused before NVRTC runs.
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>

#include <fstream>
#include <set>

namespace tilejit {
namespace {

std::filesystem::path examples_dir() { return TILEJIT_EXAMPLES_DIR; }

Runtime runtime_for(const std::string& arch, const test::TempDir& cache) {
  test::ScopedEnv dir("TILEJIT_CACHE_DIR", cache.path().string());
  RuntimeOptions o;
  o.arch = arch;
  return Runtime(o);
}

class UserKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(UserKernels, TheExamplesCompile) {
  test::TempDir cache;
  RuntimeOptions o;
  o.arch = GetParam();
  test::ScopedEnv dir("TILEJIT_CACHE_DIR", cache.path().string());
  Runtime rt(o);
  struct Example {
    const char* file;
    std::vector<std::string> names;
  };
  const Example examples[] = {
      {"rms_norm.cu", {"rms_norm<1024, float>", "rms_norm<2048, __nv_bfloat16>", "rms_norm<512, __half>"}},
      {"rope.cu", {"rope<128, float>", "rope<64, __nv_bfloat16>"}},
      {"puzzle33_tensor_core.cu", {"puzzle33<128, 64, 32, 32, 32>"}},
  };
  for (const auto& e : examples) {
    const KernelSource src = KernelSource::from_file(examples_dir() / e.file);
    const CompiledKernelInfo info = rt.compile_program(src, e.names);
    EXPECT_GT(info.cubin_bytes, 0u) << e.file;
    EXPECT_EQ(info.arch, GetParam());
    EXPECT_FALSE(info.from_cache) << e.file;
    // One symbol per name expression, in order, from one compile.
    std::size_t commas = 0;
    for (char c : info.lowered_name) commas += c == ',';
    EXPECT_EQ(commas + 1, e.names.size()) << info.lowered_name;
  }
  EXPECT_EQ(rt.stats().compiles, 3u);
}

INSTANTIATE_TEST_SUITE_P(Archs, UserKernels, ::testing::Values("sm_80", "sm_90a"), [](const auto& p) { return p.param; });

const char* kScaleSource = R"(
#include "scale_params.h"
template <int Block, class T> __global__ void scale(T* y, const T* x, T a, int n) {
  const int i = blockIdx.x * Block + threadIdx.x;
  if (i < n) y[i] = a * x[i] + T(OFFSET);
}
)";

TEST(UserKernelsCache, TwoNameExpressionsCompileOnceAndEachKernelIsNamed) {
  test::TempDir cache;
  Runtime rt = runtime_for("sm_90a", cache);
  KernelSource src{.name = "scale", .text = kScaleSource, .headers = {{"scale_params.h", "#define OFFSET 1\n"}}};
  const auto info = rt.compile_program(src, {"scale<256, float>", "scale<128, double>"});
  EXPECT_EQ(rt.stats().compiles, 1u);
  EXPECT_NE(info.lowered_name.find("_Z5scaleILi256EfEvPT0_PKS0_S0_i"), std::string::npos) << info.lowered_name;
  EXPECT_NE(info.lowered_name.find("_Z5scaleILi128EdEvPT0_PKS0_S0_i"), std::string::npos) << info.lowered_name;
  // The same again is a memory hit; another set of names is another program.
  EXPECT_TRUE(rt.compile_program(src, {"scale<256, float>", "scale<128, double>"}).from_cache);
  EXPECT_FALSE(rt.compile_program(src, {"scale<256, float>"}).from_cache);
  EXPECT_EQ(rt.stats().compiles, 2u);
}

TEST(UserKernelsCache, AHeaderChangeMakesANewKernel) {
  test::TempDir cache;
  Runtime rt = runtime_for("sm_90a", cache);
  KernelSource src{.name = "scale", .text = kScaleSource, .headers = {{"scale_params.h", "#define OFFSET 1\n"}}};
  const auto first = rt.compile_program(src, {"scale<256, float>"});
  src.headers[0].text = "#define OFFSET 2\n";
  const auto second = rt.compile_program(src, {"scale<256, float>"});
  EXPECT_NE(first.key, second.key);
  EXPECT_FALSE(second.from_cache);
  src.options = {"-DUNUSED=1"};  // options are part of the key too
  EXPECT_NE(rt.compile_program(src, {"scale<256, float>"}).key, second.key);
  EXPECT_EQ(rt.stats().compiles, 3u);
}

TEST(UserKernelsCache, ALibraryTemplateChangeMakesANewKernel) {
  // A program that includes <tilejit/tile.cuh> is keyed by the content of it and everything it
  // includes: a copy of the templates with one of them changed gives another key.
  test::TempDir cache, templates;
  std::filesystem::copy(std::filesystem::path(TILEJIT_TEMPLATES_DIR), templates.path(), std::filesystem::copy_options::recursive);
  const KernelSource src = KernelSource::from_file(examples_dir() / "rms_norm.cu");
  std::string embedded_key;
  {
    Runtime rt = runtime_for("sm_90a", cache);
    embedded_key = rt.compile_program(src, {"rms_norm<1024, float>"}).key;
  }
  {
    std::ofstream(templates.path() / "tilejit" / "dtype.cuh", std::ios::app) << "\n// changed\n";
    test::ScopedEnv dir("TILEJIT_TEMPLATE_DIR", templates.path().string());
    Runtime rt = runtime_for("sm_90a", cache);
    const auto info = rt.compile_program(src, {"rms_norm<1024, float>"});
    EXPECT_NE(info.key, embedded_key);
    EXPECT_FALSE(info.from_cache);
  }
}

TEST(UserKernelsCache, AFreshRuntimeFindsItOnDisk) {
  test::TempDir cache;
  const KernelSource src = KernelSource::from_file(examples_dir() / "rope.cu");
  {
    Runtime rt = runtime_for("sm_90a", cache);
    EXPECT_FALSE(rt.compile_program(src, {"rope<128, float>"}).from_cache);
  }
  Runtime again = runtime_for("sm_90a", cache);
  const auto info = again.compile_program(src, {"rope<128, float>"});
  EXPECT_TRUE(info.from_cache);
  EXPECT_EQ(again.stats().compiles, 0u);
  EXPECT_EQ(again.stats().disk_hits, 1u);
}

TEST(UserKernelsErrors, ACompileErrorCarriesNvrtcsLog) {
  test::TempDir cache;
  Runtime rt = runtime_for("sm_90a", cache);
  KernelSource src{.name = "broken", .text = "__global__ void k(int* x) { x[0] = 1 +; }\n"};
  try {
    rt.compile_program(src, {"k"});
    FAIL() << "a syntax error compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("expected an expression"), std::string::npos) << e.log();
    EXPECT_EQ(e.program_name(), "broken");
    EXPECT_NE(e.instantiation().find("x[0] = 1 +;"), std::string::npos);  // the source as compiled
  }
  try {
    rt.compile_program(KernelSource{.name = "missing", .text = "__global__ void k() {}\n"}, {"not_there<1>"});
    FAIL() << "a name expression the source does not define compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("not_there"), std::string::npos) << e.log();
  }
}

TEST(UserKernelsErrors, BadInputIsRefusedBeforeCompiling) {
  test::TempDir cache;
  Runtime rt = runtime_for("sm_90a", cache);
  const KernelSource ok{.name = "k", .text = "__global__ void k() {}\n"};
  auto refused = [&](const KernelSource& s, const std::vector<std::string>& names, const char* expected) {
    try {
      rt.compile_program(s, names);
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused(KernelSource{.name = "empty", .text = "  \n"}, {"k"}, "is empty");
  refused(ok, {}, "at least one name expression");
  refused(ok, {"k", "k"}, "given twice");
  refused(KernelSource{.name = "h", .text = ok.text, .headers = {{"", "x"}}}, {"k"}, "a header without a name");
  EXPECT_THROW(KernelSource::from_file("/nonexistent/kernel.cu"), InvalidArgument);
  try {
    rt.compile_program(ok, {"k"}, "sm_9");
    ADD_FAILURE() << "arch sm_9 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sm_9"), std::string::npos);
  }
  EXPECT_EQ(rt.stats().compiles, 0u);  // nothing reached NVRTC
  EXPECT_GT(rt.compile_program(ok, {"k"}).cubin_bytes, 0u);  // the reference case compiles
}

// The built-in operations are clients of the same public kernel API: their plans hand out the
// Kernel they launch, compiled through the same key rules and caches, listed in the disk cache
// with their own family. Without a GPU the kernels compile; loading them says why it cannot.
TEST(BuiltInOps, PlansHandOutTheirKernelsThroughThePublicApi) {
  test::TempDir cache;
  Runtime rt = runtime_for("sm_90a", cache);
  ElementwisePlan ew = rt.plan_elementwise(
      {.body = "z = x * a + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}, .scalars = {{"a", 2.f}}});
  Kernel k = ew.kernel();
  EXPECT_NE(k.name().find("tilejit::elementwise_kernel<"), std::string::npos) << k.name();
  EXPECT_FALSE(k.symbol().empty());
  EXPECT_THROW(k.attributes(), DriverError);  // no device here: the kernel compiled, it cannot load
  EXPECT_EQ(rt.stats().compiles, 1u);
  Kernel narrow = ew.kernel(1);  // the variant for operands aligned to one element: its own program
  EXPECT_NE(narrow.name(), k.name());
  EXPECT_EQ(rt.stats().compiles, 2u);
  EXPECT_EQ(ew.kernel().name(), k.name());  // the plan keeps its kernels: no compile, no lookup
  EXPECT_EQ(rt.stats().compiles, 2u);
  EXPECT_THROW(ew.kernel(3), InvalidArgument);
  EXPECT_THROW(ew.kernel(32), InvalidArgument);

  GemmProblem p;
  p.m = p.n = 256, p.k = 128;
  p.a = {0x1000, DType::bf16, Layout::row_major};
  p.b = {0x100000, DType::bf16, Layout::col_major};
  p.d = {0x200000, DType::bf16, Layout::row_major};
  GemmPlan gp = rt.plan_gemm(p);
  Kernel gk = gp.kernel();
  EXPECT_NE(gk.name().find("tilejit::gemm_wgmma_kernel<"), std::string::npos) << gk.name();
  EXPECT_THROW(gk.attributes(), DriverError);

  // The disk cache lists them through the tooling API as any entry: families and name expressions.
  test::ScopedEnv dir("TILEJIT_CACHE_DIR", cache.path().string());
  std::set<std::string> families, names;
  for (const auto& e : tooling::CacheDirectory::open().list(true)) {
    ASSERT_TRUE(e.valid) << e.problem;
    families.insert(e.meta.family);
    for (const auto& n : e.meta.name_expressions) names.insert(n);
  }
  EXPECT_EQ(families, (std::set<std::string>{"elementwise", "gemm"}));
  EXPECT_TRUE(names.count(k.name()) && names.count(narrow.name()) && names.count(gk.name()));
}

// The tooling header's host side: an op inferred from its body, evaluated in float64.
TEST(Tooling, OpFromBodyAndItsHostReference) {
  const ElementwiseOp op = tooling::elementwise_op_from_body("t = x * a; y = t + sqrt(w)", DType::f32, DType::f64, {{"a", 3.f}});
  ASSERT_EQ(op.outputs.size(), 2u);
  EXPECT_EQ(op.outputs[0].name, "t");
  EXPECT_EQ(op.outputs[1].dtype, DType::f64);
  ASSERT_EQ(op.inputs.size(), 2u);
  EXPECT_EQ(op.inputs[0].name, "x");
  EXPECT_EQ(op.inputs[1].name, "w");
  const float x[2] = {1.5f, -2.f}, w[2] = {4.f, 9.f};
  double t[2] = {}, y[2] = {};
  tooling::ElementwiseReference(op).run({x, w}, {t, y}, 2);
  EXPECT_EQ(t[0], 4.5);
  EXPECT_EQ(y[1], -6.0 + 3.0);
  EXPECT_THROW(tooling::ElementwiseReference({.body = "y = x +", .inputs = {{"x", DType::f32}}, .outputs = {{"y", DType::f32}}}),
               InvalidArgument);
  EXPECT_EQ(tooling::parse_size("2G"), std::optional<std::uint64_t>(2ull << 30));
  EXPECT_FALSE(tooling::parse_size("2Q"));
}

}  // namespace
}  // namespace tilejit
