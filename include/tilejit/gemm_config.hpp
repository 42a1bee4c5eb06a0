// GemmConfig: a GEMM kernel's kind, tiles and options, and their string form. A leaf header (no
// runtime types), so that everything down to the settings can parse TILEJIT_GEMM_CONFIG.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tilejit {

enum class GemmKind : std::uint8_t { simt, mma, wgmma, gemv };

// KIND:BMxBNxBK:WMxWN:STAGES, e.g. "mma:128x64x32:32x32:1". simt: CUDA-core FMA (any dtype, exact
// f32); mma: tensor cores through mma.sync (m16n8k16 for f16/bf16, m16n8k8 for tf32), ldmatrix and
// cp.async with STAGES shared-memory stages. BMxBN is the block's tile of D, BK its step along K,
// WMxWN one warp's tile. wgmma (sm_90a): TMA copies into STAGES stages and warpgroup MMAs; WMxWN is
// one consumer warpgroup's tile (WM 64 or 128, WN = BN), so BM / WM consumer warpgroups plus one
// producer warpgroup run per block, on a persistent grid; BK * element size = 128 bytes (64 for
// f16/bf16, 32 for tf32). gemv: decode-like M (BM = WM rows of D per block, 1 to 8), CUDA cores in
// f32 streaming B with 16-byte loads (any input dtype, 8-bit included): a block of 8 warps covers BM x
// BN outputs, WN columns per warp, the warps BN / WN along N times the rest along K; BK is K per warp
// step (B column-major: 32 lanes of runs of BK / 32 elements, at most 16 bytes; B row-major: the rows
// a warp takes at once, 32 / (WN / run) with runs of 16 bytes or WN columns); STAGES steps of loads
// are issued before their multiplications. Presets: "puzzle33" (the seed's tensor-core kernel, f32 in tf32: it sets
// the tf32 part) and "puzzle33-tiled" (the seed's 32x32 tiled SIMT kernel, one output per thread).
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
  // wgmma and gemv: compute D^T = B^T A^T instead (string form: an extra part "sw"). wgmma: a
  // decode-like M of 8-32 becomes the tile's N (BN 16 or 32) and N's thousands of rows fill the
  // device. gemv: a matrix times 1 to 8 vectors (N <= 8) streams A as the swapped problem's B.
  bool swap_ab = false;
  // wgmma only: two consumer warpgroups compute each whole tile (WM = BM), one the even K blocks and
  // one the odd, and add up in shared memory (string form: an extra part "kh"); for problems with
  // fewer tiles than SMs, where one MMA chain per SM leaves the tensor cores waiting.
  bool k_halves = false;
  // f32 inputs run on tensor cores as tf32 whatever the problem's MathMode says (string form: an
  // extra part "tf32"); the puzzle33 preset, the first seed's tf32 kernel, sets it. No effect on
  // f16/bf16 inputs.
  bool tf32 = false;
  // wgmma, tf32 with a column-major (M-major) A: A is loaded as it is and read by the MMAs from
  // registers, instead of transposed into the plan's workspace at each launch (string form: an extra
  // part "ra"). tf32 wgmma reads only K-major operands from shared memory.
  bool a_registers = false;
  std::string to_string() const;
  // Parses the string form or a preset name; throws InvalidArgument naming the expected form.
  static GemmConfig parse(std::string_view text);
  int threads() const noexcept {
    if (kind == GemmKind::wgmma) return (pingpong || k_halves ? 3 : bm / wm + 1) * 128;
    if (kind == GemmKind::gemv) return 256;
    return (bm / wm) * (bn / wn) * 32;
  }
  friend bool operator==(const GemmConfig&, const GemmConfig&) = default;
};

}  // namespace tilejit
