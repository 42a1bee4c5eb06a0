#include "gemm_args.hpp"

#include "op_from_expr.hpp"

#include <tilejit/tooling.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tilejit::cli {

Layout layout_of(char c, const std::string& all) {
  if (c == 'N' || c == 'n') return Layout::row_major;
  if (c == 'T' || c == 't') return Layout::col_major;
  throw InvalidArgument(fmt::format("layout '{}': expected two letters of N (row-major) and T (column-major), for A then B", all));
}

Activation activation_of(const std::string& s) {
  if (s == "none") return Activation::none;
  if (s == "relu") return Activation::relu;
  if (s == "gelu") return Activation::gelu;
  if (s == "silu") return Activation::silu;
  throw InvalidArgument(fmt::format("activation '{}': expected none, relu, gelu or silu", s));
}

// A layout is two letters, A's then B's (N row-major, T column-major), and optionally ":r" or ":c"
// for D (row-major by default): "NT", "TN:c".
Layout d_layout_of(const std::string& layout) {
  if (layout.size() == 2 || layout.substr(2) == ":r") return Layout::row_major;
  if (layout.substr(2) == ":c") return Layout::col_major;
  throw InvalidArgument(fmt::format("layout '{}': expected two letters of N (row-major) and T (column-major), for A then B, and "
                                    "optionally :r or :c for D (row- or column-major; default :r)",
                                    layout));
}

GemmProblem problem_of(const GemmArgs& a, const std::string& layout) {
  if (layout.size() < 2) layout_of('?', layout);
  const Layout d_layout = d_layout_of(layout);
  GemmProblem p;
  p.m = a.m, p.n = a.n, p.k = a.k, p.batch = a.batch;
  const DType in = parse_dtype(a.dtype), in_b = a.b_dtype.empty() ? in : parse_dtype(a.b_dtype);
  const DType out = !a.out_dtype.empty() ? parse_dtype(a.out_dtype) : dtype_size(in) == 1 ? DType::bf16 : in;
  p.a = {0, in, layout_of(layout[0], layout)};
  p.b = {0, in_b, layout_of(layout[1], layout)};
  p.d = {0, out, d_layout};
  if (a.batch > 1) {
    p.a.batch_stride = a.m * a.k;
    p.b.batch_stride = a.k * a.n;
    p.d.batch_stride = a.m * a.n;
  }
  p.c = p.d;
  p.alpha = a.alpha, p.beta = a.beta;
  if (a.block_scales) p.scale_mode = ScaleMode::blocks;
  if (a.math == "tf32") p.math = MathMode::tf32;
  else if (a.math != "exact") throw InvalidArgument(fmt::format("--math '{}': expected exact or tf32", a.math));
  p.epilogue.activation = activation_of(a.act);
  p.epilogue.bias_dtype = DType::f32;
  if (a.epilogues.size() > 1) throw InvalidArgument("--epilogue: one body here (bench gemm takes several)");
  if (!a.epilogues.empty() && a.epilogues[0] != "none") {
    if (a.bias || a.act != "none")
      throw InvalidArgument("--epilogue: write the bias and the activation in the body (e.g. 'd = gelu(acc + bias[n])'), not --bias / --act");
    p.epilogue = tooling::gemm_epilogue_from_body(a.epilogues[0], out, parse_scalars(a.scalars));
  }
  return p;
}

// Stand-in pointers with 256-byte alignment, as cuMemAlloc gives (they select the 16-byte copies),
// for compiling or validating without a device: outputs apart from the inputs.
void with_stand_in_pointers(GemmProblem& p, bool bias) {
  p.a.ptr = p.b.ptr = p.d.ptr = p.c.ptr = 1 << 20;
  if (p.scale_mode == ScaleMode::blocks) p.scale_a = p.scale_b = 1 << 22;
  if (bias) p.epilogue.bias = 1 << 20;
  for (auto& v : p.epilogue.vectors) v.ptr = 1 << 20;
  for (auto& x : p.epilogue.inputs) x.matrix.ptr = 1 << 20;
  for (auto& x : p.epilogue.outputs) x.matrix.ptr = 1 << 21;
}

std::optional<GemmConfig> config_of(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return GemmConfig::parse(s);
}

double tflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e12; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? std::nan("") : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::vector<std::array<std::int64_t, 3>> parse_shapes(const std::string& s) {
  std::vector<std::array<std::int64_t, 3>> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t comma = s.find(',', start);
    std::string one = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::array<std::int64_t, 3> v{};
    if (std::sscanf(one.c_str(), "%ldx%ldx%ld", &v[0], &v[1], &v[2]) != 3)
      throw InvalidArgument(fmt::format("--shapes: '{}' is not MxNxK", one));
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void add_problem_options(CLI::App* c, GemmArgs& a) {
  c->add_option("--m", a.m, "Rows of A and D");
  c->add_option("--n", a.n, "Columns of B and D");
  c->add_option("--k", a.k, "Columns of A, rows of B");
  c->add_option("--dtype,-t", a.dtype, "Input dtype: f32, f16, bf16, or the 8-bit e4m3, e5m2 (Hopper)");
  c->add_option("--b-dtype", a.b_dtype, "B's dtype where it differs from A's (8-bit: e4m3 with e5m2)");
  c->add_option("--out-dtype", a.out_dtype, "D's dtype (default: the input dtype; bf16 for 8-bit inputs)");
  c->add_flag("--block-scales", a.block_scales,
              "8-bit inputs: scales per block of 128 along K (A per row, B per 128 x 128 block) instead of per tensor");
  c->add_option("--layout,-l", a.layout, "A then B: N row-major, T column-major (NN, NT, TN, TT), optionally :c for a column-major D");
  c->add_option("--config,-c", a.config, "KIND:BMxBNxBK:WMxWN:STAGES or a preset (default: heuristic)");
  c->add_option("--math", a.math, "f32 inputs: exact (SIMT) or tf32 (tensor cores)");
}

}  // namespace tilejit::cli
