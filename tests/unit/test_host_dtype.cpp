// Host conversions used by references: f16/bf16 rounding and the integer rules of elementwise bodies.
#include "util/host_dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace tilejit::util {
namespace {

TEST(HostDtype, HalfKnownValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65519.0f), 0x7bff);  // below the rounding midpoint
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie to even 2
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie, even stays
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie, odd rounds up
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t h = 0; h < 0x7c00; ++h)  // every finite positive half round-trips exactly
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(static_cast<std::uint16_t>(h))), h) << h;
}

TEST(HostDtype, Bf16KnownValues) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(-1.0f), 0xbf80);
  float tie;
  std::uint32_t bits = 0x3f808000;  // exactly between 0x3f80 and 0x3f81: even stays
  std::memcpy(&tie, &bits, 4);
  EXPECT_EQ(float_to_bf16_bits(tie), 0x3f80);
  bits = 0x3f818000;  // between 0x3f81 and 0x3f82: odd rounds up
  std::memcpy(&tie, &bits, 4);
  EXPECT_EQ(float_to_bf16_bits(tie), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_bits_to_float(0x4049), 3.140625f);
}

// The 8-bit floats against an oracle that knows nothing of their bit layout: the nearest of the
// decoded finite codes (ties to the even code, beyond the largest finite value the largest).
void check_fp8_encoder(std::uint8_t (*encode)(double), double (*decode)(std::uint8_t), double max_finite) {
  std::vector<std::pair<double, std::uint8_t>> finite;  // positive finite values, ascending
  for (int b = 0; b < 0x80; ++b) {
    const double v = decode(static_cast<std::uint8_t>(b));
    if (std::isfinite(v)) finite.push_back({v, static_cast<std::uint8_t>(b)});
  }
  for (std::size_t i = 1; i < finite.size(); ++i) ASSERT_LT(finite[i - 1].first, finite[i].first) << i;
  ASSERT_EQ(finite.back().first, max_finite);
  auto oracle = [&](double v) -> std::uint8_t {
    const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
    const double a = std::fabs(v);
    if (a >= max_finite) return sign | finite.back().second;
    std::size_t i = 0;
    while (finite[i + 1].first <= a) ++i;  // finite[i] <= a < finite[i + 1]
    const double lo = finite[i].first, hi = finite[i + 1].first;
    std::uint8_t code;
    if (a - lo < hi - a) code = finite[i].second;
    else if (a - lo > hi - a) code = finite[i + 1].second;
    else code = (finite[i].second & 1) ? finite[i + 1].second : finite[i].second;
    return sign | code;
  };
  std::vector<double> probes = {0.0, -0.0, 1e-300, -1e-300, max_finite * 1.01, max_finite * 64, HUGE_VAL, -HUGE_VAL};
  for (std::size_t i = 0; i + 1 < finite.size(); ++i) {
    const double lo = finite[i].first, hi = finite[i + 1].first, mid = (lo + hi) / 2;
    for (double v : {lo, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), hi}) {
      probes.push_back(v);
      probes.push_back(-v);
    }
  }
  std::uint64_t s = 12345;
  for (int i = 0; i < 20000; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(s >> 11) * 0x1.0p-53;
    probes.push_back((i % 2 ? -1 : 1) * std::ldexp(1.0 + u, static_cast<int>(s % 40) - 24));
  }
  for (double v : probes) ASSERT_EQ(encode(v), oracle(v)) << v;
  EXPECT_TRUE(std::isnan(decode(encode(std::nan("")))));
  for (const auto& [v, code] : finite) {  // every finite code round-trips, both signs
    ASSERT_EQ(encode(v), code);
    if (v != 0) {
      ASSERT_EQ(encode(-v), code | 0x80);
    }
  }
}

TEST(HostDtype, E4m3RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(e4m3_bits_to_double(0x7e), 448.0);
  EXPECT_EQ(e4m3_bits_to_double(0x01), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(e4m3_bits_to_double(0x08), std::ldexp(1.0, -6));  // smallest normal
  EXPECT_EQ(e4m3_bits_to_double(0x38), 1.0);
  EXPECT_TRUE(std::isnan(e4m3_bits_to_double(0x7f)) && std::isnan(e4m3_bits_to_double(0xff)));
  EXPECT_EQ(double_to_e4m3_bits(1e6), 0x7e);    // saturates
  EXPECT_EQ(double_to_e4m3_bits(-HUGE_VAL), 0xfe);
  EXPECT_EQ(double_to_e4m3_bits(300.7), 0x79);  // 288 = 1.125 * 2^8 (spacing 32 from 256)
  check_fp8_encoder(double_to_e4m3_bits, e4m3_bits_to_double, 448.0);
}

TEST(HostDtype, E5m2RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(e5m2_bits_to_double(0x7b), 57344.0);
  EXPECT_EQ(e5m2_bits_to_double(0x7c), HUGE_VAL);
  EXPECT_EQ(e5m2_bits_to_double(0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(e5m2_bits_to_double(0x3c), 1.0);
  for (int b : {0x7d, 0x7e, 0x7f, 0xfd}) EXPECT_TRUE(std::isnan(e5m2_bits_to_double(static_cast<std::uint8_t>(b)))) << b;
  EXPECT_EQ(double_to_e5m2_bits(HUGE_VAL), 0x7b);  // saturating: infinity becomes the largest finite
  check_fp8_encoder(double_to_e5m2_bits, e5m2_bits_to_double, 57344.0);
}

TEST(HostDtype, IntegerRules) {
  std::int8_t i8[4];
  store_element_from_float(DType::i8, i8, 0, 300.7);  // saturates
  store_element_from_float(DType::i8, i8, 1, -300.0);
  store_element_from_float(DType::i8, i8, 2, std::nan(""));  // NaN -> 0
  store_element_from_float(DType::i8, i8, 3, -2.9);  // truncates toward zero
  EXPECT_EQ(i8[0], 127);
  EXPECT_EQ(i8[1], -128);
  EXPECT_EQ(i8[2], 0);
  EXPECT_EQ(i8[3], -2);
  std::uint8_t u8[2];
  store_element_from_int(DType::u8, u8, 0, 300);  // keeps the low 8 bits
  store_element_from_int(DType::u8, u8, 1, -1);
  EXPECT_EQ(u8[0], 44);
  EXPECT_EQ(u8[1], 255);
  std::int32_t i32;
  store_element_from_float(DType::i32, &i32, 0, 1e20);
  EXPECT_EQ(i32, std::numeric_limits<std::int32_t>::max());
  std::int64_t i64;
  store_element_from_float(DType::i64, &i64, 0, -1e30);
  EXPECT_EQ(i64, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(load_element(DType::u8, u8, 1), 255.0);
}

}  // namespace
}  // namespace tilejit::util
