// Programmatic dependent launch (sm_90 and later): a kernel launched with the launch attribute
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION may start while the kernel before it on the
// stream is still running, once every block of that kernel has called allow_dependent_grids() or
// exited. Its prologue (barrier set-up, tensor-map prefetch, the blocks' launch itself) then
// overlaps the previous kernel's tail. wait_for_prior_grids() returns once the previous kernels
// have completed and their memory is visible: every kernel launched with the attribute calls it
// before its first global-memory access (read or write; the previous kernel may still read what
// this one overwrites). Both are no-ops before sm_90, and where the attribute is not set.
#pragma once

namespace tilejit {

__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next kernel's blocks launch before this block exits (they still wait for this whole grid
// in wait_for_prior_grids()). Without it they launch as this grid's blocks exit, which the GEMM
// kernels keep but for the swapped decode shapes' narrow tiles: an early trigger moved the next
// grid's blocks onto SMs ahead of time and made a memory-bound GEMM (128x8192x8192 bf16, 128 blocks
// on 132 SMs) 16% slower on the H200.
__device__ __forceinline__ void allow_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace tilejit
