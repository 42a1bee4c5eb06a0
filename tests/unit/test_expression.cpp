// Validation of elementwise bodies and names: good bodies pass, bad ones name the token and column.
#include "ops/elementwise/expression.hpp"

#include <tilejit/elementwise.hpp>
#include <tilejit/error.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit {
namespace {

ElementwiseOp binary_op(std::string body) {
  return {.body = std::move(body),
          .inputs = {{"x", DType::f32}, {"y", DType::f32}},
          .outputs = {{"z", DType::f32}},
          .scalars = {{"alpha", 2.0f}}};
}

std::string error_of(const ElementwiseOp& op) {
  try {
    validate_elementwise(op);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(ElementwiseExpression, AcceptsCommonBodies) {
  for (const char* body : {"z = x + y", "z = x * alpha + y", "z = max(x, 0.f)", "z = tanh(x)", "z = x > y ? x : y",
                           "z = -x + +y", "z = (x + y) * (x - y) / 2.0f", "z = fma(x, y, alpha)", "z = 1e-3f * x",
                           "z = .5f * x", "z = float(int(x)) + 0x10", "z = x; z += y; z *= alpha;", "z = isnan(x) ? 0.f : x",
                           "z = pow(x, 2.f) + sqrt(fabs(y))", "z = gelu(x) + silu(y) + sigmoid(x) + relu(y)", "z = x == y && true"}) {
    EXPECT_EQ(error_of(binary_op(body)), "") << body;
  }
  ElementwiseOp two{.body = "s = a + b; d = a - b", .inputs = {{"a", DType::f16}, {"b", DType::f16}},
                    .outputs = {{"s", DType::f16}, {"d", DType::f16}}};
  EXPECT_NO_THROW(validate_elementwise(two));
}

struct BadBody {
  const char* body;
  const char* expected;  // a fragment of the message
};

void PrintTo(const BadBody& b, std::ostream* os) { *os << "'" << b.body << "'"; }

class RejectsBadBody : public ::testing::TestWithParam<BadBody> {};

TEST_P(RejectsBadBody, WithAClearMessage) {
  const auto& p = GetParam();
  std::string msg = error_of(binary_op(p.body));
  ASSERT_FALSE(msg.empty()) << "accepted: " << p.body;
  EXPECT_NE(msg.find(p.expected), std::string::npos) << "body: " << p.body << "\nmessage: " << msg;
  EXPECT_NE(msg.find("column"), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, RejectsBadBody,
    ::testing::Values(
        BadBody{"z = foo + y", "unknown identifier 'foo'"},
        BadBody{"#include <x>", "'#' is not allowed"},
        BadBody{"z = x; { z = y; }", "'{' is not allowed"},
        BadBody{"z = x[0]", "'[' is not allowed"},
        BadBody{"z = \"str\"", "string and character literals"},
        BadBody{"z = 'a'", "string and character literals"},
        BadBody{"z = x.y", "'.' is not allowed"},
        BadBody{"z = x->y", "'->' is not allowed"},
        BadBody{"z = std::sin(x)", "'::' is not allowed"},
        BadBody{"z = x++", "'++' is not allowed"},
        BadBody{"x = y", "'x' is not an output"},
        BadBody{"w = x", "'w' is not a declared output"},
        BadBody{"z = x +", "unexpected end of the body"},
        BadBody{"z = (x + y", "')' to close '('"},
        BadBody{"z = x + y)", "unexpected ')'"},
        BadBody{"z == x", "an assignment operator after 'z'"},
        BadBody{"z = x = y", "unexpected '='"},
        BadBody{"z = sin", "function 'sin' must be called"},
        BadBody{"z = x(1)", "'x' is an operand or scalar, not a function"},
        BadBody{"z = sqrt()", "called without arguments"},
        BadBody{"z = 1.2.3", "malformed number"},
        BadBody{"z = 12abc", "malformed number"},
        BadBody{"z = x @ y", "character '@' is not allowed"},
        BadBody{"z = x $ y", "character '$' is not allowed"},
        BadBody{"", "the body is empty"},
        BadBody{"z = x y", "unexpected 'y'"},
        BadBody{"z = __builtin_trap()", "unknown identifier '__builtin_trap'"},
        BadBody{"z = asm(x)", "unknown identifier 'asm'"},
        BadBody{"z = x ? y", "':' of a conditional expression"},
        // What C++ refuses for the operands' types, refused here rather than by NVRTC (x, y are f32).
        BadBody{"z = x % y", "'%' needs integer operands; its left operand is floating-point (fmod(a, b)"},
        BadBody{"z = int(x) % y", "its right operand is floating-point"},
        BadBody{"z = x << 2", "'<<' needs integer operands"},
        BadBody{"z = (x > y) & x", "'&' needs integer operands; its right operand"},
        BadBody{"z = ~x", "'~' needs an integer operand"},
        BadBody{"z = x; z %= 2", "'%=' needs an integer output; 'z' is floating-point"},
        BadBody{"z = fmod(x)", "'fmod' takes 2 arguments, 1 given"},
        BadBody{"z = sin(x, y)", "'sin' takes 1 argument, 2 given"},
        BadBody{"z = fma(x, y)", "'fma' takes 3 arguments, 2 given"},
        BadBody{"z = float(x, y)", "'float' takes 1 argument, 2 given"},
        BadBody{"return x", "'return' is not a declared output"},
        BadBody{"z = x \\ y", "'\\' is not allowed"},
        BadBody{"z = x, y", "unexpected ','"}),
    [](const auto& param_info) { return "body" + std::to_string(param_info.index); });

std::string repeat(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

// A body nested or chained far beyond any real one is an InvalidArgument, not a stack overflow (60000
// parentheses crashed the parser before the limits).
TEST(ElementwiseExpression, PathologicalNestingIsAnErrorNotACrash) {
  EXPECT_EQ(error_of(binary_op("z = " + repeat("(", 256) + "x" + repeat(")", 256))), "");
  EXPECT_EQ(error_of(binary_op("z = " + repeat("x + ", 1000) + "x")), "");
  for (const std::string& body :
       {"z = " + repeat("(", 60000) + "x" + repeat(")", 60000), "z = " + repeat("- ", 100000) + "x",
        "z = " + repeat("sin(", 20000) + "x" + repeat(")", 20000), "z = " + repeat("x > y ? x : ", 20000) + "y",
        "z = " + repeat("(", 257) + "x" + repeat(")", 257)})
    EXPECT_NE(error_of(binary_op(body)).find("nested more than 256 levels deep"), std::string::npos) << body.substr(0, 40);
  for (const std::string& body : {"z = " + repeat("x + ", 100000) + "y", "z = " + repeat("x * y - ", 50000) + "y"})
    EXPECT_NE(error_of(binary_op(body)).find("more than 1024 operations deep"), std::string::npos) << body.substr(0, 40);
}

// Random token soup: every body is accepted or refused with InvalidArgument; nothing else escapes.
TEST(ElementwiseExpression, RandomBodiesAreAcceptedOrRefusedCleanly) {
  const std::vector<std::string> pieces = {"x", "y", "z", "alpha", "w", "1", "2.5f", "0x1F", "1e-3", ".", "(", ")", ",", ";",
                                           "=", "+=", "+", "-", "*", "/", "%", "<<", "?", ":", "!", "~", "&&", "==", "sin",
                                           "max", "float", "true", "\"", "'", "#", "@", "$", "{", "}", "[", "]", " ", "\n"};
  std::mt19937 rng(std::random_device{}());
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string body = i % 2 ? "z = " : "";
    const int n = std::uniform_int_distribution<int>(0, 24)(rng);
    for (int t = 0; t < n; ++t) body += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
    try {
      validate_elementwise(binary_op(body));
      ++accepted;
    } catch (const InvalidArgument&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "body '" << body << "' threw something other than InvalidArgument: " << e.what();
    }
  }
  RecordProperty("accepted", accepted);
}

// Integer operators where C++ has them: integer operands and outputs, comparisons and bools, integer
// casts and the functions that keep an integer type.
TEST(ElementwiseExpression, IntegerOperatorsOnIntegerTypes) {
  ElementwiseOp ints{.body = "", .inputs = {{"i", DType::i32}, {"j", DType::i8}, {"x", DType::f32}}, .outputs = {{"k", DType::i64}},
                     .scalars = {{"s", std::int32_t{3}}}};
  for (const char* body : {"k = i % j", "k = ~i << 2 | j >> 1 & 0x0F ^ s", "k = i; k %= j; k <<= 1; k ^= s", "k = int(x) % 7",
                           "k = (x > 0) & (i < j)", "k = isnan(x) | 1", "k = abs(i) % 3 + max(i, j) % 2 + min(s, 1) % 2",
                           "k = (i > 0 ? i : j) % 4", "k = true ^ (x != x)", "k = relu(i) % 5", "k = -i % 3 + !x % 2"}) {
    ints.body = body;
    EXPECT_EQ(error_of(ints), "") << body;
  }
  ints.body = "k = (i > 0 ? i : x) % 4";  // a conditional with a floating branch is floating
  EXPECT_NE(error_of(ints).find("'%' needs integer operands"), std::string::npos);
  ints.body = "k = max(i, x) % 2";
  EXPECT_NE(error_of(ints).find("'%' needs integer operands"), std::string::npos);
  ints.body = "k = i; k %= 2.0f";
  EXPECT_NE(error_of(ints).find("'%=' needs an integer right-hand side"), std::string::npos);
}

TEST(ElementwiseExpression, NamesTheColumn) {
  std::string msg = error_of(binary_op("z = x + bogus"));
  EXPECT_NE(msg.find("unknown identifier 'bogus'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at column 9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("        ^"), std::string::npos) << msg;  // caret under the token
}

TEST(ElementwiseExpression, RequiresEveryOutputAssigned) {
  ElementwiseOp op{.body = "s = a + b", .inputs = {{"a", DType::f32}, {"b", DType::f32}},
                   .outputs = {{"s", DType::f32}, {"d", DType::f32}}};
  std::string msg = error_of(op);
  EXPECT_NE(msg.find("output 'd' is never assigned"), std::string::npos) << msg;
}

TEST(ElementwiseExpression, RejectsBadNames) {
  auto with_input = [](std::string name) {
    return ElementwiseOp{.body = "z = 1", .inputs = {{std::move(name), DType::f32}}, .outputs = {{"z", DType::f32}}};
  };
  EXPECT_NE(error_of(with_input("float")).find("reserved"), std::string::npos);
  EXPECT_NE(error_of(with_input("sin")).find("reserved"), std::string::npos);
  EXPECT_NE(error_of(with_input("__x")).find("reserved"), std::string::npos);
  EXPECT_NE(error_of(with_input("1x")).find("not a valid name"), std::string::npos);
  EXPECT_NE(error_of(with_input("a-b")).find("not a valid name"), std::string::npos);
  EXPECT_NE(error_of(with_input("z")).find("declared twice"), std::string::npos);
  ElementwiseOp none{.body = "z = 1", .outputs = {{"z", DType::f32}}};
  EXPECT_NE(error_of(none).find("0 inputs given"), std::string::npos);
  ElementwiseOp many{.body = "z = a", .outputs = {{"z", DType::f32}}};
  for (int i = 0; i < 9; ++i) many.inputs.push_back({"a" + std::to_string(i), DType::f32});
  EXPECT_NE(error_of(many).find("9 inputs given"), std::string::npos);
}

TEST(ElementwiseExpression, ParsesPrecedence) {
  auto parsed = ops::validate_op(binary_op("z = x + y * alpha"));
  ASSERT_EQ(parsed.statements.size(), 1u);
  const auto& e = parsed.statements[0].value;
  EXPECT_EQ(e.text, "+");
  ASSERT_EQ(e.args.size(), 2u);
  EXPECT_EQ(e.args[1].text, "*");
}

}  // namespace
}  // namespace tilejit
