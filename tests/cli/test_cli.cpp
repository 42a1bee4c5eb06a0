// The tilejit command-line tool: every command runs, --json parses, errors give clear exits.
#include "cli_runner.hpp"

#include <tilejit/tilejit.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

namespace tilejit {
namespace {

using Result = test::CliResult;
using test::run_cli;

bool has_gpu() { return Runtime().has_device(); }

// The CLI exits 2 (bad usage) for `args` and says every one of `expected`.
void expect_usage_error(const std::string& args, std::initializer_list<const char*> expected, const std::string& env = "") {
  Result r = run_cli(args, env);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  for (const char* e : expected) EXPECT_NE(r.out.find(e), std::string::npos) << args << ": no '" << e << "' in\n" << r.out;
}

TEST(Cli, HelpOnEveryCommand) {
  for (const char* c : {"", "info", "config", "demo", "elementwise", "compile", "compile elementwise"}) {
    Result r = run_cli(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0) << c << "\n" << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << c;
  }
}

TEST(Cli, DemoExitsZero) {
  Result r = run_cli("demo");
  EXPECT_EQ(r.code, 0) << r.out;
  if (!has_gpu()) {
    EXPECT_NE(r.out.find("elementwise_vector_add"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not launched:"), std::string::npos) << r.out;
  }
}

TEST(Cli, CompileElementwise) {
  Result r = run_cli("compile elementwise -e 'z = x * alpha + y' -s alpha=2 --dtype bf16 --arch sm_90a --source");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("arch      sm_90a"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("type_list<__nv_bfloat16, __nv_bfloat16>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("z = x * alpha + y;"), std::string::npos) << r.out;
  Result r80 = run_cli("compile elementwise -e 'y = relu(x)' --dtype i8 --out-dtype f32 --arch sm_80");
  EXPECT_EQ(r80.code, 0) << r80.out;
}

TEST(Cli, BadExpressionIsUsageError) {
  Result r = run_cli("compile elementwise -e 'z = x + {y}' --arch sm_90a");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("'{' is not allowed"), std::string::npos) << r.out;
  Result d = run_cli("compile elementwise -e 'z = x' --dtype f17 --arch sm_90a");
  EXPECT_EQ(d.code, 2) << d.out;
  EXPECT_NE(d.out.find("unknown dtype 'f17'"), std::string::npos) << d.out;
  // Checked before the device is looked for: the same answer with or without a GPU.
  Result rounds = run_cli("bench gemm --shapes 64x64x64 --rounds 0");
  EXPECT_EQ(rounds.code, 2) << rounds.out;
  EXPECT_NE(rounds.out.find("--rounds 0: expected 1 or more passes"), std::string::npos) << rounds.out;
  Result configs = run_cli("bench gemm --shapes 64x64x64 --config default,wgmma:64x128x64:64x128:8,wgmma:64x12");
  EXPECT_EQ(configs.code, 2) << configs.out;
  EXPECT_NE(configs.out.find("wgmma:64x12"), std::string::npos) << configs.out;
  expect_usage_error("bench gemm --shapes 64x64x64 --method waited", {"expected stream (back-to-back launches), graph"});
  expect_usage_error("bench gemm --shapes 64x64x64 --layout NT,TN:x", {"layout 'TN:x'", ":r or :c for D"});
  expect_usage_error("bench gemm --shapes 64x64x64 --rotate 0", {"--rotate '0': expected a count of copies from 1 to 64, or auto"});
  expect_usage_error("bench gemm --shapes 64x64x64 --rotate 2x", {"--rotate '2x'"});
  expect_usage_error("bench gemm --shapes 64x64x64 --rotate 65", {"--rotate '65'"});
}

TEST(Cli, BadSettingIsRefusedByName) {
  // TILEJIT_GEMM_CONFIG's syntax is checked when the settings are read, like every other variable.
  expect_usage_error("config", {"TILEJIT_GEMM_CONFIG='mma:12x' is not valid", "KIND:BMxBNxBK:WMxWN:STAGES"}, "TILEJIT_GEMM_CONFIG=mma:12x");
  expect_usage_error("compile gemm --dtype bf16 --arch sm_90a --m 64 --n 64 --k 64", {"TILEJIT_GEMM_CONFIG", "'xx' is not an extra part"},
                     "TILEJIT_GEMM_CONFIG=wgmma:128x256x64:64x256:4:xx");
  Result ok = run_cli("config --json", "TILEJIT_GEMM_CONFIG=puzzle33 TILEJIT_PDL=0");
  ASSERT_EQ(ok.code, 0) << ok.out;
  const auto j = nlohmann::json::parse(ok.out);
  int seen = 0;
  for (const auto& row : j)
    if (row["variable"] == "TILEJIT_GEMM_CONFIG" || row["variable"] == "TILEJIT_PDL") seen += row["source"] == "environment";
  EXPECT_EQ(seen, 2) << ok.out;
}

TEST(Cli, Puzzle33PresetRunsF32AsTf32) {
  // The preset is the seed's tf32 kernel: an f32 problem needs no --math tf32 for it.
  Result r = run_cli("compile gemm --dtype f32 --config puzzle33 --m 1024 --n 1024 --k 1024 --arch sm_90a");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("gemm_mma_f32tf32_NN_128x64x32_32x32_s1"), std::string::npos) << r.out;
  // Another mma configuration on exact f32 says how to ask for tf32.
  expect_usage_error("compile gemm --dtype f32 --config mma:128x128x32:64x64:3 --m 1024 --n 1024 --k 1024 --arch sm_90a", {"--math tf32"});
}

// 8-bit inputs on the command line: D defaults to bf16, B may be the other 8-bit type, sm_90a only.
TEST(Cli, EightBitGemm) {
  Result r = run_cli("compile gemm --dtype e4m3 --b-dtype e5m2 --m 1024 --n 1024 --k 1024 --layout TN --arch sm_90a --source");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("gemm_wgmma_e4m3xe5m2_NT_"), std::string::npos) << r.out;  // B transposed into a K-major copy
  EXPECT_NE(r.out.find("using TA = __nv_fp8_e4m3; using TB = __nv_fp8_e5m2; using TC = __nv_bfloat16; using TD = __nv_bfloat16;"),
            std::string::npos)
      << r.out;
  expect_usage_error("compile gemm --dtype e4m3 --m 64 --n 64 --k 64 --arch sm_80", {"8-bit float inputs (e4m3 x e4m3)", "the target is sm_80"});
  expect_usage_error("compile gemm --dtype bf16 --out-dtype e4m3 --m 64 --n 64 --k 64 --arch sm_90a",
                     {"GEMM D: dtype e4m3 is not supported", "e4m3 or e5m2 with 8-bit inputs"});
  Result d8 = run_cli("compile gemm --dtype e4m3 --out-dtype e4m3 --m 1024 --n 1024 --k 1024 --layout NT --arch sm_90a --source");
  ASSERT_EQ(d8.code, 0) << d8.out;
  EXPECT_NE(d8.out.find("using TD = __nv_fp8_e4m3;"), std::string::npos) << d8.out;
  expect_usage_error("compile gemm --dtype e4m3 --b-dtype bf16 --m 64 --n 64 --k 64 --arch sm_90a", {"A is e4m3 and B is bf16"});
  expect_usage_error("bench gemm --dtype e4m3 --shapes 64x64x64 --lt-accum slow", {"--lt-accum 'slow': expected fast or precise"});
}

// An epilogue body on the command line: its operands are inferred (vectors by their index, inputs,
// outputs), it compiles for sm_90a without a GPU, and a bad body or a bad combination is a usage
// error naming the problem, for compile gemm and bench gemm alike (before any device is looked for).
TEST(Cli, GemmEpilogueBody) {
  Result r = run_cli("compile gemm --m 512 --n 512 --k 256 --layout NT --arch sm_90a --source "
                     "-e 'd = gelu(acc + bias[n]) * scale[m] + residual; pre = acc * s' --scalar s=0.5");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("_epi"), std::string::npos) << r.out;
  // The per-column vector through the tile's shared-memory copy where the kernel stages one.
  EXPECT_NE(r.out.find("tilejit::epilogue_column_vector<__nv_bfloat16, INSIDE, (Cfg::TILE_VECTORS > 0)> bias"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("enum : int { TILE_VECTORS = 1 };"), std::string::npos) << r.out;
  // The row-major residual (slot 2, after the two vectors) may be staged in D's staging buffers.
  EXPECT_NE(r.out.find("enum : int { STAGED_INPUT_SLOT = 2 };"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("STAGED_INPUT ? tilejit::staged_input<__nv_bfloat16>(__tile, __r, __c)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tilejit::epilogue_vector<__nv_bfloat16, INSIDE> scale"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tilejit::epilogue_store<__nv_bfloat16, true>(__e.out[0]"), std::string::npos) << r.out;
  // Whether the vectors fit is the kernel's question (its D, staged through TMA), as for the shared
  // memory the plan allocates: a swapped 128x256 kernel of a column-major D has room for one of the
  // two per-row vectors' buffers beside its stages and D's staging, not for both.
  Result sw = run_cli("compile gemm --m 4096 --n 4096 --k 4096 --layout NN:c --arch sm_90a -c wgmma:128x256x64:64x256:4:sw --source "
                      "-e 'd = acc * s1[m] + s2[m]'");
  ASSERT_EQ(sw.code, 0) << sw.out;
  EXPECT_NE(sw.out.find("enum : int { TILE_VECTORS = 0 };"), std::string::npos) << sw.out;
  expect_usage_error("compile gemm --arch sm_90a -e 'd = acc + bias[k]'", {"per-column vector", "bias[n]"});
  expect_usage_error("bench gemm -e 'd = acc + bias[k]' --shapes 128x128x128", {"per-column vector"});
  expect_usage_error("compile gemm --arch sm_90a -e 'd = acc * s' --scalar s", {"expected NAME=VALUE"});
  expect_usage_error("compile gemm --arch sm_90a -e 'acc = d'", {"'acc' is not an output"});
  expect_usage_error("compile gemm --arch sm_90a --bias -e 'd = acc'", {"not --bias / --act"});
}

TEST(Cli, CompileKernelOfYourOwn) {
  test::TempDir cache;
  const std::string env = "TILEJIT_CACHE_DIR=" + cache.path().string();
  const std::string file = std::string(TILEJIT_EXAMPLES_DIR) + "/rms_norm.cu";
  Result r = run_cli("compile kernel " + file + " --name 'rms_norm<1024, float>' --name 'rms_norm<2048, __nv_bfloat16>' --arch sm_90a", env);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("kernels   rms_norm<1024, float>, rms_norm<2048, __nv_bfloat16>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("_Z8rms_normILi1024EfEvPKT0_S2_PS0_xf"), std::string::npos) << r.out;
  Result again = run_cli("compile kernel " + file + " --name 'rms_norm<1024, float>' --name 'rms_norm<2048, __nv_bfloat16>' --arch sm_90a --json", env);
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_TRUE(nlohmann::json::parse(again.out)["from_cache"].get<bool>());
  Result list = run_cli("cache list --json", env);
  ASSERT_EQ(list.code, 0) << list.out;
  const auto entries = nlohmann::json::parse(list.out);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["family"], "user");
  EXPECT_EQ(entries[0]["name_expressions"].size(), 2u);
  expect_usage_error("compile kernel /nonexistent.cu --name k --arch sm_90a", {"cannot be read"}, env);
  expect_usage_error("compile kernel " + file + " --arch sm_90a", {"--name is required"}, env);
  test::TempDir src;
  const auto bad = src.path() / "bad.cu";
  std::ofstream(bad) << "__global__ void k(int* x) { x[0] = 1 +; }\n";
  Result err = run_cli("compile kernel " + bad.string() + " --name k --arch sm_90a", env);
  EXPECT_EQ(err.code, 1) << err.out;
  EXPECT_NE(err.out.find("expected an expression"), std::string::npos) << err.out;  // NVRTC's log
}

TEST(Cli, InfoJsonParses) {
  Result r = run_cli("info --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["version"], kVersionString);
  EXPECT_TRUE(j["devices"].is_array());
  EXPECT_TRUE(j.contains("nvrtc_version"));
  EXPECT_TRUE(j.contains("cache_dir"));
  if (!has_gpu()) {
    EXPECT_TRUE(j.contains("no_gpu_reason"));
  }
  Result text = run_cli("info");
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("NVRTC"), std::string::npos);
}

TEST(Cli, ConfigListsEveryVariable) {
  Result r = run_cli("config --json", "TILEJIT_CACHE_MAX_SIZE=500M");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> vars;
  for (const auto& row : j) {
    vars.insert(row["variable"].get<std::string>());
    if (row["variable"] == "TILEJIT_CACHE_MAX_SIZE") {
      EXPECT_EQ(row["value"], "500M");
      EXPECT_EQ(row["source"], "environment");
    }
  }
  for (const char* v : {"TILEJIT_CACHE_DIR", "TILEJIT_CACHE", "TILEJIT_CACHE_MAX_SIZE", "TILEJIT_ARCH", "TILEJIT_DEVICE",
                        "TILEJIT_LOG_LEVEL", "TILEJIT_GEMM_CONFIG", "TILEJIT_TEMPLATE_DIR", "TILEJIT_CUDA_HOME",
                        "TILEJIT_DUMP_DIR", "TILEJIT_ALWAYS_COMPILE", "TILEJIT_LIBCUDA", "TILEJIT_NVRTC_WARMUP", "TILEJIT_AUTOTUNE"})
    EXPECT_TRUE(vars.count(v)) << v;
  Result bad = run_cli("config", "TILEJIT_CACHE_MAX_SIZE=lots");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("TILEJIT_CACHE_MAX_SIZE='lots' is not valid"), std::string::npos) << bad.out;
}

// `tilejit tune gemm`: bad options are usage errors with or without a GPU; without one it says why
// it cannot tune.
TEST(Cli, TuneGemmRefusesBadInputAndSaysWhyNot) {
  expect_usage_error("tune gemm --rounds 0", {"--rounds 0: expected 1 to 100"});
  expect_usage_error("tune gemm --candidates wgmma:12x", {"KIND:BMxBNxBK:WMxWN:STAGES"});
  expect_usage_error("tune gemm --shapes 64x64", {"--shapes: '64x64' is not MxNxK"});
  expect_usage_error("tune gemm --layout QT", {"expected two letters of N"});
  expect_usage_error("tune gemm", {"TILEJIT_AUTOTUNE='maybe' is not valid: expected off (the heuristic only), cached"},
                     "TILEJIT_AUTOTUNE=maybe");
  Result help = run_cli("tune gemm --help");
  EXPECT_EQ(help.code, 0) << help.out;
  EXPECT_NE(help.out.find("--compare"), std::string::npos) << help.out;
  if (!has_gpu()) {
    Result r = run_cli("tune gemm --shapes 256x256x256");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("tilejit tune gemm: cannot launch"), std::string::npos) << r.out;
  }
}

// One GEMM on several devices at once (issue 18): bad device lists are usage errors; without a GPU
// it says which device cannot run and why; on a GPU (device 0 twice where there is one) it checks
// every device's D and reports the aggregate rate.
TEST(Cli, BenchDevicesChecksOrSaysWhyNot) {
  expect_usage_error("bench devices --devices 0,x", {"--devices: 'x' is not a device ordinal"});
  expect_usage_error("bench devices --devices 0 --seconds 0", {"--seconds must be positive"});
  if (!has_gpu()) {
    Result r = run_cli("bench devices --devices 0,1 --m 256 --n 256 --k 256");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("tilejit bench devices: device 0:"), std::string::npos) << r.out;
    return;
  }
  Result r = run_cli("bench devices --devices 0,0 --m 1024 --n 1024 --k 1024 --seconds 0.1 --rounds 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("devices together"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
}

TEST(Cli, ElementwiseRunChecksOrSaysWhyNot) {
  Result r = run_cli("elementwise -e 'z = x * alpha + y' -s alpha=0.5 --n 1000003 --check");
  if (has_gpu()) {
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
    Result mis = run_cli("elementwise -e 's = a + b; d = a - b' --dtype f16 --n 4099 --offset 3 --check");
    EXPECT_EQ(mis.code, 0) << mis.out;
    Result bench = run_cli("elementwise -e 'z = x + y' --n 16777216 --bench --runs 5");
    EXPECT_EQ(bench.code, 0) << bench.out;
    EXPECT_NE(bench.out.find("device copy"), std::string::npos) << bench.out;
  } else {
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("cannot launch"), std::string::npos) << r.out;
  }
}

TEST(Cli, DumpDirGetsSourceAndCubin) {
  test::TempDir dir;
  Result r = run_cli("compile elementwise -e 'z = x' --arch sm_90a", "TILEJIT_CACHE=off TILEJIT_DUMP_DIR=" + dir.path().string());
  ASSERT_EQ(r.code, 0) << r.out;
  int cu = 0, cubin = 0, options = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    auto name = e.path().filename().string();
    cu += name.ends_with(".cu");
    cubin += name.ends_with(".cubin");
    options += name.ends_with(".options.txt");
  }
  EXPECT_EQ(cu, 1);
  EXPECT_EQ(cubin, 1);
  EXPECT_EQ(options, 1);
  // TILEJIT_ALWAYS_COMPILE also turns NVRTC's own cache off, so that every compile is one.
  test::TempDir always;
  Result a = run_cli("compile elementwise -e 'z = x' --arch sm_90a", "TILEJIT_ALWAYS_COMPILE=1 TILEJIT_DUMP_DIR=" + always.path().string());
  ASSERT_EQ(a.code, 0) << a.out;
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(always.path()))
    if (e.path().filename().string().ends_with(".options.txt")) {
      std::ifstream f(e.path());
      const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      EXPECT_NE(text.find("--no-cache"), std::string::npos) << text;
      ++checked;
    }
  EXPECT_EQ(checked, 1);
}

}  // namespace
}  // namespace tilejit
