// cuBLAS for the benchmarks, loaded with dlopen by the CLI only (the library never uses it): the
// reference every GEMM figure is measured beside, on the same problem, in the same run.
#pragma once

#include <tilejit/gemm.hpp>

#include <cuda.h>

#include <memory>
#include <string>

namespace tilejit::cli {

class Cublas {
 public:
  // Throws tilejit::Error when libcublas.so.13 cannot be loaded.
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // The same D = alpha * A * B + beta * D as the problem (no bias or activation), with the matching
  // transposes, D row- or column-major; f32 problems use SGEMM or TF32 math by p.math. Safe to capture
  // into a CUDA graph (the handle has its own workspace).
  void gemm(const GemmProblem& p, CUstream stream);

 private:
  struct Api;
  std::unique_ptr<Api> api_;
};

// cuBLASLt's matmul, loaded with dlopen like cuBLAS: the reference for fused epilogues (with a bias:
// its fused bias + GELU epilogue, CUBLASLT_EPILOGUE_GELU_BIAS) and for 8-bit inputs (e4m3, e5m2,
// with the problem's per-tensor scales; cuBLASLt takes them K-major only: A row-major, B
// column-major). The plan (descriptors, the heuristic's algorithm) is made once per problem.
class CublasLt {
 public:
  // Throws tilejit::Error when libcublasLt.so.13 cannot be loaded or has no algorithm for `p`
  // (alpha * A B, plus `bias` (of D's columns, D row-major) then GELU where bias != 0).
  // fast_accum: 8-bit inputs accumulate in the tensor cores only (CUBLASLT_MATMUL_DESC_FAST_ACCUM),
  // as tilejit's kernels do; otherwise cuBLASLt adds partial sums in f32 outside them.
  CublasLt(const GemmProblem& p, CUdeviceptr bias = 0, DType bias_dtype = DType::f32, bool fast_accum = true);
  ~CublasLt();
  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;
  void run(CUstream stream) { run(stream, 0, 0); }
  // With other A and B of the same shapes (0 keeps the problem's).
  void run(CUstream stream, CUdeviceptr a, CUdeviceptr b);

 private:
  struct Api;
  std::unique_ptr<Api> api_;
};

}  // namespace tilejit::cli
