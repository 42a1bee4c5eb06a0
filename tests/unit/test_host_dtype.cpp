// Host conversions used by references: f16/bf16 rounding and the integer rules of elementwise bodies.
#include "util/host_dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

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
