// The launch side of a wgmma GEMM plan: operands TMA cannot read as they are get packed into a
// workspace first, and the tensor maps the kernel takes by value are made (and kept) per pointer set.
#pragma once

#include "ops/gemm/gemm_internal.hpp"

#include <cuda.h>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace tilejit::ops {

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
  // b_source: where the kernel's K-major B is a transposed copy (wgmma_transposes_b), B as the user
  // stores it (its pointer comes with each launch).
  WgmmaLauncher(std::shared_ptr<Runtime::Impl> rt, const GemmProblem& problem, const GemmConfig& config,
                std::optional<MatrixRef> b_source = std::nullopt);
  ~WgmmaLauncher();
  WgmmaLauncher(const WgmmaLauncher&) = delete;
  WgmmaLauncher& operator=(const WgmmaLauncher&) = delete;

  // Launches `fn` (grid x threads, smem bytes) for the pointers in q on `stream`, packing A or B into
  // the workspace first where TMA cannot read them. Calls on one plan share that workspace: they
  // must not run on two streams at once (as with a cuBLAS handle's workspace); neither may a split-K
  // plan, whose partial tiles and counters live in its workspace.
  void launch(CUfunction fn, const GemmParams& q, unsigned grid, unsigned threads, int smem, CUstream stream);

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
  // B^T of `from` (K lines of N contiguous elements per matrix) into `to` (N lines of K).
  void transpose_b(const MatrixRef& from, const MatrixRef& to, CUstream stream);
  // A gemm_pack.cuh kernel (copy_matrix_kernel, transpose_matrix_kernel, transpose_narrow_matrix_kernel)
  // for elements of `bytes` bytes, compiled (or found in the cache) on first use.
  enum class HelperKernel { copy, transpose, transpose_narrow };
  CUfunction helper_kernel(HelperKernel which, int bytes);
  static std::int64_t aligned_ld(const MatrixRef& d, std::int64_t n);  // D's leading dimension in the workspace
  void encode(CUtensorMap* map, const MatrixRef& r, std::int64_t rows, std::int64_t cols, int box_rows, const char* name,
              int box_bytes = 128) const;
  const TensorMaps& tensor_maps(const MatrixRef& a, const MatrixRef& b, const MatrixRef& d);

  std::shared_ptr<Runtime::Impl> rt_;
  GemmProblem problem_;
  GemmConfig config_;
  std::optional<MatrixRef> b_source_;
  std::mutex mutex_;
  std::optional<TensorMaps> maps_;     // for the last pointers
  CUfunction cluster_fn_ = nullptr;    // the kernel max_cluster_blocks_ was measured for
  unsigned max_cluster_blocks_ = 0;    // blocks of the clusters that are resident at once
  CUdeviceptr workspace_ = 0;          // packed operands, grown on demand
  std::size_t workspace_bytes_ = 0;
  CUdeviceptr split_k_workspace_ = 0;  // split-K partial tiles and arrival counters (counters reset by the kernel)
  std::vector<std::shared_ptr<jit::Kernel>> copy_kernels_;  // keep the copy kernels' modules loaded
  CUfunction helper_fns_[3][2] = {};                       // [HelperKernel][2-byte, 4-byte elements]
};

}  // namespace tilejit::ops
