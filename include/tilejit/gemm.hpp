// GEMM: D = act(alpha * op(A) * op(B) + beta * C + bias), with tile shapes chosen at run time.
//
//   tilejit::GemmProblem p{.m = M, .n = N, .k = K,
//       .a = {a.ptr(), tilejit::DType::bf16, tilejit::Layout::row_major},
//       .b = {b.ptr(), tilejit::DType::bf16, tilejit::Layout::col_major},
//       .d = {d.ptr(), tilejit::DType::bf16}};
//   rt.gemm(p, stream);                           // heuristic configuration, compiled once
//   auto plan = rt.plan_gemm(p);  plan.run(stream);
//
// A is M x K, B is K x N, C and D are M x N; each is row- or column-major with a leading dimension
// (0: the tight one) and, for batches, a stride between matrices (elements; 0 repeats one matrix).
// C may be the same memory as D. Inputs are f32, f16 or bf16 (A and B the same), or the 8-bit floats
// e4m3 and e5m2 (any pair, Hopper only: sm_90a); accumulation is f32, C and D are f32, f16 or
// bf16 (D also e4m3 or e5m2 with 8-bit inputs, scaled by scale_d). f32 inputs use exact fp32 arithmetic (MathMode::exact, SIMT kernels) or tensor cores with
// tf32 inputs (MathMode::tf32). 8-bit inputs take optional per-tensor scales (scale_a, scale_b:
// one f32 each in device memory): D = act(alpha * scale_a * scale_b * A B + beta * C + bias).
// Limits: M, N, K <= 2^31 - 1, batch <=
// 65535, and each matrix (with its batch) spans at most 2^48 bytes; beyond them, InvalidArgument.
#pragma once

#include <tilejit/dtype.hpp>
#include <tilejit/elementwise.hpp>  // Scalar, the body language
#include <tilejit/gemm_config.hpp>
#include <tilejit/kernel.hpp>
#include <tilejit/runtime.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit {

enum class Layout : std::uint8_t { row_major, col_major };
enum class Activation : std::uint8_t { none, relu, gelu, silu };
enum class MathMode : std::uint8_t { exact, tf32 };
// How 8-bit inputs are scaled (GemmProblem::scale_a, scale_b):
//   per_tensor  one f32 each: D = alpha * scale_a * scale_b * A B
//   blocks      DeepGEMM-style, per block of 128 along K (kb = k / 128, kblocks = ceil(K / 128)):
//               A per row and K block, scale_a[(batch * kblocks + kb) * M + m] (M contiguous per K block);
//               B per 128 x 128 block, scale_b[(batch * kblocks + kb) * ceil(N / 128) + n / 128];
//               D[m, n] = alpha * sum_kb scale_a[kb, m] * scale_b[kb, n / 128] * (A B over kb). Both
//               pointers are required; configurations with BK = 128 and BN 64 or 128 (kind wgmma).
enum class ScaleMode : std::uint8_t { per_tensor, blocks };

std::string_view layout_name(Layout l) noexcept;
std::string_view activation_name(Activation a) noexcept;

struct MatrixRef {
  CUdeviceptr ptr = 0;
  DType dtype = DType::f32;
  Layout layout = Layout::row_major;
  std::int64_t ld = 0;            // leading dimension in elements; 0: tight (columns of a row-major matrix)
  std::int64_t batch_stride = 0;  // elements between consecutive matrices of a batch; 0: the same matrix
};

// A vector an epilogue body reads at the output element's row (`name[m]`, m values) or column
// (`name[n]`, n values).
enum class EpilogueAxis : std::uint8_t { row, column };
struct EpilogueVector {
  std::string name;
  CUdeviceptr ptr = 0;
  DType dtype = DType::f32;
  EpilogueAxis axis = EpilogueAxis::column;
  std::int64_t batch_stride = 0;  // elements between the vectors of a batch; 0: one vector for all
};
// An M x N matrix an epilogue body reads at the output element by its name, or writes as an output
// beside D; its own pointer, dtype, layout, leading dimension (0: tight) and batch stride.
struct EpilogueMatrix {
  std::string name;
  MatrixRef matrix;
};
inline constexpr std::size_t kMaxEpilogueOperands = 8;  // vectors and matrix inputs together
inline constexpr std::size_t kMaxEpilogueOutputs = 3;   // beside d
inline constexpr std::size_t kMaxEpilogueScalars = 8;

// What happens to each output element after the product: compiled into the GEMM kernel.
//
// The fixed form: D = act(alpha * A B + beta * C + bias), with `bias` and `activation` below.
//
// A body (`body` not empty) in the elementwise language (tilejit/elementwise.hpp: the same
// operators and functions) assigns `d`, D's element, and every output in `outputs`; it reads
//   acc          the f32 accumulator after alpha (alpha * (A B)[m, n]; with 8-bit inputs
//                alpha * scale_a * scale_b * (A B)[m, n])
//   c            C's element (read where the body names it; beta is the problem's, as `beta`)
//   alpha, beta  the problem's (they change per call without recompiling)
//   m, n         the element's row and column (integers)
//   name[m], name[n]  an element of a per-row or per-column vector in `vectors`
//   name         an element of a matrix in `inputs`, or a scalar in `scalars`
// e.g. "d = gelu(acc + bias[n]) * scale[m] + residual". Each body is its own kernel (the body is
// part of the kernel key); scalars' values change per plan without recompiling. The fixed form is
// the body "d = act(acc + beta * c + bias[n])" (C read only when beta != 0).
struct GemmEpilogue {
  CUdeviceptr bias = 0;  // fixed form, optional: one value per column of D (n values)
  DType bias_dtype = DType::f32;
  Activation activation = Activation::none;  // fixed form; gelu is GELU's erf definition, x * Phi(x)
  std::string body;
  std::vector<EpilogueVector> vectors;
  std::vector<EpilogueMatrix> inputs;
  std::vector<EpilogueMatrix> outputs;
  std::vector<Scalar> scalars;
};

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  MatrixRef a, b;
  MatrixRef c;  // read only when beta != 0; its ptr may equal d's
  MatrixRef d;
  float alpha = 1.f, beta = 0.f;
  MathMode math = MathMode::exact;  // for f32 inputs
  // 8-bit inputs only: device pointers to one f32 each (0: 1), read at every launch, so that the
  // values may change between runs of a plan (or a CUDA graph's replays) with no new plan.
  CUdeviceptr scale_a = 0, scale_b = 0;
  ScaleMode scale_mode = ScaleMode::per_tensor;
  // An 8-bit D (e4m3, e5m2; with 8-bit inputs): D = convert(scale_d * value), value being what the
  // epilogue computes; a device pointer to one f32 (0: 1), read at every launch.
  CUdeviceptr scale_d = 0;
  GemmEpilogue epilogue;
};

// Checks a problem (shapes, dtypes, layouts, leading dimensions, pointers) without compiling.
void validate_gemm(const GemmProblem& p);
// Checks a configuration against a problem's dtypes and a target arch; throws InvalidArgument naming
// the broken rule (tiles that do not divide, too many threads, too much shared memory, ...).
void validate_gemm_config(const GemmConfig& cfg, const GemmProblem& p, const std::string& arch);
// The configuration the heuristic picks for a problem on an arch with `multiprocessors` SMs, and why.
GemmConfig choose_gemm_config(const GemmProblem& p, const std::string& arch, int multiprocessors, std::string* why = nullptr);

// ---- tuning -------------------------------------------------------------------------------------
//
// Runtime::tune_gemm times a candidate set of configurations on the device for a problem's shape
// class and keeps the fastest in the disk cache, where later plans of that class on the same kind of
// device find it (TILEJIT_AUTOTUNE, below). A shape class (gemm_shape_class) is everything that
// makes a kernel and its speed but the exact sizes: the dtypes, layouts and alignments (16, 8, 4, 2
// or 1 bytes: the largest dividing the pointer, leading dimension and batch stride) of A, B, C and D,
// the math mode, the 8-bit scale mode, the epilogue (its body's digest), whether C is read, and M, N,
// K and the batch in buckets of half an octave (values up to 16 exactly; then [2^e, 2^e * sqrt 2)
// and [2^e * sqrt 2, 2^(e+1)), e.g. 4096-5792 and 5793-8191). The tuned configuration of a class
// is the one measured fastest on the last problem of the class that was tuned; a problem of the
// class it does not suit (validate_gemm_config) gets the heuristic's.
//
// Tuning never touches the problem's memory: its pointers count only for their alignment (they may
// be stand-ins). The tuner allocates scratch operands of the problem's sizes, fills them on the
// device with random values, runs the heuristic's configuration once as the reference, and for each
// candidate: compiles it (on several threads; `tilejit tune gemm` compiles in worker processes first),
// runs it once on a poisoned D and compares every element with the reference (a candidate that
// differs is dropped), then times it by the back-to-back stream method beside the reference: groups
// of launches on one stream between two events (each after a 2 ms rest), candidate and reference
// alternating over `rounds` pairs, the ratio of their medians deciding; the best again over twice as
// many pairs of groups three times as long, until the best is one measured twice (it counts by the
// lower of its two ratios). A candidate's time is the reference's median over its ratio. One
// replaces the heuristic's configuration only when it is at least `margin` faster (5%: on the H200,
// smaller tuned gains did not hold in a later stretch of time as often as not).
//
// Results are disk-cache entries of their own kind (family "tuning": the same checksum, atomic
// publication and per-key lock as kernels; `tilejit cache list --kind tuning`, export and import
// carry them). The entry's key names the device (its name and SM count), the driver, NVRTC, the
// library version, the digest of the GEMM templates and the shape class: another driver or library
// version never sees it. Each entry lists its candidates one by one: tuning the same problem again
// with more candidates times only the new ones (and the heuristic's and the best again, for a fair
// comparison in one run) and keeps what was measured before; tuning another problem of the class
// measures every candidate anew and the class's entry becomes that problem's.
//
// TILEJIT_AUTOTUNE: off (the heuristic only), cached (default: tuned configurations where the cache
// has them; never tunes on its own), on (also tunes a shape class the first time a plan needs it,
// with an info log line saying so and how long it took). TILEJIT_GEMM_CONFIG and a configuration
// given to plan_gemm win over both.
struct GemmTuneOptions {
  std::vector<GemmConfig> candidates;  // empty: gemm_tuning_candidates(); the heuristic's is always added
  double group_ms = 10;                // launches per timed group: about this many ms of work (after a 2 ms rest)
  int rounds = 3;                      // pairs of groups (candidate, reference) per candidate; the medians' ratio counts
  double margin = 0.05;                // the fastest replaces the heuristic's only when at least this much faster
  bool retime = false;                 // time again candidates the cache measured before
  bool store = true;                   // publish the result to the disk cache (when it is writable)
  int compile_threads = 0;             // 0: up to 8 (the hardware's threads)
};
struct GemmTuneMeasurement {
  GemmConfig config;
  double ms = 0;              // median per launch (stream method); 0 when !ok
  bool ok = false;            // compiled, ran and matched the reference
  std::string error;          // why not ok
  bool measured_now = false;  // false: measured by an earlier tuning of the class (from the cache)
};
struct GemmTuneResult {
  std::string shape_class;
  std::string key;  // the tuning entry's key in the disk cache (32 hex digits)
  GemmConfig heuristic, chosen;
  double heuristic_ms = 0, chosen_ms = 0;
  std::string why;                                // why `chosen`
  std::vector<GemmTuneMeasurement> measurements;  // every candidate of the class, fastest first, failures last
  int compiled = 0;                               // kernels this tuning compiled (the others came from a cache)
  double compile_seconds = 0, timing_seconds = 0;
  bool stored = false;  // published to the disk cache
};
// The candidates Runtime::tune_gemm times by default for a problem on an arch with `multiprocessors`
// SMs: the heuristic's configuration first, then tile shapes, stage counts, K steps, split-K, tail
// splits, clusters, ping-pong, K halves and swapped operands around it, each valid for the problem.
std::vector<GemmConfig> gemm_tuning_candidates(const GemmProblem& p, const std::string& arch, int multiprocessors);
// The shape class of a problem (see above), as text.
std::string gemm_shape_class(const GemmProblem& p);

// Where a plan's configuration came from.
enum class GemmConfigOrigin : std::uint8_t { given, environment, tuned, heuristic };
std::string_view config_origin_name(GemmConfigOrigin o) noexcept;

namespace detail {
struct GemmPlanState;
struct GemmPlanAccess;
}

// Pointers for GemmPlan::run; 0 keeps the plan's.
struct GemmPointers {
  CUdeviceptr a = 0, b = 0, c = 0, d = 0, bias = 0;
  CUdeviceptr scale_a = 0, scale_b = 0;  // 8-bit inputs: replace the plan's (a plan without scales takes them too)
  CUdeviceptr scale_d = 0;                // an 8-bit D: replaces the plan's
};

// A problem bound to a runtime with its kernel resolved: run() launches it. A wgmma plan whose A or B
// TMA cannot read in place copies them into a workspace it owns before each run (on the run's
// stream), as it does a 16-bit B whose lines start off 32-byte boundaries when M > 1024 (TMA reads
// those at half its rate): such a plan must not run on two streams at once.
class GemmPlan {
 public:
  void run(CUstream stream = nullptr) const;
  // The same shapes, dtypes and layouts with other pointers: 0 keeps the plan's, a C that was D
  // follows D, and a bias replaces the plan's (a plan made without a bias takes none).
  void run(const GemmPointers& pointers, CUstream stream = nullptr) const;
  // As above, keeping the plan's bias.
  void run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d, CUstream stream = nullptr) const;
  const GemmConfig& config() const;
  const GemmProblem& problem() const;
  // The kernel run() launches for the plan's own pointers, compiled or from a cache: a Kernel of the
  // same API as users' own (attributes: registers, shared memory; its CUfunction). Other pointers
  // may take another variant (narrower copies for unaligned operands).
  Kernel kernel() const;
  // plan_gemm's configuration (given), TILEJIT_GEMM_CONFIG's (environment), a tuning result's
  // (tuned) or the heuristic's.
  GemmConfigOrigin config_origin() const;

 private:
  friend class Runtime;
  friend struct detail::GemmPlanAccess;
  explicit GemmPlan(std::shared_ptr<detail::GemmPlanState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::GemmPlanState> state_;
};

}  // namespace tilejit
