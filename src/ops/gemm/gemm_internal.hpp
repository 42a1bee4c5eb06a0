// GEMM internals shared by validation, heuristics, code generation and the launch path.
#pragma once

#include "jit/context.hpp"
#include "jit/kernel_cache.hpp"
#include "ops/gemm/epilogue.hpp"

#include <tilejit/gemm.hpp>

#include <string>

#include <array>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace tilejit {
namespace detail {
struct GemmPlanState;
}
namespace ops {

// Host mirror of tilejit::gemm_params in kernels_templates/tilejit/gemm_common.cuh.
struct GemmParams {
  const void* a;
  const void* b;
  const void* c;
  void* d;
  const void* bias;
  long long m, n, k;
  long long lda, ldb, ldc, ldd;
  long long stride_a, stride_b, stride_c, stride_d;
  float alpha, beta;
  int tiles_m, tiles_n;
  int batch, split_k;
  int whole_tiles, reserved;
  void* workspace;
  const float* scale_a;
  const float* scale_b;
  const float* scale_d;
  EpilogueParams epilogue;
};
static_assert(sizeof(GemmParams) == 520, "must match gemm_params in gemm_common.cuh");

// e4m3 or e5m2: the 8-bit floats, which run on Hopper only (kinds wgmma and gemv).
inline bool is_8bit_float(DType t) { return t == DType::e4m3 || t == DType::e5m2; }

// validate_gemm without the epilogue's body, for a problem normalized() has produced (the launch
// path of a plan, whose epilogue was checked, runs it on the plan's problem with one run's pointers).
void check_normalized_operands(const GemmProblem& p);
// Checks one matrix operand (dtype, leading dimension, batch stride, pointer, span) of `rows` x
// `cols`; throws InvalidArgument naming it. `needed`: it is read or written (its pointer must be set).
void check_gemm_matrix(const char* name, const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch, bool needed);

// The bytes from r.ptr to the end of the last of `batch` rows x cols matrices (r.ld resolved), or -1
// when that does not fit in 64 bits.
std::int64_t matrix_span_bytes(const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch);
// A problem with its leading dimensions resolved (0 -> tight) and its C defaulted to D.
GemmProblem normalized(const GemmProblem& p);
// At launch, with real pointers, for a normalized problem (a plan's, with one run's pointers): D
// shares no memory with A, B, a C other than D itself or the bias, and D's batches do not overlap;
// throws InvalidArgument naming the operands. (Not part of validate_gemm: compiling without a GPU may
// use stand-in pointers.)
void check_outputs_apart(const GemmProblem& p);
// A plan's problem with the pointers of one run (see GemmPlan::run); throws InvalidArgument for a bias
// given to a plan made without one (its kernel has no bias to add).
GemmProblem with_pointers(const GemmProblem& planned, const GemmPointers& pointers);
// What Runtime::gemm launches for `call` with the plan it keeps for call's signature: the plan's
// problem with call's pointers, alpha, beta and epilogue operands (pointers, leading dimensions,
// batch strides, scalar values), those checked; throws InvalidArgument naming a bad one.
GemmProblem problem_for_call(const GemmProblem& planned, const GemmProblem& call);

// Everything that makes one kernel: the problem's types and layouts, the tiles, and how each operand
// is copied from global memory (bytes per copy, from the pointers' and leading dimensions' alignment).
struct GemmVariant {
  GemmConfig config;
  int a_vec = 0, b_vec = 0;
  // mma: 16, 8 or 4 (cp.async) or the element size; simt: elements per load (4 or 1); wgmma: 16 (TMA).
  bool d_tma = false;  // wgmma: D written by TMA stores (see wgmma_tma_store)
  friend bool operator==(const GemmVariant&, const GemmVariant&) = default;
};

// Whether TMA can read operand A (is_a) or B as it is: "" or why not (then the wgmma kind packs it
// into a workspace first).
std::string tma_unready_reason(const GemmProblem& p, bool is_a);
// Whether B's lines (K of a K-major B, N of a row-major one) start off 32-byte boundaries: its
// pointer, leading dimension or batch stride is 16 bytes off (ld 1000, 2040 or 4088 of a 16-bit
// type). TMA reads 128-row boxes of such lines at about half its rate.
bool b_lines_off_sectors(const GemmProblem& p);
// B's pointer, line pitch or batch stride (bytes) is not a multiple of `boundary`.
bool b_lines_off(const GemmProblem& p, std::int64_t boundary);
// Whether the wgmma kind packs such a B into 128-byte aligned lines before the GEMM, though TMA could
// read it: 16-bit inputs, B tiles of 128 rows or more, no cluster (a cluster halves B's reads
// instead), M over 1024 (so that the copy is spread over enough outputs).
bool wgmma_packs_b_for_speed(const GemmConfig& c, const GemmProblem& p);
// Whether the wgmma kind can write D with TMA stores: D row-major, 16-byte aligned, rows and batch
// strides multiples of 16 bytes (a batch stride also holding a whole matrix).
bool wgmma_tma_store(const GemmConfig& c, const GemmProblem& p);
// Whether a row-major D that TMA cannot write in place (a leading dimension such as 4095, an odd
// pointer) is written into an aligned workspace by TMA and then copied into place.
bool wgmma_stage_d(const GemmConfig& c, const GemmProblem& p);
// D through the staged TMA epilogue: in place or through the workspace.
bool wgmma_d_tma(const GemmConfig& c, const GemmProblem& p);

// The problem the kernel computes for a plan with swapped operands: D^T = B^T A^T (M and N, A and B
// trade places; every matrix is read as its transpose, which flips its layout and keeps its leading
// dimension).
GemmProblem swapped_ab(const GemmProblem& p);
// Whether a wgmma kernel with narrow tiles (BN 16 or 32) gets a row-major B as a K-major copy made
// in the plan's workspace at launch: tf32 (K-major only), and 16-bit where TMA cannot read the
// N-major B in place (a row pitch off 16 bytes, as for a column-major A with M = 1 or 7 and sw).
bool wgmma_transposes_b(const GemmConfig& c, const GemmProblem& swapped_or_not);
// Whether a wgmma kernel gets a column-major A as a K-major copy made in the plan's workspace at
// launch: tf32 (K-major only).
bool wgmma_transposes_a(const GemmConfig& c, const GemmProblem& swapped_or_not);
// The problem a kernel computes for the user's: swapped with sw, f32 as tf32 with the config's tf32
// part, and A or B as the K-major copy the launcher makes where it transposes them (leading
// dimension K rounded up to 16 bytes; the pointer stays the user's, the copy's source).
GemmProblem wgmma_kernel_problem(const GemmConfig& c, const GemmProblem& user_problem);
// Kind gemv: the elements of B a lane loads as one run (along K for a column-major B, along N for a
// row-major one; see gemm_gemv.cuh).
int gemv_run_b(const GemmConfig& c, const GemmProblem& p);
// Shared memory a configuration uses for a problem's dtype (must mirror the templates).
int gemm_shared_bytes(const GemmConfig& cfg, const GemmProblem& p);
// How many epilogue vectors a wgmma kernel stages per tile in shared memory (Cfg::TILE_VECTORS): the
// float vectors along its columns, where the configuration allows and they fit; else 0.
int wgmma_tile_vectors(const GemmConfig& cfg, const GemmProblem& p);
// The lane layout of a SIMT warp tile: LM x LN lanes, as square as possible per thread.
void simt_lanes(const GemmConfig& cfg, int& lm, int& ln);
// The widest global copy the operands' alignment allows for this configuration.
GemmVariant gemm_variant(const GemmConfig& cfg, const GemmProblem& p);

// The request for the kernel computing `p` (a plan's kernel problem); `user_problem` (default: `p`)
// is the problem as the user gave it, which the epilogue describes.
jit::KernelRequest gemm_request(const jit::Context& rt, const GemmProblem& p, const GemmVariant& v, const std::string& arch,
                                const GemmProblem* user_problem = nullptr);
// Maximum dynamic shared memory per block of an arch, for validation without a device.
int arch_shared_memory_limit(const std::string& arch);

// A plan for a problem (validated, configured); `config` (optional) forces the configuration.
// With a usable device the plan's kernel is loaded and its workspaces allocated now (see prepare()).
std::shared_ptr<detail::GemmPlanState> make_prepared_gemm_plan(const std::shared_ptr<jit::Context>& jit, const GemmProblem& problem,
                                                               const GemmConfig* config);
// The kernel plan_gemm would use, compiled or from a cache, with no device needed.
CompiledKernelInfo compile_gemm(const std::shared_ptr<jit::Context>& jit, const GemmProblem& problem, const GemmConfig* config);

// A GEMM problem without its pointers, and the stream of a Runtime::gemm call: the key of the plans
// Runtime::gemm keeps, compared whole (a hash collision is a miss, never another problem's plan).
struct GemmSignature {
  std::array<std::uint64_t, 16> words{};
  friend bool operator==(const GemmSignature&, const GemmSignature&) = default;
  struct Hash {
    std::size_t operator()(const GemmSignature& s) const noexcept;
  };
};

// The plans behind Runtime::gemm, one per problem signature (everything but the pointers and the
// values of alpha and beta) and stream. Bounded: a program that makes a stream per request would
// otherwise add a plan (and perhaps a workspace) per stream forever. Past the bound the map starts
// over; plans in use stay alive with their callers, and new ones find their kernels in the memory
// cache.
class GemmPlans {
 public:
  static constexpr std::size_t kMax = 1024;
  // Finds or makes the plan for the problem and stream, then launches it with the call's pointers,
  // alpha and beta.
  void run(const std::shared_ptr<jit::Context>& jit, const GemmProblem& problem, CUstream stream);
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<GemmSignature, std::shared_ptr<detail::GemmPlanState>, GemmSignature::Hash> plans_;
};

}  // namespace ops

namespace detail {
// For the ops that run plans of their own (the tuner): a public GemmPlan around a plan state.
struct GemmPlanAccess {
  static GemmPlan make(std::shared_ptr<GemmPlanState> s) { return GemmPlan(std::move(s)); }
};
}  // namespace detail
}  // namespace tilejit
