// Elementwise configuration: defaults per dtype, rejected configurations, generated code.
#include "ops/elementwise/codegen.hpp"

#include <tilejit/error.hpp>

#include <gtest/gtest.h>

namespace tilejit::ops {
namespace {

ElementwiseOp op_of(DType in, DType out) {
  return {.body = "z = x", .inputs = {{"x", in}}, .outputs = {{"z", out}}};
}

TEST(ElementwiseConfig, DefaultsGive16ByteAccessesForTheNarrowestOperand) {
  auto c = resolve_config(op_of(DType::f32, DType::f32), {});
  EXPECT_EQ(c.vector_width, 4);
  EXPECT_EQ(c.threads, 256);
  EXPECT_EQ(c.tile, 1024);
  EXPECT_EQ(resolve_config(op_of(DType::bf16, DType::bf16), {}).vector_width, 8);
  EXPECT_EQ(resolve_config(op_of(DType::i8, DType::f32), {}).vector_width, 16);
  auto d = resolve_config(op_of(DType::f64, DType::f64), {});
  EXPECT_EQ(d.vector_width, 2);
  EXPECT_EQ(d.tile, 512);
  auto custom = resolve_config(op_of(DType::f32, DType::f32), {128, 2, 1024});
  EXPECT_EQ(custom.threads, 128);
  EXPECT_EQ(custom.vector_width, 2);
  EXPECT_EQ(custom.tile, 1024);
}

TEST(ElementwiseConfig, RejectsBrokenRules) {
  auto op = op_of(DType::f32, DType::f32);
  auto msg = [&](ElementwiseConfig c) {
    try {
      resolve_config(op, c);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg({256, 3, 0}).find("vector_width 3 must be 1, 2, 4, 8 or 16"), std::string::npos);
  EXPECT_NE(msg({100, 4, 0}).find("threads 100 must be a multiple of 32"), std::string::npos);
  EXPECT_NE(msg({2048, 4, 0}).find("threads 2048"), std::string::npos);
  EXPECT_NE(msg({256, 4, 1000}).find("multiple of threads * vector_width = 1024"), std::string::npos);
  EXPECT_NE(msg({32, 4, 4096}).find("at most 64"), std::string::npos);
}

TEST(ElementwiseCodegen, SourceIsAnIncludeAndTheOp) {
  ElementwiseOp op{.body = "z = x * alpha + y;", .inputs = {{"x", DType::f16}, {"y", DType::i8}},
                   .outputs = {{"z", DType::bf16}}, .scalars = {{"alpha", 2.0}, {"k", std::int64_t{3}}}};
  std::string src = elementwise_source(op);
  EXPECT_NE(src.find("#include \"elementwise.cuh\""), std::string::npos);
  EXPECT_NE(src.find("double alpha;"), std::string::npos);
  EXPECT_NE(src.find("long long k;"), std::string::npos);
  EXPECT_NE(src.find("alpha(s[0].f64), k(s[1].i64)"), std::string::npos);
  EXPECT_NE(src.find("operator()(float x, int y, float& z)"), std::string::npos);  // compute types
  EXPECT_NE(src.find("z = x * alpha + y;"), std::string::npos);
  auto c = resolve_config(op, {});
  EXPECT_EQ(elementwise_name_expression(op, c, 8),
            "tilejit::elementwise_kernel<tilejit_gen::elementwise_op, tilejit::type_list<__half, signed char>, "
            "tilejit::type_list<__nv_bfloat16>, 256, 8, 4096>");  // i8: 16-element vectors, 256 x 16
  EXPECT_EQ(elementwise_program_name(op, c, 8), "elementwise_z_eq_x_mul_alpha_plus_y_t4096v8");
}

}  // namespace
}  // namespace tilejit::ops
