#include "ops/gemm/epilogue.hpp"

#include "ops/elementwise/codegen.hpp"
#include "ops/gemm/gemm_internal.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

// xxHash header-only, as elsewhere in the library (see CMakeLists.txt).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <functional>
#include <set>

namespace tilejit::ops {
namespace {

constexpr const char* kWhat = "GEMM epilogue";

// The names every body sees, in the order of their variables.
constexpr const char* kBuiltins[] = {"acc", "c", "alpha", "beta", "m", "n", "d"};

bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

std::int64_t tight_ld(const MatrixRef& r, std::int64_t rows, std::int64_t cols) {
  return r.ld ? r.ld : std::max<std::int64_t>(1, r.layout == Layout::row_major ? cols : rows);
}

// beta * c only where beta is not 0: a plan's kernel knows (0 * c would still read C, and turn an
// Inf or NaN left in D into NaN).
std::string fixed_form_body(const GemmEpilogue& e, bool with_c) {
  std::string v = with_c ? "acc + beta * c" : "acc";
  if (e.bias) v += " + bias[n]";
  switch (e.activation) {
    case Activation::none: break;
    case Activation::relu: v = "relu(" + v + ")"; break;
    case Activation::gelu: v = "gelu(" + v + ")"; break;
    case Activation::silu: v = "silu(" + v + ")"; break;
  }
  return "d = " + v;
}

void mark_used(const BodyExpr& e, std::vector<bool>& used) {
  if (e.kind == BodyExpr::Kind::variable && e.variable >= 0) used[static_cast<std::size_t>(e.variable)] = true;
  for (const auto& a : e.args) mark_used(a, used);
}

}  // namespace

bool EpilogueBody::reads(std::string_view name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i].name == name) return used[i];
  return false;
}

bool epilogue_reads_c(const GemmEpilogue& e) {
  // The fixed form reads C where beta != 0, as GEMMs do. A body: whether an identifier is `c`. This
  // runs on every launch with the call's problem (Runtime::gemm, GemmPlan::run with pointers), so
  // it scans instead of tokenizing: identifiers are [A-Za-z_][A-Za-z0-9_]*, and a numeric literal
  // (a digit, or a '.' before one) runs over letters, digits, '.' and an exponent's sign (1e-5f,
  // 0x1p+3). The language has no string or character literals; a body this misreads is not valid,
  // and parse_epilogue refuses it.
  const std::string_view s = e.body;
  auto digit = [](char ch) { return ch >= '0' && ch <= '9'; };
  auto word = [&](char ch) { return digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; };
  for (std::size_t i = 0; i < s.size();) {
    const char ch = s[i];
    if (digit(ch) || (ch == '.' && i + 1 < s.size() && digit(s[i + 1]))) {
      for (++i; i < s.size(); ++i) {
        const char x = s[i];
        const bool sign = (x == '+' || x == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E' || s[i - 1] == 'p' || s[i - 1] == 'P');
        if (!word(x) && x != '.' && !sign) break;
      }
    } else if (word(ch)) {
      const std::size_t start = i;
      while (i < s.size() && word(s[i])) ++i;
      if (i - start == 1 && ch == 'c') return true;
    } else {
      ++i;
    }
  }
  return false;
}

void check_epilogue_operands(const GemmProblem& p) {
  const GemmEpilogue& e = p.epilogue;
  const bool any = p.m > 0 && p.n > 0;
  for (const auto& v : e.vectors) {
    if (!is_float(v.dtype))
      throw InvalidArgument(fmt::format("{} vector '{}': dtype {} is not supported (f32, f16 or bf16)", kWhat, v.name, dtype_name(v.dtype)));
    if (any && v.ptr == 0) throw InvalidArgument(fmt::format("{} vector '{}': null pointer", kWhat, v.name));
    if (v.ptr % dtype_size(v.dtype) != 0)
      throw InvalidArgument(fmt::format("{} vector '{}': pointer not aligned to its {}-byte elements", kWhat, v.name, dtype_size(v.dtype)));
    if (v.batch_stride < 0) throw InvalidArgument(fmt::format("{} vector '{}': negative batch stride", kWhat, v.name));
  }
  auto check_mn = [&](const char* role, const EpilogueMatrix& x) {
    MatrixRef r = x.matrix;
    r.ld = tight_ld(r, p.m, p.n);
    check_gemm_matrix(fmt::format("epilogue {} '{}'", role, x.name).c_str(), r, p.m, p.n, p.batch, any);
  };
  for (const auto& x : e.inputs) check_mn("input", x);
  for (const auto& x : e.outputs) check_mn("output", x);
  for (const auto& s : e.scalars) {
    const DType t = s.value.dtype();
    if (t != DType::f32 && t != DType::f64 && t != DType::i32 && t != DType::i64)
      throw InvalidArgument(fmt::format("{} scalar '{}': dtype {} (f32, f64, i32 or i64)", kWhat, s.name, dtype_name(t)));
  }
}

EpilogueBody parse_epilogue(const GemmProblem& p) {
  const GemmEpilogue& e = p.epilogue;
  EpilogueBody b;
  b.fixed_form = e.body.empty();
  if (b.fixed_form) {
    if (!e.vectors.empty() || !e.inputs.empty() || !e.outputs.empty() || !e.scalars.empty())
      throw InvalidArgument(fmt::format("{}: vectors, inputs, outputs and scalars are read by a body; give GemmEpilogue::body "
                                        "(e.g. \"d = gelu(acc + bias[n])\")",
                                        kWhat));
    b.text = fixed_form_body(e, p.beta != 0.f);
  } else {
    if (e.bias || e.activation != Activation::none)
      throw InvalidArgument(fmt::format("{}: with a body, write the bias and the activation in it (a vector bias read as "
                                        "bias[n], e.g. \"d = gelu(acc + bias[n])\") instead of GemmEpilogue::bias / activation",
                                        kWhat));
    b.text = e.body;
  }
  if (e.vectors.size() + e.inputs.size() > kMaxEpilogueOperands)
    throw InvalidArgument(fmt::format("{}: {} vectors and {} matrix inputs, at most {} together", kWhat, e.vectors.size(), e.inputs.size(),
                                      kMaxEpilogueOperands));
  if (e.outputs.size() > kMaxEpilogueOutputs)
    throw InvalidArgument(fmt::format("{}: {} outputs beside d, at most {}", kWhat, e.outputs.size(), kMaxEpilogueOutputs));
  if (e.scalars.size() > kMaxEpilogueScalars)
    throw InvalidArgument(fmt::format("{}: {} scalars, at most {}", kWhat, e.scalars.size(), kMaxEpilogueScalars));

  std::set<std::string> seen(std::begin(kBuiltins), std::end(kBuiltins));
  auto declare = [&](const char* role, const std::string& name) {
    check_body_name(kWhat, role, name);
    if (std::find(std::begin(kBuiltins), std::end(kBuiltins), name) != std::end(kBuiltins))
      throw InvalidArgument(fmt::format("{} {} '{}': the name is the body's own (acc, c, alpha, beta, m, n, d)", kWhat, role, name));
    if (!seen.insert(name).second) throw InvalidArgument(fmt::format("{} {} '{}': the name is declared twice", kWhat, role, name));
  };
  for (const auto& v : e.vectors) declare("vector", v.name);
  for (const auto& x : e.inputs) declare("input", x.name);
  for (const auto& x : e.outputs) declare("output", x.name);
  for (const auto& s : e.scalars) declare("scalar", s.name);
  check_epilogue_operands(p);

  using Role = BodyName::Role;
  b.names = {{"acc", Role::value, false}, {"c", Role::value, false},   {"alpha", Role::value, false},
             {"beta", Role::value, false}, {"m", Role::value, true},   {"n", Role::value, true}};
  if (b.fixed_form && e.bias) b.names.push_back({"bias", Role::column_vector, false});
  for (const auto& v : e.vectors) b.names.push_back({v.name, v.axis == EpilogueAxis::row ? Role::row_vector : Role::column_vector, false});
  for (const auto& x : e.inputs) b.names.push_back({x.name, Role::value, false});
  for (const auto& s : e.scalars) b.names.push_back({s.name, Role::value, !dtype_is_float(s.value.dtype())});
  b.names.push_back({"d", Role::output, false});
  for (const auto& x : e.outputs) b.names.push_back({x.name, Role::output, false});
  b.parsed = parse_body(b.text, b.names, kWhat);
  b.used.assign(b.names.size(), false);
  for (const auto& st : b.parsed.statements) mark_used(st.value, b.used);
  return b;
}

namespace {
bool along_kernel_columns(EpilogueAxis axis, bool swapped) { return (axis == EpilogueAxis::column) != swapped; }
}  // namespace

int epilogue_column_vector_count(const GemmEpilogue& e, bool swapped) {
  int count = e.body.empty() && e.bias && !swapped ? 1 : 0;
  for (const auto& v : e.vectors) count += along_kernel_columns(v.axis, swapped) && is_float(v.dtype) ? 1 : 0;
  return count;
}

std::string epilogue_source(const GemmProblem& p, const EpilogueBody& b, bool swapped, bool beta_zero) {
  const GemmEpilogue& e = p.epilogue;
  std::string decl;
  auto add = [&](const std::string& line) { decl += "    " + line + "\n"; };
  // Vectors along the kernel's columns read through the tile's staged copy where the kernel stages
  // them (Cfg::TILE_VECTORS, decided with the configuration: see wgmma_tile_vectors); `staging`
  // copies each one's slice of a tile, in the same order.
  std::string staging;
  int staged = 0;
  auto column_vector = [&](const std::string& name, DType dtype, int slot) {
    if (b.reads(name))
      add(fmt::format("const tilejit::epilogue_column_vector<{}, INSIDE, (Cfg::TILE_VECTORS > 0)> {}{{__e.in[{}], __batch, __p.n, __tile, "
                      "{} * Cfg::BN}};",
                      device_type(dtype), name, slot, staged));
    staging += fmt::format("    tilejit::stage_vector_slice<{}>(__e.in[{}], __batch, __p.n, __c0, Cfg::BN, __dst + {} * Cfg::BN, __lane);\n",
                           device_type(dtype), slot, staged);
    ++staged;
  };
  // C in the kernel's own coordinates and layout (a swapped kernel's C is the user's C^T).
  // The first M x N operand the body reads that is row-major in the kernel's coordinates and of D's
  // element size (an input, else C) may be staged chunk by chunk in D's staging buffers
  // (gemm_wgmma.cuh): copied there in whole 16-byte pieces, then read where D's element goes,
  // instead of element by element from global memory. STAGED_INPUT_SLOT: its slot in __e.in, or
  // kMaxEpilogueOperands for C.
  auto stageable = [&](const MatrixRef& m, bool read) {
    return read && (m.layout == Layout::row_major) != swapped && dtype_size(m.dtype) == dtype_size(p.d.dtype);
  };
  int staged_slot = -1;
  const int first_input_slot = (b.fixed_form && e.bias ? 1 : 0) + static_cast<int>(e.vectors.size());
  for (std::size_t i = 0; i < e.inputs.size() && staged_slot < 0; ++i)
    if (stageable(e.inputs[i].matrix, b.reads(e.inputs[i].name))) staged_slot = first_input_slot + static_cast<int>(i);
  const bool staged_c = staged_slot < 0 && stageable(p.c, b.reads("c"));
  if (staged_c) staged_slot = kMaxEpilogueOperands;
  std::string staged_source = "    __pitch = 0;\n    return nullptr;\n";
  if (b.reads("c")) {
    (void)beta_zero;  // the fixed form names c only where beta is not 0
    add("const typename Cfg::TC* __c_batch = static_cast<const typename Cfg::TC*>(__p.c) + __batch * __p.stride_c;");
    const std::string global =
        "static_cast<float>(tilejit::load_or_zero(__c_batch + tilejit::offset_of<Cfg::C_ROW>(__r, __c, __p.ldc), __c_batch, __inside))";
    if (staged_c) {
      add("const float c = STAGED_INPUT ? tilejit::staged_input<typename Cfg::TC>(__tile, __r, __c) : " + global + ";");
      staged_source =
          "    __pitch = __p.ldc * static_cast<long long>(sizeof(typename Cfg::TC));\n"
          "    return static_cast<const char*>(__p.c) + __batch * __p.stride_c * static_cast<long long>(sizeof(typename Cfg::TC));\n";
    } else {
      add("const float c = " + global + ";");
    }
  }
  if (b.reads("alpha")) add("const float alpha = __p.alpha;");
  if (b.reads("beta")) add("const float beta = __p.beta;");
  int slot = 0;
  if (b.fixed_form && e.bias) {
    if (!swapped) column_vector("bias", e.bias_dtype, 0);
    else add(fmt::format("const tilejit::epilogue_vector<{}, INSIDE> bias{{__e.in[0], __batch, __cols}};", device_type(e.bias_dtype)));
    slot = 1;
  }
  for (const auto& v : e.vectors) {
    if (along_kernel_columns(v.axis, swapped) && is_float(v.dtype)) column_vector(v.name, v.dtype, slot);
    else if (b.reads(v.name))
      add(fmt::format("const tilejit::epilogue_vector<{}, INSIDE> {}{{__e.in[{}], __batch, {}}};", device_type(v.dtype), v.name, slot,
                      v.axis == EpilogueAxis::row ? "__rows" : "__cols"));
    ++slot;
  }
  for (const auto& x : e.inputs) {
    const std::string global =
        fmt::format("static_cast<float>(tilejit::epilogue_load<{}, {}>(__e.in[{}], __batch, m, n, __inside))", device_type(x.matrix.dtype),
                    x.matrix.layout == Layout::row_major, slot);
    if (slot == staged_slot) {
      add(fmt::format("const float {} = STAGED_INPUT ? tilejit::staged_input<{}>(__tile, __r, __c) : {};", x.name,
                      device_type(x.matrix.dtype), global));
      staged_source = fmt::format(
          "    const tilejit::epilogue_operand& __o = __p.epilogue.in[{0}];\n"
          "    __pitch = __o.ld * static_cast<long long>(sizeof({1}));\n"
          "    return static_cast<const char*>(__o.ptr) + __batch * __o.batch_stride * static_cast<long long>(sizeof({1}));\n",
          slot, device_type(x.matrix.dtype));
    } else if (b.reads(x.name)) {
      add(fmt::format("const float {} = {};", x.name, global));
    }
    ++slot;
  }
  for (std::size_t i = 0; i < e.scalars.size(); ++i)
    if (b.reads(e.scalars[i].name))
      add(fmt::format("const {} {} = __e.scalar[{}].{};", compute_type(e.scalars[i].value.dtype()), e.scalars[i].name, i,
                      scalar_member(e.scalars[i].value.dtype())));
  add("float d = 0.f;");
  for (const auto& x : e.outputs) add(fmt::format("float {} = 0.f;", x.name));
  std::string stores;
  for (std::size_t i = 0; i < e.outputs.size(); ++i)
    stores += fmt::format("    if (__inside) tilejit::epilogue_store<{}, {}>(__e.out[{}], __batch, m, n, {});\n",
                          device_type(e.outputs[i].matrix.dtype), e.outputs[i].matrix.layout == Layout::row_major, i, e.outputs[i].name);
  const std::string body = trimmed_body(b.text);
  return fmt::format(
      "// epilogue: {}\n"
      "struct gemm_epilogue {{\n"
      "  enum : bool {{ SWAPPED = {}, EXTRA_OUTPUTS = {} }};\n"
      "  // D's value at the kernel's output (__r, __c) of batch __batch, from the accumulator; the\n"
      "  // other outputs are stored here. Reads outside D return 0 (rows and columns past D's edge).\n"
      "  // INSIDE: the caller knows (__r, __c) is inside D, so reads need no bounds check or fallback\n"
      "  // address and their addresses fold into offsets from one base (a tile away from D's edges).\n"
      "  // __tile: the tile's vectors along the kernel's columns, where the kernel stages them.\n"
      "  // STAGED_INPUT: the M x N input in slot STAGED_INPUT_SLOT is read from __tile.input_chunk.\n"
      "  template <class Cfg, bool INSIDE = false, bool STAGED_INPUT = false>\n"
      "  __device__ __forceinline__ static float apply(const tilejit::gemm_params& __p, long long __batch, long long __r,\n"
      "                                                long long __c, float __acc, const tilejit::epilogue_tile& __tile) {{\n"
      "    using namespace tilejit::elementwise_functions;\n"
      "    const tilejit::gemm_epilogue_params& __e = __p.epilogue;\n"
      "    (void)__e, (void)__tile;\n"
      "    const bool __inside = INSIDE || (__r < __p.m && __c < __p.n);\n"
      "    (void)__inside;\n"
      "    // The user's row and column and sizes: a swapped kernel computes D^T.\n"
      "    const long long m = SWAPPED ? __c : __r, n = SWAPPED ? __r : __c;\n"
      "    const long long __rows = SWAPPED ? __p.n : __p.m, __cols = SWAPPED ? __p.m : __p.n;\n"
      "    (void)m, (void)n, (void)__rows, (void)__cols;\n"
      "    const float acc = __p.alpha * __acc;\n"
      "{}"
      "    {};\n"
      "{}"
      "    return d;\n"
      "  }}\n"
      "  // The float vectors along the kernel's columns, kernel columns [__c0, __c0 + Cfg::BN) of each, into\n"
      "  // __dst one after the other (0 past the matrix), by the 32 lanes of one warp.\n"
      "  template <class Cfg>\n"
      "  __device__ __forceinline__ static void stage_tile_vectors(const tilejit::gemm_params& __p, long long __batch, long long __c0,\n"
      "                                                            float* __dst, int __lane) {{\n"
      "    const tilejit::gemm_epilogue_params& __e = __p.epilogue;\n"
      "    (void)__e, (void)__batch, (void)__c0, (void)__dst, (void)__lane;\n"
      "{}"
      "  }}\n"
      "  // The M x N operand staged in shared memory, if any (-1: none): its slot in __e.in (8: C), and\n"
      "  // its rows in the kernel's coordinates for batch __batch (row r at the result + r * __pitch bytes).\n"
      "  enum : int {{ STAGED_INPUT_SLOT = {} }};\n"
      "  template <class Cfg>\n"
      "  __device__ __forceinline__ static const char* staged_input_rows(const tilejit::gemm_params& __p, long long __batch,\n"
      "                                                                  long long& __pitch) {{\n"
      "    (void)__p, (void)__batch;\n"
      "{}"
      "  }}\n"
      "}};\n",
      b.fixed_form ? "fixed form" : "body", swapped ? 1 : 0, e.outputs.empty() ? 0 : 1, decl, body, stores, staging, staged_slot,
      staged_source);
}

EpilogueParams epilogue_params(const GemmProblem& p) {
  const GemmEpilogue& e = p.epilogue;
  EpilogueParams q{};
  std::size_t slot = 0;
  if (e.body.empty() && e.bias) q.in[slot++] = {reinterpret_cast<const void*>(e.bias), 0, 0};
  for (const auto& v : e.vectors) q.in[slot++] = {reinterpret_cast<const void*>(v.ptr), 0, v.batch_stride};
  for (const auto& x : e.inputs)
    q.in[slot++] = {reinterpret_cast<const void*>(x.matrix.ptr), tight_ld(x.matrix, p.m, p.n), x.matrix.batch_stride};
  for (std::size_t i = 0; i < e.outputs.size(); ++i)
    q.out[i] = {reinterpret_cast<const void*>(e.outputs[i].matrix.ptr), tight_ld(e.outputs[i].matrix, p.m, p.n),
                e.outputs[i].matrix.batch_stride};
  for (std::size_t i = 0; i < e.scalars.size(); ++i) write_scalar(q.scalar[i], e.scalars[i].value);
  return q;
}

std::uint64_t epilogue_signature_hash(const GemmEpilogue& e) {
  // Each field folds into the hash of what came before (its seed), with a tag per kind of field, so
  // that moving a name from one list to another or splitting a name changes the hash.
  std::uint64_t h = XXH3_64bits(e.body.data(), e.body.size());
  auto fold = [&](std::uint64_t tag, const std::string& name, std::uint64_t kinds) {
    h = XXH3_64bits_withSeed(name.data(), name.size(), h ^ (tag << 56) ^ (kinds << 32) ^ name.size());
  };
  for (const auto& v : e.vectors) fold(1, v.name, static_cast<std::uint64_t>(v.dtype) << 8 | static_cast<std::uint64_t>(v.axis));
  for (const auto& x : e.inputs) fold(2, x.name, static_cast<std::uint64_t>(x.matrix.dtype) << 8 | static_cast<std::uint64_t>(x.matrix.layout));
  for (const auto& x : e.outputs) fold(3, x.name, static_cast<std::uint64_t>(x.matrix.dtype) << 8 | static_cast<std::uint64_t>(x.matrix.layout));
  for (const auto& s : e.scalars) fold(4, s.name, static_cast<std::uint64_t>(s.value.dtype()));
  return h;
}

std::string epilogue_signature(const GemmEpilogue& e) {
  std::string s = fmt::format("body {} {}\n", e.body.size(), e.body);
  for (const auto& v : e.vectors) s += fmt::format("vector {} {} {}\n", v.name, dtype_name(v.dtype), v.axis == EpilogueAxis::row ? "m" : "n");
  for (const auto& x : e.inputs) s += fmt::format("input {} {} {}\n", x.name, dtype_name(x.matrix.dtype), layout_name(x.matrix.layout));
  for (const auto& x : e.outputs) s += fmt::format("output {} {} {}\n", x.name, dtype_name(x.matrix.dtype), layout_name(x.matrix.layout));
  for (const auto& sc : e.scalars) s += fmt::format("scalar {} {}\n", sc.name, dtype_name(sc.value.dtype()));
  return s;
}

}  // namespace tilejit::ops
