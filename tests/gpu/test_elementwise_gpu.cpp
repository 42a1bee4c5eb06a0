// Elementwise on the GPU against the float64 host reference: every dtype, odd sizes, misaligned
// pointers, several outputs, in-place, scalars, more than 2^32 elements.
#include "gpu_check.hpp"

#include "util/host_dtype.hpp"

#include <cmath>
#include <cstdio>

namespace tilejit {
namespace {

class ElementwiseGpu : public ::testing::Test {
 protected:
  void SetUp() override { TILEJIT_REQUIRE_GPU(rt); }
  Runtime rt;
};

class ElementwiseGpuSizes : public ::testing::TestWithParam<std::tuple<DType, std::uint64_t>> {
 protected:
  void SetUp() override { TILEJIT_REQUIRE_GPU(rt); }
  Runtime rt;
};

TEST_P(ElementwiseGpuSizes, AxpyMatchesReference) {
  const auto& [dtype, n] = GetParam();
  ElementwiseOp op{.body = "z = x * alpha + y", .inputs = {{"x", dtype}, {"y", dtype}}, .outputs = {{"z", dtype}},
                   .scalars = {{"alpha", 1.5f}}};
  test::expect_correct(rt, op, n);
}

INSTANTIATE_TEST_SUITE_P(DtypesAndSizes, ElementwiseGpuSizes,
                         ::testing::Combine(::testing::ValuesIn(kAllDTypes),
                                            ::testing::Values(0ull, 1ull, 7ull, 1000ull, (1ull << 20) + 3)),
                         [](const auto& param_info) {
                           return std::string(dtype_name(std::get<0>(param_info.param))) + "_n" + std::to_string(std::get<1>(param_info.param));
                         });

TEST_F(ElementwiseGpu, MisalignedPointers) {
  for (DType t : kAllDTypes) {
    ElementwiseOp op{.body = "z = x - y", .inputs = {{"x", t}, {"y", t}}, .outputs = {{"z", t}}};
    for (std::vector<std::size_t> offsets : {std::vector<std::size_t>{1, 0, 0}, {0, 3, 0}, {0, 0, 5}, {1, 2, 3}, {7, 7, 7}})
      for (std::uint64_t n : {1ull, 1000ull, 100003ull}) test::expect_correct(rt, op, n, offsets);
  }
}

TEST_F(ElementwiseGpu, TwoOutputsMixedDtypes) {
  ElementwiseOp op{.body = "s = a + b; d = tanh(a - b)", .inputs = {{"a", DType::f16}, {"b", DType::bf16}},
                   .outputs = {{"s", DType::f32}, {"d", DType::f16}}};
  for (std::uint64_t n : {1ull, 7ull, 1000ull, (1ull << 20) + 3}) test::expect_correct(rt, op, n);
}

TEST_F(ElementwiseGpu, EightInputsFourOutputsAndScalars) {
  ElementwiseOp op{.body = "o1 = a0 + a1 + a2 + a3 + s1; o2 = a4 * a5 + s2; o3 = a6 - a7 * s0; o4 = a0 * s3", .outputs = {}};
  const DType types[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::i8, DType::u8};
  for (int i = 0; i < 8; ++i) op.inputs.push_back({"a" + std::to_string(i), types[i]});
  op.outputs = {{"o1", DType::f64}, {"o2", DType::i64}, {"o3", DType::f32}, {"o4", DType::f32}};
  op.scalars = {{"s0", 0.5f}, {"s1", 2.25}, {"s2", std::int32_t{-3}}, {"s3", std::int64_t{4}}};
  for (std::uint64_t n : {1ull, 1000ull, (1ull << 20) + 3}) test::expect_correct(rt, op, n, {0, 1, 2, 3, 4, 5, 6, 7, 1, 0, 3, 0});
}

TEST_F(ElementwiseGpu, InPlace) {
  ElementwiseOp op{.body = "x2 = x * 2.f + 1.f", .inputs = {{"x", DType::f32}}, .outputs = {{"x2", DType::f32}}};
  const std::uint64_t n = (1 << 20) + 3;
  std::vector<float> h(n);
  cli::fill_random(DType::f32, h.data(), n, 42);
  auto buf = rt.alloc(n * 4);
  buf.upload(h.data(), n * 4);
  rt.elementwise(op, {buf.ptr()}, {buf.ptr()}, n);  // output aliases input
  std::vector<float> out(n);
  buf.download(out.data(), n * 4);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], h[i] * 2.f + 1.f) << i;
}

TEST_F(ElementwiseGpu, PlanScalarsChangeWithoutRecompiling) {
  ElementwiseOp op{.body = "z = x * alpha", .inputs = {{"x", DType::f32}}, .outputs = {{"z", DType::f32}}, .scalars = {{"alpha", 2.f}}};
  ElementwisePlan plan = rt.plan_elementwise(op);
  const std::uint64_t n = 4099;
  std::vector<float> h(n, 3.f), out(n);
  auto x = rt.alloc(n * 4), z = rt.alloc(n * 4);
  x.upload(h.data(), n * 4);
  plan.run({x.ptr()}, {z.ptr()}, n);
  const ScalarValue alpha[] = {-0.5f};
  plan.run({x.ptr()}, {z.ptr()}, n, alpha);
  z.download(out.data(), n * 4);
  for (float v : out) ASSERT_EQ(v, -1.5f);
  auto compiles = rt.stats().compiles;
  // Runtime::elementwise with new scalar values reuses the kernel too.
  op.scalars[0].value = 4.f;
  rt.elementwise(op, {x.ptr()}, {z.ptr()}, n);
  z.download(out.data(), n * 4);
  for (float v : out) ASSERT_EQ(v, 12.f);
  rt.elementwise(op, {x.ptr()}, {z.ptr()}, n);
  EXPECT_EQ(rt.stats().compiles, compiles);
  EXPECT_THROW(plan.run({x.ptr()}, {z.ptr()}, n, std::vector<ScalarValue>{1.0}), InvalidArgument);  // f64 for an f32 scalar
}

TEST_F(ElementwiseGpu, ConversionRulesOnTheDevice) {
  ElementwiseOp op{.body = "a = x; b = x; c = x; d = x", .inputs = {{"x", DType::f32}},
                   .outputs = {{"a", DType::i32}, {"b", DType::i8}, {"c", DType::f16}, {"d", DType::bf16}}};
  const std::vector<float> x = {300.7f, -300.f, NAN, -2.9f, 3e10f, -1e30f, 65520.f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 0x1p-25f};
  const std::uint64_t n = x.size();
  auto bx = rt.alloc(n * 4), ba = rt.alloc(n * 4), bb = rt.alloc(n), bc = rt.alloc(n * 2), bd = rt.alloc(n * 2);
  bx.upload(x.data(), n * 4);
  rt.elementwise(op, {bx.ptr()}, {ba.ptr(), bb.ptr(), bc.ptr(), bd.ptr()}, n);
  std::vector<std::int32_t> a(n);
  std::vector<std::int8_t> b(n);
  std::vector<std::uint16_t> c(n), d(n);
  ba.download(a.data(), n * 4);
  bb.download(b.data(), n);
  bc.download(c.data(), n * 2);
  bd.download(d.data(), n * 2);
  EXPECT_EQ(a[0], 300);
  EXPECT_EQ(a[1], -300);
  EXPECT_EQ(a[2], 0);  // NaN -> 0
  EXPECT_EQ(a[3], -2);  // truncation
  EXPECT_EQ(a[4], 2147483647);  // saturation
  EXPECT_EQ(a[5], -2147483647 - 1);
  EXPECT_EQ(b[0], 44);  // 300 keeps its low 8 bits
  EXPECT_EQ(b[1], static_cast<std::int8_t>(-300));
  EXPECT_EQ(c[6], 0x7c00);  // 65520 rounds to +inf in f16
  EXPECT_EQ(c[7], 0x3c00);  // tie to even
  EXPECT_EQ(c[8], 0x3c02);
  EXPECT_EQ(c[9], 0x0000);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) continue;
    EXPECT_EQ(c[i], util::float_to_half_bits(x[i])) << i;
    EXPECT_EQ(d[i], util::float_to_bf16_bits(x[i])) << i;
  }
}

// gelu and gelu_tanh in float have their own short forms (they are most of a GEMM epilogue's cost):
// element by element against float64 over a dense grid of x, tails and specials included, and no
// worse than the textbook forms (0.5 x (1 + erf(x / sqrt 2)), whose relative error reaches 5e-2 at
// x = -5; 0.5 x (1 + tanh(u)), 1e-3).
TEST_F(ElementwiseGpu, GeluFormsAreAccurateElementByElement) {
  ElementwiseOp op{.body = "g = gelu(x); t = gelu_tanh(x)", .inputs = {{"x", DType::f32}},
                   .outputs = {{"g", DType::f32}, {"t", DType::f32}}};
  std::vector<float> x;
  for (double v = -12; v <= 12; v += 1.0 / 1024) x.push_back(static_cast<float>(v));
  for (float v : {0.f, -0.f, 1e-30f, -1e-30f, 1e-40f, 3e38f, -3e38f, INFINITY, NAN}) x.push_back(v);
  const std::uint64_t n = x.size();
  auto bx = rt.alloc(n * 4), bg = rt.alloc(n * 4), bt = rt.alloc(n * 4);
  bx.upload(x.data(), n * 4);
  rt.elementwise(op, {bx.ptr()}, {bg.ptr(), bt.ptr()}, n);
  std::vector<float> g(n), t(n);
  bg.download(g.data(), n * 4);
  bt.download(t.data(), n * 4);
  double worst_g = 0, worst_t = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double v = x[i];
    const double ref_g = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
    const double u = std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v);
    const double ref_t = v / (1 + std::exp(-2 * u));  // = 0.5 v (1 + tanh(u)), without its cancellation
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(g[i]) && std::isnan(t[i]));
      continue;
    }
    if (std::isinf(v) && v > 0) {
      EXPECT_EQ(g[i], INFINITY);
      EXPECT_EQ(t[i], INFINITY);
      continue;
    }
    if (std::fabs(v) > 1e38) continue;  // x^3 overflows in the tanh form's argument
    // Relative error where the value is a normal float, else absolute against max(1, |x|).
    auto error = [&](double got, double ref) {
      if (std::isnan(got)) return 1.0;
      if (std::fabs(ref) > 1e-30) return std::fabs(got - ref) / std::fabs(ref);
      return std::fabs(got - ref) / std::max(1.0, std::fabs(v));
    };
    if (v < -8) {  // values below 1e-14: absolute
      ASSERT_LT(std::fabs(g[i] - ref_g), 1e-12) << "gelu(" << v << ") = " << g[i] << ", float64 " << ref_g;
      ASSERT_LT(std::fabs(t[i] - ref_t), 1e-12) << "gelu_tanh(" << v << ") = " << t[i] << ", float64 " << ref_t;
      continue;
    }
    const double eg = error(g[i], ref_g), et = error(t[i], ref_t);
    worst_g = std::max(worst_g, eg);
    worst_t = std::max(worst_t, et);
    ASSERT_LT(eg, 1e-5) << "gelu(" << v << ") = " << g[i] << ", float64 " << ref_g;
    ASSERT_LT(et, 1e-5) << "gelu_tanh(" << v << ") = " << t[i] << ", float64 " << ref_t;
  }
  std::printf("gelu: worst relative error %.3g, gelu_tanh %.3g (x in [-8, 12])\n", worst_g, worst_t);
}

TEST_F(ElementwiseGpu, MoreThan2To32Elements) {
  // 64-bit indexing: 4 GiB + 4099 bytes of u8 in, the same out.
  const std::uint64_t n = (1ull << 32) + 4099;
  ElementwiseOp op{.body = "z = x + 1", .inputs = {{"x", DType::u8}}, .outputs = {{"z", DType::u8}}};
  auto x = rt.alloc(n), z = rt.alloc(n + 64);
  x.fill_bytes(7);
  z.fill_bytes(0xFF);
  rt.elementwise(op, {x.ptr()}, {z.ptr()}, n);
  rt.synchronize();
  for (std::uint64_t at : {std::uint64_t{0}, (std::uint64_t{1} << 31) - 8, (std::uint64_t{1} << 32) - 8, n - 4096}) {
    std::vector<std::uint8_t> h(4096 + 64);
    const std::size_t len = at == n - 4096 ? 4096 + 64 : 4096;
    z.download(h.data(), len, at);
    for (std::size_t i = 0; i < 4096; ++i) ASSERT_EQ(h[i], 8) << "element " << at + i;
    for (std::size_t i = 4096; i < len; ++i) ASSERT_EQ(h[i], 0xFF) << "guard " << i;
  }
}

TEST_F(ElementwiseGpu, BadArgumentsThrowBeforeLaunch) {
  ElementwiseOp op{.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}};
  auto buf = rt.alloc(1024);
  EXPECT_THROW(rt.elementwise(op, {buf.ptr()}, {buf.ptr()}, 16), InvalidArgument);              // one input missing
  EXPECT_THROW(rt.elementwise(op, {buf.ptr(), 0}, {buf.ptr()}, 16), InvalidArgument);           // null
  EXPECT_THROW(rt.elementwise(op, {buf.ptr() + 2, buf.ptr()}, {buf.ptr()}, 16), InvalidArgument);  // not float-aligned
}

}  // namespace
}  // namespace tilejit
