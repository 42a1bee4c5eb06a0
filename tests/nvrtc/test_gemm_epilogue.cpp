// GEMM epilogues as bodies (GemmEpilogue::body), without a GPU: bad bodies and bad operands are
// refused with InvalidArgument before anything compiles; 500 random accepted bodies generate code
// that NVRTC compiles for sm_90a and sm_80; a body compiles into every GEMM kind (simt, mma, wgmma
// with D through TMA, swapped decode shapes).
#include "ops/gemm/epilogue.hpp"
#include "ops/gemm/gemm_internal.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <random>
#include <utility>
#include <vector>

namespace tilejit {
namespace {

// A 512^3 bf16 problem (stand-in pointers) with a per-column vector `bias`, a per-row vector
// `scale`, an M x N input `residual`, an output `pre` beside d and a scalar `s`.
GemmProblem epilogue_problem(const std::string& body) {
  GemmProblem p;
  p.m = p.n = p.k = 512;
  p.a = {1 << 20, DType::bf16, Layout::row_major};
  p.b = {1 << 21, DType::bf16, Layout::col_major};
  p.d = {1 << 22, DType::bf16, Layout::row_major};
  p.epilogue.body = body;
  p.epilogue.vectors = {{.name = "bias", .ptr = 1 << 23, .dtype = DType::bf16, .axis = EpilogueAxis::column},
                        {.name = "scale", .ptr = 1 << 24, .dtype = DType::f32, .axis = EpilogueAxis::row}};
  p.epilogue.inputs = {{.name = "residual", .matrix = {1 << 25, DType::f16, Layout::col_major}}};
  p.epilogue.outputs = {{.name = "pre", .matrix = {1 << 26, DType::f32, Layout::row_major}}};
  p.epilogue.scalars = {{"s", 0.5f}};
  return p;
}

Runtime runtime_for(const std::string& arch, const test::TempDir& cache) {
  test::ScopedEnv dir("TILEJIT_CACHE_DIR", cache.path().string());
  RuntimeOptions o;
  o.arch = arch;
  return Runtime(o);
}

void expect_refused(Runtime& rt, const GemmProblem& p, const std::string& expected) {
  try {
    rt.compile_gemm(p);
    ADD_FAILURE() << "accepted: '" << p.epilogue.body << "'; expected: " << expected;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << "body '" << p.epilogue.body << "': " << e.what();
  }
}

TEST(GemmEpilogue, BadBodiesAreRefusedBeforeCompiling) {
  test::TempDir cache;
  Runtime rt = runtime_for("sm_90a", cache);
  struct Bad {
    const char* body;
    const char* expected;
  };
  const Bad bad[] = {
      {"d = acc + bias[k]; pre = acc", "its index is n alone"},
      {"d = acc + bias; pre = acc", "read it as bias[n]"},
      {"d = acc + scale[n]; pre = acc", "its index is m alone"},
      {"d = acc + bias[m]; pre = acc", "its index is n alone"},
      {"d = acc + bias[n + 1]; pre = acc", "its index is n alone"},
      {"d = acc + bias[]; pre = acc", "its index is n alone"},
      {"d = acc + residual[n]; pre = acc", "not indexed"},
      {"d = acc[m]; pre = acc", "not indexed"},
      {"d = acc + s[n]; pre = acc", "not indexed"},
      {"acc = 1.0f; d = acc; pre = acc", "'acc' is not an output"},
      {"c = acc; d = acc; pre = acc", "'c' is not an output"},
      {"m = 1; d = acc; pre = acc", "'m' is not an output"},
      {"residual = acc; d = acc; pre = acc", "'residual' is not an output"},
      {"d = acc % 2; pre = acc", "'%' needs integer operands"},
      {"d = acc << 1; pre = acc", "'<<' needs integer operands"},
      {"d = acc & 1; pre = acc", "'&' needs integer operands"},
      {"d = ~acc; pre = acc", "'~' needs an integer operand"},
      {"d %= 2; pre = acc", "'%=' needs an integer output"},
      {"d = foo(acc); pre = acc", "unknown identifier 'foo'"},
      {"d = acc + k; pre = acc", "unknown identifier 'k'"},
      {"d = ; pre = acc", "unexpected ';'"},
      {"d = acc +; pre = acc", "unexpected ';'"},
      {"d = (acc; pre = acc", "to close '('"},
      {"d = acc", "output 'pre' is never assigned"},
      {"pre = acc", "output 'd' is never assigned"},
      {"d = acc; q = acc; pre = acc", "'q' is not a declared output"},
      {"d = acc # 1; pre = acc", "'#' is not allowed"},
      {"d = acc; { pre = acc; }", "'{' is not allowed"},
      {"d = sqrt(acc, 2.0f); pre = acc", "'sqrt' takes 1 argument"},
      {"d = gelu; pre = acc", "must be called"},
      {"d = m(acc); pre = acc", "not a function"},
      {"d = acc++; pre = acc", "'++' is not allowed"},
      {"d = \"x\"; pre = acc", "string and character literals"},
      {"d = acc.x; pre = acc", "'.' is not allowed"},
      {"d = acc->x; pre = acc", "'->' is not allowed"},
      {"d = (pre = acc); pre = acc", "unexpected '='"},
      {"", "vectors, inputs, outputs and scalars are read by a body"},
  };
  for (const auto& b : bad) expect_refused(rt, epilogue_problem(b.body), b.expected);
  EXPECT_GE(std::size(bad), 30u);

  // Bad operands, with a good body.
  const std::string good = "d = gelu(acc + bias[n]) * scale[m] + residual; pre = acc * s";
  auto with = [&](auto change) {
    GemmProblem p = epilogue_problem(good);
    change(p);
    return p;
  };
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.vectors[0].name = "acc"; }), "the body's own");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.vectors[1].name = "bias"; }), "declared twice");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.scalars[0].name = "float"; }), "reserved");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.inputs[0].name = "2x"; }), "not a valid name");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.bias = 1 << 27; }), "write the bias and the activation in it");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.activation = Activation::relu; }), "write the bias and the activation in it");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.vectors[0].dtype = DType::i32; }), "vector 'bias': dtype i32");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.vectors[0].ptr = 0; }), "vector 'bias': null pointer");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.vectors[0].ptr = (1 << 23) + 1; }), "not aligned");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.inputs[0].matrix.ld = 100; }), "leading dimension 100");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.outputs[0].matrix.ptr = 0; }), "null pointer");
  expect_refused(rt, with([](GemmProblem& p) {
                   for (int i = 0; i < 3; ++i) p.epilogue.outputs.push_back({"o" + std::to_string(i), {1u << 27, DType::f32, Layout::row_major}});
                 }),
                 "outputs beside d, at most 3");
  expect_refused(rt, with([](GemmProblem& p) { p.epilogue.scalars[0].value = ScalarValue(std::int32_t{1}); p.epilogue.body = "d = acc % s; pre = acc"; }),
                 "'%' needs integer operands");
  EXPECT_EQ(rt.stats().compiles, 0u);  // nothing reached NVRTC
  EXPECT_GT(rt.compile_gemm(epilogue_problem(good)).cubin_bytes, 0u);  // the reference case compiles
}

// Runtime::gemm keeps one plan per signature (body, names, dtypes, layouts): a later call with the same
// body but other operands launches with that call's pointers, leading dimensions, batch strides and
// scalar values, each checked, not the ones the plan was made with.
TEST(GemmEpilogue, RuntimeGemmTakesEachCallsOperands) {
  const GemmProblem planned = ops::normalized(epilogue_problem("d = gelu(acc + bias[n]) * scale[m] + residual; pre = acc * s"));
  GemmProblem call = planned;
  call.a.ptr += 1 << 12, call.d.ptr += 1 << 12;
  call.alpha = 2.f;
  call.epilogue.vectors[0].ptr = 7 << 23;
  call.epilogue.vectors[1].ptr = 9 << 24, call.epilogue.vectors[1].batch_stride = 512;
  call.epilogue.inputs[0].matrix.ptr = 3 << 25, call.epilogue.inputs[0].matrix.ld = 640;
  call.epilogue.outputs[0].matrix.ptr = 5 << 26;
  call.epilogue.scalars[0].value = -3.f;
  const GemmProblem p = ops::problem_for_call(planned, call);
  EXPECT_EQ(p.a.ptr, call.a.ptr);
  EXPECT_EQ(p.d.ptr, call.d.ptr);
  EXPECT_EQ(p.alpha, 2.f);
  EXPECT_EQ(p.epilogue.vectors[0].ptr, call.epilogue.vectors[0].ptr);
  EXPECT_EQ(p.epilogue.vectors[1].ptr, call.epilogue.vectors[1].ptr);
  EXPECT_EQ(p.epilogue.vectors[1].batch_stride, 512);
  EXPECT_EQ(p.epilogue.inputs[0].matrix.ptr, call.epilogue.inputs[0].matrix.ptr);
  EXPECT_EQ(p.epilogue.inputs[0].matrix.ld, 640);
  EXPECT_EQ(p.epilogue.outputs[0].matrix.ptr, call.epilogue.outputs[0].matrix.ptr);
  EXPECT_EQ(p.epilogue.scalars[0].value.as_double(), -3.0);
  const ops::EpilogueParams q = ops::epilogue_params(p);
  EXPECT_EQ(reinterpret_cast<CUdeviceptr>(q.in[0].ptr), call.epilogue.vectors[0].ptr);
  EXPECT_EQ(reinterpret_cast<CUdeviceptr>(q.in[2].ptr), call.epilogue.inputs[0].matrix.ptr);
  EXPECT_EQ(q.in[2].ld, 640);
  EXPECT_EQ(reinterpret_cast<CUdeviceptr>(q.out[0].ptr), call.epilogue.outputs[0].matrix.ptr);
  EXPECT_EQ(q.scalar[0].f32, -3.f);
  // A bad operand of a call is refused by name, as when a plan is made.
  auto refused = [&](auto change, const std::string& expected) {
    GemmProblem bad = call;
    change(bad);
    try {
      (void)ops::problem_for_call(planned, bad);
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused([](GemmProblem& b) { b.epilogue.vectors[1].ptr = 0; }, "vector 'scale': null pointer");
  refused([](GemmProblem& b) { b.epilogue.inputs[0].matrix.ld = 100; }, "leading dimension 100");
  refused([](GemmProblem& b) { b.epilogue.outputs[0].matrix.ptr += 2; }, "not aligned");
}

// ---- random bodies --------------------------------------------------------------------------

// A random expression over every name the test problem declares, the operators and functions of
// the language; floating-point throughout (integers only through m and n, converted).
class BodyGenerator {
 public:
  explicit BodyGenerator(std::uint64_t seed) : rng_(seed) {}
  std::string body() { return "d = " + expr(4) + "; pre = " + expr(3); }

 private:
  std::string expr(int depth) {
    if (depth == 0 || pick(4) == 0) return leaf();
    switch (pick(6)) {
      case 0: return "(" + expr(depth - 1) + " " + one_of({"+", "-", "*", "/"}) + " " + expr(depth - 1) + ")";
      case 1: return one_of({"gelu", "silu", "relu", "sigmoid", "tanh", "exp", "abs", "sqrt", "erf", "log1p"}) + std::string("(") +
                     expr(depth - 1) + ")";
      case 2: return one_of({"min", "max", "fmin", "pow", "fmod", "atan2"}) + std::string("(") + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 3: return "(" + expr(depth - 1) + " > " + expr(depth - 1) + " ? " + expr(depth - 1) + " : " + expr(depth - 1) + ")";
      case 4: return "-(" + expr(depth - 1) + ")";
      default: return "fma(" + expr(depth - 1) + ", " + expr(depth - 1) + ", " + expr(depth - 1) + ")";
    }
  }
  std::string leaf() {
    return one_of({"acc", "c", "alpha", "beta", "bias[n]", "scale[m]", "residual", "s", "float(m)", "float(n % 7)", "0.5f", "2.0f",
                   "1e-3f", "3"});
  }
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  std::string one_of(std::initializer_list<const char*> xs) { return *(xs.begin() + pick(static_cast<int>(xs.size()))); }
  std::mt19937_64 rng_;
};

// epilogue_reads_c scans a body on every launch instead of tokenizing it: it agrees with the
// tokenizer on random bodies and on the cases a scan could get wrong (c inside names and literals).
TEST(GemmEpilogue, ReadsCAgreesWithTheTokenizer) {
  auto by_tokens = [](const std::string& body) {
    for (const auto& t : ops::tokenize_body(body, /*indexing=*/true))
      if (t.kind == ops::BodyToken::Kind::identifier && t.text == "c") return true;
    return false;
  };
  std::vector<std::string> bodies = {"d = c",           "d = acc + c",       "d = (c)",         "d = acc",  "d = c1 + acc",
                                     "d = 1e-5f * acc", "d = 0x1cp+3 * acc", "d = acc * .5e+2", "d = _c",   "d = c_ + 1",
                                     "d = acc; pre = c", "d = beta*c",       "d = scale[m]*c",  "d = 2.c0", "d = abc + cc"};
  BodyGenerator gen(20261202);
  for (int i = 0; i < 2000; ++i) bodies.push_back(gen.body());
  int with_c = 0;
  for (const auto& body : bodies) {
    GemmEpilogue e;
    e.body = body;
    bool expected;
    try {
      expected = by_tokens(body);
    } catch (const InvalidArgument&) {
      continue;  // not a body (e.g. "2.c0"): parse_epilogue refuses it, whatever the scan says
    }
    ASSERT_EQ(ops::epilogue_reads_c(e), expected) << body;
    with_c += expected;
  }
  EXPECT_GT(with_c, 100);
}

// Runtime::gemm finds its plan by epilogue_signature_hash: every name, dtype, axis, layout and scalar
// type changes it, and only those (pointers and values do not).
TEST(GemmEpilogue, SignatureHashSeparatesWhatMakesAKernel) {
  const GemmEpilogue base = epilogue_problem("d = gelu(acc + bias[n]) * scale[m] + residual; pre = acc * s").epilogue;
  std::vector<GemmEpilogue> variants;
  auto vary = [&](auto change) {
    GemmEpilogue e = base;
    change(e);
    variants.push_back(e);
  };
  vary([](GemmEpilogue& e) { e.body += " "; });
  vary([](GemmEpilogue& e) { e.vectors[0].name = "bias2"; });
  vary([](GemmEpilogue& e) { e.vectors[0].dtype = DType::f32; });
  vary([](GemmEpilogue& e) { e.vectors[0].axis = EpilogueAxis::row; });
  vary([](GemmEpilogue& e) { e.inputs[0].matrix.layout = Layout::row_major; });
  vary([](GemmEpilogue& e) { e.inputs[0].matrix.dtype = DType::bf16; });
  vary([](GemmEpilogue& e) { e.outputs[0].matrix.dtype = DType::bf16; });
  vary([](GemmEpilogue& e) { e.scalars[0].value = ScalarValue(0.5); });  // f64 instead of f32
  vary([](GemmEpilogue& e) { std::swap(e.vectors[0], e.vectors[1]); });
  vary([](GemmEpilogue& e) {  // the same name as an input instead of an output
    e.inputs.push_back({e.outputs[0].name, e.outputs[0].matrix});
    e.outputs.clear();
  });
  std::vector<std::uint64_t> hashes = {ops::epilogue_signature_hash(base)};
  for (const auto& v : variants) hashes.push_back(ops::epilogue_signature_hash(v));
  for (std::size_t i = 0; i < hashes.size(); ++i)
    for (std::size_t j = i + 1; j < hashes.size(); ++j) EXPECT_NE(hashes[i], hashes[j]) << i << " " << j;
  GemmEpilogue moved = base;  // other pointers, leading dimensions, batch strides and scalar values
  moved.vectors[0].ptr += 64, moved.vectors[1].batch_stride = 512, moved.inputs[0].matrix.ptr += 64;
  moved.inputs[0].matrix.ld = 1024, moved.outputs[0].matrix.ptr += 64, moved.scalars[0].value = -2.f;
  EXPECT_EQ(ops::epilogue_signature_hash(moved), hashes[0]);
}

class GemmEpilogueArch : public ::testing::TestWithParam<std::string> {};

// Each accepted body's generated epilogue, 50 to a program, in a probe kernel that calls it as the
// GEMM templates do (the compile of a whole GEMM per body would take 1000 NVRTC runs).
TEST_P(GemmEpilogueArch, FiveHundredRandomBodiesCompile) {
  test::TempDir cache;
  Runtime rt = runtime_for(GetParam(), cache);
  BodyGenerator gen(std::random_device{}());
  constexpr int kBodies = 500, kPerProgram = 50;
  int accepted = 0;
  for (int first = 0; first < kBodies; first += kPerProgram) {
    std::string text = "#include <tilejit/gemm_common.cuh>\n\nnamespace probe {\n";
    std::vector<std::string> names;
    for (int i = first; i < first + kPerProgram; ++i) {
      GemmProblem p = ops::normalized(epilogue_problem(gen.body()));
      p.beta = (i % 3 == 0) ? 0.f : 0.5f;
      ops::EpilogueBody body;
      ASSERT_NO_THROW(body = ops::parse_epilogue(p)) << p.epilogue.body;
      ++accepted;
      std::string source = ops::epilogue_source(p, body, /*swapped=*/i % 2 == 1, p.beta == 0.f);
      const std::string from = "struct gemm_epilogue {", to = "struct epilogue_" + std::to_string(i) + " {";
      source.replace(source.find(from), from.size(), to);
      text += source;
      // Every other one as a wgmma kernel that stages its column vectors in shared memory reads them.
      text += "struct cfg_" + std::to_string(i) + " { using TC = float; enum : bool { C_ROW = true }; enum : int { BN = 128, TILE_VECTORS = " +
              std::to_string(i % 4 < 2 ? 0 : 1) + " }; using epilogue = epilogue_" + std::to_string(i) + "; };\n";
      names.push_back("probe::run<probe::cfg_" + std::to_string(i) + ">");
    }
    text += R"(
template <class Cfg> __global__ void run(const tilejit::gemm_params p, float* out) {
  __shared__ float vectors[4 * Cfg::BN];
  const long long r = blockIdx.x, c = threadIdx.x;
  if (Cfg::TILE_VECTORS > 0) Cfg::epilogue::template stage_tile_vectors<Cfg>(p, blockIdx.y, 0, vectors, threadIdx.x & 31);
  __syncthreads();
  const tilejit::epilogue_tile tile{vectors, 0, 0, reinterpret_cast<const char*>(vectors), 0, 0, 0};
  out[r * blockDim.x + c] = tilejit::epilogue_value<Cfg>(p, blockIdx.y, r, c, 1.5f, tile);
  // ...and as a wgmma kernel that stages its M x N input reads it.
  if (Cfg::TILE_VECTORS > 0) out[r * blockDim.x + c] += tilejit::epilogue_value<Cfg, true, true>(p, blockIdx.y, r, c, 1.5f, tile);
}
}  // namespace probe
)";
    const auto info = rt.compile_program(KernelSource{.name = "epilogue_probe_" + std::to_string(first), .text = text}, names);
    EXPECT_GT(info.cubin_bytes, 0u);
  }
  EXPECT_EQ(accepted, kBodies);
}

// The M x N input a wgmma kernel may stage in D's staging buffers: the first one the body reads
// that is row-major in the kernel's coordinates (a column-major one in a swapped kernel) and has D's
// element size.
TEST(GemmEpilogueSource, StagedInputIsTheFirstRowMajorInputOfDsSize) {
  auto staged_slot = [](const GemmProblem& p, bool swapped) {
    const std::string src = ops::epilogue_source(p, ops::parse_epilogue(p), swapped, true);
    const std::string key = "STAGED_INPUT_SLOT = ";
    const auto at = src.find(key);
    return at == std::string::npos ? -99 : std::stoi(src.substr(at + key.size()));
  };
  GemmProblem p = ops::normalized(epilogue_problem("d = acc * scale[m] + residual; pre = acc"));
  EXPECT_EQ(staged_slot(p, false), -1);  // f16 column-major: element by element
  EXPECT_EQ(staged_slot(p, true), 2);    // ...row-major in a swapped kernel (slots 0 and 1: the vectors)
  p.epilogue.inputs[0].matrix.layout = Layout::row_major;
  EXPECT_EQ(staged_slot(p, false), 2);
  EXPECT_EQ(staged_slot(p, true), -1);
  p.epilogue.inputs[0].matrix.dtype = DType::f32;  // 4-byte elements beside a bf16 D
  EXPECT_EQ(staged_slot(p, false), -1);
  p.epilogue.inputs.push_back({.name = "gate", .matrix = {1 << 27, DType::bf16, Layout::row_major}});
  p.epilogue.body = "d = acc * scale[m] + residual * gate; pre = acc";
  EXPECT_EQ(staged_slot(p, false), 3);
  p.epilogue.body = "d = acc * scale[m] + gate; pre = residual";  // the f32 residual read, then gate
  EXPECT_EQ(staged_slot(p, false), 3);
  p.epilogue.body = "d = acc * scale[m]; pre = residual";  // gate declared, not read
  EXPECT_EQ(staged_slot(p, false), -1);
  // C where no input is staged (8: the slot past the operands), row-major in the kernel's coordinates.
  p.epilogue.body = "d = acc + beta * c; pre = residual";
  p.c = p.d;
  EXPECT_EQ(staged_slot(p, false), 8);
  EXPECT_EQ(staged_slot(p, true), -1);
  p.epilogue.body = "d = acc + beta * c + gate; pre = residual";  // gate first
  EXPECT_EQ(staged_slot(p, false), 3);
}

// A body with every kind of operand compiles into each GEMM kind, including the swapped decode path
// and D through TMA.
TEST_P(GemmEpilogueArch, ABodyCompilesIntoEveryKind) {
  test::TempDir cache;
  Runtime rt = runtime_for(GetParam(), cache);
  const std::string body = "d = gelu(acc + bias[n]) * scale[m] + residual + beta * c; pre = acc * s";
  std::vector<std::pair<GemmProblem, std::string>> cases;
  cases.push_back({epilogue_problem(body), "simt:64x64x8:32x16:2"});
  cases.push_back({epilogue_problem(body), "mma:128x128x32:64x32:3"});
  if (GetParam() == "sm_90a") {
    cases.push_back({epilogue_problem(body), ""});  // the heuristic: wgmma, D through TMA
    GemmProblem decode = epilogue_problem(body);
    decode.m = 16, decode.n = 8192, decode.k = 8192;  // swapped (sw)
    cases.push_back({decode, ""});
  }
  for (auto& [p, config] : cases) {
    p.beta = 1.f;
    CompiledKernelInfo info;
    if (config.empty()) {
      info = rt.compile_gemm(p);
    } else {
      GemmConfig c = GemmConfig::parse(config);
      info = rt.compile_gemm(p, &c);
    }
    EXPECT_GT(info.cubin_bytes, 0u) << info.program_name;
    EXPECT_NE(info.program_name.find("_epi"), std::string::npos) << info.program_name;
    EXPECT_NE(info.source.find("d = gelu(acc + bias[n]) * scale[m] + residual"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, GemmEpilogueArch, ::testing::Values("sm_90a", "sm_80"));

}  // namespace
}  // namespace tilejit
