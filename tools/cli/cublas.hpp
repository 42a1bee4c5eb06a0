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

}  // namespace tilejit::cli
