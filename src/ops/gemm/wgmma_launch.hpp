// The launch side of a wgmma GEMM plan: operands TMA cannot read as they are get packed into a
// workspace first, and the tensor maps the kernel takes by value are made (and kept) per pointer set.
#pragma once

#include "ops/gemm/gemm_internal.hpp"

#include <tilejit/kernel.hpp>

#include <cuda.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::ops {

// The L2 promotion TMA asks for when it reads a matrix whose rows are row_bytes apart: 128 bytes
// for rows off 128-byte boundaries, 256 otherwise.
CUtensorMapL2promotion tma_l2_promotion(std::uint64_t row_bytes);

// Host mirror of tilejit::pack_params in kernels_templates/gemm_pack.cuh.
struct PackParams {
  const void* src;
  void* dst;
  long long width, lines;
  long long ld_src, ld_dst;
  long long stride_src, stride_dst;
  long long batch;
};
static_assert(sizeof(PackParams) == 72, "must match pack_params in gemm_pack.cuh");

class WgmmaLauncher {
 public:
  // a_source, b_source: where the kernel's K-major A or B is a transposed copy (wgmma_transposes_a,
  // wgmma_transposes_b), the operand as the user stores it (its pointer comes with each launch).
  WgmmaLauncher(std::shared_ptr<jit::Context> rt, const GemmProblem& problem, const GemmConfig& config,
                std::optional<MatrixRef> a_source = std::nullopt, std::optional<MatrixRef> b_source = std::nullopt);
  ~WgmmaLauncher();
  WgmmaLauncher(const WgmmaLauncher&) = delete;
  WgmmaLauncher& operator=(const WgmmaLauncher&) = delete;

  // Launches `kernel` (grid x threads, smem bytes) for the pointers in q on `stream`, packing A or B into
  // the workspace first where TMA cannot read them. Calls on one plan share that workspace: they
  // must not run on two streams at once (as with a cuBLAS handle's workspace); neither may a split-K
  // plan, whose partial tiles and counters live in its workspace.
  // programmatic: the GEMM kernel launches with programmatic dependent launch (the helper copies do not).
  void launch(const Kernel& kernel, const GemmParams& q, unsigned grid, unsigned threads, int smem, bool programmatic, CUstream stream);
  // At plan creation: the workspaces and copy kernels the plan's own pointers need, so that a first
  // run inside a CUDA graph capture allocates and loads nothing. A later run whose pointers need more
  // (packing where the plan's pointers needed none) during a capture throws InvalidArgument before
  // anything reaches the stream.
  void prepare(const GemmParams& q);

 private:
  struct TensorMaps {
    CUdeviceptr a = 0, b = 0, d = 0;
    std::int64_t lda = 0, ldb = 0;
    CUtensorMap map_a{}, map_b{}, map_d{};  // map_d zero where D is not written by TMA
  };
  MatrixRef pack(const MatrixRef& r, bool is_a, std::size_t offset, CUstream stream);
  // Line-by-line copy from `from` to `to` (lines x width elements per matrix, every batch): packing
  // an operand, or (without lines: D's m x n) putting a staged D in place.
  void copy_lines(const MatrixRef& from, const MatrixRef& to, CUstream stream, std::int64_t lines = -1,
                  std::int64_t width = 0, const char* what = nullptr);
  // The transpose of `from` (`lines` lines of `width` contiguous elements per matrix) into `to`
  // (`width` lines of `lines`): a row-major B (K lines of N) or a column-major A (K lines of M) into
  // K-major order.
  void transpose(const MatrixRef& from, const MatrixRef& to, std::int64_t lines, std::int64_t width, const char* what,
                 CUstream stream);
  // A gemm_pack.cuh kernel (copy_matrix_kernel, transpose_matrix_kernel, transpose_narrow_matrix_kernel)
  // for elements of `bytes` bytes, compiled (or found in the cache) on first use.
  // (transpose_bytes: transpose_bytes_kernel, for 1-byte elements only.)
  enum class HelperKernel { copy, transpose, transpose_narrow, transpose_bytes };
  // stream: the launch's (a first load during its capture is refused), none from prepare().
  const Kernel& helper_kernel(HelperKernel which, int bytes, std::optional<CUstream> stream);
  // What a run with the pointers in p puts in the workspace: packed A or B, transposed A or B, and a
  // staged D, one after the other.
  struct Workspace {
    bool pack_a = false, pack_b = false, stage_d = false;
    std::size_t a_bytes = 0, b_bytes = 0, d_bytes = 0;
    std::size_t total() const { return a_bytes + b_bytes + d_bytes; }
  };
  Workspace workspace_for(const GemmProblem& p) const;
  // The plan's (kernel) problem with the A, B and D pointers of one launch.
  GemmProblem with_pointers_of(const GemmParams& q) const;
  // Grow the workspaces (stream: the launch's; none from prepare()).
  void ensure_workspace(std::size_t need, std::optional<CUstream> stream);
  void ensure_split_k_workspace(const GemmParams& q, std::optional<CUstream> stream);
  // Throws InvalidArgument when `stream` is being captured: `what` would allocate or load a module.
  void refuse_during_capture(CUstream stream, const std::string& what) const;
  static std::int64_t aligned_ld(const MatrixRef& d, std::int64_t n);  // D's leading dimension in the workspace
  void encode(CUtensorMap* map, const MatrixRef& r, std::int64_t rows, std::int64_t cols, int box_rows, const char* name,
              int box_bytes = 128) const;
  const TensorMaps& tensor_maps(const MatrixRef& a, const MatrixRef& b, const MatrixRef& d);

  std::shared_ptr<jit::Context> rt_;
  GemmProblem problem_;
  GemmConfig config_;
  std::optional<MatrixRef> a_source_, b_source_;
  std::mutex mutex_;
  std::optional<TensorMaps> maps_;     // for the last pointers
  CUfunction cluster_fn_ = nullptr;    // the kernel max_cluster_blocks_ was measured for
  unsigned max_cluster_blocks_ = 0;    // blocks of the clusters that are resident at once
  CUdeviceptr workspace_ = 0;          // packed operands, grown on demand
  std::size_t workspace_bytes_ = 0;
  CUdeviceptr split_k_workspace_ = 0;  // split-K partial tiles and arrival counters (counters reset by the kernel)
  std::optional<Program> helper_programs_[4][3];  // [HelperKernel][1-, 2-, 4-byte elements]
  std::optional<Kernel> helper_kernels_[4][3];
};

}  // namespace tilejit::ops
