#include "ops/gemm/wgmma_launch.hpp"

#include "jit/driver.hpp"
#include "jit/launch.hpp"
#include "jit/program.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace tilejit::ops {
namespace {

// How operand A (is_a) or B is stored: `lines` lines of `width` contiguous elements.
void line_shape(const GemmProblem& p, bool is_a, std::int64_t& lines, std::int64_t& width) {
  const MatrixRef& r = is_a ? p.a : p.b;
  const std::int64_t rows = is_a ? p.m : p.k, cols = is_a ? p.k : p.n;
  const bool row_major = r.layout == Layout::row_major;
  lines = row_major ? rows : cols;
  width = row_major ? cols : rows;
}

// Packed lines start on 128-byte boundaries (TMA reads lines that do not at about half its rate).
std::int64_t packed_ld(std::int64_t width, std::int64_t es) {
  const std::int64_t per = 128 / es;
  return (width + per - 1) / per * per;
}

}  // namespace

std::string tma_unready_reason(const GemmProblem& p, bool is_a) {
  const MatrixRef& r = is_a ? p.a : p.b;
  const char* name = is_a ? "A" : "B";
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(r.dtype));
  std::int64_t lines = 0, width = 0;
  line_shape(p, is_a, lines, width);
  const std::int64_t ld = r.ld ? r.ld : width;
  if (r.ptr % 16) return fmt::format("{} starts at 0x{:x}, not on a 16-byte boundary", name, r.ptr);
  if ((ld * es) % 16) return fmt::format("{}'s leading dimension {} is {} bytes, not a multiple of 16", name, ld, ld * es);
  if (p.batch > 1 && ((r.batch_stride * es) % 16 || r.batch_stride < ld * lines))
    return fmt::format("{}'s batch stride {} is not a multiple of 16 bytes holding a whole {} x {} matrix", name, r.batch_stride, lines, ld);
  return "";
}

bool b_lines_off(const GemmProblem& p, std::int64_t boundary) {
  std::int64_t lines = 0, width = 0;
  line_shape(p, false, lines, width);
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.b.dtype));
  const std::int64_t ld = p.b.ld ? p.b.ld : width;
  return p.b.ptr % boundary != 0 || (ld * es) % boundary != 0 || (p.batch > 1 && (p.b.batch_stride * es) % boundary != 0);
}

bool b_lines_off_sectors(const GemmProblem& p) { return b_lines_off(p, 32); }

CUtensorMapL2promotion tma_l2_promotion(std::uint64_t row_bytes) {
  // Rows off 128-byte boundaries reach TMA in pieces that straddle two lines; with 256-byte promotion
  // bf16 1000^3 ran 5-7% and 2040^3 8-10% slower than with 128 (or none), under graph and stream
  // (H100, 2026-12-07 19:00Z-19:05Z, docs/benchmarks.md). Aligned rows showed no difference either
  // way and keep the 256 bytes they were tuned with.
  return row_bytes % 128 == 0 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
}

bool wgmma_packs_b_for_speed(const GemmConfig& c, const GemmProblem& p) {
  // H200, 2026-12-03 13:11Z (docs/benchmarks.md, sixteenth session), bf16 graph, ratio to cuBLAS
  // without -> with B packed: 2040^3 0.53 -> 0.64, 3000^3 0.59 -> 0.85, 4088^3 0.70 -> 0.92, 8184^3
  // 0.66 -> 0.98; 1000^3 about even (0.69-0.73 -> 0.71-0.77), where clusters of two do better. Lines
  // on 32-byte boundaries (1008, 2000, 4000) lost 10-25% packed, so they stay as they are.
  // B tiles of 128 rows or more (measured with 128 and 256): a narrow one (16 or 32 rows, the swapped
  // decode path's M x K operand) costs little to read and would add a copy to a short launch.
  return c.kind == GemmKind::wgmma && c.cluster == 1 && c.bn >= 128 && dtype_size(p.b.dtype) == 2 && p.m > 1024 &&
         b_lines_off_sectors(p);
}

WgmmaLauncher::WgmmaLauncher(std::shared_ptr<jit::Context> rt, const GemmProblem& problem, const GemmConfig& config,
                             std::optional<MatrixRef> a_source, std::optional<MatrixRef> b_source)
    : rt_(std::move(rt)), problem_(problem), config_(config), a_source_(std::move(a_source)), b_source_(std::move(b_source)) {}

WgmmaLauncher::~WgmmaLauncher() {
  if ((workspace_ || split_k_workspace_) && jit::driver_available()) {
    try {
      jit::make_current(rt_->context(), rt_->device_ordinal);
      // Kernels queued earlier may still use the workspaces (a plan dropped right after its run, or
      // Runtime::gemm starting its plans over): let them finish before the memory goes.
      jit::driver().cuCtxSynchronize();
      if (workspace_) jit::driver().cuMemFree(workspace_);
      if (split_k_workspace_) jit::driver().cuMemFree(split_k_workspace_);
    } catch (...) {  // a destructor never throws; the context is going away anyway
    }
  }
}

MatrixRef WgmmaLauncher::pack(const MatrixRef& r, bool is_a, std::size_t offset, CUstream stream) {
  GemmProblem p = problem_;
  (is_a ? p.a : p.b) = r;
  std::int64_t lines = 0, width = 0;
  line_shape(p, is_a, lines, width);
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(r.dtype));
  MatrixRef packed = r;
  packed.ld = packed_ld(width, es);
  packed.batch_stride = packed.ld * lines;
  packed.ptr = workspace_ + offset;
  MatrixRef src = r;
  if (!src.ld) src.ld = width;
  copy_lines(src, packed, stream, lines, width, is_a ? "packing GEMM operand A for TMA" : "packing GEMM operand B for TMA");
  return packed;
}

std::int64_t WgmmaLauncher::aligned_ld(const MatrixRef& d, std::int64_t n) {
  const std::int64_t per16 = 16 / static_cast<std::int64_t>(dtype_size(d.dtype));
  return (n + per16 - 1) / per16 * per16;
}

namespace {
// A helper copy's launch; a driver failure says which step of the GEMM it was.
template <class... Args>
void launch_step(const Kernel& kernel, const LaunchConfig& config, CUstream stream, const char* what, const Args&... args) {
  try {
    kernel.launch(config, stream, args...);
  } catch (const DriverError& e) {
    throw DriverError(fmt::format("{} ({})", e.what(), what ? what : "a GEMM helper copy"), e.call(), e.code(), e.code_name(), e.device());
  }
}
}  // namespace

void WgmmaLauncher::copy_lines(const MatrixRef& from, const MatrixRef& to, CUstream stream, std::int64_t lines,
                               std::int64_t width, const char* what) {
  if (lines < 0) lines = problem_.m, width = problem_.n, what = "copying the staged GEMM output D into place";
  const int es = static_cast<int>(dtype_size(from.dtype));
  const Kernel& kernel = helper_kernel(HelperKernel::copy, es, stream);
  PackParams q{reinterpret_cast<const void*>(from.ptr), reinterpret_cast<void*>(to.ptr), width, lines, from.ld,
               to.ld, from.batch_stride, to.batch_stride, problem_.batch};
  const std::int64_t per_block = 256 * (16 / es);  // elements a block moves per pass over a line
  const unsigned grid_x = static_cast<unsigned>(std::clamp<std::int64_t>((width + per_block - 1) / per_block, 1, 64));
  const unsigned grid_y = static_cast<unsigned>(std::clamp<std::int64_t>(lines * problem_.batch, 1, 65535));
  launch_step(kernel, {.grid = {grid_x, grid_y}, .block = {256}}, stream, what, q);
}

const Kernel& WgmmaLauncher::helper_kernel(HelperKernel which, int bytes, std::optional<CUstream> stream) {
  const int size_slot = bytes == 1 ? 0 : bytes == 2 ? 1 : 2;
  std::optional<Kernel>& slot = helper_kernels_[static_cast<int>(which)][size_slot];
  if (!slot) {
    if (stream) refuse_during_capture(*stream, "a copy kernel it has not loaded yet (operands TMA cannot read in place)");
    static constexpr const char* kNames[] = {"copy", "transpose", "transpose_narrow", "transpose_bytes"};
    const char* kernel = kNames[static_cast<int>(which)];
    const std::string expression = which == HelperKernel::transpose_bytes ? std::string("tilejit::transpose_bytes_kernel")
                                                                           : fmt::format("tilejit::{}_matrix_kernel<{}>", kernel, bytes);
    const KernelSource source{.name = fmt::format("gemm_{}_{}", kernel, bytes * 8), .text = "#include \"gemm_pack.cuh\"\n"};
    const jit::ProgramLabels labels{.family = "gemm_pack",
                                    .dtypes = fmt::format("{}-byte elements", bytes),
                                    .config = which == HelperKernel::transpose_narrow ? "threads=128" : "threads=256",
                                    .library_options = true};
    auto& program = helper_programs_[static_cast<int>(which)][size_slot];
    program = jit::make_program(
        rt_, jit::program_request(*rt_, source, {expression}, rt_->arch(false), labels));
    Kernel k = program->kernel(program->name_expressions().front());
    k.function();  // loaded now: a launch during a capture loads nothing
    slot = std::move(k);
  }
  return *slot;
}

void WgmmaLauncher::transpose(const MatrixRef& from, const MatrixRef& to, std::int64_t lines, std::int64_t width, const char* what,
                              CUstream stream) {
  const int es = static_cast<int>(dtype_size(from.dtype));
  PackParams q{reinterpret_cast<const void*>(from.ptr), reinterpret_cast<void*>(to.ptr), width, lines, from.ld ? from.ld : width,
               to.ld, from.batch_stride, to.batch_stride, problem_.batch};
  if (width <= 64) {  // a decode shape's M: one thread per source line (see transpose_narrow_matrix_kernel)
    const unsigned blocks = static_cast<unsigned>((lines + 127) / 128);
    const unsigned grid_y = static_cast<unsigned>(std::clamp<std::int64_t>(problem_.batch, 1, 65535));
    launch_step(helper_kernel(HelperKernel::transpose_narrow, es, stream), {.grid = {blocks, grid_y}, .block = {128}}, stream, what, q);
    return;
  }
  if (es == 1) {  // 64 x 64-byte blocks (see transpose_bytes_kernel)
    const unsigned grid_x = static_cast<unsigned>((width + 63) / 64);
    const unsigned grid_y = static_cast<unsigned>(std::clamp<std::int64_t>((lines + 63) / 64, 1, 65535));
    const unsigned grid_z = static_cast<unsigned>(std::clamp<std::int64_t>(problem_.batch, 1, 65535));
    launch_step(helper_kernel(HelperKernel::transpose_bytes, es, stream), {.grid = {grid_x, grid_y, grid_z}, .block = {256}}, stream, what,
                q);
    return;
  }
  const Kernel& kernel = helper_kernel(HelperKernel::transpose, es, stream);
  // 32 x 32 element blocks of the source per thread block; the batch along z (the kernel loops where
  // the grid's y and z limits cut lines or matrices short).
  const unsigned grid_x = static_cast<unsigned>((width + 31) / 32);
  const unsigned grid_y = static_cast<unsigned>(std::clamp<std::int64_t>((lines + 31) / 32, 1, 65535));
  const unsigned grid_z = static_cast<unsigned>(std::clamp<std::int64_t>(problem_.batch, 1, 65535));
  launch_step(kernel, {.grid = {grid_x, grid_y, grid_z}, .block = {256}}, stream, what, q);
}

WgmmaLauncher::Workspace WgmmaLauncher::workspace_for(const GemmProblem& p) const {
  Workspace w;
  // An operand that is transposed into the workspace needs no packing on top.
  w.pack_a = !a_source_ && !tma_unready_reason(p, true).empty();
  w.pack_b = !b_source_ && (!tma_unready_reason(p, false).empty() || wgmma_packs_b_for_speed(config_, p));
  w.stage_d = wgmma_stage_d(config_, p);
  auto packed_bytes = [&](bool is_a) -> std::size_t {
    std::int64_t lines = 0, width = 0;
    line_shape(p, is_a, lines, width);
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.a.dtype));
    const std::int64_t ld = packed_ld(width, es);
    return static_cast<std::size_t>((ld * lines * p.batch * es + 255) / 256 * 256);
  };
  // A transposed operand is already described K-major with its workspace leading dimension (see
  // wgmma_kernel_problem).
  auto transposed_bytes = [&](const MatrixRef& r) {
    return static_cast<std::size_t>((r.batch_stride * p.batch * static_cast<std::int64_t>(dtype_size(r.dtype)) + 255) / 256 * 256);
  };
  w.a_bytes = w.pack_a ? packed_bytes(true) : a_source_ ? transposed_bytes(p.a) : 0;
  w.b_bytes = w.pack_b ? packed_bytes(false) : b_source_ ? transposed_bytes(p.b) : 0;
  w.d_bytes = w.stage_d ? static_cast<std::size_t>((aligned_ld(p.d, p.n) * p.m * p.batch * static_cast<std::int64_t>(dtype_size(p.d.dtype)) +
                                                    255) / 256 * 256)
                        : 0;
  return w;
}

void WgmmaLauncher::refuse_during_capture(CUstream stream, const std::string& what) const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  jit::check(jit::driver().cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing", rt_->device_ordinal, "GEMM launch");
  if (status != CU_STREAM_CAPTURE_STATUS_NONE)
    throw InvalidArgument(fmt::format("GEMM plan {}: this run needs {}, which cannot happen while its stream is being captured into a "
                                      "CUDA graph; run the plan once with these pointers before capturing (nothing was captured)",
                                      config_.to_string(), what));
}

void WgmmaLauncher::ensure_workspace(std::size_t need, std::optional<CUstream> stream) {
  if (need <= workspace_bytes_) return;
  if (stream) refuse_during_capture(*stream, fmt::format("{} bytes of workspace (it has {})", need, workspace_bytes_));
  if (workspace_) {
    // A workspace in use by kernels queued earlier must not be freed under them.
    jit::check(jit::driver().cuCtxSynchronize(), "cuCtxSynchronize", rt_->device_ordinal, "growing the GEMM packing workspace");
    jit::driver().cuMemFree(workspace_);
    workspace_ = 0, workspace_bytes_ = 0;
  }
  jit::check(jit::driver().cuMemAlloc(&workspace_, need), "cuMemAlloc", rt_->device_ordinal,
             fmt::format("{} bytes of workspace for GEMM operands TMA cannot read in place", need));
  workspace_bytes_ = need;
}

void WgmmaLauncher::ensure_split_k_workspace(const GemmParams& q, std::optional<CUstream> stream) {
  if (split_k_workspace_ || q.split_k <= 1) return;
  if (stream) refuse_during_capture(*stream, "its split-K workspace");
  // Partial tiles of every (split tile, slice), then one counter per (split tile, consumer
  // warpgroup), zero now and put back to zero by the kernel once a tile's slices have all arrived.
  const std::size_t tiles = static_cast<std::size_t>(q.tiles_m) * q.tiles_n * problem_.batch - q.whole_tiles;
  const std::size_t partial_bytes = tiles * q.split_k * config_.bm * config_.bn * sizeof(float);
  const std::size_t counter_bytes = tiles * (config_.bm / config_.wm) * sizeof(int);
  jit::check(jit::driver().cuMemAlloc(&split_k_workspace_, partial_bytes + counter_bytes), "cuMemAlloc", rt_->device_ordinal,
             fmt::format("{} bytes of split-K workspace", partial_bytes + counter_bytes));
  jit::check(jit::driver().cuMemsetD8(split_k_workspace_ + partial_bytes, 0, counter_bytes), "cuMemsetD8", rt_->device_ordinal,
             "split-K counters");
}

GemmProblem WgmmaLauncher::with_pointers_of(const GemmParams& q) const {
  GemmProblem p = problem_;
  p.a.ptr = reinterpret_cast<CUdeviceptr>(q.a);
  p.b.ptr = reinterpret_cast<CUdeviceptr>(q.b);
  p.d.ptr = reinterpret_cast<CUdeviceptr>(q.d);
  return p;
}

void WgmmaLauncher::prepare(const GemmParams& q) {
  std::lock_guard lock(mutex_);
  const GemmProblem p = with_pointers_of(q);
  const Workspace w = workspace_for(p);
  ensure_workspace(w.total(), std::nullopt);
  ensure_split_k_workspace(q, std::nullopt);
  const int es = static_cast<int>(dtype_size(p.a.dtype));
  if (w.pack_a || w.pack_b) helper_kernel(HelperKernel::copy, es, std::nullopt);
  if (w.stage_d) helper_kernel(HelperKernel::copy, static_cast<int>(dtype_size(p.d.dtype)), std::nullopt);
  const HelperKernel wide = es == 1 ? HelperKernel::transpose_bytes : HelperKernel::transpose;
  if (a_source_) helper_kernel(problem_.m <= 64 ? HelperKernel::transpose_narrow : wide, es, std::nullopt);
  if (b_source_) helper_kernel(problem_.n <= 64 ? HelperKernel::transpose_narrow : wide, es, std::nullopt);
}

void WgmmaLauncher::launch(const Kernel& kernel, const GemmParams& q, unsigned grid, unsigned threads, int smem, bool programmatic,
                           CUstream stream) {
  std::lock_guard lock(mutex_);
  GemmProblem p = with_pointers_of(q);
  const Workspace w = workspace_for(p);
  const MatrixRef user_d = p.d;
  if (w.total() > 0) {
    ensure_workspace(w.total(), stream);
    if (w.pack_a) p.a = pack(p.a, true, 0, stream);
    if (w.pack_b) p.b = pack(p.b, false, w.a_bytes, stream);
    if (a_source_) {  // a column-major A: K lines of M elements, into M lines of K
      MatrixRef from = *a_source_;
      from.ptr = p.a.ptr;
      p.a.ptr = workspace_;
      transpose(from, p.a, problem_.k, problem_.m, "transposing GEMM operand A into K-major order", stream);
    }
    if (b_source_) {  // a row-major B: K lines of N elements, into N lines of K
      MatrixRef from = *b_source_;
      from.ptr = p.b.ptr;
      p.b.ptr = workspace_ + w.a_bytes;
      transpose(from, p.b, problem_.k, problem_.n, "transposing GEMM operand B into K-major order", stream);
    }
    if (w.stage_d) {
      // D is written aligned into the workspace (through TMA) and copied into place after the GEMM.
      p.d.ld = aligned_ld(p.d, p.n);
      p.d.batch_stride = p.d.ld * p.m;
      p.d.ptr = workspace_ + w.a_bytes + w.b_bytes;
    }
  }
  GemmParams params = q;
  params.d = reinterpret_cast<void*>(p.d.ptr);
  params.ldd = p.d.ld;
  params.stride_d = p.d.batch_stride;
  if (q.split_k > 1) {
    ensure_split_k_workspace(q, stream);
    params.workspace = reinterpret_cast<void*>(split_k_workspace_);
  }
  const TensorMaps& m = tensor_maps(p.a, p.b, p.d);
  LaunchConfig lc{.grid = {grid}, .block = {threads}, .shared_bytes = static_cast<unsigned>(smem), .programmatic = programmatic};
  if (config_.cluster > 1) {
    lc.cluster = {static_cast<unsigned>(config_.cluster)};
    CUfunction fn = kernel.function();
    if (fn != cluster_fn_) {
      // A persistent grid must be resident at once: as many clusters as the GPCs hold side by side
      // (fewer than SMs / 2 where a GPC has an odd number of free SMs).
      CUlaunchAttribute attr{};
      attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr.value.clusterDim.x = static_cast<unsigned>(config_.cluster);
      attr.value.clusterDim.y = 1;
      attr.value.clusterDim.z = 1;
      CUlaunchConfig occupancy{};
      occupancy.gridDimX = grid, occupancy.gridDimY = 1, occupancy.gridDimZ = 1;
      occupancy.blockDimX = threads, occupancy.blockDimY = 1, occupancy.blockDimZ = 1;
      occupancy.sharedMemBytes = static_cast<unsigned>(smem);
      occupancy.attrs = &attr;
      occupancy.numAttrs = 1;
      int clusters = 0;
      jit::check(jit::driver().cuOccupancyMaxActiveClusters(&clusters, fn, &occupancy), "cuOccupancyMaxActiveClusters", rt_->device_ordinal,
                 fmt::format("gemm, {} blocks per cluster", config_.cluster));
      cluster_fn_ = fn;
      max_cluster_blocks_ = static_cast<unsigned>(std::max(1, clusters) * config_.cluster);
      util::log().debug("gemm {}: {} clusters of {} resident at once; grid {} blocks", config_.to_string(), clusters, config_.cluster,
                        std::min(grid, max_cluster_blocks_));
    }
    lc.grid.x = std::min(grid, max_cluster_blocks_);
  }
  kernel.launch(lc, stream, params, m.map_a, m.map_b, m.map_d);
  if (w.stage_d) copy_lines(p.d, user_d, stream);
}

// A matrix whose rows are contiguous (rows x cols, leading dimension ld) as a 3-D tensor {cols,
// rows, batch} moved in boxes of {box_bytes (128, or 32 / 64 for a narrow N-major B) of columns,
// box_rows, 1}, swizzled over box_bytes; reads outside it return zeros, writes outside it are dropped.
void WgmmaLauncher::encode(CUtensorMap* map, const MatrixRef& r, std::int64_t rows, std::int64_t cols, int box_rows,
                           const char* name, int box_bytes) const {
  const std::uint64_t es = dtype_size(r.dtype);
  // 8-bit floats move as bytes (TMA has no 8-bit float type and needs none: it only copies).
  const CUtensorMapDataType type = r.dtype == DType::bf16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : r.dtype == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : es == 1               ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(r.ld) * es;
  const std::uint64_t matrix_bytes = problem_.batch > 1 ? static_cast<std::uint64_t>(r.batch_stride) * es
                                                        : (row_bytes * static_cast<std::uint64_t>(rows) + 15) / 16 * 16;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(problem_.batch)};
  const cuuint64_t strides[2] = {row_bytes, matrix_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_bytes / static_cast<int>(es)), static_cast<cuuint32_t>(box_rows), 1};
  const CUtensorMapSwizzle swizzle = box_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : box_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                                                                  : CU_TENSOR_MAP_SWIZZLE_128B;
  const cuuint32_t element_strides[3] = {1, 1, 1};
  jit::check(jit::driver().cuTensorMapEncodeTiled(map, type, 3, reinterpret_cast<void*>(r.ptr), dims, strides, box, element_strides,
                                                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                                  tma_l2_promotion(row_bytes), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
             "cuTensorMapEncodeTiled", rt_->device_ordinal,
             fmt::format("GEMM matrix {}: {}x{} {}, ld {}, batch {}", name, rows, cols, dtype_name(r.dtype), r.ld, problem_.batch));
}

const WgmmaLauncher::TensorMaps& WgmmaLauncher::tensor_maps(const MatrixRef& a, const MatrixRef& b, const MatrixRef& d) {
  if (maps_ && maps_->a == a.ptr && maps_->b == b.ptr && maps_->d == d.ptr && maps_->lda == a.ld && maps_->ldb == b.ld) return *maps_;
  TensorMaps m;
  m.a = a.ptr, m.b = b.ptr, m.d = d.ptr, m.lda = a.ld, m.ldb = b.ld;
  // K-major operands move in boxes of {BK, tile rows}; M- or N-major ones in boxes of {64, BK}.
  if (a.layout == Layout::row_major) encode(&m.map_a, a, problem_.m, problem_.k, config_.bm, "A");
  else encode(&m.map_a, a, problem_.k, problem_.m, config_.bk, "A");
  // With a cluster of 2, each block of the pair loads half of a K-major B tile (BN / 2 rows).
  if (b.layout == Layout::col_major) encode(&m.map_b, b, problem_.n, problem_.k, config_.bn / config_.cluster, "B");
  else if (config_.bn == 16 || config_.bn == 32)  // narrow N-major: one box of {BN, BK} (see gemm_wgmma.cuh)
    encode(&m.map_b, b, problem_.k, problem_.n, config_.bk, "B", config_.bn * static_cast<int>(dtype_size(b.dtype)));
  else encode(&m.map_b, b, problem_.k, problem_.n, config_.bk, "B");
  GemmProblem with_d = problem_;
  with_d.d = d;
  if (wgmma_tma_store(config_, with_d)) encode(&m.map_d, d, problem_.m, problem_.n, config_.wm, "D");
  maps_ = m;
  return *maps_;
}

}  // namespace tilejit::ops
