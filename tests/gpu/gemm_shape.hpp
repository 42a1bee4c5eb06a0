// GEMM problems of the GPU tests by dtypes, "NT"-style layout (":c" for a column-major D) and sizes,
// and the line a failed check prints about one.
#pragma once

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>

#include <string>

namespace tilejit::test {

inline GemmProblem shape(DType a, DType b, const std::string& layout, std::int64_t M, std::int64_t N, std::int64_t K, DType d = DType::bf16) {
  GemmProblem p;
  p.m = M, p.n = N, p.k = K;
  p.a = {0, a, layout[0] == 'N' ? Layout::row_major : Layout::col_major};
  p.b = {0, b, layout[1] == 'N' ? Layout::row_major : Layout::col_major};
  p.d = {0, d, layout.size() > 2 && layout.substr(2) == ":c" ? Layout::col_major : Layout::row_major};
  return p;
}

inline std::string describe(const GemmProblem& p, const GemmPlan& plan) {
  return fmt::format("{}x{}x{} batch {} {} x {} -> {} {}{}{} config {}", p.m, p.n, p.k, p.batch, dtype_name(p.a.dtype), dtype_name(p.b.dtype),
                     dtype_name(p.d.dtype), p.a.layout == Layout::row_major ? 'N' : 'T', p.b.layout == Layout::row_major ? 'N' : 'T',
                     p.d.layout == Layout::row_major ? "" : ":c", plan.config().to_string());
}

}  // namespace tilejit::test
