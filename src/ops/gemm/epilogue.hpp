// GEMM epilogues as bodies in the elementwise language (GemmEpilogue in include/tilejit/gemm.hpp):
// validation before anything compiles, the generated epilogue struct the GEMM templates call for
// every output element, and the device parameter block that carries its operands and scalars.
// The fixed form (bias, activation) is written as a body here, so every epilogue takes one path.
#pragma once

#include "ops/elementwise/elementwise_internal.hpp"
#include "ops/elementwise/expression.hpp"

#include <tilejit/gemm.hpp>

#include <string>
#include <vector>

namespace tilejit::ops {

// Host mirror of tilejit::epilogue_operand / gemm_epilogue_params in gemm_common.cuh.
struct EpilogueOperand {
  const void* ptr;
  long long ld;
  long long batch_stride;
};
struct EpilogueParams {
  EpilogueOperand in[kMaxEpilogueOperands];  // the vectors, then the matrix inputs, in declaration order
  EpilogueOperand out[kMaxEpilogueOutputs];
  ElementwiseScalarSlot scalar[kMaxEpilogueScalars];  // the named scalars, as elementwise ops take theirs
};
static_assert(sizeof(EpilogueParams) == 328, "must match gemm_epilogue_params in gemm_common.cuh");

// A problem's epilogue, validated: the body (the fixed form written as one), the names it sees and
// which of them it reads.
struct EpilogueBody {
  std::string text;
  bool fixed_form = false;  // written from bias / activation
  std::vector<BodyName> names;
  ParsedBody parsed;
  std::vector<bool> used;  // per name: the body names it
  bool reads(std::string_view name) const;
};

// Validates p.epilogue against the problem (names, dtypes, layouts, pointers, the body's grammar and
// names); throws InvalidArgument naming what is wrong, before anything is compiled.
EpilogueBody parse_epilogue(const GemmProblem& p);
// The checks of parse_epilogue that concern one call's operands (dtypes, pointers, leading
// dimensions, batch strides, scalar dtypes), without the body: Runtime::gemm runs them on each call's
// epilogue, whose names and body its cached plan was checked with.
void check_epilogue_operands(const GemmProblem& p);
// Whether a problem's epilogue body names `c` (then C is read, or D where no C is given).
bool epilogue_reads_c(const GemmEpilogue& e);
// The generated struct `gemm_epilogue` for a kernel computing `kernel_problem` (swapped: D^T of
// the user's problem, whose epilogue the body describes) and whether beta is 0 in every run.
std::string epilogue_source(const GemmProblem& user_problem, const EpilogueBody& body, bool swapped, bool beta_zero);
// How many of the epilogue's vectors run along the kernel's columns and hold floats (a fixed-form
// bias or a per-column vector of an unswapped kernel, a per-row one of a swapped kernel): those a
// wgmma kernel may stage per tile in shared memory (Cfg::TILE_VECTORS), in their slot order.
int epilogue_column_vector_count(const GemmEpilogue& e, bool swapped);
// The operands' pointers, leading dimensions and scalars for one run of `p` (the user's problem).
EpilogueParams epilogue_params(const GemmProblem& p);
// Every name, dtype, layout and scalar type of the epilogue, for plan signatures and program names.
std::string epilogue_signature(const GemmEpilogue& e);
// A 64-bit hash of the same, computed without building the string (Runtime::gemm computes it on
// every call to find its plan).
std::uint64_t epilogue_signature_hash(const GemmEpilogue& e);

}  // namespace tilejit::ops
