// Every elementwise instantiation the GPU tests use compiles for sm_80 and sm_90a (no GPU needed).
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

namespace tilejit {
namespace {

class ElementwiseCompile : public ::testing::TestWithParam<std::tuple<std::string, DType>> {};

TEST_P(ElementwiseCompile, EveryDtypeAndVectorWidth) {
  const auto& [arch, dtype] = GetParam();
  RuntimeOptions o;
  o.arch = arch;
  Runtime rt(o);
  ElementwiseOp op{.body = "z = x * alpha + y", .inputs = {{"x", dtype}, {"y", dtype}}, .outputs = {{"z", dtype}},
                   .scalars = {{"alpha", 1.5f}}};
  const int widest = static_cast<int>(16 / dtype_size(dtype));
  for (int vec = widest; vec >= 1; vec /= 2) {
    auto info = rt.compile_elementwise(op, {.threads = 256, .vector_width = vec, .tile = 256 * std::max(vec, 16)});
    EXPECT_EQ(info.arch, arch);
    EXPECT_GT(info.cubin_bytes, 0u);
    EXPECT_FALSE(info.from_cache);
    EXPECT_EQ(info.key.size(), 32u);
  }
  // The same request again is a memory hit.
  auto again = rt.compile_elementwise(op, {.threads = 256, .vector_width = widest, .tile = 256 * std::max(widest, 16)});
  EXPECT_TRUE(again.from_cache);
}

INSTANTIATE_TEST_SUITE_P(All, ElementwiseCompile,
                         ::testing::Combine(::testing::Values("sm_80", "sm_90a"), ::testing::ValuesIn(kAllDTypes)),
                         [](const auto& param_info) {
                           return std::get<0>(param_info.param) + "_" + std::string(dtype_name(std::get<1>(param_info.param)));
                         });

class ElementwiseCompileArch : public ::testing::TestWithParam<std::string> {};

TEST_P(ElementwiseCompileArch, MixedOperandsAndLimits) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  ElementwiseOp two{.body = "s = a + b; d = a - b", .inputs = {{"a", DType::f16}, {"b", DType::f16}},
                    .outputs = {{"s", DType::f16}, {"d", DType::f16}}};
  EXPECT_GT(rt.compile_elementwise(two, {}).cubin_bytes, 0u);
  ElementwiseOp eight{.body = "o1 = a0 + a1 + a2 + a3; o2 = a4 * a5; o3 = a6 - a7; o4 = float(a0)", .outputs = {}};
  const DType in_types[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::i8, DType::u8};
  for (int i = 0; i < 8; ++i) eight.inputs.push_back({"a" + std::to_string(i), in_types[i]});
  eight.outputs = {{"o1", DType::f64}, {"o2", DType::i32}, {"o3", DType::bf16}, {"o4", DType::u8}};
  eight.scalars = {{"s0", 1.0f}, {"s1", 2.0}, {"s2", std::int32_t{3}}, {"s3", std::int64_t{4}}};
  eight.body += "; o1 += s0 + s1 + s2 + s3";
  EXPECT_GT(rt.compile_elementwise(eight, {}).cubin_bytes, 0u);
}

TEST_P(ElementwiseCompileArch, EveryAllowedFunctionCompilesForFloatingAndIntegerArguments) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  // Float, double and an integer dtype (the integer overloads): each full body takes NVRTC seconds.
  const std::vector<DType> dtypes = GetParam() == "sm_80" ? std::vector<DType>{DType::f32}
                                                         : std::vector<DType>{DType::f32, DType::f64, DType::i32};
  for (DType t : dtypes) {
    std::string body;
    for (std::string_view f : elementwise_functions()) {
      std::string args = (f == "min" || f == "max" || f == "fmin" || f == "fmax" || f == "pow" || f == "atan2" || f == "fmod" ||
                          f == "hypot" || f == "copysign")
                             ? "x, y"
                         : f == "fma" ? "x, y, x"
                                      : "x";
      body += (body.empty() ? "z = " : " + ") + std::string(f) + "(" + args + ")";
    }
    ElementwiseOp op{.body = body, .inputs = {{"x", t}, {"y", t}}, .outputs = {{"z", t}}};
    EXPECT_NO_THROW(rt.compile_elementwise(op, {})) << dtype_name(t);
  }
  // Mixed integer and floating arguments.
  ElementwiseOp mixed{.body = "z = pow(x, 2) + max(x, 0.f) + min(i, 3) + atan2(i, x) + fma(i, x, 1) + sqrt(i) + tanh(i)",
                      .inputs = {{"x", DType::f32}, {"i", DType::i32}}, .outputs = {{"z", DType::f32}}};
  EXPECT_NO_THROW(rt.compile_elementwise(mixed, {}));
}

// The ops tests/gpu launches, compiled here so CI covers every instantiation the GPU tests use.
TEST_P(ElementwiseCompileArch, OpsOfTheGpuTests) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  std::vector<ElementwiseOp> ops = {
      {.body = "s = a + b; d = tanh(a - b)", .inputs = {{"a", DType::f16}, {"b", DType::bf16}}, .outputs = {{"s", DType::f32}, {"d", DType::f16}}},
      {.body = "x2 = x * 2.f + 1.f", .inputs = {{"x", DType::f32}}, .outputs = {{"x2", DType::f32}}},
      {.body = "z = x * alpha", .inputs = {{"x", DType::f32}}, .outputs = {{"z", DType::f32}}, .scalars = {{"alpha", 2.f}}},
      {.body = "a = x; b = x; c = x; d = x", .inputs = {{"x", DType::f32}},
       .outputs = {{"a", DType::i32}, {"b", DType::i8}, {"c", DType::f16}, {"d", DType::bf16}}},
      {.body = "z = x + 1", .inputs = {{"x", DType::u8}}, .outputs = {{"z", DType::u8}}},
      {.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}},
  };
  for (DType t : kAllDTypes) ops.push_back({.body = "z = x - y", .inputs = {{"x", t}, {"y", t}}, .outputs = {{"z", t}}});
  for (const auto& op : ops) {
    const int widest = 16 / static_cast<int>(std::min(dtype_size(op.inputs[0].dtype), dtype_size(op.outputs[0].dtype)));
    for (int vec = widest; vec >= 1; vec /= 2) {  // misaligned pointers select narrower variants
      ElementwiseConfig c{};
      c.vector_width = vec;
      EXPECT_NO_THROW(rt.compile_elementwise(op, c)) << op.body << " vec " << vec;
    }
  }
}

TEST_P(ElementwiseCompileArch, TypeErrorsComeBackWithTheLog) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  // Valid for the validator, but out of float's range: NVRTC's log says why.
  ElementwiseOp op{.body = "z = x + 1e99999f * y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}};
  try {
    rt.compile_elementwise(op, {});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("out of range"), std::string::npos) << e.log();
    EXPECT_NE(e.instantiation().find("z = x + 1e99999f * y"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("elementwise_z_eq_x_plus_1e99999f_mul_y"), std::string::npos) << e.what();
  }
  // What C++ would refuse for its types (an integer operator on floats, a wrong argument count) is
  // refused before compiling, naming the operand.
  op.body = "z = x % y";
  EXPECT_THROW(rt.compile_elementwise(op, {}), InvalidArgument);
}

// Functions of arguments of different types (max(x, 0) or pow(y, 2.0) for a float, exp of a comparison)
// are ambiguous among CUDA's overloads; the elementwise helpers compute them in one type, every dtype.
// Found by compiling random bodies that validation accepted (2026-11-30).
TEST_P(ElementwiseCompileArch, MixedTypeArgumentsCompile) {
  RuntimeOptions o;
  o.arch = GetParam();
  Runtime rt(o);
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::i8}) {
    ElementwiseOp op{.body = "z = max(x, 0) + min(1, x) + max(2.5f, x) + min(x, 3ll) + max(n, x) + min(x, n) + pow(x, 2.0) + "
                             "pow(x, 2) + atan2(1.0f, x) + fma(x, 2, 1.0) + fma(x, x, x) + exp(x > 0) + log1p(x == x) + relu(x != 0)",
                     .inputs = {{"x", t}},
                     .outputs = {{"z", t}},
                     .scalars = {{"n", std::int32_t{4}}}};
    EXPECT_NO_THROW(rt.compile_elementwise(op, {})) << dtype_name(t);
  }
  // Bodies the validator types as integer also compile (it agrees with NVRTC).
  ElementwiseOp ints{.body = "", .inputs = {{"i", DType::i32}, {"j", DType::i8}, {"x", DType::f32}}, .outputs = {{"k", DType::i64}},
                     .scalars = {{"s", std::int32_t{3}}}};
  for (const char* body : {"k = ~i << 2 | j >> 1 & 0x0F ^ s", "k = i; k %= j; k <<= 1; k ^= s", "k = (x > 0) & (i < j) | isnan(x)",
                           "k = abs(i) % 3 + max(i, j) % 2 + min(s, 1ll) % 2 + relu(i) % 5 + (i > 0 ? i : j) % 4 - !x % 2"}) {
    ints.body = body;
    EXPECT_NO_THROW(rt.compile_elementwise(ints, {})) << body;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, ElementwiseCompileArch, ::testing::Values("sm_80", "sm_90a"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace tilejit
