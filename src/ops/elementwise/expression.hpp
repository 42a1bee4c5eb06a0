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
// `indexing`: '[' and ']' may appear (GEMM epilogues read vectors as bias[n]).
std::vector<BodyToken> tokenize_body(std::string_view body, bool indexing = false);

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

// A name a body may use, for bodies other than an elementwise op's (a GEMM epilogue's): a value
// (an operand or scalar read at the element), an output, or a vector read at the element's row
// (name[m]) or column (name[n]). Variables are numbered in the order given.
struct BodyName {
  enum class Role { value, output, row_vector, column_vector };
  std::string name;
  Role role = Role::value;
  bool integral = false;  // its compute type is an integer
};
// Parses `body` over `names`; every message starts with `what` ("GEMM epilogue") and points at the
// column. Throws InvalidArgument.
ParsedBody parse_body(std::string_view body, const std::vector<BodyName>& names, std::string_view what);
// Checks a name a body declares: valid identifier, not reserved; `role` says what it names.
void check_body_name(std::string_view what, std::string_view role, std::string_view name);

// Checks names (operands and scalars: valid, distinct, not reserved) and the body (grammar, every
// identifier declared or allowed, assignments only to outputs, every output assigned).
// Throws InvalidArgument; returns the parsed body.
ParsedBody validate_op(const ElementwiseOp& op);

// The math functions (and casts' names excluded) a body may call.
std::span<const std::string_view> allowed_functions();

// True for the C++ keywords and names the generated code reserves.
bool is_reserved_name(std::string_view name);

}  // namespace tilejit::ops
