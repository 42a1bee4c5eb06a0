// A post-pass over Hopper cubins: lets the warp scheduler switch warps inside long runs of FFMA.
//
// Why: a block-scaled FP8 GEMM adds each K block's tensor-core products into its accumulators with a
// run of a hundred or more FFMAs. ptxas marks every other one of them as keeping an operand in the
// register reuse cache, and such an instruction also holds the scheduler on its warp. While one
// consumer warp runs its adds, the other consumer's warp on the same scheduler cannot issue its
// next wgmma, and the tensor cores idle. Clearing the reuse flags of the first part of each run and
// letting the warp yield there interleaves the two (DeepGEMM found the same and patches its cubins
// likewise). Both changes are scheduling hints: the results are bit for bit the same.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tilejit::jit {

// The NVRTC option that asks for the pass: `--tilejit-interleave-ffma=N` treats the first N/16 of
// each run (N 1 to 16). The compiler takes it out of the options NVRTC sees; it stays in the kernel
// key, so that a patched cubin and a plain one are different cache entries.
inline constexpr std::string_view kInterleaveFfmaOption = "--tilejit-interleave-ffma=";

// The N of such an option; InvalidArgument for an N that is not 1 to 16.
int interleave_ffma_sixteenths(std::string_view option);

struct FfmaInterleaveCount {
  std::size_t runs = 0;          // runs of at least kMinRun FFMAs found
  std::size_t instructions = 0;  // FFMAs changed
};

// Runs shorter than this are left alone: they are not the accumulation loops the pass is for.
inline constexpr std::size_t kMinFfmaRun = 8;

// Changes `cubin` in place: in each run of consecutive FFMAs (register operands) in its code
// sections, the first `sixteenths`/16 that keep an operand in the reuse cache lose that and may
// yield, unless they write a register an earlier FFMA of the run wrote. Only sm_90 images are
// touched (the instruction encoding is checked for that generation); others come back as they were,
// with a zero count, as does anything that is not a well-formed ELF64 image.
FfmaInterleaveCount interleave_ffma_runs(std::string& cubin, int sixteenths);

}  // namespace tilejit::jit
