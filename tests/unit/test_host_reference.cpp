// The float64 host reference evaluates bodies with the documented semantics.
#include "ops/elementwise/host_reference.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tilejit::ops {
namespace {

TEST(HostReference, FloatBody) {
  ElementwiseOp op{.body = "z = x * alpha + y; w = max(x, 0.f)", .inputs = {{"x", DType::f32}, {"y", DType::f64}},
                   .outputs = {{"z", DType::f64}, {"w", DType::f32}}, .scalars = {{"alpha", 2.0f}}};
  float x[3] = {1.5f, -2.0f, 0.25f};
  double y[3] = {1.0, 2.0, 3.0};
  double z[3];
  float w[3];
  HostReference(op).run({x, y}, {z, w}, 3);
  EXPECT_DOUBLE_EQ(z[0], 4.0);
  EXPECT_DOUBLE_EQ(z[1], -2.0);
  EXPECT_DOUBLE_EQ(z[2], 3.5);
  EXPECT_EQ(w[1], 0.0f);
  EXPECT_EQ(w[2], 0.25f);
}

TEST(HostReference, IntegerSemantics) {
  ElementwiseOp op{.body = "q = a / b + a % b; r = a * 2.6f; s = (a << 2) | 1", .inputs = {{"a", DType::i32}, {"b", DType::i32}},
                   .outputs = {{"q", DType::i32}, {"r", DType::i8}, {"s", DType::u8}}};
  std::int32_t a[3] = {7, -7, 100};
  std::int32_t b[3] = {2, 2, 0};
  std::int32_t q[3];
  std::int8_t r[3];
  std::uint8_t s[3];
  HostReference(op).run({a, b}, {q, r, s}, 3);
  EXPECT_EQ(q[0], 3 + 1);
  EXPECT_EQ(q[1], -3 + -1);  // C++ truncation
  EXPECT_EQ(q[2], 0);        // division by zero is guarded in the reference
  EXPECT_EQ(r[0], 18);       // 18.2 truncates
  EXPECT_EQ(r[2], 4);        // 260 assigned to int, then the low 8 bits: 260 - 256
  EXPECT_EQ(s[2], static_cast<std::uint8_t>((100 << 2) | 1));
}

TEST(HostReference, FloatToIntAssignmentSaturates) {
  ElementwiseOp op{.body = "y = x * 1e10f", .inputs = {{"x", DType::f32}}, .outputs = {{"y", DType::i32}}};
  float x[3] = {1.0f, -1.0f, NAN};
  std::int32_t y[3];
  HostReference(op).run({x}, {y}, 3);
  EXPECT_EQ(y[0], 2147483647);
  EXPECT_EQ(y[1], -2147483647 - 1);
  EXPECT_EQ(y[2], 0);
}

TEST(HostReference, HalfOutputsRound) {
  ElementwiseOp op{.body = "y = x / 3.0f", .inputs = {{"x", DType::f16}}, .outputs = {{"y", DType::bf16}}};
  std::uint16_t x[1] = {0x3c00};  // 1.0
  std::uint16_t y[1];
  HostReference(op).run({x}, {y}, 1);
  EXPECT_EQ(y[0], 0x3eab);  // bf16(1/3)
}

}  // namespace
}  // namespace tilejit::ops
