// Users' own kernels through the public API (include/tilejit/kernel.hpp), compile-only (no GPU):
// the examples, several name expressions in one program, the key following the program's headers
// and the library templates it includes, the disk cache serving a fresh runtime, compile errors
// with NVRTC's log, bad input refused before NVRTC runs.
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <fstream>

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

}  // namespace
}  // namespace tilejit
