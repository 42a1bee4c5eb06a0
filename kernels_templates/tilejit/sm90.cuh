// Hopper (sm_90a) building blocks: mbarriers, TMA tile loads, wgmma shared-memory descriptors and
// fences, register reallocation between warpgroups. Every wrapper is one PTX instruction (or a
// try-wait loop around one).
#pragma once

#include "tilejit/wgmma_ops.cuh"

namespace tilejit {
namespace sm90 {

// The driver's CUtensorMap: 128 opaque bytes, passed to the kernel as a __grid_constant__ parameter
// and named by its generic address in TMA instructions.
struct alignas(64) tensor_map {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// ---- mbarriers -------------------------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}
// Makes initialised barriers visible to the async proxy (TMA) before anyone uses them.
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Arrives and announces `bytes` that asynchronous copies will deliver before the phase completes.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool mbarrier_try_wait(unsigned long long* bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}
// Waits until the phase of the given parity has completed. A fresh barrier counts its (virtual)
// previous phase, parity 1, as completed: producers start waiting on parity 1 and pass at once.
__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

// ---- TMA ---------------------------------------------------------------------------------------

__device__ __forceinline__ void prefetch_tensor_map(const tensor_map* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

// Copies the box at (c0, c1, c2) of a 3-D tensor map into shared memory; the barrier's transaction
// count falls by the box's bytes when it lands. Elements outside the tensor arrive as zeros.
__device__ __forceinline__ void tma_load_3d(void* smem, const tensor_map* map, unsigned long long* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          smem_addr(smem)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// The same box, written to the same shared-memory offset of every block of the cluster in cta_mask,
// each of whose barriers at `bar`'s offset receives the bytes.
__device__ __forceinline__ void tma_load_3d_multicast(void* smem, const tensor_map* map, unsigned long long* bar, int c0, int c1, int c2,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], "
      "%6;\n" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
      : "memory");
}

// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Every thread of every block of the cluster (threads may arrive at different points of divergent code).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// Arrives on the barrier at `bar`'s offset in the shared memory of cluster block `rank`.
__device__ __forceinline__ void mbarrier_arrive_remote(unsigned long long* bar, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_addr(bar)), "r"(rank));
  // Default semantics (release at CTA scope): a cluster-scope release would put a MEMBAR before every
  // arrival (measured: 35% of all warp stalls, the kernel at 0.67x of the unclustered one). What this
  // orders, the stage's reads by wgmma, has already completed (wgmma.wait_group) when it is called.
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

// Copies a box of shared memory to (c0, c1, c2) of a 3-D tensor map; the part of the box outside the
// tensor is not written. Completes asynchronously, in the issuing thread's bulk groups.
__device__ __forceinline__ void tma_store_3d(const tensor_map* map, const void* smem, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<unsigned long long>(map)),
               "r"(smem_addr(smem)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read shared memory.
template <int N> __device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until at most N of this thread's bulk groups are incomplete.
template <int N> __device__ __forceinline__ void bulk_wait_group() { asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory"); }
// Makes this thread's ordinary shared-memory writes visible to TMA (the async proxy).
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// 16 bytes from global to shared memory without passing through registers (cp.async, sm_80 on);
// this thread's copies are done, and visible to it, after cp_async_wait_all.
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
// Closes this thread's cp.async copies issued since the last commit into a group; cp_async_wait_group<N>
// waits until at most the N most recent of its groups are still in flight.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Barrier among `threads` threads (a multiple of 32) that use the same id; id 0 is __syncthreads's.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Byte offset of byte `byte` of row `row` in a tile of 128-byte rows stored with 128-byte swizzling
// (TMA's CU_TENSOR_MAP_SWIZZLE_128B): the 16-byte units of a row are permuted by the row's index
// modulo 8, so that eight rows' same columns fall in eight different banks.
__device__ __forceinline__ int swizzle128_offset(int row, int byte) { return row * 128 + ((((byte >> 4) ^ (row & 7))) << 4) + (byte & 15); }

// ---- wgmma -------------------------------------------------------------------------------------

// Descriptor of a K-major operand tile stored as TMA writes it with 128-byte swizzling: rows of 128
// bytes, groups of 8 rows 1024 bytes apart. `start` must lie in a 1024-byte aligned tile; moving
// along K inside the 128-byte row is a plain offset of the start address.
__device__ __forceinline__ unsigned long long smem_descriptor_k_major_sw128(const void* start) {
  const unsigned long long addr = smem_addr(start);
  return ((addr & 0x3FFFF) >> 4)            // start address, 16-byte units
         | (1ull << 16)                     // leading byte offset: unused for swizzled K-major
         | ((1024ull >> 4) << 32)           // stride byte offset: 8 rows of 128 bytes
         | (1ull << 62);                    // 128-byte swizzle
}

// Descriptor of an M- or N-major operand tile stored as TMA writes it, in chunks of 64 (128 bytes
// of) MN elements by BK rows of K with 128-byte swizzling: 8 K-rows 1024 bytes apart, successive
// MN chunks `chunk_bytes` apart. Moving along K by 8 rows moves the start by 1024 bytes.
__device__ __forceinline__ unsigned long long smem_descriptor_mn_major_sw128(const void* start, unsigned chunk_bytes) {
  const unsigned long long addr = smem_addr(start);
  return ((addr & 0x3FFFF) >> 4)                                    // start address, 16-byte units
         | (static_cast<unsigned long long>(chunk_bytes >> 4) << 16)  // leading byte offset: next MN chunk
         | ((1024ull >> 4) << 32)                                   // stride byte offset: next 8 K-rows
         | (1ull << 62);                                            // 128-byte swizzle
}

// Descriptor of a narrow N-major operand tile (16 or 32 elements of 16 bits: 32 or 64 bytes) stored
// as TMA writes it with the swizzle of that width: one row of `RowBytes` per K, groups of 8 K-rows
// one after the other (the stride byte offset); the tile is a single MN chunk, so the leading byte
// offset is never used. Moving along K by 8 rows moves the start by 8 * RowBytes.
template <int RowBytes> __device__ __forceinline__ unsigned long long smem_descriptor_mn_major_narrow(const void* start) {
  static_assert(RowBytes == 32 || RowBytes == 64, "a narrow N-major tile is 32 or 64 bytes wide");
  const unsigned long long addr = smem_addr(start);
  return ((addr & 0x3FFFF) >> 4)                                       // start address, 16-byte units
         | (1ull << 16)                                                // leading byte offset: one MN chunk only
         | (static_cast<unsigned long long>(8 * RowBytes >> 4) << 32)  // stride byte offset: next 8 K-rows
         | ((RowBytes == 32 ? 3ull : 2ull) << 62);                     // 32- or 64-byte swizzle
}

// Orders this warpgroup's earlier register and shared-memory accesses before the wgmmas that follow.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed wgmma groups of this warpgroup are still running.
template <int N> __device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Tells the compiler the accumulators may have changed here, so that no read of them moves above a
// wgmma_wait_group (the hardware writes them asynchronously).
template <int R> __device__ __forceinline__ void accumulator_fence(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// ---- warpgroup register reallocation ---------------------------------------------------------

template <int Regs> __device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
}
template <int Regs> __device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

}  // namespace sm90
}  // namespace tilejit
