// GEMM configurations: validation rules and the heuristic (the string form is in src/gemm_config_text.cpp).
#include "ops/gemm/gemm_internal.hpp"

#include "ops/gemm/epilogue.hpp"

#include "util/log.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace tilejit {
namespace {

[[noreturn]] void broken(const GemmConfig& c, const std::string& rule) {
  throw InvalidArgument(fmt::format("GEMM config {} is invalid: {}", c.to_string(), rule));
}

// 8-bit float inputs run on Hopper only (kinds wgmma and gemv, target sm_90a); any other target is refused by name.
void require_8bit_target(const GemmProblem& p, const std::string& arch) {
  if ((ops::is_8bit_float(p.a.dtype) || ops::is_8bit_float(p.b.dtype)) && arch != "sm_90a")
    throw InvalidArgument(fmt::format("GEMM: 8-bit float inputs ({} x {}) run on Hopper only (kinds wgmma and gemv, target sm_90a); the target is {}, "
                                      "which tilejit has no 8-bit GEMM for",
                                      dtype_name(p.a.dtype), dtype_name(p.b.dtype), arch));
}

}  // namespace

std::string_view layout_name(Layout l) noexcept { return l == Layout::row_major ? "row" : "col"; }
std::string_view activation_name(Activation a) noexcept {
  switch (a) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::silu: return "silu";
  }
  return "?";
}

namespace ops {

int arch_shared_memory_limit(const std::string& arch) {
  // Opt-in maximum per block: sm_80/87 163 KB, sm_86/89 99 KB, sm_90 and later 227 KB.
  int cc = 0;
  std::from_chars(arch.data() + 3, arch.data() + arch.size(), cc);
  if (cc >= 90) return 227 * 1024;
  if (cc == 80 || cc == 87) return 163 * 1024;
  return 99 * 1024;
}

void simt_lanes(const GemmConfig& c, int& lm, int& ln) {
  lm = ln = 0;
  int best = 1 << 30;
  for (int l = 1; l <= 32; l *= 2) {
    const int m = 32 / l;  // l lanes along n, m along m
    if (c.wm % m || c.wn % l) continue;
    const int tm = c.wm / m, tn = c.wn / l, score = std::abs(tm - tn);
    if (score < best || (score == best && l > ln)) best = score, lm = m, ln = l;
  }
}

namespace {
// D's rows, leading dimension and batch stride as TMA stores take them: wgmma_tma_store for a
// 16-byte aligned pointer.
bool d_rows_take_tma_stores(const GemmConfig& c, const GemmProblem& p) {
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.d.dtype));
  const std::int64_t ld = p.d.ld ? p.d.ld : p.n;
  // The staged epilogue stores the tile in chunks of 128 bytes of columns.
  return p.d.layout == Layout::row_major && (c.bn * es) % 128 == 0 && (ld * es) % 16 == 0 &&
         (p.batch <= 1 || ((p.d.batch_stride * es) % 16 == 0 && p.d.batch_stride >= ld * p.m));
}
}  // namespace

bool wgmma_tma_store(const GemmConfig& c, const GemmProblem& p) { return p.d.ptr % 16 == 0 && d_rows_take_tma_stores(c, p); }

bool wgmma_stage_d(const GemmConfig& c, const GemmProblem& p) {
  if (c.kind != GemmKind::wgmma || p.d.layout != Layout::row_major || wgmma_tma_store(c, p)) return false;
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.d.dtype));
  // The staged epilogue writes whole 128-byte chunks of a tile row; the copy into place reads and
  // writes D once more, which a large GEMM repays (H200, 4095^3 bf16: GEMM 177 us + copy 18 us,
  // against about 250 us for the GEMM storing D element by element).
  return (c.bn * es) % 128 == 0 && p.m * p.n >= 512 * 512 && p.k >= 256;
}

bool wgmma_d_tma(const GemmConfig& c, const GemmProblem& p) { return wgmma_tma_store(c, p) || wgmma_stage_d(c, p); }

GemmProblem swapped_ab(const GemmProblem& p) {
  auto transposed = [](MatrixRef r) {
    r.layout = r.layout == Layout::row_major ? Layout::col_major : Layout::row_major;
    return r;
  };
  GemmProblem q = p;
  q.m = p.n, q.n = p.m;
  q.a = transposed(p.b), q.b = transposed(p.a);
  q.c = transposed(p.c), q.d = transposed(p.d);
  return q;
}

bool wgmma_transposes_b(const GemmConfig& c, const GemmProblem& p) {
  if (c.kind != GemmKind::wgmma || p.b.layout != Layout::row_major) return false;
  // tf32 and 8-bit wgmma read K-major operands only: a row-major B of those is transposed at every
  // launch, whatever the tiles. 16-bit narrow tiles read an N-major B as it is (32- or 64-byte swizzle) where TMA can
  // address it; a row pitch off 16 bytes (N = 1, 7, ...) would need a packed copy anyway, and the
  // transposed copy is as cheap and reads K-major (H200: 16-bit 1x8192x8192 TN ran at 0.64 of cuBLAS
  // packed, 1.02-1.05 transposed). Pointers are left out: they may change from run to run, and a
  // misaligned one is packed at launch.
  if (dtype_size(p.b.dtype) != 2) return true;  // tf32 and the 8-bit floats
  if (c.bn != 16 && c.bn != 32) return false;
  GemmProblem q = p;
  q.b.ptr = 0;
  return !tma_unready_reason(q, false).empty();
}

bool wgmma_transposes_a(const GemmConfig& c, const GemmProblem& p) {
  // tf32 and 8-bit wgmma read K-major operands only: a column-major A of those is transposed at every
  // launch, unless a tf32 A goes through registers (ra), which reads it as it is.
  return c.kind == GemmKind::wgmma && p.a.layout == Layout::col_major && dtype_size(p.a.dtype) != 2 && !c.a_registers;
}

GemmProblem wgmma_kernel_problem(const GemmConfig& c, const GemmProblem& user_problem) {
  GemmProblem q = c.swap_ab ? swapped_ab(user_problem) : user_problem;
  if (c.tf32 && q.a.dtype == DType::f32) q.math = MathMode::tf32;  // the configuration's tf32 part (puzzle33)
  const std::int64_t per16 = 16 / static_cast<std::int64_t>(dtype_size(q.a.dtype));
  if (wgmma_transposes_a(c, q)) {
    q.a.layout = Layout::row_major;
    q.a.ld = (q.k + per16 - 1) / per16 * per16;
    q.a.batch_stride = q.a.ld * q.m;
  }
  if (wgmma_transposes_b(c, q)) {
    q.b.layout = Layout::col_major;
    q.b.ld = (q.k + per16 - 1) / per16 * per16;
    q.b.batch_stride = q.b.ld * q.n;
  }
  return q;
}

namespace {
// A wgmma kernel's shared memory without staged vectors (see gemm_shared_bytes).
int wgmma_base_shared_bytes(const GemmConfig& c, const GemmProblem& p) {
  const int es = static_cast<int>(dtype_size(p.a.dtype));
  // D's staging buffers wherever some D pointer would take them: a plan's kernels for other
  // pointers (GemmPlan::run) get the plan's shared memory, and one for an aligned D stages it.
  return c.stages * ((c.bm + c.bn) * c.bk * es + 16) +
         std::max(d_rows_take_tma_stores(c, p) || wgmma_stage_d(c, p) ? (c.pingpong || c.k_halves ? 2 : c.bm / c.wm) * 2 * c.wm * 128 : 0,
                  c.k_halves ? c.wm * c.bn * 4 : 0) +  // K halves: one consumer's accumulators pass through it
         32 + 1024;  // + the ping-pong order barriers and the split-K flags
}
// Shared memory of a tile's staged vectors: their two pairs of barriers and a buffer of BN floats per
// vector, one for cooperative consumers and one per consumer in ping-pong.
int wgmma_tile_vector_bytes(const GemmConfig& c, int vectors) { return vectors ? 32 + (c.pingpong ? 2 : 1) * vectors * c.bn * 4 : 0; }
}  // namespace

int wgmma_tile_vectors(const GemmConfig& c, const GemmProblem& p) {
  // The epilogue of a 64-column tile or wider reads each such vector element in every chunk of its
  // outputs, each chunk's reads waiting for L2 together; a copy the producer's second warp makes in
  // shared memory during the tile's main loop turns them into shared-memory reads. Narrow (decode)
  // tiles read few such elements; K halves and clusters walk tiles in ways the copy does not follow.
  if (c.kind != GemmKind::wgmma || c.bn < 64 || c.k_halves || c.cluster > 1) return 0;
  // Block-scaled kernels leave their producer 24 registers, where the copying loop spills (52 bytes).
  if (p.scale_mode == ScaleMode::blocks) return 0;
  const int vectors = epilogue_column_vector_count(p.epilogue, c.swap_ab);
  // Only where it fits beside the stages the configuration asks for: it never costs a stage.
  if (vectors == 0 || wgmma_base_shared_bytes(c, p) + wgmma_tile_vector_bytes(c, vectors) > arch_shared_memory_limit("sm_90a")) return 0;
  return vectors;
}

int gemv_run_b(const GemmConfig& c, const GemmProblem& p) {
  if (p.b.layout == Layout::col_major) return c.bk / 32;
  return std::min(c.wn, 16 / static_cast<int>(dtype_size(p.b.dtype)));
}

int gemm_shared_bytes(const GemmConfig& c, const GemmProblem& p) {
  const int es = static_cast<int>(dtype_size(p.a.dtype));
  // wgmma: the stages, their full/empty barriers, two 128-byte-wide staging buffers of WM rows per
  // consumer warpgroup for TMA stores, split-K flags, 1 KB to align everything to the swizzle period,
  // and the tile's staged vectors, if any.
  if (c.kind == GemmKind::wgmma) return wgmma_base_shared_bytes(c, p) + wgmma_tile_vector_bytes(c, wgmma_tile_vectors(c, p));
  if (c.kind == GemmKind::simt) return (c.stages >= 2 ? 2 : 1) * c.bk * (c.bm + 4 + c.bn + 4) * 4;
  if (c.kind == GemmKind::gemv) return 0;  // its partial sums are static shared memory (see validate_gemv_config)
  const bool tf32 = p.a.dtype == DType::f32;
  const bool a_k = p.a.layout == Layout::row_major, b_k = p.b.layout == Layout::col_major;
  auto tile = [&](int outer, int inner, bool scalar) { return outer * (inner * es + (scalar ? 32 : 16)); };
  const int a = a_k ? tile(c.bm, c.bk, false) : tile(c.bk, c.bm, tf32);
  const int b = b_k ? tile(c.bn, c.bk, false) : tile(c.bk, c.bn, tf32);
  return c.stages * (a + b);
}

GemmVariant gemm_variant(const GemmConfig& c, const GemmProblem& p) {
  GemmVariant v{c, 0, 0};
  if (c.kind == GemmKind::wgmma) return {c, 16, 16, wgmma_d_tma(c, p)};  // TMA loads: validation requires 16-byte alignment
  const int es = static_cast<int>(dtype_size(p.a.dtype));
  auto widest = [&](const MatrixRef& r, int candidates_from) {
    for (int bytes = candidates_from; bytes >= 4; bytes /= 2) {
      const bool ok = r.ptr % bytes == 0 && (r.ld * es) % bytes == 0 && (p.batch <= 1 || (r.batch_stride * es) % bytes == 0);
      if (ok && bytes >= es) return bytes;
    }
    return es;
  };
  if (c.kind == GemmKind::gemv) {
    // A lane's run along the contiguous dimension loads as one access where the operand's pointer,
    // leading dimension and batch stride align every run; else element by element.
    const int run_b = gemv_run_b(c, p), es_b = static_cast<int>(dtype_size(p.b.dtype));
    v.b_vec = run_b > 1 && widest(p.b, run_b * es_b) >= run_b * es_b ? run_b : 1;
    const int run_a = p.b.layout == Layout::col_major && p.a.layout == Layout::row_major ? c.bk / 32 : 1;
    v.a_vec = run_a > 1 && widest(p.a, run_a * es) >= run_a * es ? run_a : 1;
    return v;
  }
  if (c.kind == GemmKind::mma) {
    v.a_vec = widest(p.a, 16);
    v.b_vec = widest(p.b, 16);
    // The chunks of each tile must divide among the threads; narrow until they do.
    auto fits = [&](int vec, int elems) { return (elems / (vec / es)) % c.threads() == 0; };
    while (v.a_vec > es && !fits(v.a_vec, c.bm * c.bk)) v.a_vec /= 2;
    while (v.b_vec > es && !fits(v.b_vec, c.bn * c.bk)) v.b_vec /= 2;
  } else {
    auto vec4 = [&](const MatrixRef& r, int contiguous_extent) {
      return p.a.dtype == DType::f32 && widest(r, 16) == 16 && contiguous_extent % 4 == 0 ? 4 : 1;
    };
    v.a_vec = vec4(p.a, p.a.layout == Layout::row_major ? c.bk : c.bm);
    v.b_vec = vec4(p.b, p.b.layout == Layout::row_major ? c.bn : c.bk);
    if ((c.bm * c.bk) % (c.threads() * v.a_vec)) v.a_vec = 1;
    if ((c.bk * c.bn) % (c.threads() * v.b_vec)) v.b_vec = 1;
  }
  return v;
}

}  // namespace ops

namespace {

// Mirrors the static_asserts of gemm_gemv.cuh.
void validate_gemv_config(const GemmConfig& c, const GemmProblem& p) {
  if (p.scale_mode == ScaleMode::blocks) broken(c, "kind gemv takes per-tensor scales only; block scales (ScaleMode::blocks) run on kind wgmma");
  if (c.wm != c.bm || c.bm > 8) broken(c, fmt::format("kind gemv computes BM = WM rows of D per block, 1 to 8, not {}x{}", c.bm, c.wm));
  const int warps_n = c.bn / c.wn;
  if (8 % warps_n != 0)
    broken(c, fmt::format("kind gemv has 8 warps per block; BN / WN = {} warps along N must divide them", warps_n));
  const int es_b = static_cast<int>(dtype_size(p.b.dtype)), run = ops::gemv_run_b(c, p);
  auto power_of_two = [](int v) { return v > 0 && (v & (v - 1)) == 0; };
  if (p.b.layout == Layout::col_major) {
    if (c.bk % 32 != 0 || !power_of_two(run) || run * es_b > 16)
      broken(c, fmt::format("kind gemv with a column-major (K-major) B: BK={} must be 32 lanes times a power-of-two run of at most 16 "
                            "bytes ({} for {})",
                            c.bk, 32 * 16 / es_b, dtype_name(p.b.dtype)));
    if (c.bm * c.wn > 64) broken(c, fmt::format("kind gemv: {} rows times WN={} columns make more than 64 sums per lane", c.bm, c.wn));
    if (c.stages * c.wn * run > 128)
      broken(c, fmt::format("kind gemv: {} steps of {} columns of {}-element runs hold more than 128 values per lane", c.stages, c.wn, run));
  } else {
    const int lanes_n = c.wn / run;
    if (!power_of_two(run) || c.wn % run != 0 || 32 % lanes_n != 0)
      broken(c, fmt::format("kind gemv with a row-major (N-major) B: WN={} must be a power of two of runs of {} (16 bytes) columns, at most {}",
                            c.wn, 16 / es_b, 32 * 16 / es_b));
    if (c.bk != 32 / lanes_n)
      broken(c, fmt::format("kind gemv with a row-major (N-major) B: a warp of WN={} columns takes BK = {} rows a step, not {}", c.wn,
                            32 / lanes_n, c.bk));
    if (c.bm * run > 64) broken(c, fmt::format("kind gemv: {} rows times runs of {} columns make more than 64 sums per lane", c.bm, run));
  }
  if ((8 / warps_n) * c.bm * c.bn > 12288)
    broken(c, fmt::format("kind gemv: the partial sums of {} warps along K over {}x{} outputs exceed 48 KB of shared memory", 8 / warps_n,
                          c.bm, c.bn));
}

void validate_wgmma_config(const GemmConfig& c, const GemmProblem& p, const std::string& arch) {
  if (arch != "sm_90a") broken(c, fmt::format("kind wgmma needs the sm_90a target (Hopper, arch-specific), not {}", arch));
  const bool tf32 = p.a.dtype == DType::f32;
  if (p.a.dtype == DType::f32 && p.math != MathMode::tf32)
    broken(c, "kind wgmma needs f16, bf16 or tf32 inputs; f32 with MathMode::exact runs on kind simt (for tf32: MathMode::tf32, "
              "--math tf32, or the configuration's tf32 part)");
  const int es = static_cast<int>(dtype_size(p.a.dtype));
  if (c.bk * es != 128 && c.bk * es != 256 && c.bk * es != 512)
    broken(c, fmt::format("wgmma tiles hold one, two or four 128-byte swizzle rows of K: BK must be {}, {} or {} for {}", 128 / es,
                          256 / es, 512 / es, p.a.dtype == DType::f32 ? "tf32" : dtype_name(p.a.dtype)));
  if (p.scale_mode == ScaleMode::blocks) {
    // One K block of scales per stage; one B scale block per tile column; each K block's products
    // in registers of their own beside the accumulators.
    // BN = 256 with WM = 64, and three consumers of 64x128 (BM = 192), compute each K block's
    // products one 128-column block at a time (each consumer its own rows, no pp, kh, clusters or K
    // slices: the forms measured and tested on the GPU).
    const bool three = c.bm == 192 && c.wm == 64 && c.bn == 128;
    const bool halves = (c.bn == 256 && c.wm == 64) || three;
    if (halves && ((c.bm != 128 && !three) || c.pingpong || c.k_halves || c.cluster > 1 || c.split_k > 1 || c.tail_split > 1))
      broken(c, "block scales by 128-column blocks take 128-row tiles of two consumer warpgroups (BN = 256) or 192x128 tiles of "
                "three, without pp, kh, clusters or K slices");
    if (c.bk != 128) broken(c, fmt::format("block scales (blocks of 128 along K) need BK = 128, not {}", c.bk));
    if (!halves && (c.bn > 128 || 128 % c.bn != 0))
      broken(c, fmt::format("block scales (128 x 128 blocks of B) need BN dividing 128 (or 256 with WM = 64), not {}", c.bn));
    if (!halves && c.bm / c.wm > 2)
      broken(c, fmt::format("block scales with {} consumer warpgroups take 192x128 tiles (WM = 64), not {}x{}", c.bm / c.wm, c.bm, c.bn));
    if (c.swap_ab) broken(c, "block scales do not combine with swapped operands (sw): A's and B's scale blocks differ");
    if (!halves && (c.wm / 64) * (c.bn / 2) > 64)
      broken(c, fmt::format("block scales keep a K block's products beside the accumulators: a {}x{} warpgroup tile needs {} of each, "
                            "at most 64 fit",
                            c.wm, c.bn, (c.wm / 64) * (c.bn / 2)));
  }
  if (c.wn != c.bn) broken(c, fmt::format("a wgmma consumer warpgroup computes the whole tile width: WN must equal BN={}", c.bn));
  if (c.wm != 64 && c.wm != 128) broken(c, fmt::format("WM={} must be 64 or 128 (one or two m64 wgmma blocks)", c.wm));
  if (c.bm / c.wm > 3) broken(c, fmt::format("BM/WM = {} consumer warpgroups; at most 3 fit", c.bm / c.wm));
  if (c.bm > 256) broken(c, fmt::format("BM={} exceeds the 256 rows a TMA box may hold", c.bm));
  if (c.bn == 16 || c.bn == 32) {
    // Narrow tiles (swapped decode shapes): an N-major f16/bf16 B is one box of {BN, BK} with the
    // 32- or 64-byte swizzle of its width; a row-major tf32 B is transposed at launch (see
    // wgmma_transposes_b).
    if (c.cluster != 1) broken(c, fmt::format("BN={} does not split into cluster halves", c.bn));
  } else if (c.bn % 64 != 0 || c.bn > 256) {
    broken(c, fmt::format("BN={} must be 16, 32, 64, 128, 192 or 256", c.bn));
  }
  if ((c.wm / 64) * (c.bn / 2) > 128)
    broken(c, fmt::format("a {}x{} warpgroup tile needs {} accumulator registers per thread, at most 128 fit", c.wm, c.wn,
                          (c.wm / 64) * (c.bn / 2)));
  // ptxas sizes registers for the whole block (64K / threads each, whatever setmaxnreg moves later):
  // with 3 consumers (512 threads) that is 128, and the accumulators need about 26 more besides.
  if (const int threads = c.threads(), acc = (c.wm / 64) * (c.bn / 2); acc + 26 > 65536 / threads)
    broken(c, fmt::format("{} threads leave ptxas {} registers per thread, too few for {} accumulators (about {} needed)", threads,
                          65536 / threads, acc, acc + 26));
  if (c.stages < 2) broken(c, "kind wgmma needs at least 2 stages (a stage is released when the next one's MMAs start)");
  if (c.pingpong && c.wm != c.bm) broken(c, fmt::format("a ping-pong consumer computes whole tiles: WM must equal BM={}", c.bm));
  if (c.k_halves && c.wm != c.bm) broken(c, fmt::format("K halves (kh) compute whole tiles in each consumer: WM must equal BM={}", c.bm));
  if (p.k == 0) broken(c, "kind wgmma needs K > 0 (K = 0 leaves D = beta * C + bias, which the other kinds compute)");
  const long long tiles = ((p.m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn) * std::max<std::int64_t>(1, p.batch);
  if (tiles > std::numeric_limits<int>::max())
    broken(c, fmt::format("{} output tiles are more than one persistent launch can count", tiles));
  if (c.a_registers) {
    // The consumers load A's fragments into registers themselves: a column-major tf32 A, two sets of
    // fragments (one per group in flight) beside the accumulators.
    if (!tf32) broken(c, fmt::format("A through registers (ra) is for tf32 inputs, not {}", dtype_name(p.a.dtype)));
    if (p.a.layout != Layout::col_major)
      broken(c, "A through registers (ra) reads a column-major (M-major) A; a row-major A is read K-major from shared memory as it is");
    const int consumers = c.pingpong || c.k_halves ? 2 : c.bm / c.wm;
    const int budget = consumers == 1 ? 240 : consumers == 2 ? 232 : 152;  // per consumer thread (see gemm_wgmma.cuh)
    const int acc = (c.wm / 64) * (c.bn / 2), fragments = 2 * (c.bk / 8) * (c.wm / 64) * 4;
    if (acc + fragments + 26 > budget)
      broken(c, fmt::format("A through registers (ra): {} accumulators and {} fragment registers per thread exceed the {} a consumer of "
                            "{} has (about 26 more are needed)",
                            acc, fragments, budget, consumers));
  }
  const bool a_k_major = p.a.layout == Layout::row_major || c.a_registers;
  if ((tf32 || es == 1) && (!a_k_major || p.b.layout != Layout::col_major))
    broken(c, fmt::format("{} wgmma reads K-major operands only: A row-major (or, tf32, column-major through registers: ra) and B "
                          "column-major, not A {} and B {}",
                          tf32 ? "tf32" : "8-bit", layout_name(p.a.layout), layout_name(p.b.layout)));
  // Operands TMA cannot read in place (alignment, leading dimension, batch stride) are packed into
  // a workspace at launch: no rule here.
}

}  // namespace

void validate_gemm_config(const GemmConfig& c, const GemmProblem& user_problem, const std::string& arch) {
  require_8bit_target(user_problem, arch);
  // With swapped operands the tiles, layouts and alignment rules are those of D^T = B^T A^T, and a
  // B that narrow tiles need transposed is checked as the K-major copy they read.
  const GemmProblem p = ops::wgmma_kernel_problem(c, user_problem);
  if (c.bm <= 0 || c.bn <= 0 || c.bk <= 0 || c.wm <= 0 || c.wn <= 0) broken(c, "tile sizes must be positive");
  if (c.bm % c.wm != 0) broken(c, fmt::format("WM={} does not divide BM={}", c.wm, c.bm));
  if (c.bn % c.wn != 0) broken(c, fmt::format("WN={} does not divide BN={}", c.wn, c.bn));
  const int threads = c.threads();
  if (threads > 1024) broken(c, fmt::format("{} warps make {} threads per block, more than 1024", threads / 32, threads));
  if (c.stages < 1 || c.stages > 8) broken(c, fmt::format("stages={} must be between 1 and 8", c.stages));
  if (c.split_k < 1 || c.split_k > 16) broken(c, fmt::format("split-K k{} must be between k1 and k16", c.split_k));
  if (c.split_k != 1 && c.kind != GemmKind::wgmma) broken(c, "split-K (kS) exists for kind wgmma only");
  if (c.tail_split < 1 || c.tail_split > 8) broken(c, fmt::format("tail split t{} must be between t1 and t8", c.tail_split));
  if (c.tail_split != 1 && c.kind != GemmKind::wgmma) broken(c, "tail split (tS) exists for kind wgmma only");
  if (c.tail_split != 1 && (c.split_k != 1 || c.pingpong || c.k_halves || c.cluster != 1))
    broken(c, "tail split (tS) combines with neither split-K (kS), ping-pong (pp), K halves (kh) nor clusters (cC)");
  if (c.pingpong && c.kind != GemmKind::wgmma) broken(c, "ping-pong (pp) exists for kind wgmma only");
  if (c.a_registers && c.kind != GemmKind::wgmma) broken(c, "A through registers (ra) exists for kind wgmma only");
  if (c.pingpong && c.split_k != 1) broken(c, "ping-pong (pp) and split-K (kS) do not combine");
  if (c.cluster != 1 && c.cluster != 2) broken(c, fmt::format("cluster c{} must be c1 or c2", c.cluster));
  if (c.cluster != 1 && c.kind != GemmKind::wgmma) broken(c, "clusters (cC) exist for kind wgmma only");
  if (c.swap_ab && c.kind != GemmKind::wgmma && c.kind != GemmKind::gemv) broken(c, "swapped operands (sw) exist for kinds wgmma and gemv only");
  if (c.k_halves && c.kind != GemmKind::wgmma) broken(c, "K halves (kh) exist for kind wgmma only");
  if (c.k_halves && (c.pingpong || c.split_k != 1 || c.cluster != 1))
    broken(c, "K halves (kh) combine with neither ping-pong (pp), split-K (kS) nor clusters (cC)");
  if (c.cluster != 1 && c.split_k != 1) broken(c, "a cluster (cC) and split-K (kS) do not combine");
  if (c.cluster == 2 && p.b.layout == Layout::row_major && c.bn % 128 != 0)
    broken(c, fmt::format("a cluster of 2 splits a row-major B's tile in 64-column halves: BN={} must be a multiple of 128", c.bn));
  const bool tf32 = p.a.dtype == DType::f32 && p.math == MathMode::tf32;
  if (ops::is_8bit_float(p.a.dtype) && c.kind != GemmKind::wgmma && c.kind != GemmKind::gemv)
    broken(c, fmt::format("8-bit float inputs ({} x {}) run on kinds wgmma and gemv only (Hopper, sm_90a), not kind {}", dtype_name(p.a.dtype),
                          dtype_name(p.b.dtype), c.kind == GemmKind::mma ? "mma" : "simt"));
  if (c.kind == GemmKind::mma) {
    if (p.a.dtype == DType::f32 && p.math != MathMode::tf32)
      broken(c, "kind mma needs f16, bf16 or tf32 inputs; f32 with MathMode::exact runs on kind simt (for tf32: MathMode::tf32, "
                "--math tf32, or the configuration's tf32 part)");
    if (c.wm % 16 != 0 || c.wn % 16 != 0) broken(c, fmt::format("mma warp tiles are multiples of 16x16, not {}x{}", c.wm, c.wn));
    const int mma_k = tf32 ? 8 : 16;
    if (c.bk % mma_k != 0) broken(c, fmt::format("BK={} must be a multiple of the mma K ({} for {})", c.bk, mma_k, tf32 ? "tf32" : dtype_name(p.a.dtype)));
    const int es = static_cast<int>(dtype_size(p.a.dtype));
    if ((c.bm * c.bk) % threads || (c.bn * c.bk) % threads)
      broken(c, fmt::format("the A ({}x{}) and B ({}x{}) tiles must divide among the {} threads", c.bm, c.bk, c.bk, c.bn, threads));
    const int inner_a = p.a.layout == Layout::row_major ? c.bk : c.bm, inner_b = p.b.layout == Layout::col_major ? c.bk : c.bn;
    if ((inner_a * es) % 16 || (inner_b * es) % 16)
      broken(c, "the tile rows that are contiguous in memory must be a multiple of 16 bytes");
    const int accumulators = (c.wm / 16) * (c.wn / 8) * 4;
    if (accumulators > 128) broken(c, fmt::format("a {}x{} warp tile needs {} accumulator registers per thread, at most 128 fit", c.wm, c.wn, accumulators));
  } else if (c.kind == GemmKind::wgmma) {
    validate_wgmma_config(c, p, arch);
  } else if (c.kind == GemmKind::gemv) {
    validate_gemv_config(c, p);
  } else {
    if (tf32) broken(c, "kind simt computes in exact f32; MathMode::tf32 needs kind mma");
    int lm, ln;
    ops::simt_lanes(c, lm, ln);
    if (lm == 0) broken(c, fmt::format("no layout of 32 lanes divides the {}x{} warp tile", c.wm, c.wn));
    if ((c.wm / lm) * (c.wn / ln) > 128) broken(c, fmt::format("the {}x{} per-thread tile exceeds 128 registers", c.wm / lm, c.wn / ln));
    if ((c.bm * c.bk) % threads || (c.bn * c.bk) % threads)
      broken(c, fmt::format("the A ({}x{}) and B ({}x{}) tiles must divide among the {} threads", c.bm, c.bk, c.bk, c.bn, threads));
  }
  const int smem = ops::gemm_shared_bytes(c, p), limit = ops::arch_shared_memory_limit(arch);
  if (smem > limit) broken(c, fmt::format("it needs {} bytes of shared memory, more than the {} an {} block may use", smem, limit, arch));
}

namespace {
// Full waves of `sms` that the tiles of c need (the last one counts whole: an SM that runs one tile
// fewer waits the same).
long long waves(const GemmProblem& p, const GemmConfig& c, int sms, long long batches) {
  const long long tiles = ((p.m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn) * batches;
  return (tiles + sms - 1) / std::max(sms, 1);
}

// Wave quantization: of 128x256, 128x192 and 128x128 tiles (16-bit inputs), the one whose waves cost
// least, each wave weighed by what one tile of that shape takes (per-tile times relative to 128x128
// measured on the H200: 128x256 1.93x, 128x192 1.46x). Tuning found it (2026-12-02, tuned against
// the heuristic's 128x256 or 128x128, bf16 NT / f16 NN): 3072^3 1.39x, 1536^3 1.32x, 1536x1536x6144
// 1.48x, 768x3072x768 1.30x, 512x11008x4096 1.35x with 128x192 or 128x128 tiles. Another shape
// replaces c only when its waves are predicted at least 10% cheaper: the large shapes the rest of
// the heuristic was measured on (4096^3 to 8192^3, 12288x4096x4096, 4095^3) keep 128x256.
GemmConfig fewer_waves_tile(const GemmConfig& c, const GemmProblem& p, const std::string& arch, int sms, long long batches) {
  auto cost = [&](const GemmConfig& t) {
    const double per_tile = t.bn == 256 ? 32768 : t.bn == 192 ? 24824 : 16979;
    return per_tile * static_cast<double>(waves(p, t, sms, batches));
  };
  const double mine = cost(c);
  GemmConfig best = c;
  double best_cost = mine;
  for (const int bn : {256, 192, 128}) {
    if (bn == c.bn) continue;
    GemmConfig t = c;
    t.bn = t.wn = bn, t.stages = 4;
    if (cost(t) > 0.9 * mine || cost(t) >= best_cost) continue;
    try {
      const GemmProblem q = ops::wgmma_kernel_problem(t, p);
      validate_wgmma_config(t, q, arch);
      if (ops::gemm_shared_bytes(t, q) > ops::arch_shared_memory_limit(arch)) continue;
      best = t, best_cost = cost(t);
    } catch (const InvalidArgument&) {
    }
  }
  return best;
}
}  // namespace

GemmConfig choose_gemm_config(const GemmProblem& p, const std::string& arch, int sms, std::string* why) {
  require_8bit_target(p, arch);
  const bool eight_bit = ops::is_8bit_float(p.a.dtype);
  const long long batches = std::max<std::int64_t>(1, p.batch);
  const long long tiles128 = ((p.m + 127) / 128) * ((p.n + 127) / 128) * batches;
  const long long tiles128x256 = ((p.m + 127) / 128) * ((p.n + 255) / 256) * batches;
  std::string reason;
  GemmConfig c;
  // Hopper, decode-like M (<= 32): compute D^T = B^T A^T, where N's rows fill the device in 64-row
  // tiles and M is a 16- or 32-wide tile (no MMA rows wasted on padding); a bias runs along D^T's
  // rows. A column-major A is read N-major as it is (f16/bf16) or transposed into the workspace (tf32,
  // 8-bit); a row-major B (the wide operand) would be transposed at every launch there, so 8-bit
  // with a row-major B is not swapped, and tf32 reads it through registers instead (below).
  const bool wgmma_inputs = arch == "sm_90a" && !(p.a.dtype == DType::f32 && p.math == MathMode::exact);
  const bool block_scales = p.scale_mode == ScaleMode::blocks;
  // tf32 with a row-major B: the swapped problem's A (B^T) is M-major and goes through registers (ra),
  // as it is: H200 graph, NN / TN of cuBLAS TF32, 2026-12-04 13:2xZ, 1x4096x4096 0.22 -> 0.87 (split
  // K 2), 1x8192x8192 0.22 -> 0.95-0.96, 16x8192x8192 0.23 -> 0.97-1.02 (docs/benchmarks.md).
  const bool tf32_b_through_registers = p.a.dtype == DType::f32 && p.math == MathMode::tf32 && p.b.layout == Layout::row_major;
  if (wgmma_inputs && !block_scales && p.m <= 32 && p.n >= 1024 && p.k >= 256 &&
      (dtype_size(p.a.dtype) == 2 || p.b.layout == Layout::col_major || tf32_b_through_registers)) {
    const int es = static_cast<int>(dtype_size(p.a.dtype)), bn = p.m <= 16 ? 16 : 32;
    GemmConfig s{GemmKind::wgmma, 64, bn, 256 / es, 64, bn, 8};
    s.swap_ab = true;
    s.a_registers = tf32_b_through_registers;
    const GemmProblem q = ops::wgmma_kernel_problem(s, p);
    try {
      validate_wgmma_config(s, q, arch);
      // Packing the narrow operand (M x K) costs little; packing the wide one would cost a copy of it.
      if (!ops::tma_unready_reason(q, true).empty()) throw InvalidArgument("the wide operand (B) would need packing");
      const long long tiles = (q.m + s.bm - 1) / s.bm * batches, ktiles = (q.k + s.bk - 1) / s.bk;
      if (tiles * 2 <= sms && ktiles >= 8) s.split_k = static_cast<int>(std::clamp<long long>(sms / tiles, 1, std::min<long long>(4, ktiles / 4)));
      if (why)
        *why = fmt::format("wgmma, decode-like M={}: D^T = B^T A^T in 64x{} tiles{}", p.m, bn,
                           s.split_k > 1 ? fmt::format(", split-K {}", s.split_k) : "");
      return s;
    } catch (const InvalidArgument& e) {
      util::log().debug("GEMM heuristic: no swapped operands ({})", e.what());
    }
  }
  // Hopper, D column-major: the kernel computes D^T = B^T A^T, which is row-major, so that it writes
  // D through shared memory and TMA stores instead of element by element (which cost 6-17% at
  // 4096^3-1000^3 bf16 on the H200, 2026-12-01). The swapped problem's operands are the user's B and
  // A read transposed, in any layout; its configuration is the one a row-major D of that shape gets.
  // tf32: the operand wgmma cannot read as it is is a row-major B (a column-major A goes through
  // registers), transposed at each launch; the swapped problem's is a column-major A. The orientation
  // with fewer transposes wins over D's layout (NN runs swapped, TT not, whatever D's layout).
  const bool tf32_wgmma = wgmma_inputs && p.a.dtype == DType::f32;
  const auto transposes = [](const GemmProblem& q) { return q.b.layout == Layout::row_major ? 1 : 0; };
  const int transposes_swapped = tf32_wgmma ? transposes(ops::swapped_ab(p)) : 0, transposes_here = tf32_wgmma ? transposes(p) : 0;
  const bool swap_for_d = p.d.layout == Layout::col_major && transposes_swapped <= transposes_here;
  // (Not for a narrow M or N: the swapped problem's tiles would be mostly padding there.)
  const bool swap_for_tf32 = transposes_swapped < transposes_here && p.m >= 128 && p.n >= 128;
  if (wgmma_inputs && !block_scales && (swap_for_d || swap_for_tf32)) {
    std::string inner;
    GemmConfig s = choose_gemm_config(ops::swapped_ab(p), arch, sms, &inner);
    if (s.kind == GemmKind::wgmma) {
      s.swap_ab = !s.swap_ab;
      try {
        validate_gemm_config(s, p, arch);
        if (why)
          *why = swap_for_d ? fmt::format("D column-major: the kernel computes the row-major D^T = B^T A^T; for that problem: {}", inner)
                            : fmt::format("tf32, B row-major: the kernel computes D^T = B^T A^T, whose B (A^T) it reads as it is; for that "
                                          "problem: {}",
                                          inner);
        return s;
      } catch (const InvalidArgument& e) {
        util::log().debug("GEMM heuristic: D column-major, not swapped ({})", e.what());
      }
    }
  }
  // Hopper: wgmma wherever its rules (K-major operands, TMA alignment) hold; a row-major tf32 B is
  // transposed into the plan's workspace at each launch, a column-major tf32 A goes through registers.
  if (wgmma_inputs) {
    const int bk = 128 / static_cast<int>(dtype_size(p.a.dtype));  // one 128-byte swizzle row of K per stage
    const bool one_row_tile = p.m <= 64 && !eight_bit && dtype_size(p.a.dtype) == 2;  // 16-bit M of one 64-row tile
    bool small_tiles = false;  // the 64x128 tiles of about a wave or less
    if (block_scales) {
      // Block scales: BK = 128 and at most 64 accumulators per thread (a K block's products beside
      // them), or 128x256 tiles whose products are computed one 128-column half at a time: H200,
      // 2026-12-04, e4m3 NT graph / stream, 4096^3 1061 / 1046 -> 1114 / 1103 TFLOP/s, 8192^3 1063 /
      // 1083 -> 1098 / 1122 against 128x128 tiles with two sets of products.
      if (tiles128x256 >= sms)
        c = {GemmKind::wgmma, 128, 256, 128, 64, 256, 3}, reason = "wgmma, block scales, large: 128x256x128 tiles, products by halves";
      else if (tiles128 * 2 >= sms) c = {GemmKind::wgmma, 128, 128, 128, 64, 128, 4}, reason = "wgmma, block scales: 128x128x128 tiles, 2 consumer warpgroups";
      else c = {GemmKind::wgmma, 64, 128, 128, 64, 128, 8}, reason = "wgmma, block scales, small: 64x128x128 tiles, 8 stages";
    } else if (one_row_tile && tiles128 * 2 >= sms) {
      // M of one 64-row tile and N wide enough for 64x128 tiles to fill half the device or more:
      // 128-row tiles would be more than half padding (H200, 2026-12-02 13:53Z, bf16 stream:
      // 40x11008x4096 143 TFLOP/s in 64x128 tiles against 85 in 128x128, 33x14336x4096 122 against 77).
      c = {GemmKind::wgmma, 64, 128, bk, 64, 128, 8};
      reason = fmt::format("wgmma, M={} in one 64-row tile: 64x128 tiles, 8 stages in flight", p.m);
    } else if (tiles128x256 >= sms) c = {GemmKind::wgmma, 128, 256, bk, 64, 256, 4}, reason = "wgmma, large: 128x256 tiles, 2 consumer warpgroups";
    else if (tiles128 * 2 >= sms) c = {GemmKind::wgmma, 128, 128, bk, 64, 128, 4}, reason = "wgmma: 128x128 tiles, 2 consumer warpgroups";
    else if (one_row_tile)
      // M of one 64-row tile (33 to 64: fewer take the swapped operands above): 64-wide tiles give
      // twice the CTAs of 64x128 ones, which beat slicing K (tuned on the H200, 2026-12-02, bf16 NT /
      // f16 NN: 64x8192x4096 1.20x, 48x4096x4096 1.19x over 64x128 tiles with split-K 2 and 4).
      c = {GemmKind::wgmma, 64, 64, bk, 64, 64, 8}, reason = fmt::format("wgmma, M={} in one 64-row tile: 64x64 tiles, 8 stages in flight", p.m);
    else {
      c = {GemmKind::wgmma, 64, 128, bk, 64, 128, 8}, reason = fmt::format("wgmma, small ({} 128x128 tiles): 64x128 tiles, 8 stages in flight", tiles128);
      small_tiles = true;
    }
    if (p.a.dtype == DType::f32 && p.a.layout == Layout::col_major && !block_scales) {
      // A tf32 A that is not K-major goes through registers instead of a transposed copy: H200 graph,
      // ratio to cuBLAS TF32 at 4096^3 / 8192^3, transposed -> ra: TT 0.873 / 1.011 -> 1.037 / 1.091,
      // TN 1.261 / 1.440 -> 1.425 / 1.602; NN, swapped onto it, 0.881 / 0.941 -> 0.991 / 0.997
      // (2026-12-03 18:03Z, docs/benchmarks.md, eighteenth session).
      c.a_registers = true;
      reason += ", A through registers (column-major tf32)";
    }
    try {
      const GemmProblem q = ops::wgmma_kernel_problem(c, p);
      validate_wgmma_config(c, q, arch);
      // Packing an operand TMA cannot read costs a copy of it; worth it only when each of its
      // elements then feeds enough outputs (for 4095^3 bf16 the copy is ~15% of the GEMM). A
      // transposed operand (tf32) is a copy into the aligned workspace already.
      // (8-bit inputs have no other kind: they are packed whatever it costs.)
      if (!eight_bit && !ops::wgmma_transposes_a(c, p) && !ops::tma_unready_reason(q, true).empty() && p.n < 512)
        throw InvalidArgument("A would need packing, N < 512");
      if (!eight_bit && !ops::wgmma_transposes_b(c, p) && !ops::tma_unready_reason(q, false).empty() && p.m < 512)
        throw InvalidArgument("B would need packing, M < 512");
      if (ops::gemm_shared_bytes(c, q) > ops::arch_shared_memory_limit(arch)) c.stages = 3;
      if (!eight_bit && dtype_size(p.a.dtype) == 2 && c.bm == 128 && (c.bn == 256 || c.bn == 128)) {
        if (const GemmConfig w = fewer_waves_tile(c, p, arch, sms, batches); !(w == c)) {
          reason = fmt::format("wgmma: 128x{} tiles, 2 consumer warpgroups ({} waves of {} SMs, not {} of 128x{})", w.bn,
                               waves(p, w, sms, batches), sms, waves(p, c, sms, batches), c.bn);
          c = w;
        }
      }
      if (eight_bit && c.bm == 128 && c.bn == 256) {
        // 8-bit 128x256x128 tiles: 3 stages ran faster than 4 (H200, 2026-12-02 04:34Z, e4m3 NT
        // stream: 8192^3 1337 against 1293 TFLOP/s, 4096^3 1304 against 1314, within the noise).
        c.stages = 3;
        reason += ", 3 stages (8-bit)";
      }
      // Too few tiles to fill the device (decode-like M): cut K into slices run side by side.
      const long long tiles = ((p.m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn) * batches;
      const long long ktiles = (p.k + c.bk - 1) / c.bk;
      if (tiles * 2 <= sms && ktiles >= 16) {
        c.split_k = static_cast<int>(std::clamp<long long>(sms / tiles, 1, std::min<long long>(4, ktiles / 8)));
        if (c.split_k > 1) reason += fmt::format(", split-K {} ({} tiles for {} SMs)", c.split_k, tiles, sms);
      }
      // Whether a replacement for c is valid for p and fits the target's shared memory (`what` names
      // it in the debug log where it is not).
      auto fits = [&](const GemmConfig& cand, const char* what) {
        try {
          const GemmProblem cq = ops::wgmma_kernel_problem(cand, p);
          validate_wgmma_config(cand, cq, arch);
          return ops::gemm_shared_bytes(cand, cq) <= ops::arch_shared_memory_limit(arch);
        } catch (const InvalidArgument& e) {
          util::log().debug("GEMM heuristic: no {} ({})", what, e.what());
          return false;
        }
      };
      // No ping-pong for epilogues that read an M x N input (a residual), although its consumers'
      // epilogues run beside each other's MMAs: 128x128 ping-pong against 128x256, bf16, K = 4096,
      // `d = acc * scale[m] + residual` and `d = gelu(acc + bias[n]) + residual`, gained 2.1-8.7% on
      // the H200 (stream, 2026-12-04 22:29Z) but lost 5-15% at 12288x4096x4096 in all 16 cells and
      // -9% to +5% at 4096^3 on an H100 (graph and stream, 2026-12-05 19:1xZ; docs/benchmarks.md). A
      // rule that costs one Hopper part 15% to give the other 9% is not a default; `tilejit tune`
      // measures ping-pong on the device at hand.
      // No tail split (tS) here: on the H200 it made 12288x4096x4096 and 8192^3 1-3% slower, not
      // faster (run 2026-11-29 22:34Z, docs/benchmarks.md).
      // Clusters of two for a B whose lines TMA reads slowly: `pair` replaces c where it is valid and
      // fits shared memory; `what` says why in the heuristic's reason.
      auto take_cluster = [&](GemmConfig pair, const std::string& what) {
        pair.cluster = 2;
        if (!fits(pair, "cluster for B's lines")) return;
        c = pair;
        reason += "; B's lines off " + what;
      };
      if (small_tiles && c.split_k == 1 && dtype_size(p.a.dtype) == 2 && ops::b_lines_off_sectors(q)) {
        // B's lines start off 32-byte boundaries (ld 1000): TMA reads them at about half its rate.
        // Clusters of two read each B tile once for two blocks (TMA multicast): 1000^3 bf16 on the
        // H200 rose from 0.66-0.73 of cuBLAS to 0.76-0.85 under graph replay and from 0.78-0.90 to
        // 0.95-1.19 on a stream, in all four layouts (2026-12-03 13:12Z, docs/benchmarks.md).
        take_cluster({GemmKind::wgmma, 64, 128, 2 * bk, 64, 128, 4},
                     "32-byte boundaries: 64x128x" + std::to_string(2 * bk) + " tiles in clusters of 2, 4 stages");
      } else if (c.bm == 128 && c.cluster == 1 && c.split_k == 1 && dtype_size(p.a.dtype) == 2 && p.m > 1024 &&
                 ops::b_lines_off(q, 128) && ops::tma_unready_reason(q, false).empty()) {
        // Such a B (TMA could read it) would be packed for speed (wgmma_packs_b_for_speed). 128x256 tiles in clusters of two read
        // each B tile once for the pair and beat the packed copy where their waves are nearly full
        // (H200, 2026-12-03 14:49Z, bf16 graph, ratio to cuBLAS NT / NN, packed -> 128x256:c2:
        // 2040^3 0.64 / 0.63 -> 0.95 / 0.94, 4088^3 0.91 / 0.95 -> 1.00 / 1.01, 8184^3 0.98 / 0.95 ->
        // 1.03 / 0.96), not at 3000^3, whose 288 tiles fill 73% of three waves (0.87 / 0.80 -> 0.71 / 0.70).
        const GemmConfig wide{GemmKind::wgmma, 128, 256, bk, 64, 256, 4};
        const long long wide_tiles = ((p.m + 127) / 128) * ((p.n + 255) / 256) * batches;
        GemmConfig wide_pair = wide;
        wide_pair.cluster = 2;
        const double filled = static_cast<double>(wide_tiles) / static_cast<double>(waves(p, wide_pair, sms, batches) * sms);
        // Lines on 32-byte boundaries but off 128-byte ones (ld 2000) only for one wave: 2000^3 bf16
        // graph 0.75-0.84 -> 0.94-0.95 of cuBLAS in all four layouts (H200, 2026-12-03 17:03Z);
        // larger such shapes were not measured.
        const bool one_wave = wide_tiles <= sms;
        if (filled >= 0.85 && (ops::b_lines_off_sectors(q) || one_wave)) {
          take_cluster(wide, fmt::format("32-byte boundaries: 128x256 tiles in clusters of 2 ({:.0f}% of their waves filled)", 100 * filled));
        } else if (c.bn == 192 && q.b.layout == Layout::col_major && ops::b_lines_off_sectors(q)) {
          // Where the waves of 128x256 tiles are partly empty and 128x192 ones fill them (3000^3), the
          // 128x192 tiles in clusters of two beat packing B: bf16 graph 0.84-0.85 -> 0.87-0.90 of
          // cuBLAS at 3000^3 NT / TT (H200, 2026-12-03 17:03Z-17:08Z, docs/benchmarks.md). A row-major B's
          // 192-column tile does not split into the cluster's two 128-byte halves: packed there.
          take_cluster({GemmKind::wgmma, 128, 192, bk, 64, 192, 4}, "32-byte boundaries: 128x192 tiles in clusters of 2");
        }
      }
      if (why) *why = reason;
      return c;
    } catch (const InvalidArgument& e) {
      util::log().debug("GEMM heuristic: not wgmma ({})", e.what());
    }
  }
  // Measured on the H200 (docs/benchmarks.md: sweeps at 4096^3 and 1024^3, 2026-11-29).
  if (p.a.dtype == DType::f32 && p.math == MathMode::exact) {
    if (tiles128 >= 2 * sms) c = {GemmKind::simt, 256, 128, 16, 64, 64, 2}, reason = "exact f32, large: 256x128x16 SIMT tiles, 8x16 per thread";
    else if (tiles128 >= sms) c = {GemmKind::simt, 128, 128, 8, 64, 32, 2}, reason = "exact f32: 128x128 SIMT tiles fill the device";
    else c = {GemmKind::simt, 64, 64, 8, 32, 16, 2}, reason = fmt::format("exact f32: {} 128x128 tiles < {} SMs, 64x64 tiles", tiles128, sms);
  } else if (p.a.dtype == DType::f32) {
    if (tiles128 >= 2 * sms) c = {GemmKind::mma, 128, 128, 32, 64, 64, 3}, reason = "tf32, large: 128x128x32 tiles, 4 warps of 64x64";
    else if (tiles128 * 2 >= sms) c = {GemmKind::mma, 64, 128, 32, 32, 64, 4}, reason = "tf32, medium: 64x128 tiles, 4 warps of 32x64";
    else c = {GemmKind::mma, 64, 64, 16, 32, 32, 4}, reason = fmt::format("tf32, small ({} 128x128 tiles for {} SMs): 64x64 tiles", tiles128, sms);
  } else {
    if (tiles128x256 >= sms) {
      c = {GemmKind::mma, 128, 256, 32, 64, 64, 4};
      reason = "f16/bf16, large: 128x256 tiles, 8 warps of 64x64, 4 cp.async stages";
    } else if (tiles128 >= sms) {
      c = {GemmKind::mma, 128, 128, 32, 64, 64, 4};
      reason = "f16/bf16, large: 128x128 tiles, 4 warps of 64x64, 4 cp.async stages";
    } else {
      c = {GemmKind::mma, 64, 64, 32, 32, 32, 4};
      reason = fmt::format("f16/bf16, small problem ({} 128x128 tiles for {} SMs): 64x64 tiles", tiles128, sms);
    }
  }
  // Tiles must fit the target's shared memory (e.g. 99 KB on sm_86).
  while (ops::gemm_shared_bytes(c, p) > ops::arch_shared_memory_limit(arch) && c.stages > 2) --c.stages;
  if (why) *why = reason;
  return c;
}

}  // namespace tilejit
