// GEMM epilogues as bodies on the GPU: per-column and per-row vectors, an M x N input and a second
// output, in every kind (simt, mma, gemv, wgmma with D through TMA, swapped decode shapes, a staged D,
// column-major D), every A/B layout, odd sizes and a batch, against a float64 host reference that
// evaluates the same body (tooling::GemmEpilogueReference). Outputs are poisoned (NaN) with guard bytes
// after them, so an unwritten or overwritten element shows.
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace tilejit {
namespace {

constexpr std::size_t kGuard = 4096;

// A host array and its device copy (with kGuard poisoned bytes after it).
struct Array {
  std::vector<unsigned char> host;
  DeviceBuffer dev;
  std::size_t bytes = 0;
  Array(Runtime& rt, std::size_t n_bytes) : host(n_bytes), dev(rt.alloc(n_bytes + kGuard)), bytes(n_bytes) {}
  void random(DType t, std::mt19937_64& rng, std::size_t n) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) tooling::store_element_from_float(t, host.data(), i, u(rng));
    dev.fill_bytes(0xFF);
    dev.upload(host.data(), bytes);
  }
  void poison() {
    dev.fill_bytes(0xFF);
    std::fill(host.begin(), host.end(), 0xFF);
  }
  void fetch() { dev.download(host.data(), bytes); }
  bool guard_intact() const {
    std::vector<unsigned char> g(kGuard);
    dev.download(g.data(), kGuard, bytes);
    return std::all_of(g.begin(), g.end(), [](unsigned char c) { return c == 0xFF; });
  }
};

std::size_t elements(const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  const std::int64_t lines = r.layout == Layout::row_major ? rows : cols, line = r.layout == Layout::row_major ? cols : rows;
  return static_cast<std::size_t>((batch - 1) * r.batch_stride + (lines - 1) * r.ld + line);
}
std::size_t at(const MatrixRef& r, std::int64_t b, std::int64_t row, std::int64_t col) {
  return static_cast<std::size_t>(b * r.batch_stride + (r.layout == Layout::row_major ? row * r.ld + col : col * r.ld + row));
}
MatrixRef tight(DType t, Layout l, std::int64_t rows, std::int64_t cols, std::int64_t batch, std::int64_t pad = 0) {
  MatrixRef r{0, t, l, (l == Layout::row_major ? cols : rows) + pad, 0};
  r.batch_stride = batch > 1 ? (l == Layout::row_major ? rows : cols) * r.ld : 0;
  return r;
}

struct Case {
  std::string name;
  std::int64_t m, n, k, batch = 1;
  std::string layout = "NT";
  Layout d_layout = Layout::row_major;
  std::string config;  // empty: the heuristic
  std::int64_t d_pad = 0;  // D's leading dimension beyond tight (an unaligned pitch stages D on wgmma)
  bool through_runtime = false;  // Runtime::gemm (its cached plan per signature) instead of a plan of its own
  float s = -0.75f;              // the body's scalar
  // The f16 residual: column-major, or row-major (on wgmma with D through TMA, copied chunk by chunk
  // into D's staging buffers where its rows start 16-byte aligned) with its leading dimension beyond tight.
  Layout residual_layout = Layout::col_major;
  std::int64_t residual_pad = 0;
  std::int64_t samples = 20000;  // elements checked at random in problems of more than 40000
};

// The body, its operands, and the check: D and `pre` against the float64 evaluation of the body.
void run_case(Runtime& rt, const Case& cs, const std::string& body, std::uint64_t seed) {
  SCOPED_TRACE(cs.name + " seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const DType t = DType::bf16;
  GemmProblem p;
  p.m = cs.m, p.n = cs.n, p.k = cs.k, p.batch = cs.batch;
  p.a = tight(t, cs.layout[0] == 'N' ? Layout::row_major : Layout::col_major, cs.m, cs.k, cs.batch);
  p.b = tight(t, cs.layout[1] == 'N' ? Layout::row_major : Layout::col_major, cs.k, cs.n, cs.batch);
  p.c = tight(DType::bf16, Layout::row_major, cs.m, cs.n, cs.batch);
  p.d = tight(DType::bf16, cs.d_layout, cs.m, cs.n, cs.batch, cs.d_pad);
  p.alpha = 1.25f, p.beta = 0.5f;
  const MatrixRef residual_ref = tight(DType::f16, cs.residual_layout, cs.m, cs.n, cs.batch, cs.residual_pad);
  const MatrixRef pre_ref = tight(DType::f32, cs.d_layout == Layout::row_major ? Layout::col_major : Layout::row_major, cs.m, cs.n, cs.batch);

  Array a(rt, elements(p.a, p.m, p.k, p.batch) * 2), b(rt, elements(p.b, p.k, p.n, p.batch) * 2),
      c(rt, elements(p.c, p.m, p.n, p.batch) * 2), d(rt, elements(p.d, p.m, p.n, p.batch) * 2),
      bias(rt, static_cast<std::size_t>(p.n) * 2), scale(rt, static_cast<std::size_t>(p.m * p.batch) * 4),
      residual(rt, elements(residual_ref, p.m, p.n, p.batch) * 2), pre(rt, elements(pre_ref, p.m, p.n, p.batch) * 4);
  a.random(t, rng, a.bytes / 2), b.random(t, rng, b.bytes / 2), c.random(DType::bf16, rng, c.bytes / 2);
  bias.random(DType::bf16, rng, static_cast<std::size_t>(p.n)), scale.random(DType::f32, rng, static_cast<std::size_t>(p.m * p.batch));
  residual.random(DType::f16, rng, residual.bytes / 2);
  d.poison(), pre.poison();
  p.a.ptr = a.dev.ptr(), p.b.ptr = b.dev.ptr(), p.c.ptr = c.dev.ptr(), p.d.ptr = d.dev.ptr();
  p.epilogue.body = body;
  p.epilogue.vectors = {{.name = "bias", .ptr = bias.dev.ptr(), .dtype = DType::bf16, .axis = EpilogueAxis::column},
                        {.name = "scale", .ptr = scale.dev.ptr(), .dtype = DType::f32, .axis = EpilogueAxis::row, .batch_stride = p.m}};
  MatrixRef rr = residual_ref, pr = pre_ref;
  rr.ptr = residual.dev.ptr(), pr.ptr = pre.dev.ptr();
  p.epilogue.inputs = {{"residual", rr}};
  p.epilogue.outputs = {{"pre", pr}};
  p.epilogue.scalars = {{"s", cs.s}};

  std::string config = "Runtime::gemm";
  if (cs.through_runtime) {
    rt.gemm(p);
  } else {
    GemmPlan plan = cs.config.empty() ? rt.plan_gemm(p) : rt.plan_gemm(p, GemmConfig::parse(cs.config));
    plan.run();
    config = plan.config().to_string();
  }
  rt.synchronize();
  d.fetch(), pre.fetch();
  EXPECT_TRUE(d.guard_intact()) << "D's guard bytes were written";
  EXPECT_TRUE(pre.guard_intact()) << "pre's guard bytes were written";

  // Every element of small problems, else samples and the last row and column.
  struct Sample {
    std::int64_t b, r, col;
  };
  std::vector<Sample> samples;
  const std::int64_t total = p.m * p.n * p.batch;
  if (total <= 40000) {
    for (std::int64_t bb = 0; bb < p.batch; ++bb)
      for (std::int64_t r = 0; r < p.m; ++r)
        for (std::int64_t col = 0; col < p.n; ++col) samples.push_back({bb, r, col});
  } else {
    std::uniform_int_distribution<std::int64_t> ur(0, p.m - 1), uc(0, p.n - 1), ub(0, p.batch - 1);
    for (std::int64_t i = 0; i < cs.samples; ++i) samples.push_back({ub(rng), ur(rng), uc(rng)});
    for (std::int64_t r = 0; r < p.m; ++r) samples.push_back({p.batch - 1, r, p.n - 1});
    for (std::int64_t col = 0; col < p.n; ++col) samples.push_back({p.batch - 1, p.m - 1, col});
  }
  const std::size_t ns = samples.size();
  std::vector<double> acc(ns), cv(ns), bv(ns), sv(ns), rv(ns), want_d(ns), want_pre(ns);
  std::vector<std::int64_t> mv(ns), nv(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    const auto [bb, r, col] = samples[i];
    double sum = 0;
    for (std::int64_t kk = 0; kk < p.k; ++kk)
      sum += tooling::load_element(t, a.host.data(), at(p.a, bb, r, kk)) * tooling::load_element(t, b.host.data(), at(p.b, bb, kk, col));
    acc[i] = p.alpha * sum;
    cv[i] = tooling::load_element(DType::bf16, c.host.data(), at(p.c, bb, r, col));
    bv[i] = tooling::load_element(DType::bf16, bias.host.data(), static_cast<std::size_t>(col));
    sv[i] = tooling::load_element(DType::f32, scale.host.data(), static_cast<std::size_t>(bb * p.m + r));
    rv[i] = tooling::load_element(DType::f16, residual.host.data(), at(residual_ref, bb, r, col));
    mv[i] = r, nv[i] = col;
  }
  // The reference: the same body over float64 values (the tooling's evaluator of epilogue bodies).
  tooling::GemmEpilogueReference(p).run(ns, acc.data(), cv.data(), mv.data(), nv.data(), {bv.data(), sv.data()}, {rv.data()},
                                        want_d.data(), {want_pre.data()});
  auto rel_error = [&](DType dt, const Array& got, const MatrixRef& ref_layout, const std::vector<double>& want) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < ns; ++i) {
      const auto [bb, r, col] = samples[i];
      const double g = tooling::load_element(dt, got.host.data(), at(ref_layout, bb, r, col));
      if (!std::isfinite(g)) return static_cast<double>(INFINITY);
      num += (g - want[i]) * (g - want[i]), den += want[i] * want[i];
    }
    return std::sqrt(num / std::max(den, 1e-300));
  };
  EXPECT_LT(rel_error(DType::bf16, d, p.d, want_d), 1e-2) << config;
  EXPECT_LT(rel_error(DType::f32, pre, pre_ref, want_pre), 1e-4) << config;
  // No element of D or pre left unwritten (poison is NaN) anywhere.
  for (std::int64_t bb = 0; bb < p.batch; ++bb)
    for (std::int64_t r = 0; r < p.m; ++r)
      for (std::int64_t col = 0; col < p.n; ++col) {
        ASSERT_TRUE(std::isfinite(tooling::load_element(DType::bf16, d.host.data(), at(p.d, bb, r, col)))) << r << "," << col;
        ASSERT_TRUE(std::isfinite(tooling::load_element(DType::f32, pre.host.data(), at(pre_ref, bb, r, col)))) << r << "," << col;
      }
}

class GemmEpilogueGpu : public ::testing::Test {
 protected:
  void SetUp() override { TILEJIT_REQUIRE_GPU(rt); }
  Runtime rt;
};

const char* kBody = "d = gelu(acc + bias[n]) * scale[m] + residual + beta * c; pre = acc * s + float(n % 3) - float(m % 5)";

TEST_F(GemmEpilogueGpu, EveryKindAndLayout) {
  std::vector<Case> cases;
  for (const char* l : {"NN", "NT", "TN", "TT"}) {
    cases.push_back({std::string("wgmma_") + l, 512, 384, 256, 1, l});
    cases.push_back({std::string("wgmma_odd_") + l, 257, 263, 136, 1, l});
    cases.push_back({std::string("mma_") + l, 200, 136, 96, 1, l, Layout::row_major, "mma:128x128x32:64x32:3"});
    cases.push_back({std::string("simt_") + l, 130, 70, 40, 1, l, Layout::row_major, "simt:64x64x8:32x16:2"});
    cases.push_back({std::string("gemv_") + l, 5, 300, 1000, 1, l, Layout::row_major, l[1] == 'T' ? "gemv:8x16x256:8x2:2" : "gemv:8x64x16:8x16:2"});
    cases.push_back({std::string("wgmma_col_d_") + l, 384, 256, 128, 1, l, Layout::col_major});  // swapped: D^T through TMA
    // Ping-pong, the heuristic's pick for large bodies that read an M x N input (edges and a short last tile).
    cases.push_back({std::string("wgmma_pp_") + l, 520, 392, 264, 1, l, Layout::row_major, "wgmma:128x128x64:128x128:5:pp"});
  }
  cases.push_back({"gemv_swapped", 300, 2, 1000, 1, "NT", Layout::row_major, "gemv:2x16x256:2x2:2:sw"});  // a matrix times 2 vectors
  cases.push_back({"decode_16", 16, 4096, 512, 1, "NT"});        // swapped decode shape
  cases.push_back({"decode_1", 1, 2048, 1024, 1, "NN"});
  cases.push_back({"batched", 192, 160, 64, 3, "NT"});
  cases.push_back({"staged_d", 300, 301, 128, 1, "NT", Layout::row_major, "", 1});  // D pitch 302 elements: staged on wgmma
  cases.push_back({"split_k", 128, 128, 8192, 1, "NT"});          // few tiles, long K: split-K, epilogue after the reduction
  // Per-tile copies of the column vectors (bias[n]) in shared memory: three consumers, split-K of
  // every tile and of the last wave's (the slices that skip the epilogue still take their copy),
  // ping-pong over batches.
  cases.push_back({"three_consumers", 400, 300, 200, 1, "NT", Layout::row_major, "wgmma:192x128x64:64x128:4"});
  cases.push_back({"split_k_batched", 300, 500, 1024, 2, "TN", Layout::row_major, "wgmma:128x128x64:64x128:4:k2"});
  cases.push_back({"tail_split", 520, 700, 4096, 1, "NT", Layout::row_major, "wgmma:128x256x64:64x256:4:t3"});
  cases.push_back({"pp_batched", 260, 300, 200, 3, "NT", Layout::row_major, "wgmma:128x128x64:128x128:5:pp"});
  // A row-major residual through D's staging buffers (interior tiles), and one whose rows start off
  // 16-byte boundaries (read element by element).
  const Layout rm = Layout::row_major;
  for (const char* l : {"NT", "TN"}) {
    cases.push_back({std::string("residual_rows_") + l, 520, 768, 192, 1, l, rm, "", 0, false, -0.75f, rm});
    cases.push_back({std::string("residual_rows_pp_") + l, 520, 392, 264, 2, l, rm, "wgmma:128x128x64:128x128:5:pp", 0, false, -0.75f, rm});
  }
  cases.push_back({"residual_rows_batched", 256, 512, 128, 3, "NN", rm, "wgmma:128x256x64:64x256:4", 0, false, -0.75f, rm});
  cases.push_back({"residual_rows_off", 384, 512, 128, 1, "NT", rm, "wgmma:128x256x64:64x256:4", 0, false, -0.75f, rm, 3});
  // Two or more tiles per consumer, with a short K: each tile's first input chunks are copied during
  // its main loop once the previous tile's stores have read the staging buffers (kPrefetchInput), and
  // chunks 2 and 3 of the 128x256 tiles pass through registers. 200,000 samples: a chunk of one tile
  // wrong (4096 outputs) shows in the error at about 90 samples.
  cases.push_back({"residual_rows_many_tiles", 2048, 4352, 32, 1, "NT", rm, "wgmma:128x256x64:64x256:4", 0, false, -0.75f, rm, 0, 200000});
  cases.push_back({"residual_rows_many_tiles_pp", 2560, 2048, 96, 1, "NN", rm, "wgmma:128x128x64:128x128:5:pp", 0, false, -0.75f, rm, 0,
                   200000});
  const std::uint64_t seed = std::random_device{}();
  for (const auto& c : cases) run_case(rt, c, kBody, seed);
}

// Runtime::gemm keeps one plan per body and operand types: a second call with the same body and new
// operands (other buffers, another scalar value) computes with them, not with the first call's.
TEST_F(GemmEpilogueGpu, RuntimeGemmTakesEachCallsOperands) {
  const std::uint64_t seed = std::random_device{}();
  for (const auto& shape : {Case{"runtime", 257, 263, 136, 1, "NT"}, Case{"runtime_decode", 16, 2048, 512, 1, "NN"}}) {
    Case first = shape, second = shape;
    first.through_runtime = second.through_runtime = true;
    second.name += "_again", second.s = 1.5f;
    run_case(rt, first, kBody, seed);
    DeviceBuffer spacer = rt.alloc(3 << 20);  // the second call's buffers lie elsewhere
    run_case(rt, second, kBody, seed + 1);
  }
}

// The fixed form is the same mechanism: a bias with GELU through GemmEpilogue::bias/activation and
// the same computation written as a body give the same D.
TEST_F(GemmEpilogueGpu, FixedFormEqualsItsBody) {
  const std::uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  const std::int64_t M = 320, N = 256, K = 192;
  Array a(rt, M * K * 2), b(rt, K * N * 2), bias(rt, N * 4), d1(rt, M * N * 2), d2(rt, M * N * 2);
  a.random(DType::bf16, rng, M * K), b.random(DType::bf16, rng, K * N), bias.random(DType::f32, rng, N);
  d1.poison(), d2.poison();
  GemmProblem p;
  p.m = M, p.n = N, p.k = K;
  p.a = {a.dev.ptr(), DType::bf16, Layout::row_major};
  p.b = {b.dev.ptr(), DType::bf16, Layout::col_major};
  p.d = {d1.dev.ptr(), DType::bf16, Layout::row_major};
  p.epilogue.bias = bias.dev.ptr();
  p.epilogue.activation = Activation::gelu;
  rt.gemm(p);
  GemmProblem q = p;
  q.d.ptr = d2.dev.ptr();
  q.epilogue = {};
  q.epilogue.body = "d = gelu(acc + bias[n])";
  q.epilogue.vectors = {{.name = "bias", .ptr = bias.dev.ptr(), .dtype = DType::f32}};
  rt.gemm(q);
  rt.synchronize();
  d1.fetch(), d2.fetch();
  EXPECT_EQ(d1.host, d2.host);
}

}  // namespace
}  // namespace tilejit
