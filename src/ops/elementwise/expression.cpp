#include "ops/elementwise/expression.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

namespace tilejit::ops {
namespace {

constexpr std::string_view kFunctions[] = {
    "abs",   "fabs",  "min",   "max",   "fmin",  "fmax",  "sqrt",  "rsqrt",  "cbrt",     "exp",
    "exp2",  "exp10", "expm1", "log",   "log2",  "log10", "log1p", "pow",    "sin",      "cos",
    "tan",   "asin",  "acos",  "atan",  "atan2", "sinh",  "cosh",  "tanh",   "asinh",    "acosh",
    "atanh", "erf",   "erfc",  "floor", "ceil",  "round", "trunc", "rint",   "fma",      "fmod",
    "hypot", "copysign", "isnan", "isinf", "isfinite", "signbit", "sigmoid", "relu", "gelu", "gelu_tanh",
    "silu"};
constexpr std::string_view kCasts[] = {"float", "double", "int"};
constexpr std::string_view kTwoArgumentFunctions[] = {"min", "max", "fmin", "fmax", "pow", "atan2", "fmod", "hypot", "copysign"};
// Operators C++ defines for integers only, and those whose result is a bool.
constexpr std::string_view kIntegerOps[] = {"%", "<<", ">>", "&", "|", "^"};
constexpr std::string_view kIntegerAssignOps[] = {"%=", "<<=", ">>=", "&=", "|=", "^="};
constexpr std::string_view kBoolOps[] = {"==", "!=", "<", "<=", ">", ">=", "&&", "||"};
constexpr std::string_view kConstants[] = {"true", "false"};

constexpr std::string_view kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    // names the generated code and CUDA reserve
    "tilejit", "tilejit_gen", "elementwise_op", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
    "half", "std", "cuda"};

// Longest first, so that "<<=" wins over "<<" and "<".
constexpr std::string_view kSymbols[] = {"<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "==", "!=",
                                         "<=", ">=", "&&", "||", "<<", ">>", "++", "--", "->", "::", "+", "-",
                                         "*", "/", "%", "<", ">", "=", "!", "~", "&", "|", "^", "?", ":", "(",
                                         ")", ",", ";"};
constexpr std::string_view kAssignOps[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};

template <std::size_t N> bool contains(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

[[noreturn]] void fail(std::string_view subject, std::string_view body, std::size_t column, const std::string& what) {
  std::string caret(column > 0 ? column - 1 : 0, ' ');
  throw InvalidArgument(fmt::format("{}: {} at column {}\n  {}\n  {}^", subject, what, column, body, caret));
}
[[noreturn]] void fail(std::string_view body, std::size_t column, const std::string& what) { fail("elementwise body", body, column, what); }

// Scans a numeric literal starting at i; returns its end or npos when malformed.
std::size_t scan_number(std::string_view s, std::size_t i) {
  std::size_t j = i;
  if (s[j] == '0' && j + 1 < s.size() && (s[j + 1] == 'x' || s[j + 1] == 'X')) {
    j += 2;
    std::size_t digits = j;
    while (j < s.size() && std::isxdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == digits) return std::string_view::npos;
  } else {
    bool any = false, is_float = false;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, any = true;
    if (j < s.size() && s[j] == '.') {
      ++j, is_float = true;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, any = true;
    }
    if (!any) return std::string_view::npos;
    if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
      std::size_t k = j + 1;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      std::size_t digits = k;
      while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
      if (k == digits) return std::string_view::npos;
      j = k, is_float = true;
    }
    if (is_float) {
      if (j < s.size() && (s[j] == 'f' || s[j] == 'F')) ++j;
      if (j < s.size() && (is_ident_char(s[j]) || s[j] == '.')) return std::string_view::npos;
      return j;
    }
  }
  // integer suffixes: u, l, ll, ul, ull, lu, llu (any case)
  std::size_t k = j;
  while (k < s.size() && (s[k] == 'u' || s[k] == 'U' || s[k] == 'l' || s[k] == 'L') && k - j < 3) ++k;
  if (k < s.size() && (is_ident_char(s[k]) || s[k] == '.')) return std::string_view::npos;
  return k;
}

class Parser {
 public:
  Parser(std::string_view body, std::vector<BodyToken> tokens, const std::vector<BodyName>& names, std::string_view what)
      : what_(what), body_(body), tokens_(std::move(tokens)) {
    int index = 0;
    for (const auto& n : names) {
      if (n.role == BodyName::Role::output) outputs_[n.name] = static_cast<int>(outputs_.size());
      variables_[n.name] = index++, integral_[n.name] = n.integral, roles_[n.name] = n.role;
    }
  }

  ParsedBody parse_body() {
    ParsedBody parsed;
    if (peek().kind == BodyToken::Kind::end) fail(body_, 1, "the body is empty: expected an assignment such as 'z = x + y'");
    while (peek().kind != BodyToken::Kind::end) {
      parsed.statements.push_back(statement());
      if (peek().text == ";") {
        next();
        continue;
      }
      if (peek().kind != BodyToken::Kind::end) unexpected(peek(), "';' between statements or the end of the body");
    }
    for (const auto& [name, index] : outputs_)
      if (!assigned_.count(name)) fail(body_, body_.size() + 1, fmt::format("output '{}' is never assigned", name));
    return parsed;
  }

 private:
  const BodyToken& peek() const { return tokens_[pos_]; }
  const BodyToken& next() { return tokens_[pos_++]; }
  bool accept(std::string_view s) {
    if (peek().kind == BodyToken::Kind::symbol && peek().text == s) return next(), true;
    return false;
  }
  void expect(std::string_view s, std::string_view context) {
    if (!accept(s)) unexpected(peek(), fmt::format("'{}' {}", s, context));
  }
  [[noreturn]] void unexpected(const BodyToken& t, const std::string& expected) {
    if (t.kind == BodyToken::Kind::end) fail(body_, t.column, fmt::format("unexpected end of the body, expected {}", expected));
    fail(body_, t.column, fmt::format("unexpected '{}', expected {}", t.text, expected));
  }

  BodyStatement statement() {
    const BodyToken& target = next();
    if (target.kind != BodyToken::Kind::identifier)
      unexpected(target, "an assignment to an output, such as 'z = ...'");
    auto out = outputs_.find(target.text);
    if (out == outputs_.end()) {
      std::string what = variables_.count(target.text)
                             ? fmt::format("'{}' is not an output and cannot be assigned", target.text)
                             : fmt::format("'{}' is not a declared output", target.text);
      fail(body_, target.column, what + fmt::format(" (outputs: {})", list(outputs_)));
    }
    assigned_.insert(target.text);
    const BodyToken& op = next();
    if (op.kind != BodyToken::Kind::symbol || !contains(kAssignOps, op.text))
      unexpected(op, fmt::format("an assignment operator after '{}'", target.text));
    BodyExpr value = expression();
    if (contains(kIntegerAssignOps, op.text)) {
      if (!integral_.at(target.text))
        fail(body_, op.column, fmt::format("'{}' needs an integer output; '{}' is floating-point", op.text, target.text));
      if (!value.integral) fail(body_, op.column, fmt::format("'{}' needs an integer right-hand side; this one is floating-point", op.text));
    }
    return {out->second, op.text, std::move(value)};
  }

  BodyExpr expression() { return ternary(); }

  // Bodies are bounded twice, so that a pathological one is an error instead of a stack overflow:
  // nesting (parentheses, calls, unary operators, conditionals), which the parser recurses into, and
  // the depth of the tree (x + x + ... + x is a chain), which later passes walk recursively.
  static constexpr int kMaxNesting = 256;
  static constexpr int kMaxDepth = 1024;
  struct NestingGuard {
    Parser& parser;
    NestingGuard(Parser& p, const BodyToken& at) : parser(p) {
      if (++parser.nesting_ > kMaxNesting)
        parser.fail(parser.body_, at.column, fmt::format("parentheses, calls and operators nested more than {} levels deep", kMaxNesting));
    }
    ~NestingGuard() { --parser.nesting_; }
  };
  BodyExpr node(BodyExpr::Kind kind, std::string text, std::vector<BodyExpr> args, const BodyToken& at) {
    BodyExpr e{kind, std::move(text), -1, std::move(args)};
    for (const auto& a : e.args) e.depth = std::max(e.depth, a.depth + 1);
    if (e.depth > kMaxDepth)
      fail(body_, at.column, fmt::format("expression more than {} operations deep; split it into several statements", kMaxDepth));
    e.integral = integral_type(e, at);
    return e;
  }
  // Whether `e` (its arguments typed already) is of integer or bool type, as C++ would have it; the
  // operators that exist only for integers are refused here, naming the operand, rather than by NVRTC.
  bool integral_type(const BodyExpr& e, const BodyToken& at) const {
    const bool all_integral = std::all_of(e.args.begin(), e.args.end(), [](const BodyExpr& a) { return a.integral; });
    switch (e.kind) {
      case BodyExpr::Kind::unary:
        if (e.text == "~" && !all_integral) fail(body_, at.column, "'~' needs an integer operand; this one is floating-point");
        return e.text == "!" || all_integral;
      case BodyExpr::Kind::binary:
        if (contains(kIntegerOps, e.text) && !all_integral)
          fail(body_, at.column,
               fmt::format("'{}' needs integer operands; its {} operand is floating-point{}", e.text,
                           e.args[0].integral ? "right" : "left", e.text == "%" ? " (fmod(a, b) is the floating-point remainder)" : ""));
        if (contains(kBoolOps, e.text)) return true;
        return all_integral;
      case BodyExpr::Kind::ternary: return e.args[1].integral && e.args[2].integral;
      case BodyExpr::Kind::call:
        if (e.text == "int" || e.text == "isnan" || e.text == "isinf" || e.text == "isfinite" || e.text == "signbit") return true;
        if (e.text == "abs" || e.text == "min" || e.text == "max" || e.text == "relu") return all_integral;
        return false;  // float, double and the other math functions
      default: return e.integral;
    }
  }

  BodyExpr ternary() {
    BodyExpr cond = binary(0);
    const BodyToken& question = peek();
    if (!accept("?")) return cond;
    NestingGuard guard(*this, question);
    std::vector<BodyExpr> args;
    args.push_back(std::move(cond));
    args.push_back(expression());
    expect(":", "of a conditional expression");
    args.push_back(ternary());
    return node(BodyExpr::Kind::ternary, "?:", std::move(args), question);
  }
  BodyExpr binary(int level) {
    // Never destroyed: a runtime's warm-up thread may still be parsing while exit() runs destructors.
    static const auto& kLevels = *new std::vector<std::vector<std::string_view>>{
        {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
    if (level == static_cast<int>(kLevels.size())) return unary();
    BodyExpr left = binary(level + 1);
    while (peek().kind == BodyToken::Kind::symbol &&
           std::find(kLevels[level].begin(), kLevels[level].end(), peek().text) != kLevels[level].end()) {
      const BodyToken& op = next();
      std::vector<BodyExpr> args;
      args.push_back(std::move(left));
      args.push_back(binary(level + 1));
      left = node(BodyExpr::Kind::binary, op.text, std::move(args), op);
    }
    return left;
  }
  BodyExpr unary() {
    for (std::string_view op : {"-", "+", "!", "~"}) {
      const BodyToken& at = peek();
      if (accept(op)) {
        NestingGuard guard(*this, at);
        std::vector<BodyExpr> args;
        args.push_back(unary());
        return node(BodyExpr::Kind::unary, std::string(op), std::move(args), at);
      }
    }
    return primary();
  }
  BodyExpr primary() {
    const BodyToken& t = next();
    switch (t.kind) {
      case BodyToken::Kind::number: {
        BodyExpr e{BodyExpr::Kind::number, t.text, -1, {}};
        const bool hex = t.text.size() > 1 && (t.text[1] == 'x' || t.text[1] == 'X');
        e.integral = hex || t.text.find_first_of(".eE") == std::string::npos;
        return e;
      }
      case BodyToken::Kind::identifier: return identifier(t);
      case BodyToken::Kind::symbol:
        if (t.text == "(") {
          NestingGuard guard(*this, t);
          BodyExpr e = expression();
          expect(")", "to close '('");
          return e;
        }
        if (contains(kAssignOps, t.text))
          fail(body_, t.column, fmt::format("assignment '{}' inside an expression; only 'output = expression' statements are allowed", t.text));
        unexpected(t, "a value: an operand, a scalar, a number, a function call or '('");
      case BodyToken::Kind::end: break;
    }
    unexpected(t, "a value");
  }
  [[noreturn]] void fail(std::string_view body, std::size_t column, const std::string& message) const {
    ops::fail(what_, body, column, message);
  }

  BodyExpr identifier(const BodyToken& t) {
    bool call = peek().text == "(";
    if (contains(kFunctions, t.text) || contains(kCasts, t.text)) {
      if (!call) fail(body_, t.column, fmt::format("function '{}' must be called, as '{}(...)'", t.text, t.text));
      next();
      if (accept(")")) fail(body_, t.column, fmt::format("function '{}' called without arguments", t.text));
      NestingGuard guard(*this, t);
      std::vector<BodyExpr> args;
      args.push_back(expression());
      while (accept(",")) args.push_back(expression());
      expect(")", fmt::format("to close the call of '{}'", t.text));
      const std::size_t arity = t.text == "fma" ? 3 : contains(kTwoArgumentFunctions, t.text) ? 2 : 1;
      if (args.size() != arity)
        fail(body_, t.column, fmt::format("'{}' takes {} argument{}, {} given", t.text, arity, arity == 1 ? "" : "s", args.size()));
      return node(BodyExpr::Kind::call, t.text, std::move(args), t);
    }
    if (contains(kConstants, t.text)) {
      BodyExpr e{BodyExpr::Kind::number, t.text == "true" ? "1" : "0", -1, {}};
      e.integral = true;
      return e;
    }
    auto v = variables_.find(t.text);
    if (v != variables_.end()) {
      if (call) fail(body_, t.column, fmt::format("'{}' is an operand or scalar, not a function", t.text));
      const BodyName::Role role = roles_.at(t.text);
      const bool vector = role == BodyName::Role::row_vector || role == BodyName::Role::column_vector;
      if (vector) {
        // A vector is read at the element's row or column: exactly name[m] or name[n].
        const char* axis = role == BodyName::Role::row_vector ? "m" : "n";
        const char* kind = role == BodyName::Role::row_vector ? "per-row" : "per-column";
        if (peek().text != "[") fail(body_, t.column, fmt::format("'{}' is a {} vector: read it as {}[{}]", t.text, kind, t.text, axis));
        next();
        const BodyToken& index = next();
        if (index.text != axis || peek().text != "]")
          fail(body_, index.column,
               fmt::format("'{}' is a {} vector: its index is {} alone, as {}[{}]", t.text, kind, axis, t.text, axis));
        next();
      } else if (peek().text == "[") {
        fail(body_, peek().column,
             fmt::format("'{}' is {}: it is read at the output element by its name alone, not indexed", t.text,
                         role == BodyName::Role::output ? "an output" : "a value (an M x N operand, a scalar or an index)"));
      }
      BodyExpr e{BodyExpr::Kind::variable, t.text, v->second, {}};
      e.integral = integral_.at(t.text);
      return e;
    }
    fail(body_, t.column,
         fmt::format("unknown identifier '{}' (declared: {}; functions: see tilejit::elementwise_functions())", t.text,
                     list(variables_)));
  }
  static std::string list(const std::map<std::string, int>& names) {
    std::string out;
    for (const auto& [n, i] : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
  }

  std::string_view what_;
  std::string_view body_;
  std::vector<BodyToken> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
  std::map<std::string, int> variables_, outputs_;
  std::map<std::string, bool> integral_;  // every declared name: whether its compute type is an integer
  std::map<std::string, BodyName::Role> roles_;
  std::set<std::string> assigned_;
};

void check_name(std::string_view role, std::string_view name) {
  if (name.empty()) throw InvalidArgument(fmt::format("elementwise {}: empty name", role));
  bool ok = is_ident_start(name[0]) && std::all_of(name.begin(), name.end(), is_ident_char);
  if (!ok)
    throw InvalidArgument(
        fmt::format("elementwise {} '{}': not a valid name (letters, digits and '_', not starting with a digit)", role, name));
  if (is_reserved_name(name) || name.starts_with("__") || contains(kFunctions, name))
    throw InvalidArgument(fmt::format("elementwise {} '{}': the name is reserved (a C++ keyword, a function or an internal name)", role, name));
}

}  // namespace

bool is_reserved_name(std::string_view name) { return contains(kKeywords, name); }

std::span<const std::string_view> allowed_functions() { return kFunctions; }

std::vector<BodyToken> tokenize_body(std::string_view s, bool indexing) {
  std::vector<BodyToken> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    std::size_t col = i + 1;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (is_ident_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_ident_char(s[j])) ++j;
      out.push_back({BodyToken::Kind::identifier, std::string(s.substr(i, j - i)), col});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = scan_number(s, i);
      if (j == std::string_view::npos) {
        std::size_t k = i;
        while (k < s.size() && (is_ident_char(s[k]) || s[k] == '.')) ++k;
        fail(s, col, fmt::format("malformed number '{}'", s.substr(i, k - i)));
      }
      out.push_back({BodyToken::Kind::number, std::string(s.substr(i, j - i)), col});
      i = j;
      continue;
    }
    switch (c) {
      case '#': fail(s, col, "'#' is not allowed: no preprocessor directives in a body");
      case '{':
      case '}': fail(s, col, fmt::format("'{}' is not allowed: a body holds assignments, not blocks", c));
      case '[':
      case ']':
        if (indexing) {
          out.push_back({BodyToken::Kind::symbol, std::string(1, c), col});
          ++i;
          continue;
        }
        fail(s, col, fmt::format("'{}' is not allowed: operands are elements, not arrays", c));
      case '"':
      case '\'': fail(s, col, "string and character literals are not allowed");
      case '.': fail(s, col, "'.' is not allowed outside a number: no member access");
      case '\\': fail(s, col, "'\\' is not allowed");
      default: break;
    }
    bool matched = false;
    for (std::string_view sym : kSymbols) {
      if (s.substr(i, sym.size()) == sym) {
        if (sym == "++" || sym == "--") fail(s, col, fmt::format("'{}' is not allowed: no side effects besides assignments to outputs", sym));
        if (sym == "->" || sym == "::") fail(s, col, fmt::format("'{}' is not allowed: no member or scope access", sym));
        out.push_back({BodyToken::Kind::symbol, std::string(sym), col});
        i += sym.size();
        matched = true;
        break;
      }
    }
    if (!matched) fail(s, col, fmt::format("character '{}' is not allowed", c));
  }
  out.push_back({BodyToken::Kind::end, "", s.size() + 1});
  return out;
}

ParsedBody validate_op(const ElementwiseOp& op) {
  if (op.inputs.empty() || op.inputs.size() > kMaxElementwiseInputs)
    throw InvalidArgument(fmt::format("elementwise: {} inputs given, expected 1 to {}", op.inputs.size(), kMaxElementwiseInputs));
  if (op.outputs.empty() || op.outputs.size() > kMaxElementwiseOutputs)
    throw InvalidArgument(fmt::format("elementwise: {} outputs given, expected 1 to {}", op.outputs.size(), kMaxElementwiseOutputs));
  if (op.scalars.size() > kMaxElementwiseScalars)
    throw InvalidArgument(fmt::format("elementwise: {} scalars given, at most {}", op.scalars.size(), kMaxElementwiseScalars));
  std::set<std::string> seen;
  auto declare = [&](std::string_view role, const std::string& name) {
    check_name(role, name);
    if (!seen.insert(name).second) throw InvalidArgument(fmt::format("elementwise {} '{}': the name is declared twice", role, name));
  };
  for (const auto& o : op.inputs) declare("input", o.name);
  for (const auto& o : op.outputs) declare("output", o.name);
  for (const auto& s : op.scalars) declare("scalar", s.name);
  if (!op.name.empty() && !std::all_of(op.name.begin(), op.name.end(), [](char c) { return is_ident_char(c) || c == '-'; }))
    throw InvalidArgument(fmt::format("elementwise op name '{}': use letters, digits, '_' and '-'", op.name));
  std::vector<BodyName> names;
  for (const auto& o : op.inputs) names.push_back({o.name, BodyName::Role::value, !dtype_is_float(o.dtype)});
  for (const auto& o : op.outputs) names.push_back({o.name, BodyName::Role::output, !dtype_is_float(o.dtype)});
  for (const auto& sc : op.scalars) names.push_back({sc.name, BodyName::Role::value, !dtype_is_float(sc.value.dtype())});
  return Parser(op.body, tokenize_body(op.body), names, "elementwise body").parse_body();
}

ParsedBody parse_body(std::string_view body, const std::vector<BodyName>& names, std::string_view what) {
  std::vector<BodyToken> tokens;
  try {
    tokens = tokenize_body(body, /*indexing=*/true);
  } catch (const InvalidArgument& e) {
    // The tokenizer names elementwise bodies; say what this body is.
    std::string message = e.what();
    const std::string_view prefix = "elementwise body";
    if (message.starts_with(prefix)) message = std::string(what) + message.substr(prefix.size());
    throw InvalidArgument(message);
  }
  return Parser(body, std::move(tokens), names, what).parse_body();
}

void check_body_name(std::string_view what, std::string_view role, std::string_view name) {
  if (name.empty()) throw InvalidArgument(fmt::format("{} {}: empty name", what, role));
  const bool ok = is_ident_start(name[0]) && std::all_of(name.begin(), name.end(), is_ident_char);
  if (!ok)
    throw InvalidArgument(fmt::format("{} {} '{}': not a valid name (letters, digits and '_', not starting with a digit)", what, role, name));
  if (is_reserved_name(name) || name.starts_with("__") || contains(kFunctions, name) || contains(kCasts, name))
    throw InvalidArgument(fmt::format("{} {} '{}': the name is reserved (a C++ keyword, a function or an internal name)", what, role, name));
}

}  // namespace tilejit::ops
