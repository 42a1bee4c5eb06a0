// Users' own kernels on the GPU through the public API: the examples against float64 host
// references (poisoned outputs, guard bytes after them), the seed's vectorAdd on the tile API,
// arguments checked against the kernel's parameters before launch, attributes, clusters and
// programmatic dependent launch.
#include "gemm_case.hpp"
#include "host_data.hpp"
#include "test_support.hpp"
#include "util/host_dtype.hpp"

#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace tilejit {
namespace {

std::filesystem::path examples_dir() { return TILEJIT_EXAMPLES_DIR; }
std::uint64_t fresh_seed() { return std::random_device{}(); }

class UserKernelsGpu : public ::testing::Test {
 protected:
  void SetUp() override { TILEJIT_REQUIRE_GPU(rt); }
  Runtime rt;
};

// A device copy of `host` with 4 KB of 0xFF after it; `guard_intact` says whether those survived.
struct Buffer {
  DeviceBuffer dev;
  std::size_t bytes = 0;
  Buffer(Runtime& rt, const void* host, std::size_t n_bytes, bool poison = false) : dev(rt.alloc(n_bytes + 4096)), bytes(n_bytes) {
    dev.fill_bytes(0xFF);
    if (!poison) dev.upload(host, n_bytes);
  }
  std::vector<unsigned char> get() const {
    std::vector<unsigned char> out(bytes);
    dev.download(out.data(), bytes);
    return out;
  }
  bool guard_intact() const {
    std::vector<unsigned char> g(4096);
    dev.download(g.data(), 4096, bytes);
    for (unsigned char c : g)
      if (c != 0xFF) return false;
    return true;
  }
};

double rel_error(DType t, const std::vector<unsigned char>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = util::load_element(t, got.data(), i);
    if (!std::isfinite(g)) return INFINITY;
    num += (g - ref[i]) * (g - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

TEST_F(UserKernelsGpu, RmsNormAgainstFloat64) {
  Program prog = rt.program(KernelSource::from_file(examples_dir() / "rms_norm.cu"),
                            {"rms_norm<1024, float>", "rms_norm<2048, __nv_bfloat16>"});
  for (DType t : {DType::f32, DType::bf16}) {
    Kernel k = prog.kernel(t == DType::f32 ? "rms_norm<1024, float>" : "rms_norm<2048, __nv_bfloat16>");
    const int tile = t == DType::f32 ? 1024 : 2048;
    EXPECT_EQ(k.attributes().parameter_sizes, (std::vector<std::size_t>{8, 8, 8, 8, 4}));
    for (long long cols : {1000LL, 4096LL, 5000LL}) {
      const long long rows = 300;
      const std::size_t es = dtype_size(t);
      std::vector<unsigned char> x(rows * cols * es), w(cols * es);
      cli::fill_random(t, x.data(), rows * cols, fresh_seed());
      cli::fill_random(t, w.data(), cols, fresh_seed());
      Buffer dx(rt, x.data(), x.size()), dw(rt, w.data(), w.size()), dy(rt, nullptr, x.size(), true);
      const float eps = 1e-5f;
      k.launch({.grid = {static_cast<unsigned>(rows)}, .block = {static_cast<unsigned>(std::min(256, tile / 4))}}, nullptr, dx.dev.ptr(),
               dw.dev.ptr(), dy.dev.ptr(), cols, eps);
      rt.synchronize();
      std::vector<double> ref(rows * cols);
      for (long long r = 0; r < rows; ++r) {
        double ss = 0;
        for (long long c = 0; c < cols; ++c) ss += std::pow(util::load_element(t, x.data(), r * cols + c), 2);
        const double scale = 1.0 / std::sqrt(ss / cols + eps);
        for (long long c = 0; c < cols; ++c)
          ref[r * cols + c] = util::load_element(t, x.data(), r * cols + c) * scale * util::load_element(t, w.data(), c);
      }
      EXPECT_LE(rel_error(t, dy.get(), ref), t == DType::f32 ? 1e-5 : 1e-2) << dtype_name(t) << " cols " << cols;
      EXPECT_TRUE(dy.guard_intact()) << "wrote past the output, cols " << cols;
    }
  }
}

TEST_F(UserKernelsGpu, RopeAgainstFloat64) {
  Program prog = rt.program(KernelSource::from_file(examples_dir() / "rope.cu"), {"rope<128, float>", "rope<64, __nv_bfloat16>"});
  for (auto [t, dim] : {std::pair{DType::f32, 128}, std::pair{DType::bf16, 64}}) {
    Kernel k = prog.kernel(t == DType::f32 ? "rope<128, float>" : "rope<64, __nv_bfloat16>");
    const long long tokens = 37;
    const int heads = 5;
    const float base = 10000.f;
    const std::size_t n = static_cast<std::size_t>(tokens * heads * dim), es = dtype_size(t);
    std::vector<unsigned char> x(n * es);
    cli::fill_random(t, x.data(), n, fresh_seed());
    std::vector<int> pos(tokens);
    std::mt19937 rng(fresh_seed());
    for (auto& p : pos) p = static_cast<int>(rng() % 4096);
    Buffer dx(rt, x.data(), x.size()), dpos(rt, pos.data(), pos.size() * 4), dy(rt, nullptr, x.size(), true);
    const unsigned pairs = static_cast<unsigned>(n / 2);
    k.launch({.grid = {(pairs + 127) / 128}, .block = {128}}, nullptr, dx.dev.ptr(), dpos.dev.ptr(), dy.dev.ptr(), tokens, heads, base);
    rt.synchronize();
    std::vector<double> ref(n);
    const int half = dim / 2;
    for (long long row = 0; row < tokens * heads; ++row)
      for (int i = 0; i < half; ++i) {
        const double angle = pos[row / heads] * std::pow(static_cast<double>(base), -2.0 * i / dim);
        const double a = util::load_element(t, x.data(), row * dim + i), b = util::load_element(t, x.data(), row * dim + i + half);
        ref[row * dim + i] = a * std::cos(angle) - b * std::sin(angle);
        ref[row * dim + i + half] = b * std::cos(angle) + a * std::sin(angle);
      }
    // float angles up to 4096 rad: about 2.5e-4 rad of rounding in pos * inv_freq.
    EXPECT_LE(rel_error(t, dy.get(), ref), t == DType::f32 ? 2e-3 : 1e-2) << dtype_name(t);
    EXPECT_TRUE(dy.guard_intact());
  }
}

TEST_F(UserKernelsGpu, TheSeedsPuzzle33AgainstFloat64) {
  Program prog = rt.program(KernelSource::from_file(examples_dir() / "puzzle33_tensor_core.cu"), {"puzzle33<128, 64, 32, 32, 32>"});
  Kernel k = prog.kernel("puzzle33<128, 64, 32, 32, 32>");
  const unsigned smem = 4 * (2 * 128 * (32 + 4) + 2 * 32 * (64 + 8));  // two stages of A and B, padded rows
  k.set_max_dynamic_shared_bytes(static_cast<int>(smem));
  for (auto [M, N, K] : std::vector<std::array<int, 3>>{{1024, 1024, 1024}, {1000, 520, 300}, {7, 9, 5}}) {
    std::vector<float> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N);
    cli::fill_random(DType::f32, a.data(), a.size(), fresh_seed());
    cli::fill_random(DType::f32, b.data(), b.size(), fresh_seed());
    Buffer da(rt, a.data(), a.size() * 4), db(rt, b.data(), b.size() * 4), dc(rt, nullptr, static_cast<std::size_t>(M) * N * 4, true);
    k.launch({.grid = {static_cast<unsigned>((N + 63) / 64), static_cast<unsigned>((M + 127) / 128)}, .block = {256}, .shared_bytes = smem},
             nullptr,
             da.dev.ptr(), db.dev.ptr(), dc.dev.ptr(), M, N, K);
    rt.synchronize();
    std::vector<double> ref(static_cast<std::size_t>(M) * N);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        double s = 0;
        for (int q = 0; q < K; ++q) s += static_cast<double>(a[static_cast<std::size_t>(r) * K + q]) * b[static_cast<std::size_t>(q) * N + c];
        ref[static_cast<std::size_t>(r) * N + c] = s;
      }
    EXPECT_LE(rel_error(DType::f32, dc.get(), ref), 2e-3) << M << "x" << N << "x" << K;  // tf32 inputs
    EXPECT_TRUE(dc.guard_intact());
  }
  EXPECT_GT(k.attributes().registers, 0);
  EXPECT_GE(k.attributes().max_threads_per_block, 256);
  EXPECT_EQ(k.attributes().max_dynamic_shared_bytes, static_cast<int>(smem));
}

// The CUDA Tile C++ seed's vectorAdd (kernels_templates/examples/vector_add.cuh), included from
// the library's headers by a user program.
TEST_F(UserKernelsGpu, TheSeedsVectorAddThroughThePublicApi) {
  Program prog = rt.program(KernelSource{.name = "seed_vector_add", .text = "#include <examples/vector_add.cuh>\n"},
                            {"tilejit::examples::vector_add<1024>"});
  Kernel k = prog.kernel("tilejit::examples::vector_add<1024>");
  for (unsigned long long n : {1ull, 1000ull, 1024ull, (1ull << 20) + 3, 2ull << 25}) {
    std::vector<float> a(n), b(n);
    cli::fill_random(DType::f32, a.data(), n, fresh_seed());
    cli::fill_random(DType::f32, b.data(), n, fresh_seed());
    Buffer da(rt, a.data(), n * 4), db(rt, b.data(), n * 4), dout(rt, nullptr, n * 4, true);
    k.launch({.grid = {static_cast<unsigned>((n + 1023) / 1024)}, .block = {256}}, nullptr, da.dev.ptr(), db.dev.ptr(), dout.dev.ptr(), n);
    rt.synchronize();
    const auto got = dout.get();
    const float* out = reinterpret_cast<const float*>(got.data());
    for (unsigned long long i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << "n=" << n << " i=" << i;
    EXPECT_TRUE(dout.guard_intact()) << "wrote past n=" << n;
  }
}

TEST_F(UserKernelsGpu, ArgumentsAreCheckedBeforeLaunch) {
  Program prog = rt.program(KernelSource{.name = "fill", .text = "__global__ void fill(float* y, float v, long long n) {\n"
                                                                 "  long long i = blockIdx.x * 256ll + threadIdx.x; if (i < n) y[i] = v; }\n"},
                            {"fill"});
  Kernel k = prog.kernel("fill");
  EXPECT_EQ(k.attributes().parameter_sizes, (std::vector<std::size_t>{8, 4, 8}));
  Buffer y(rt, nullptr, 1024 * 4, true);
  auto refused = [&](const std::function<void()>& launch, const char* expected) {
    try {
      launch();
      ADD_FAILURE() << "launched; expected: " << expected;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  const LaunchConfig c{.grid = {4}, .block = {256}};
  refused([&] { k.launch(c, nullptr, y.dev.ptr(), 1.f); }, "2 arguments given, it takes 3 parameters");
  refused([&] { k.launch(c, nullptr, y.dev.ptr(), 1.0, 1024LL); }, "argument 1 has 8 bytes, its parameter 1 takes 4");
  refused([&] { k.launch(c, nullptr, y.dev.ptr(), 1.f, 1024); }, "argument 2 has 4 bytes, its parameter 2 takes 8");
  refused([&] { k.launch({.grid = {1}, .block = {2048}}, nullptr, y.dev.ptr(), 1.f, 1024LL); }, "a block of 2048 threads");
  refused([&] { k.launch({.grid = {1}, .block = {256}, .shared_bytes = 1 << 20}, nullptr, y.dev.ptr(), 1.f, 1024LL); },
          "set_max_dynamic_shared_bytes");
  refused([&] { k.launch({.grid = {0}, .block = {256}}, nullptr, y.dev.ptr(), 1.f, 1024LL); }, "must not be empty");
  EXPECT_THROW(prog.kernel("fil"), InvalidArgument);
  rt.synchronize();
  const auto untouched = y.get();
  for (unsigned char b : untouched) ASSERT_EQ(b, 0xFF) << "a refused launch wrote";
  k.launch(c, nullptr, y.dev.ptr(), 3.5f, 1024LL);
  rt.synchronize();
  const auto got = y.get();
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(reinterpret_cast<const float*>(got.data())[i], 3.5f);
}

// A kernel that waits for the previous grids (tilejit/grid_dependency.cuh), launched back to back
// with programmatic dependent launch and in clusters of two: each launch reads the previous one's
// output.
TEST_F(UserKernelsGpu, ClustersAndProgrammaticDependentLaunch) {
  Program prog = rt.program(KernelSource{.name = "step", .text = R"(
#include <tilejit/grid_dependency.cuh>
__global__ void step(const float* x, float* y, int n) {
  tilejit::wait_for_prior_grids();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.f;
})"},
                            {"step"});
  Kernel k = prog.kernel("step");
  const int n = 1 << 20;
  std::vector<float> zero(n, 0.f);
  Buffer a(rt, zero.data(), n * 4), b(rt, zero.data(), n * 4);
  const LaunchConfig c{.grid = {n / 256}, .block = {256}, .cluster = {2, 1, 1}, .programmatic = true};
  for (int i = 0; i < 50; ++i) {
    k.launch(c, nullptr, a.dev.ptr(), b.dev.ptr(), n);  // b = a + 1
    k.launch(c, nullptr, b.dev.ptr(), a.dev.ptr(), n);  // a = b + 1
  }
  rt.synchronize();
  const auto got = a.get();
  for (int i = 0; i < n; ++i) ASSERT_EQ(reinterpret_cast<const float*>(got.data())[i], 100.f) << i;
}

// The built-in ops' kernels are public Kernels: their attributes read like a user's, a bare
// cuLaunchKernel of an elementwise plan's kernel with its parameter block does what run() does, and
// a GEMM plan's wgmma kernel takes its parameter block and three tensor maps by value.
TEST_F(UserKernelsGpu, BuiltInKernelsAreKernelsOfThePublicApi) {
  ElementwisePlan plan = rt.plan_elementwise(
      {.body = "z = x * a + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}, .scalars = {{"a", 2.f}}});
  const KernelAttributes& attrs = plan.kernel().attributes();
  EXPECT_EQ(attrs.parameter_sizes, (std::vector<std::size_t>{168}));
  EXPECT_GT(attrs.registers, 0);
  EXPECT_GE(attrs.max_threads_per_block, plan.config().threads);
  const int n = 100003;
  std::vector<float> x(n), y(n);
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int i = 0; i < n; ++i) x[i] = u(rng), y[i] = u(rng);
  Buffer dx(rt, x.data(), n * 4), dy(rt, y.data(), n * 4), dz(rt, nullptr, n * 4, /*poison=*/true);
  std::vector<std::byte> params = tooling::elementwise_arguments(plan, {dx.dev.ptr(), dy.dev.ptr()}, {dz.dev.ptr()}, n);
  void* args[] = {params.data()};
  const unsigned grid = static_cast<unsigned>((n + plan.config().tile - 1) / plan.config().tile);
  tooling::check(tooling::driver().cuLaunchKernel(plan.kernel().function(), grid, 1, 1, static_cast<unsigned>(plan.config().threads), 1, 1,
                                                  0, nullptr, args, nullptr),
                 "cuLaunchKernel");
  rt.synchronize();
  const auto got = dz.get();
  for (int i = 0; i < n; ++i) ASSERT_EQ(reinterpret_cast<const float*>(got.data())[i], x[i] * 2.f + y[i]) << i;
  EXPECT_TRUE(dz.guard_intact());

  GemmProblem p;
  p.m = p.n = 512, p.k = 256;
  p.a = {0, DType::bf16, Layout::row_major};
  p.b = {0, DType::bf16, Layout::col_major};
  p.d = {0, DType::bf16, Layout::row_major};
  cli::GemmCase g(rt, p, false, fresh_seed());
  GemmPlan gp = rt.plan_gemm(g.problem);
  ASSERT_EQ(gp.config().kind, GemmKind::wgmma);
  const KernelAttributes& ga = gp.kernel().attributes();
  EXPECT_EQ(ga.parameter_sizes, (std::vector<std::size_t>{520, 128, 128, 128}));
  EXPECT_GE(ga.max_dynamic_shared_bytes, 48 * 1024);  // the plan raised it for its pipeline
  gp.run();
  rt.synchronize();
  EXPECT_LT(g.relative_error(), 1e-2);
}

}  // namespace
}  // namespace tilejit
