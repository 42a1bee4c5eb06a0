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
// C may be the same memory as D. Inputs are f32, f16 or bf16 (A and B the same), accumulation is
// f32, C and D are f32, f16 or bf16. f32 inputs use exact fp32 arithmetic (MathMode::exact, SIMT
// kernels) or tensor cores with tf32 inputs (MathMode::tf32). Limits: M, N, K <= 2^31 - 1, batch <=
// 65535, and each matrix (with its batch) spans at most 2^48 bytes; beyond them, InvalidArgument.
#pragma once

#include <tilejit/dtype.hpp>
#include <tilejit/runtime.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tilejit {

enum class Layout : std::uint8_t { row_major, col_major };
enum class Activation : std::uint8_t { none, relu, gelu, silu };
enum class MathMode : std::uint8_t { exact, tf32 };

std::string_view layout_name(Layout l) noexcept;
std::string_view activation_name(Activation a) noexcept;

struct MatrixRef {
  CUdeviceptr ptr = 0;
  DType dtype = DType::f32;
  Layout layout = Layout::row_major;
  std::int64_t ld = 0;            // leading dimension in elements; 0: tight (columns of a row-major matrix)
  std::int64_t batch_stride = 0;  // elements between consecutive matrices of a batch; 0: the same matrix
};

struct GemmEpilogue {
  CUdeviceptr bias = 0;  // optional: one value per column of D (n values)
  DType bias_dtype = DType::f32;
  Activation activation = Activation::none;  // gelu is the exact erf form
};

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  MatrixRef a, b;
  MatrixRef c;  // read only when beta != 0; its ptr may equal d's
  MatrixRef d;
  float alpha = 1.f, beta = 0.f;
  MathMode math = MathMode::exact;  // for f32 inputs
  GemmEpilogue epilogue;
};

enum class GemmKind : std::uint8_t { simt, mma, wgmma };

// KIND:BMxBNxBK:WMxWN:STAGES, e.g. "mma:128x64x32:32x32:1". simt: CUDA-core FMA (any dtype, exact
// f32); mma: tensor cores through mma.sync (m16n8k16 for f16/bf16, m16n8k8 for tf32), ldmatrix and
// cp.async with STAGES shared-memory stages. BMxBN is the block's tile of D, BK its step along K,
// WMxWN one warp's tile. wgmma (sm_90a): TMA copies into STAGES stages and warpgroup MMAs; WMxWN is
// one consumer warpgroup's tile (WM 64 or 128, WN = BN), so BM / WM consumer warpgroups plus one
// producer warpgroup run per block, on a persistent grid; BK * element size = 128 bytes (64 for
// f16/bf16, 32 for tf32). Presets: "puzzle33" (the seed's tensor-core kernel, f32 in tf32) and
// "puzzle33-tiled" (the seed's 32x32 tiled SIMT kernel, one output per thread).
struct GemmConfig {
  GemmKind kind = GemmKind::mma;
  int bm = 128, bn = 128, bk = 32;
  int wm = 64, wn = 64;
  int stages = 3;
  // wgmma only: K is cut into split_k slices computed by different blocks and summed by the last of
  // them (string form: a fifth part "kS", e.g. "wgmma:64x128x64:64x128:8:k2").
  int split_k = 1;
  // wgmma only: the tiles of the last, partial wave of the persistent grid are cut into tail_split
  // slices of K each, summed like split-K, so that every SM ends at about the same time (string form:
  // an extra part "tS", e.g. "wgmma:128x256x64:64x256:4:t3"); the other tiles run whole.
  int tail_split = 1;
  // wgmma only: two consumer warpgroups take turns on whole tiles (WM = BM), one's epilogue hiding
  // behind the other's MMAs (string form: a fifth part "pp", e.g. "wgmma:128x128x64:128x128:4:pp").
  bool pingpong = false;
  // wgmma only: blocks per cluster, 1 or 2 (string form: an extra part "c2"). A pair of blocks takes
  // tiles one above the other and each loads half of their shared B tile into both (TMA multicast).
  int cluster = 1;
  // wgmma only: compute D^T = B^T A^T instead (string form: an extra part "sw"), so that a decode-like
  // M of 8-32 becomes the tile's N (BN 16 or 32) and N's thousands of rows fill the device. Needs A
  // row-major (it becomes the K-major B operand) and no bias.
  bool swap_ab = false;
  // wgmma only: two consumer warpgroups compute each whole tile (WM = BM), one the even K blocks and
  // one the odd, and add up in shared memory (string form: an extra part "kh"); for problems with
  // fewer tiles than SMs, where one MMA chain per SM leaves the tensor cores waiting.
  bool k_halves = false;
  std::string to_string() const;
  // Parses the string form or a preset name; throws InvalidArgument naming the expected form.
  static GemmConfig parse(std::string_view text);
  int threads() const noexcept {
    if (kind == GemmKind::wgmma) return (pingpong || k_halves ? 3 : bm / wm + 1) * 128;
    return (bm / wm) * (bn / wn) * 32;
  }
  friend bool operator==(const GemmConfig&, const GemmConfig&) = default;
};

// Checks a problem (shapes, dtypes, layouts, leading dimensions, pointers) without compiling.
void validate_gemm(const GemmProblem& p);
// Checks a configuration against a problem's dtypes and a target arch; throws InvalidArgument naming
// the broken rule (tiles that do not divide, too many threads, too much shared memory, ...).
void validate_gemm_config(const GemmConfig& cfg, const GemmProblem& p, const std::string& arch);
// The configuration the heuristic picks for a problem on an arch with `multiprocessors` SMs, and why.
GemmConfig choose_gemm_config(const GemmProblem& p, const std::string& arch, int multiprocessors, std::string* why = nullptr);

namespace detail {
struct GemmPlanState;
}

// Pointers for GemmPlan::run; 0 keeps the plan's.
struct GemmPointers {
  CUdeviceptr a = 0, b = 0, c = 0, d = 0, bias = 0;
};

// A problem bound to a runtime with its kernel resolved: run() launches it. A wgmma plan whose A or B
// TMA cannot read in place copies them into a workspace it owns before each run (on the run's
// stream): such a plan must not run on two streams at once.
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

 private:
  friend class Runtime;
  explicit GemmPlan(std::shared_ptr<detail::GemmPlanState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::GemmPlanState> state_;
};

}  // namespace tilejit
