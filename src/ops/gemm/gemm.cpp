// GEMM: problem validation, code generation, plans and the launch path.
#include "ops/gemm/gemm_internal.hpp"
#include "ops/gemm/gemm_tuning.hpp"
#include "ops/gemm/wgmma_launch.hpp"

#include "jit/driver.hpp"
#include "jit/launch.hpp"
#include "jit/program.hpp"
#include "ops/elementwise/codegen.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>
#include <tilejit/gemm.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace tilejit {
namespace {

bool is_gemm_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

using ops::matrix_span_bytes;

// Rows and columns of an operand as stored: A is m x k, B k x n, C and D m x n.
// A and B may be 8-bit floats (e4m3, e5m2), and D with 8-bit inputs (eight_bit_d); C not.
void check_matrix(const char* name, const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch, bool needed,
                  bool eight_bit_d = false) {
  const bool input = name[0] == 'A' || name[0] == 'B' || (name[0] == 'D' && eight_bit_d);
  if (!is_gemm_float(r.dtype) && !(input && ops::is_8bit_float(r.dtype)))
    throw InvalidArgument(fmt::format("GEMM {}: dtype {} is not supported ({})", name, dtype_name(r.dtype),
                                      input                ? "f32, f16, bf16, or the 8-bit e4m3 and e5m2"
                                      : name[0] == 'D'     ? "f32, f16 or bf16; e4m3 or e5m2 with 8-bit inputs"
                                                           : "f32, f16 or bf16"));
  const std::int64_t min_ld = std::max<std::int64_t>(1, r.layout == Layout::row_major ? cols : rows);
  if (r.ld < min_ld)
    throw InvalidArgument(fmt::format("GEMM {}: leading dimension {} is smaller than {} ({}-major {}x{})", name, r.ld, min_ld,
                                      layout_name(r.layout), rows, cols));
  if (r.batch_stride < 0) throw InvalidArgument(fmt::format("GEMM {}: negative batch stride {}", name, r.batch_stride));
  if (needed && r.ptr == 0) throw InvalidArgument(fmt::format("GEMM {}: null pointer", name));
  // The bytes the matrices of a batch span, computed without overflow: a span past 2^48 bytes (256 TiB,
  // more than any device holds) or past the end of the address space is a mistake, never a launch.
  if (needed && rows > 0 && cols > 0) {
    const std::int64_t bytes = matrix_span_bytes(r, rows, cols, batch);
    if (bytes < 0 || bytes > (std::int64_t{1} << 48) || r.ptr > ~CUdeviceptr{0} - static_cast<CUdeviceptr>(bytes))
      throw InvalidArgument(fmt::format("GEMM {}: a {}-major {}x{} matrix with leading dimension {} and batch stride {} ({} of "
                                        "them) spans more than 2^48 bytes or runs past the end of the address space",
                                        name, layout_name(r.layout), rows, cols, r.ld, r.batch_stride, batch));
  }
  if (r.ptr % dtype_size(r.dtype) != 0)
    throw InvalidArgument(fmt::format("GEMM {}: pointer 0x{:x} is not aligned to its {}-byte elements", name, r.ptr, dtype_size(r.dtype)));
}

}  // namespace

namespace ops {

// The bytes from r.ptr to the end of the last of `batch` rows x cols matrices, or -1 when that does not
// fit in 64 bits.
std::int64_t matrix_span_bytes(const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  if (rows <= 0 || cols <= 0) return 0;
  const std::int64_t lines = r.layout == Layout::row_major ? rows : cols, line = r.layout == Layout::row_major ? cols : rows;
  std::int64_t elements = 0, batch_span = 0, bytes = 0;
  const bool overflow = __builtin_mul_overflow(lines - 1, r.ld, &elements) || __builtin_add_overflow(elements, line, &elements) ||
                        __builtin_mul_overflow(batch - 1, r.batch_stride, &batch_span) ||
                        __builtin_add_overflow(elements, batch_span, &elements) ||
                        __builtin_mul_overflow(elements, static_cast<std::int64_t>(dtype_size(r.dtype)), &bytes);
  return overflow ? -1 : bytes;
}

void check_gemm_matrix(const char* name, const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch, bool needed) {
  check_matrix(name, r, rows, cols, batch, needed);
}

GemmProblem problem_for_call(const GemmProblem& planned, const GemmProblem& call) {
  GemmProblem p = with_pointers(planned, GemmPointers{.a = call.a.ptr, .b = call.b.ptr, .c = call.c.ptr, .d = call.d.ptr,
                                                      .bias = call.epilogue.bias});
  p.alpha = call.alpha, p.beta = call.beta;
  p.scale_a = call.scale_a, p.scale_b = call.scale_b, p.scale_d = call.scale_d;  // this call's, none included
  if (!call.epilogue.body.empty()) {
    // The same names, dtypes and layouts (the signature says so); this call's pointers, leading
    // dimensions, batch strides and scalar values.
    p.epilogue.vectors = call.epilogue.vectors;
    p.epilogue.inputs = call.epilogue.inputs;
    p.epilogue.outputs = call.epilogue.outputs;
    p.epilogue.scalars = call.epilogue.scalars;
    check_epilogue_operands(p);
  }
  return p;
}

GemmProblem with_pointers(const GemmProblem& planned, const GemmPointers& ptrs) {
  GemmProblem p = planned;
  if (ptrs.a) p.a.ptr = ptrs.a;
  if (ptrs.b) p.b.ptr = ptrs.b;
  if (ptrs.d) p.d.ptr = ptrs.d;
  if (ptrs.c) p.c.ptr = ptrs.c;
  else if (ptrs.d && planned.c.ptr == planned.d.ptr) p.c.ptr = ptrs.d;
  if (ptrs.bias) {
    if (!planned.epilogue.bias)
      throw InvalidArgument("GEMM bias: this plan was made without a bias, so its kernel adds none; make a plan with one");
    p.epilogue.bias = ptrs.bias;
  }
  if (ptrs.scale_a) p.scale_a = ptrs.scale_a;
  if (ptrs.scale_b) p.scale_b = ptrs.scale_b;
  if (ptrs.scale_d) p.scale_d = ptrs.scale_d;
  return p;
}

void check_outputs_apart(const GemmProblem& p) {
  if (p.m == 0 || p.n == 0) return;
  // D is written while A, B, C and the bias are read by other blocks: memory they share with D (but a
  // C that is D, element for element) gives results that depend on the blocks' order. The spans
  // compared run from each operand's first to its last byte; D's batches must not overlap either.
  const std::int64_t one_d = p.d.layout == Layout::row_major ? (p.m - 1) * p.d.ld + p.n : (p.n - 1) * p.d.ld + p.m;
  if (p.batch > 1 && p.d.batch_stride < one_d)
    throw InvalidArgument(fmt::format("GEMM D: batch stride {} is smaller than one {}x{} matrix ({} elements), so the outputs "
                                      "of the batch overlap",
                                      p.d.batch_stride, p.m, p.n, one_d));
  auto overlap = [](CUdeviceptr a, std::int64_t a_bytes, CUdeviceptr b, std::int64_t b_bytes) {
    return a_bytes > 0 && b_bytes > 0 && a < b + static_cast<CUdeviceptr>(b_bytes) && b < a + static_cast<CUdeviceptr>(a_bytes);
  };
  const std::int64_t d_bytes = matrix_span_bytes(p.d, p.m, p.n, p.batch);
  struct Input {
    const char* name;
    CUdeviceptr ptr;
    std::int64_t bytes;
  };
  const Input inputs[] = {
      {"A", p.a.ptr, p.k > 0 ? matrix_span_bytes(p.a, p.m, p.k, p.batch) : 0},
      {"B", p.b.ptr, p.k > 0 ? matrix_span_bytes(p.b, p.k, p.n, p.batch) : 0},
      {"C", p.c.ptr, p.beta != 0.f && p.c.ptr != p.d.ptr ? matrix_span_bytes(p.c, p.m, p.n, p.batch) : 0},
      {"the bias", p.epilogue.bias, p.epilogue.bias ? p.n * static_cast<std::int64_t>(dtype_size(p.epilogue.bias_dtype)) : 0},
      {"scale_a", p.scale_a, !p.scale_a ? 0 : p.scale_mode == ScaleMode::blocks ? (p.k + 127) / 128 * p.m * p.batch * 4 : 4},
      {"scale_b", p.scale_b, !p.scale_b ? 0 : p.scale_mode == ScaleMode::blocks ? (p.k + 127) / 128 * ((p.n + 127) / 128) * p.batch * 4 : 4},
      {"scale_d", p.scale_d, p.scale_d ? 4 : 0}};
  for (const Input& in_ : inputs)
    if (overlap(p.d.ptr, d_bytes, in_.ptr, in_.bytes))
      throw InvalidArgument(fmt::format("GEMM D: its memory (0x{:x}, {} bytes) overlaps {} (0x{:x}, {} bytes); an output must not "
                                        "share memory with an input (C may be D itself)",
                                        p.d.ptr, d_bytes, in_.name, in_.ptr, in_.bytes));
}

GemmProblem normalized(const GemmProblem& in) {
  GemmProblem p = in;
  auto tight = [](MatrixRef& r, std::int64_t rows, std::int64_t cols) {
    if (r.ld == 0) r.ld = std::max<std::int64_t>(1, r.layout == Layout::row_major ? cols : rows);
  };
  tight(p.a, p.m, p.k);
  tight(p.b, p.k, p.n);
  tight(p.d, p.m, p.n);
  // A single row stored column-major with ld 1 is the same bytes as that row stored row-major (and a
  // single column stored row-major with ld 1 as that column column-major): such a matrix takes the
  // layout the kernels read best, K-major for A and B, row-major for D and C (no swapped kernel for
  // D's layout). A decode step's 1 x K activation given as a column then runs the K-major kernels
  // instead of those that read A transposed: H200 graph, 1x4096x4096 bf16 TN / TT 0.885 / 0.922 ->
  // 1.122 / 1.114 of cuBLAS (2026-12-04, docs/benchmarks.md). Batch strides keep their meaning.
  auto one_line = [](MatrixRef& r, std::int64_t rows, std::int64_t cols, Layout preferred) {
    if (r.ld != 1 || r.layout == preferred) return;
    if (preferred == Layout::row_major && rows == 1) r.layout = preferred, r.ld = std::max<std::int64_t>(1, cols);
    if (preferred == Layout::col_major && cols == 1) r.layout = preferred, r.ld = std::max<std::int64_t>(1, rows);
  };
  one_line(p.a, p.m, p.k, Layout::row_major);
  one_line(p.b, p.k, p.n, Layout::col_major);
  one_line(p.d, p.m, p.n, Layout::row_major);
  if (p.c.ptr != 0) one_line(p.c, p.m, p.n, Layout::row_major);
  if (p.c.ptr == 0) {
    // No C: beta applies to D itself (C aliases D), and an epilogue body naming c reads D.
    CUdeviceptr keep = p.c.ptr;
    p.c = p.d;
    if (p.beta == 0.f && !epilogue_reads_c(p.epilogue)) p.c.ptr = keep;
  }
  tight(p.c, p.m, p.n);
  return p;
}

}  // namespace ops

void ops::check_normalized_operands(const GemmProblem& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0)
    throw InvalidArgument(fmt::format("GEMM: sizes must not be negative (m={}, n={}, k={})", p.m, p.n, p.k));
  if (p.batch < 1 || p.batch > 65535) throw InvalidArgument(fmt::format("GEMM: batch {} must be between 1 and 65535", p.batch));
  if (p.a.dtype != p.b.dtype && !(ops::is_8bit_float(p.a.dtype) && ops::is_8bit_float(p.b.dtype)))
    throw InvalidArgument(fmt::format("GEMM: A is {} and B is {}; A and B must have one dtype (or both be 8-bit floats, e4m3 or e5m2)",
                                      dtype_name(p.a.dtype), dtype_name(p.b.dtype)));
  const bool eight_bit = ops::is_8bit_float(p.a.dtype);
  if (p.scale_mode == ScaleMode::blocks && !eight_bit)
    throw InvalidArgument(fmt::format("GEMM: block scales (ScaleMode::blocks) apply to 8-bit float inputs (e4m3, e5m2), not {}",
                                      dtype_name(p.a.dtype)));
  for (auto [name, ptr] : {std::pair{"scale_a", p.scale_a}, std::pair{"scale_b", p.scale_b}}) {
    if (ptr && !eight_bit)
      throw InvalidArgument(fmt::format("GEMM {}: per-tensor scales apply to 8-bit float inputs (e4m3, e5m2), not {}; fold a scale "
                                        "into alpha",
                                        name, dtype_name(p.a.dtype)));
    if (ptr % 4) throw InvalidArgument(fmt::format("GEMM {}: pointer 0x{:x} is not aligned to its 4-byte f32", name, ptr));
    if (!ptr && p.scale_mode == ScaleMode::blocks && p.m > 0 && p.n > 0 && p.k > 0)
      throw InvalidArgument(fmt::format("GEMM {}: block scales (ScaleMode::blocks) need both scale_a and scale_b", name));
  }
  if (p.math == MathMode::tf32 && p.a.dtype != DType::f32)
    throw InvalidArgument(fmt::format("GEMM: MathMode::tf32 applies to f32 inputs, not {}", dtype_name(p.a.dtype)));
  // Grids, tile counts and TMA coordinates are 32-bit.
  constexpr std::int64_t kMaxSize = std::numeric_limits<std::int32_t>::max();
  if (p.m > kMaxSize || p.n > kMaxSize || p.k > kMaxSize)
    throw InvalidArgument(fmt::format("GEMM: sizes m={}, n={}, k={} must each be at most {} (2^31 - 1)", p.m, p.n, p.k, kMaxSize));
  const bool any = p.m > 0 && p.n > 0;
  check_matrix("A", p.a, p.m, p.k, p.batch, any && p.k > 0);
  check_matrix("B", p.b, p.k, p.n, p.batch, any && p.k > 0);
  check_matrix("D", p.d, p.m, p.n, p.batch, any, eight_bit);
  if (p.scale_d && !ops::is_8bit_float(p.d.dtype))
    throw InvalidArgument(fmt::format("GEMM scale_d: an output scale applies to an 8-bit D (e4m3, e5m2), not {}", dtype_name(p.d.dtype)));
  if (p.scale_d % 4) throw InvalidArgument(fmt::format("GEMM scale_d: pointer 0x{:x} is not aligned to its 4-byte f32", p.scale_d));
  const bool reads_c = p.beta != 0.f || ops::epilogue_reads_c(p.epilogue);
  if (reads_c) check_matrix("C", p.c, p.m, p.n, p.batch, any);
  if (reads_c && p.c.ptr == p.d.ptr &&
      (p.c.layout != p.d.layout || p.c.ld != p.d.ld || p.c.batch_stride != p.d.batch_stride || p.c.dtype != p.d.dtype))
    throw InvalidArgument("GEMM: C aliases D with another dtype, layout, leading dimension or batch stride; each output "
                          "element must be read and written at the same place");
  if (p.epilogue.bias && !is_gemm_float(p.epilogue.bias_dtype))
    throw InvalidArgument(fmt::format("GEMM bias: dtype {} is not supported (f32, f16 or bf16)", dtype_name(p.epilogue.bias_dtype)));
  if (p.epilogue.bias % dtype_size(p.epilogue.bias_dtype) != 0)
    throw InvalidArgument("GEMM bias: pointer not aligned to its elements");
  if ((p.m + 15) / 16 * ((p.n + 15) / 16) > std::numeric_limits<int>::max())
    throw InvalidArgument(fmt::format("GEMM: {}x{} outputs are too many tiles for one launch", p.m, p.n));
}

void validate_gemm(const GemmProblem& in) {
  const GemmProblem p = ops::normalized(in);
  ops::check_normalized_operands(p);
  ops::parse_epilogue(p);
}

namespace ops {

jit::KernelRequest gemm_request(const jit::Context& rt, const GemmProblem& p, const GemmVariant& v, const std::string& arch,
                                const GemmProblem* user_problem) {
  const GemmConfig& c = v.config;
  const bool simt = c.kind == GemmKind::simt;
  int lm = 0, ln = 0;
  if (simt) simt_lanes(c, lm, ln);
  const std::string kernel = simt                       ? "gemm_simt"
                             : c.kind == GemmKind::mma  ? "gemm_mma"
                             : c.kind == GemmKind::gemv ? "gemm_gemv"
                                                        : "gemm_wgmma";
  const bool tensor_cores = c.kind == GemmKind::mma || c.kind == GemmKind::wgmma;  // f32 inputs as tf32
  // The epilogue describes the user's problem (its m x n operands, its rows and columns); a swapped
  // kernel computes D^T and maps its coordinates back (see epilogue.cpp).
  const GemmProblem& user = user_problem ? *user_problem : p;
  const EpilogueBody epilogue = parse_epilogue(user);
  const std::string source = fmt::format(
      "// tilejit gemm {} {}\n"
      "{}"
      "#include \"{}.cuh\"\n\n"
      "namespace tilejit_gen {{\n"
      "{}"
      "struct gemm_cfg {{\n"
      "  using TA = {}; using TB = {}; using TC = {}; using TD = {};\n"
      "  enum : int {{ BM = {}, BN = {}, BK = {}, WM = {}, WN = {}, STAGES = {} }};\n"
      "  enum : int {{ LM = {}, LN = {} }};\n"
      "  enum : bool {{ A_ROW = {}, B_ROW = {}, C_ROW = {}, D_ROW = {} }};\n"
      "  enum : int {{ A_VEC = {}, B_VEC = {} }};\n"
      "  enum : bool {{ D_TMA = {} }};\n"
      "  enum : bool {{ PINGPONG = {} }};\n"
      "  enum : int {{ CLUSTER = {} }};\n"
      "  enum : bool {{ KHALVES = {} }};\n"
      "  enum : bool {{ BLOCK_SCALES = {} }};\n"
      "  enum : bool {{ A_REGS = {} }};\n"
      "  enum : int {{ TILE_VECTORS = {} }};\n"
      "  using epilogue = gemm_epilogue;\n"
      "}};\n"
      "}}  // namespace tilejit_gen\n",
      kernel, c.to_string(),
      ops::is_8bit_float(p.a.dtype) || ops::is_8bit_float(p.b.dtype) ? "#define TILEJIT_FP8_TYPES 1  // 8-bit float inputs\n" : "", kernel,
      epilogue_source(user, epilogue, c.swap_ab, user.beta == 0.f), device_type(p.a.dtype),
      device_type(p.b.dtype), device_type(p.c.dtype), device_type(p.d.dtype), c.bm, c.bn, c.bk, c.wm, c.wn, c.stages, lm, ln,
      p.a.layout == Layout::row_major, p.b.layout == Layout::row_major, p.c.layout == Layout::row_major,
      p.d.layout == Layout::row_major, v.a_vec, v.b_vec, v.d_tma, c.pingpong, c.cluster, c.k_halves,
      p.scale_mode == ScaleMode::blocks, c.a_registers, wgmma_tile_vectors(c, p));
  // A body's kernel is named by a digest of what makes it (the body, the operands' names and types).
  const std::string signature = user.epilogue.body.empty() ? std::string() : epilogue_signature(user.epilogue);
  const std::string epilogue_tag =
      !user.epilogue.body.empty()
          ? fmt::format("_epi{:08x}", static_cast<std::uint32_t>(XXH3_64bits(signature.data(), signature.size())))
          : std::string(user.epilogue.bias ? "_bias" : "") +
                (user.epilogue.activation == Activation::none ? "" : fmt::format("_{}", activation_name(user.epilogue.activation)));
  const char la = p.a.layout == Layout::row_major ? 'N' : 'T', lb = p.b.layout == Layout::row_major ? 'N' : 'T';
  KernelSource ks;
  ks.name = fmt::format("{}_{}{}_{}{}_{}x{}x{}_{}x{}_s{}_v{}x{}{}{}", kernel, dtype_name(p.a.dtype),
                        p.a.dtype == DType::f32 && tensor_cores ? "tf32"
                        : p.b.dtype != p.a.dtype                ? fmt::format("x{}", dtype_name(p.b.dtype))
                                                                : std::string(),
                        la, lb, c.bm, c.bn, c.bk, c.wm, c.wn, c.stages, v.a_vec, v.b_vec,
                        std::string(c.pingpong ? "_pp" : "") + (c.cluster > 1 ? fmt::format("_c{}", c.cluster) : "") +
                            (c.swap_ab ? "_sw" : "") + (c.k_halves ? "_kh" : "") + (v.d_tma ? "_dtma" : "") +
                            (p.scale_mode == ScaleMode::blocks ? "_bs" : "") + (c.a_registers ? "_ra" : ""),
                        epilogue_tag);
  ks.text = source;
  jit::ProgramLabels labels{.family = "gemm",
                            .dtypes = fmt::format("{},{}->{}", dtype_name(p.a.dtype), dtype_name(p.b.dtype), dtype_name(p.d.dtype)),
                            .config = fmt::format("{} layout={}{} vec={}x{}", c.to_string(), la, lb, v.a_vec, v.b_vec),
                            .library_options = true};
  return jit::program_request(rt, ks, {fmt::format("tilejit::{}_kernel<tilejit_gen::gemm_cfg>", kernel)}, arch, labels);
}

}  // namespace ops

namespace detail {

struct GemmPlanState {
  // One kernel per variant (the operands' copy widths, D through TMA or not): a Program made at
  // first need, its Kernel loaded and given the plan's shared memory before it is published.
  struct Loaded {
    std::optional<Program> program;
    std::optional<Kernel> kernel;
    bool ready = false;
  };
  std::shared_ptr<jit::Context> rt;
  GemmProblem problem;         // normalized, as the user gave it
  GemmProblem kernel_problem;  // what the kernel computes: `problem`, or with config.swap_ab its transpose
  GemmConfig config;
  GemmConfigOrigin origin = GemmConfigOrigin::heuristic;
  std::string target;   // the arch kernels compile for (sm_90a for wgmma)
  int smem = 0;
  ops::GemmParams params{};
  unsigned grid_x = 1, grid_y = 1, threads = 32;
  ops::GemmVariant own;  // the variant for the plan's pointers
  std::atomic<const Kernel*> own_kernel{nullptr};
  std::mutex mutex;
  std::map<std::tuple<int, int, bool>, Loaded> variants;  // node-based: a Kernel's address is stable
  std::unique_ptr<ops::WgmmaLauncher> wgmma;  // kind wgmma: operand packing and tensor maps
  // Launch with programmatic dependent launch (every GEMM template waits for the previous grids
  // before touching memory); set with the first function, from the device and TILEJIT_PDL.
  bool programmatic = false;

  jit::KernelRequest request(const ops::GemmVariant& v, const std::string& arch) const {
    return ops::gemm_request(*rt, kernel_problem, v, arch, &problem);
  }
  GemmProblem kernel_view(const GemmProblem& p) const { return ops::wgmma_kernel_problem(config, p); }
  const std::string& arch() const { return target; }

  // The variant's kernel, compiled or from a cache (not loaded).
  const Kernel& kernel(const ops::GemmVariant& v) {
    std::lock_guard lock(mutex);
    auto& slot = variants[{v.a_vec, v.b_vec, v.d_tma}];
    if (!slot.kernel) {
      slot.program = jit::make_program(rt, request(v, arch()));
      slot.kernel = slot.program->kernel(slot.program->name_expressions().front());
    }
    return *slot.kernel;
  }

  // The same, loaded on the device with the plan's dynamic shared memory allowed.
  const Kernel& loaded(const ops::GemmVariant& v) {
    const Kernel& k = kernel(v);
    std::lock_guard lock(mutex);
    auto& slot = variants[{v.a_vec, v.b_vec, v.d_tma}];
    if (!slot.ready) {
      k.set_max_dynamic_shared_bytes(smem);
      programmatic = rt->device_state().programmatic_launch;  // before the kernel is published
      slot.ready = true;
    }
    return k;
  }

  // With a usable device: the kernel for the plan's own pointers loaded, and (wgmma) the workspaces
  // and copy kernels they need, so that the plan's first run does no more than later ones and may
  // happen inside a CUDA graph capture.
  void prepare() {
    if (problem.m == 0 || problem.n == 0 || !rt->device_state().ok) return;
    jit::make_current(rt->context(), rt->device_ordinal);
    const Kernel& k = loaded(own);
    // A plan may be made with any pointers, but its run() refuses outputs that overlap its inputs
    // (or each other, across a batch); that check sits on run()'s path for an unpublished kernel, so
    // such a plan's kernel stays unpublished (its run throws) instead of skipping it.
    bool apart = true;
    try {
      ops::check_outputs_apart(problem);
    } catch (const InvalidArgument&) {
      apart = false;
    }
    if (apart) own_kernel.store(&k, std::memory_order_release);
    if (wgmma) wgmma->prepare(params);
  }

  void launch(const Kernel& kernel, const ops::GemmParams& p, CUstream stream) {
    if (wgmma) return wgmma->launch(kernel, p, grid_x, threads, smem, programmatic, stream);
    kernel.launch({.grid = {grid_x, grid_y}, .block = {threads}, .shared_bytes = static_cast<unsigned>(smem), .programmatic = programmatic},
                  stream, p);
  }
};

}  // namespace detail

namespace {

// What may change from run to run of a plan, from the kernel's problem into its parameter block:
// the pointers (operands, bias, scales) and alpha and beta.
void put_run_values(ops::GemmParams& q, const GemmProblem& p) {
  q.a = reinterpret_cast<const void*>(p.a.ptr);
  q.b = reinterpret_cast<const void*>(p.b.ptr);
  q.c = reinterpret_cast<const void*>(p.c.ptr);
  q.d = reinterpret_cast<void*>(p.d.ptr);
  q.bias = reinterpret_cast<const void*>(p.epilogue.bias);
  q.scale_a = reinterpret_cast<const float*>(p.scale_a);
  q.scale_b = reinterpret_cast<const float*>(p.scale_b);
  q.scale_d = reinterpret_cast<const float*>(p.scale_d);
  q.alpha = p.alpha, q.beta = p.beta;
}

// The second half of plan creation, on the problem the kernel computes (s->kernel_problem).
std::shared_ptr<detail::GemmPlanState> finish_gemm_plan(const std::shared_ptr<jit::Context>& rt, std::shared_ptr<detail::GemmPlanState> s,
                                                        const std::function<int()>& device_sms);

// `may_tune`: with TILEJIT_AUTOTUNE=on a class without a tuning result is tuned now (plans that
// will launch; compile-only requests never launch anything).
std::shared_ptr<detail::GemmPlanState> make_gemm_plan(const std::shared_ptr<jit::Context>& rt, const GemmProblem& in,
                                                      const GemmConfig* forced, bool may_tune) {
  validate_gemm(in);
  auto s = std::make_shared<detail::GemmPlanState>();
  s->rt = rt;
  s->problem = ops::normalized(in);
  const GemmProblem& p = s->problem;
  // Kernels compile for the device's generic target (sm_90), the wgmma kind for the arch-specific
  // one (sm_90a); the heuristic sees the latter, to know whether wgmma is there.
  const std::string arch_specific = rt->arch(true);
  // Asked only when needed: a forced configuration compiled for an explicit arch touches no device.
  auto device_sms = [&] { return rt->device_state().ok ? rt->device_state().info.multiprocessors : 132; };
  std::string tuned_why;
  if (forced) {
    s->config = *forced;
    s->origin = GemmConfigOrigin::given;
  } else if (rt->settings.gemm_config) {
    try {
      s->config = GemmConfig::parse(*rt->settings.gemm_config);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(fmt::format("TILEJIT_GEMM_CONFIG: {}", e.what()));
    }
    s->origin = GemmConfigOrigin::environment;
    util::log().debug("GEMM {}x{}x{}: config {} forced by TILEJIT_GEMM_CONFIG", p.m, p.n, p.k, s->config.to_string());
  } else if (auto tuned = ops::tuned_gemm_config(rt, p, may_tune, &tuned_why)) {
    s->config = *tuned;
    s->origin = GemmConfigOrigin::tuned;
    util::log().debug("GEMM {}x{}x{} {} {}{}: config {} from tuning ({})", p.m, p.n, p.k, dtype_name(p.a.dtype), layout_name(p.a.layout),
                      layout_name(p.b.layout), s->config.to_string(), tuned_why);
  } else {
    std::string why;
    s->config = choose_gemm_config(p, arch_specific, device_sms(), &why);
    util::log().debug("GEMM {}x{}x{} {} {}{}: heuristic chose {} ({})", p.m, p.n, p.k, dtype_name(p.a.dtype),
                      layout_name(p.a.layout), layout_name(p.b.layout), s->config.to_string(), why);
  }
  if (s->config.tf32 && s->problem.a.dtype == DType::f32 && s->problem.math != MathMode::tf32) {
    // The configuration fixes the math (the puzzle33 preset is the seed's tf32 kernel): the plan's
    // problem says what it computes.
    s->problem.math = MathMode::tf32;
    util::log().debug("GEMM {}x{}x{}: f32 inputs as tf32, as config {} says", p.m, p.n, p.k, s->config.to_string());
  }
  // 8-bit inputs run on Hopper only (kinds wgmma and gemv), and compile for its arch-specific target.
  const bool hopper_only = s->config.kind == GemmKind::wgmma || ops::is_8bit_float(p.a.dtype) || ops::is_8bit_float(p.b.dtype);
  s->target = hopper_only ? arch_specific : rt->arch(false);
  if (s->config.swap_ab && s->config.kind != GemmKind::wgmma && s->config.kind != GemmKind::gemv)
    throw InvalidArgument(
        fmt::format("GEMM config {} is invalid: swapped operands (sw) exist for kinds wgmma and gemv only", s->config.to_string()));
  s->kernel_problem = s->kernel_view(s->problem);
  // From here on, everything is about the kernel's problem.
  return finish_gemm_plan(rt, std::move(s), device_sms);
}

std::shared_ptr<detail::GemmPlanState> finish_gemm_plan(const std::shared_ptr<jit::Context>& rt, std::shared_ptr<detail::GemmPlanState> s,
                                                        const std::function<int()>& device_sms) {
  validate_gemm_config(s->config, s->problem, s->target);  // (of the user's problem; it swaps as the config says)
  const GemmProblem& p = s->kernel_problem;
  s->smem = ops::gemm_shared_bytes(s->config, p);
  s->own = ops::gemm_variant(s->config, p);
  const GemmConfig& c = s->config;
  const long long tiles_m = (p.m + c.bm - 1) / c.bm, tiles_n = (p.n + c.bn - 1) / c.bn;
  long long whole_tiles = 0;
  int split = c.split_k;
  if (c.kind == GemmKind::wgmma) {
    // Persistent: one block per SM (its shared memory allows no more) walks tiles of every batch.
    // A cluster of 2 takes pairs of tiles; the launcher lowers the grid to the clusters that fit at once.
    const long long tiles = (tiles_m + c.cluster - 1) / c.cluster * tiles_n * p.batch, sms = device_sms();
    if (c.tail_split > 1) {
      // Tiles of the full waves run whole; those of the last, partial wave are split.
      whole_tiles = tiles > sms ? tiles - tiles % sms : 0;
      split = whole_tiles == tiles ? 1 : c.tail_split;
    }
    const long long units = whole_tiles + (tiles - whole_tiles) * split;
    s->grid_x = static_cast<unsigned>(std::clamp<long long>(units, 1, sms / c.cluster) * c.cluster);
    s->grid_y = 1;
    // An operand the kernel reads K-major as a copy (see wgmma_transposes_a/b: tf32, narrow tiles)
    // is transposed at each launch from the layout the user gave.
    const GemmProblem seen = c.swap_ab ? ops::swapped_ab(s->problem) : s->problem;
    std::optional<MatrixRef> a_source, b_source;
    if (ops::wgmma_transposes_a(c, seen)) a_source = seen.a;
    if (ops::wgmma_transposes_b(c, seen)) b_source = seen.b;
    s->wgmma = std::make_unique<ops::WgmmaLauncher>(rt, p, c, a_source, b_source);
  } else {
    s->grid_x = static_cast<unsigned>(std::max<long long>(1, tiles_m * tiles_n));
    s->grid_y = static_cast<unsigned>(p.batch);
  }
  s->threads = static_cast<unsigned>(c.threads());
  auto& q = s->params;
  put_run_values(q, p);
  q.m = p.m, q.n = p.n, q.k = p.k;
  q.lda = p.a.ld, q.ldb = p.b.ld, q.ldc = p.c.ld, q.ldd = p.d.ld;
  q.stride_a = p.a.batch_stride, q.stride_b = p.b.batch_stride, q.stride_c = p.c.batch_stride, q.stride_d = p.d.batch_stride;
  q.tiles_m = static_cast<int>(tiles_m), q.tiles_n = static_cast<int>(tiles_n);
  q.batch = static_cast<int>(p.batch);
  q.split_k = split;
  q.whole_tiles = static_cast<int>(whole_tiles);
  q.workspace = nullptr;  // split-K: set by the wgmma launcher
  q.epilogue = ops::epilogue_params(s->problem);  // the user's problem: the epilogue's operands are in its coordinates
  return s;
}

}  // namespace

std::size_t ops::GemmSignature::Hash::operator()(const GemmSignature& s) const noexcept {
  return XXH3_64bits(s.words.data(), sizeof(s.words));
}

namespace {

// Everything of a normalized problem but its pointers (which only pick an alignment variant inside
// the plan) and its alpha and beta (values the kernel takes at each launch; only whether beta is 0
// counts), and the stream: Runtime::gemm keeps a plan per stream, since a plan
// that copies operands into its workspace must not run on two streams at once.
ops::GemmSignature gemm_signature(const GemmProblem& p, CUstream stream) {
  ops::GemmSignature s;
  std::size_t i = 0;
  auto put = [&](std::uint64_t v) { s.words[i++] = v; };
  put(static_cast<std::uint64_t>(p.m)), put(static_cast<std::uint64_t>(p.n)), put(static_cast<std::uint64_t>(p.k));
  put(static_cast<std::uint64_t>(p.batch));
  std::uint64_t kinds = 0;
  for (const MatrixRef* r : {&p.a, &p.b, &p.c, &p.d}) {
    put(static_cast<std::uint64_t>(r->ld)), put(static_cast<std::uint64_t>(r->batch_stride));
    kinds = kinds << 16 | static_cast<std::uint64_t>(r->dtype) << 8 | static_cast<std::uint64_t>(r->layout);
  }
  put(kinds);
  put(static_cast<std::uint64_t>(p.epilogue.bias_dtype) << 24 | static_cast<std::uint64_t>(p.epilogue.activation) << 16 |
      static_cast<std::uint64_t>(p.scale_mode) << 32 | static_cast<std::uint64_t>(p.math) << 8 | (p.c.ptr == p.d.ptr ? 2u : 0u) |
      (p.epilogue.bias != 0 ? 1u : 0u));
  // alpha and beta's value come with each call; whether C is read makes the kernel. The epilogue's
  // names, dtypes, layouts and body make the kernel too (its pointers and scalar values do not).
  const std::uint64_t epilogue = p.epilogue.body.empty() ? 0 : ops::epilogue_signature_hash(p.epilogue) << 1;
  put((p.beta != 0.f ? 1u : 0u) | epilogue);
  put(reinterpret_cast<std::uintptr_t>(stream));
  return s;
}

}  // namespace

// ---- the launch path ---------------------------------------------------------------------------

void GemmPlan::run(CUstream stream) const {
  detail::GemmPlanState& s = *state_;
  const GemmProblem& p = s.problem;
  if (p.m == 0 || p.n == 0) return;
  const Kernel* kernel = s.own_kernel.load(std::memory_order_acquire);
  if (!kernel) {
    ops::check_outputs_apart(p);  // the plan's own pointers, once, before their first launch
    jit::make_current(s.rt->context(), s.rt->device_ordinal);
    kernel = &s.loaded(s.own);
    s.own_kernel.store(kernel, std::memory_order_release);
  }
  s.launch(*kernel, s.params, stream);
}

Kernel GemmPlan::kernel() const { return state_->kernel(state_->own); }

void GemmPlan::run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d, CUstream stream) const {
  run(GemmPointers{.a = a, .b = b, .c = c, .d = d}, stream);
}

namespace {
// Launches a plan for `p`: the plan's problem with the pointers, alpha and beta of one run.
void launch_with(detail::GemmPlanState& s, GemmProblem p, CUstream stream) {
  // A plan's problem with one run's pointers is normalized already (with_pointers keeps its leading
  // dimensions and its C); the epilogue is the plan's, checked when it was made.
  ops::check_normalized_operands(p);
  ops::check_outputs_apart(p);
  if (p.m == 0 || p.n == 0) return;
  const ops::EpilogueParams epilogue = ops::epilogue_params(p);  // a bias given with the run replaces the plan's
  p = s.kernel_view(p);
  ops::GemmParams q = s.params;
  put_run_values(q, p);
  q.epilogue = epilogue;
  jit::make_current(s.rt->context(), s.rt->device_ordinal);
  s.launch(s.loaded(ops::gemm_variant(s.config, p)), q, stream);
}
}  // namespace

void GemmPlan::run(const GemmPointers& pointers, CUstream stream) const {
  launch_with(*state_, ops::with_pointers(state_->problem, pointers), stream);
}

const GemmConfig& GemmPlan::config() const { return state_->config; }
GemmConfigOrigin GemmPlan::config_origin() const { return state_->origin; }
const GemmProblem& GemmPlan::problem() const { return state_->problem; }

namespace ops {

std::shared_ptr<detail::GemmPlanState> make_prepared_gemm_plan(const std::shared_ptr<jit::Context>& jit, const GemmProblem& problem,
                                                               const GemmConfig* config) {
  auto s = make_gemm_plan(jit, problem, config, true);
  s->prepare();
  return s;
}

void GemmPlans::run(const std::shared_ptr<jit::Context>& jit, const GemmProblem& user_problem, CUstream stream) {
  // Normalized first: a call without C (beta applying to D) and one with a separate C must not share
  // a plan, nor tight leading dimensions given as 0 and as numbers make two.
  const GemmProblem problem = normalized(user_problem);
  const GemmSignature sig = gemm_signature(problem, stream);
  std::shared_ptr<detail::GemmPlanState> state;
  {
    std::lock_guard lock(mutex_);
    auto it = plans_.find(sig);
    if (it != plans_.end()) state = it->second;
  }
  if (!state) {
    validate_gemm(problem);  // bad input is said as such, during a capture too
    const bool device = jit->device_state().ok;
    if (device) {
      // A new plan compiles or loads its kernel and may allocate workspaces (and, with
      // TILEJIT_AUTOTUNE=on, tune): not while the stream is being captured into a CUDA graph (the
      // capture would break). Refused before anything happens.
      jit::make_current(jit->context(), jit->device_ordinal);
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      jit::check(jit::driver().cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing", jit->device_ordinal, "Runtime::gemm");
      if (status != CU_STREAM_CAPTURE_STATUS_NONE)
        throw InvalidArgument(fmt::format("Runtime::gemm: the first call for a {}x{}x{} problem on this stream loads its kernel and may "
                                          "allocate workspace, which cannot happen while the stream is being captured into a CUDA graph; "
                                          "call it once before capturing, or capture a plan made with plan_gemm (nothing was captured)",
                                          problem.m, problem.n, problem.k));
    }
    state = make_gemm_plan(jit, problem, nullptr, true);  // validation and configuration
    if (device) state->prepare();
    std::lock_guard lock(mutex_);
    if (plans_.size() >= kMax) {
      util::log().debug("Runtime::gemm: {} plans kept; starting over", plans_.size());
      plans_.clear();
    }
    plans_[sig] = state;
  } else {
    jit->cache.note_memory_hit();
  }
  launch_with(*state, problem_for_call(state->problem, problem), stream);
}

std::size_t GemmPlans::size() const {
  std::lock_guard lock(mutex_);
  return plans_.size();
}

CompiledKernelInfo compile_gemm(const std::shared_ptr<jit::Context>& jit, const GemmProblem& problem, const GemmConfig* config) {
  auto s = make_gemm_plan(jit, problem, config, false);
  return jit::compile_program(*jit, s->request(s->own, s->arch()));
}

}  // namespace ops

}  // namespace tilejit
