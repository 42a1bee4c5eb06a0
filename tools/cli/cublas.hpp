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

// cuBLASLt's matmul with its fused bias + GELU epilogue (CUBLASLT_EPILOGUE_GELU_BIAS), loaded
// with dlopen like cuBLAS: the reference for fused epilogues. The plan (descriptors, the heuristic's
// algorithm) is made once per problem; a row-major D only (its bias runs along D's columns, which
// are the rows of the column-major D^T cuBLASLt computes).
class CublasLtBiasGelu {
 public:
  // Throws tilejit::Error when libcublasLt.so.13 cannot be loaded or has no algorithm for `p`
  // (alpha * A B + bias, then GELU; p.epilogue.vectors[0] or p.epilogue.bias is the bias, of D's dtype).
  CublasLtBiasGelu(const GemmProblem& p, CUdeviceptr bias, DType bias_dtype);
  ~CublasLtBiasGelu();
  CublasLtBiasGelu(const CublasLtBiasGelu&) = delete;
  CublasLtBiasGelu& operator=(const CublasLtBiasGelu&) = delete;
  void run(CUstream stream);

 private:
  struct Api;
  std::unique_ptr<Api> api_;
};

}  // namespace tilejit::cli
