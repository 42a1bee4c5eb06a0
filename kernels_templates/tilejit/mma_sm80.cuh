// Wrappers for the sm_80 tensor-core path: cp.async (global -> shared, with zero fill), ldmatrix,
// mma.sync m16n8k16 (f16, bf16) and m16n8k8 (tf32). Every wrapper is one PTX instruction.
#pragma once

#include "tilejit/dtype.cuh"

namespace tilejit {
namespace sm80 {

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// Copies Bytes (4, 8 or 16) from global to shared memory; only the first src_bytes are read, the
// rest is zero-filled (src_bytes = 0 reads nothing: out-of-bounds tiles cost no memory traffic).
template <int Bytes> __device__ __forceinline__ void cp_async(void* smem, const void* gmem, int src_bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(smem)), "l"(gmem), "n"(Bytes), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem)));
}

// D = A * B + D for one 16x8 tile; a[4], b[2] fragments, d[4] f32 accumulators. Not volatile: a pure
// register operation the compiler may schedule between fragment loads. ldmatrix stays volatile,
// so it never moves across the barriers that order shared memory.
template <class T> struct mma_op;
template <> struct mma_op<f16> {
  enum : int { k = 16 };
  __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct mma_op<bf16> {
  enum : int { k = 16 };
  __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct mma_op<float> {  // f32 inputs as tf32
  enum : int { k = 8 };
  __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

// Rounds f32 bits to tf32 (to nearest, ties away), as cuBLAS does for TF32 math.
__device__ __forceinline__ unsigned to_tf32(unsigned f32_bits) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(f32_bits)));
  return r;
}

}  // namespace sm80
}  // namespace tilejit
