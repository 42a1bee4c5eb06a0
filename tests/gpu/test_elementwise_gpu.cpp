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

// e4m3 and e5m2 on the device convert as the host references do: every code decoded, and floats at
// every code, every rounding midpoint and its neighbours, beyond the range and random, encoded bit for
// bit (NaN as NaN); a double assigned to an 8-bit float output rounds to float first.
TEST_F(ElementwiseGpu, Fp8ConversionsMatchTheHost) {
  std::vector<double> probes = {0.0, -0.0, 1e-30, 1e6, -1e6, 3e38, HUGE_VAL, -HUGE_VAL, NAN};
  for (int b = 0; b < 256; ++b)
    for (double v : {util::e4m3_bits_to_double(static_cast<std::uint8_t>(b)), util::e5m2_bits_to_double(static_cast<std::uint8_t>(b))})
      if (std::isfinite(v))
        for (double w : {v, v * (1 + 1.0 / 32), v * (1 + 1.0 / 16), v * (1 + 1.0 / 8), v * (1 + 3.0 / 16)})
          for (double u : {w, std::nextafter(w, 0.0), std::nextafter(w, 1e300)}) probes.push_back(u);
  std::uint64_t s = 99;
  for (int i = 0; i < 4096; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    probes.push_back((i % 2 ? -1.0 : 1.0) * std::ldexp(1.0 + static_cast<double>(s >> 11) * 0x1.0p-53, static_cast<int>(s % 44) - 28));
  }
  const std::uint64_t n = probes.size();
  std::vector<float> xf(n);
  std::vector<std::uint8_t> codes(n);
  for (std::uint64_t i = 0; i < n; ++i) xf[i] = static_cast<float>(probes[i]), codes[i] = static_cast<std::uint8_t>(i);
  ElementwiseOp encode{.body = "a4 = xf; a5 = xf; b4 = xd; b5 = xd",
                       .inputs = {{"xf", DType::f32}, {"xd", DType::f64}},
                       .outputs = {{"a4", DType::e4m3}, {"a5", DType::e5m2}, {"b4", DType::e4m3}, {"b5", DType::e5m2}}};
  ElementwiseOp decode{.body = "f4 = q4; f5 = q5", .inputs = {{"q4", DType::e4m3}, {"q5", DType::e5m2}},
                       .outputs = {{"f4", DType::f32}, {"f5", DType::f32}}};
  auto bxf = rt.alloc(n * 4), bxd = rt.alloc(n * 8), bq4 = rt.alloc(n), bq5 = rt.alloc(n);
  auto ba4 = rt.alloc(n), ba5 = rt.alloc(n), bb4 = rt.alloc(n), bb5 = rt.alloc(n), bf4 = rt.alloc(n * 4), bf5 = rt.alloc(n * 4);
  bxf.upload(xf.data(), n * 4);
  bxd.upload(probes.data(), n * 8);
  bq4.upload(codes.data(), n);
  bq5.upload(codes.data(), n);
  rt.elementwise(encode, {bxf.ptr(), bxd.ptr()}, {ba4.ptr(), ba5.ptr(), bb4.ptr(), bb5.ptr()}, n);
  rt.elementwise(decode, {bq4.ptr(), bq5.ptr()}, {bf4.ptr(), bf5.ptr()}, n);
  std::vector<std::uint8_t> a4(n), a5(n), b4(n), b5(n);
  std::vector<float> f4(n), f5(n);
  ba4.download(a4.data(), n);
  ba5.download(a5.data(), n);
  bb4.download(b4.data(), n);
  bb5.download(b5.data(), n);
  bf4.download(f4.data(), n * 4);
  bf5.download(f5.data(), n * 4);
  auto same = [](std::uint8_t got, std::uint8_t want, double (*decoded)(std::uint8_t)) {
    return std::isnan(decoded(want)) ? std::isnan(decoded(got)) : got == want;
  };
  for (std::uint64_t i = 0; i < n; ++i) {
    const double x = xf[i], xd = probes[i];
    ASSERT_TRUE(same(a4[i], util::double_to_e4m3_bits(x), util::e4m3_bits_to_double)) << "e4m3 from float " << x << ": " << int(a4[i]);
    ASSERT_TRUE(same(a5[i], util::double_to_e5m2_bits(x), util::e5m2_bits_to_double)) << "e5m2 from float " << x << ": " << int(a5[i]);
    const double xr = static_cast<float>(xd);
    ASSERT_TRUE(same(b4[i], util::double_to_e4m3_bits(xr), util::e4m3_bits_to_double)) << "e4m3 from double " << xd << ": " << int(b4[i]);
    ASSERT_TRUE(same(b5[i], util::double_to_e5m2_bits(xr), util::e5m2_bits_to_double)) << "e5m2 from double " << xd << ": " << int(b5[i]);
    if (i < 256) {
      const double d4 = util::e4m3_bits_to_double(codes[i]), d5 = util::e5m2_bits_to_double(codes[i]);
      ASSERT_TRUE(std::isnan(d4) ? std::isnan(f4[i]) : f4[i] == d4) << "e4m3 code " << i << ": " << f4[i];
      ASSERT_TRUE(std::isnan(d5) ? std::isnan(f5[i]) : f5[i] == d5) << "e5m2 code " << i << ": " << f5[i];
    }
  }
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
