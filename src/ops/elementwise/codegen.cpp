#include "ops/elementwise/codegen.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace tilejit::ops {

std::string_view device_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16: return "__half";
    case DType::bf16: return "__nv_bfloat16";
    case DType::i32: return "int";
    case DType::i64: return "long long";
    case DType::i8: return "signed char";
    case DType::u8: return "unsigned char";
    case DType::e4m3: return "__nv_fp8_e4m3";
    case DType::e5m2: return "__nv_fp8_e5m2";
  }
  return "?";
}

std::string_view compute_type(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
    case DType::e4m3:
    case DType::e5m2: return "float";
    case DType::f64: return "double";
    case DType::i32:
    case DType::i8:
    case DType::u8: return "int";
    case DType::i64: return "long long";
  }
  return "?";
}

std::string_view scalar_member(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    default: return "i64";
  }
}

std::string trimmed_body(std::string body) {
  while (!body.empty() && (body.back() == ' ' || body.back() == '\n' || body.back() == ';')) body.pop_back();
  return body;
}

namespace {

std::size_t min_size(const ElementwiseOp& op) {
  std::size_t m = 16;
  for (const auto& o : op.inputs) m = std::min(m, dtype_size(o.dtype));
  for (const auto& o : op.outputs) m = std::min(m, dtype_size(o.dtype));
  return m;
}
}  // namespace

ElementwiseConfig resolve_config(const ElementwiseOp& op, const ElementwiseConfig& in) {
  ElementwiseConfig c = in;
  const int smallest = static_cast<int>(min_size(op));
  if (c.vector_width == 0) c.vector_width = 16 / smallest;  // 16-byte accesses for the narrowest operand
  if (c.threads == 0) c.threads = 256;
  // One 16-byte access per operand per thread: on the H200, tiles of 1, 2, 4 and 8 vectors per
  // thread all ran at the copy bandwidth (docs/benchmarks.md), and every unrolled element costs
  // NVRTC time (a gelu body over 16 elements compiles in twice the time of 8).
  if (c.tile == 0) c.tile = c.threads * c.vector_width;
  const int v = c.vector_width;
  if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
    throw InvalidArgument(fmt::format("elementwise config: vector_width {} must be 1, 2, 4, 8 or 16", v));
  if (c.threads < 32 || c.threads > 1024 || c.threads % 32 != 0)
    throw InvalidArgument(fmt::format("elementwise config: threads {} must be a multiple of 32 in [32, 1024]", c.threads));
  if (c.tile <= 0 || c.tile % (c.threads * v) != 0)
    throw InvalidArgument(fmt::format("elementwise config: tile {} must be a positive multiple of threads * vector_width = {}",
                                      c.tile, c.threads * v));
  if (c.tile / c.threads > 64)
    throw InvalidArgument(fmt::format("elementwise config: tile {} gives {} elements per thread; at most 64 fit in registers",
                                      c.tile, c.tile / c.threads));
  return c;
}

std::string elementwise_source(const ElementwiseOp& op) {
  std::string members, init, params;
  for (std::size_t i = 0; i < op.scalars.size(); ++i) {
    const auto& s = op.scalars[i];
    members += fmt::format("  {} {};\n", compute_type(s.value.dtype()), s.name);
    init += fmt::format("{}{}(s[{}].{})", init.empty() ? " : " : ", ", s.name, i, scalar_member(s.value.dtype()));
  }
  for (const auto& o : op.inputs) params += fmt::format("{}{} {}", params.empty() ? "" : ", ", compute_type(o.dtype), o.name);
  for (const auto& o : op.outputs) params += fmt::format(", {}& {}", compute_type(o.dtype), o.name);
  bool half_types = false, fp8_types = false;
  for (const auto* list : {&op.inputs, &op.outputs})
    for (const auto& o : *list) {
      half_types = half_types || o.dtype == DType::f16 || o.dtype == DType::bf16;
      fp8_types = fp8_types || o.dtype == DType::e4m3 || o.dtype == DType::e5m2;
    }
  const std::string body = trimmed_body(op.body);
  return fmt::format(
      "// tilejit elementwise{}{}\n"
      "{}"
      "#include \"elementwise.cuh\"\n\n"
      "namespace tilejit_gen {{\n"
      "struct elementwise_op {{\n"
      "{}"
      "  __device__ explicit elementwise_op(const tilejit::elementwise_scalar* s){} {{ (void)s; }}\n"
      "  __device__ __forceinline__ void operator()({}) const {{\n"
      "    using namespace tilejit::elementwise_functions;\n"
      "    {};\n"
      "  }}\n"
      "}};\n"
      "}}  // namespace tilejit_gen\n",
      op.name.empty() ? "" : " ", op.name,
      fp8_types    ? "#define TILEJIT_FP8_TYPES 1  // an e4m3/e5m2 operand\n"
      : half_types ? ""
                   : "#define TILEJIT_NO_HALF_TYPES 1  // no f16/bf16 operand\n",
      members,
      init, params, body);
}

std::string elementwise_name_expression(const ElementwiseOp& op, const ElementwiseConfig& c, int vector_width) {
  std::string ins, outs;
  for (const auto& o : op.inputs) ins += fmt::format("{}{}", ins.empty() ? "" : ", ", device_type(o.dtype));
  for (const auto& o : op.outputs) outs += fmt::format("{}{}", outs.empty() ? "" : ", ", device_type(o.dtype));
  return fmt::format(
      "tilejit::elementwise_kernel<tilejit_gen::elementwise_op, tilejit::type_list<{}>, tilejit::type_list<{}>, {}, {}, {}>",
      ins, outs, c.threads, vector_width, c.tile);
}

std::string elementwise_program_name(const ElementwiseOp& op, const ElementwiseConfig& c, int vector_width) {
  std::string slug;
  if (!op.name.empty()) {
    slug = op.name;
  } else {
    for (char ch : op.body) {
      if (std::isalnum(static_cast<unsigned char>(ch))) slug += ch;
      else if (ch == '=') slug += "_eq_";
      else if (ch == '+') slug += "_plus_";
      else if (ch == '-') slug += "_minus_";
      else if (ch == '*') slug += "_mul_";
      else if (ch == '/') slug += "_div_";
      else if (!slug.empty() && slug.back() != '_') slug += '_';
      if (slug.size() > 48) break;
    }
    std::string collapsed;
    for (char ch : slug)
      if (!(ch == '_' && !collapsed.empty() && collapsed.back() == '_')) collapsed += ch;
    while (!collapsed.empty() && collapsed.back() == '_') collapsed.pop_back();
    slug = collapsed;
  }
  for (auto& ch : slug)
    if (ch == '-') ch = '_';
  return fmt::format("elementwise_{}_t{}v{}", slug, c.tile, vector_width);
}

}  // namespace tilejit::ops
