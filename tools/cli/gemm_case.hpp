// One GEMM with real data for checks and benchmarks: device buffers with random inputs, a poisoned
// D, and the relative error of D against a float64 host reference.
#pragma once

#include <tilejit/tilejit.hpp>

#include <cstdint>
#include <vector>

namespace tilejit::cli {

class GemmCase {
 public:
  // `shape` gives sizes, dtypes, layouts, leading dimensions, batch, alpha, beta, math, activation;
  // with_bias adds a random bias. Pointers are filled in; 8-bit inputs get per-tensor scales. beta != 0 without a C pointer reads D.
  // An epilogue body's vectors and inputs get random values, its outputs poison (NaN).
  GemmCase(Runtime& rt, const GemmProblem& shape, bool with_bias, std::uint64_t seed, bool separate_c = true);

  GemmProblem problem;
  // Writes 0xFF (NaN) over D, or D's initial values when C aliases D.
  void reset_output();
  // Replaces D's contents (the bytes of problem.d's allocation), e.g. with a D computed elsewhere.
  void set_output(const void* host, std::size_t bytes) { dd_.upload(host, bytes); }
  std::size_t output_bytes() const { return dd_.bytes(); }
  // Takes A and B as they are on the device now (a kernel may have written them, e.g. A as the
  // previous GEMM's D) into the host copies the reference reads.
  void reload_inputs();
  // ||D - ref|| / ||ref|| over every output (when at most max_samples) or max_samples sampled ones
  // plus the last row and column; +inf on NaN or Inf. With an epilogue body, the largest of D's and
  // each other output's (against the body evaluated in float64).
  double relative_error(std::size_t max_samples = 1 << 16);
  // The per-tensor scales the reference applies (8-bit inputs), e.g. after new values were written
  // behind problem.scale_a / scale_b, or where a run took none (1, 1).
  void set_scales(float a, float b) { scales_[0] = a, scales_[1] = b; }
  // New values behind the case's own scale pointers (synchronous), and for the reference.
  void write_scales(float a, float b) {
    set_scales(a, b);
    dscales_.upload(&scales_[0], sizeof(float), 0);
    dscales_.upload(&scales_[1], sizeof(float), 256);
  }
  double flops() const { return 2.0 * static_cast<double>(problem.m) * problem.n * problem.k * problem.batch; }
  // Bytes of A's and B's device allocations (behind problem.a.ptr and problem.b.ptr).
  std::size_t a_bytes() const { return da_.bytes(); }
  std::size_t b_bytes() const { return db_.bytes(); }

 private:
  static std::size_t elements(const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch);
  std::vector<unsigned char> a_, b_, c_, bias_;
  DeviceBuffer da_, db_, dc_, dd_, dbias_;
  // 8-bit inputs: scale_a and scale_b (problem.scale_a / scale_b point at them; a test may clear those).
  float scales_[2] = {1.f, 1.f};
  DeviceBuffer dscales_;
  // ScaleMode::blocks: A's and B's scales per block of 128 along K (see ScaleMode).
  std::vector<float> block_a_, block_b_;
  DeviceBuffer dblock_a_, dblock_b_;
  // An 8-bit D's output scale (problem.scale_d points at it).
  float d_scale_ = 1.f;
  DeviceBuffer d_scale_buffer_;
  // An epilogue body's operands: vectors, inputs, outputs (host copies and device buffers).
  std::vector<std::vector<unsigned char>> vec_, in_;
  std::vector<DeviceBuffer> dvec_, din_, dout_;
  bool c_is_d_ = false;
};

double gemm_tolerance(const GemmProblem& p);

}  // namespace tilejit::cli
