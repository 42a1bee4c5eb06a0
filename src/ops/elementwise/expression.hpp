// Validation of elementwise bodies before anything is compiled: a tokenizer and a small
// recursive-descent parser for assignments of C++ expressions to declared outputs.
#pragma once

#include <tilejit/elementwise.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit::ops {

struct BodyToken {
  enum class Kind { identifier, number, symbol, end };
  Kind kind;
  std::string text;
  std::size_t column;  // 1-based
};

// Splits a body into tokens; throws InvalidArgument on a character or token that may not appear.
std::vector<BodyToken> tokenize_body(std::string_view body);

// The parsed body. Variables are numbered inputs first, then outputs, then scalars.
struct BodyExpr {
  enum class Kind { number, variable, unary, binary, ternary, call };
  Kind kind = Kind::number;
  std::string text;  // the literal, operator or function name
  int variable = -1;
  std::vector<BodyExpr> args;
  int depth = 1;  // of this subtree; bounded by the parser, so walking the tree recursively is safe
  bool integral = false;  // its C++ type is an integer or bool (else floating-point)
};
struct BodyStatement {
  int output = 0;          // index into op.outputs
  std::string assign_op;   // "=", "+=", ...
  BodyExpr value;
};
struct ParsedBody {
  std::vector<BodyStatement> statements;
};

// Checks names (operands and scalars: valid, distinct, not reserved) and the body (grammar, every
// identifier declared or allowed, assignments only to outputs, every output assigned).
// Throws InvalidArgument; returns the parsed body.
ParsedBody validate_op(const ElementwiseOp& op);

// The math functions (and casts' names excluded) a body may call.
std::span<const std::string_view> allowed_functions();

// True for the C++ keywords and names the generated code reserves.
bool is_reserved_name(std::string_view name);

}  // namespace tilejit::ops
