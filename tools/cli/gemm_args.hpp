// The GEMM problem options the `tilejit gemm`, `compile gemm`, `bench gemm` and `tune gemm` commands
// share, and the problem they describe.
#pragma once

#include <tilejit/tilejit.hpp>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::cli {

struct GemmArgs {
  std::int64_t m = 1024, n = 1024, k = 1024, batch = 1;
  std::string dtype = "bf16", b_dtype, out_dtype, layout = "NN", config, math = "exact", act = "none", arch, shapes, out;
  float alpha = 1.f, beta = 0.f;
  bool bias = false, check = false, bench = false, source = false;
  bool block_scales = false;  // 8-bit inputs: scales per block of 128 along K (ScaleMode::blocks)
  int runs = 0;    // 0: the method's default (synced 20 launches, stream and graph 5 groups)
  int rounds = 1;  // bench gemm: passes over every shape and layout, each timed anew
  std::string method = "stream";  // bench gemm: stream, graph or synced
  std::string lt_accum = "fast";  // bench gemm, 8-bit inputs: cuBLASLt's accumulation (fast or precise)
  double group_ms = 50;           // bench gemm, stream and graph: about this much work per timed group
  std::string rotate = "1";       // bench gemm: copies of A and B the launches take in turn (a count or "auto")
  // An epilogue body (gemm, compile gemm) or several (bench gemm; "none": no epilogue), and its scalars.
  std::vector<std::string> epilogues;
  std::vector<std::string> scalars;
};

Layout layout_of(char c, const std::string& all);
Activation activation_of(const std::string& s);
// A layout is two letters, A's then B's (N row-major, T column-major), and optionally ":r" or ":c"
// for D (row-major by default): "NT", "TN:c".
Layout d_layout_of(const std::string& layout);
// The problem (without pointers) the options describe, in one layout.
GemmProblem problem_of(const GemmArgs& a, const std::string& layout);
// Stand-in pointers with 256-byte alignment, as cuMemAlloc gives (they select the 16-byte copies),
// for compiling or validating without a device: outputs apart from the inputs.
void with_stand_in_pointers(GemmProblem& p, bool bias);
std::optional<GemmConfig> config_of(const std::string& s);
double tflops(double flops, double ms);
// The median of a bench's rounds (the mean of the middle two for an even count; NaN when empty).
double median(std::vector<double> v);
// "MxNxK,MxNxK,...".
std::vector<std::array<std::int64_t, 3>> parse_shapes(const std::string& s);
// --m --n --k --dtype --b-dtype --out-dtype --block-scales --layout --config --math.
void add_problem_options(CLI::App* c, GemmArgs& a);

// A progress line on stderr when it is a terminal (the bench runs for minutes): rewritten in place,
// cleared before each result row goes to stdout.
class ProgressLine {
 public:
  explicit ProgressLine(int total) : total_(total), on_(isatty(fileno(stderr)) != 0) {}
  void show(const std::string& what) {
    if (!on_) return;
    std::fprintf(stderr, "\r\033[K[%d/%d] %s", ++done_, total_, what.c_str());
    std::fflush(stderr);
  }
  void clear() const {
    if (on_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  int total_, done_ = 0;
  bool on_;
};

}  // namespace tilejit::cli
