// Host cost of what a GEMM launch with an epilogue body computes on every call (no GPU needed):
// ops::normalized (which asks whether the body reads c), the body scan itself, and the hash by which
// Runtime::gemm finds its plan, each timed over many calls on the problem of the epilogue tests.
//   build/bin/tilejit_epilogue_host_cost [calls]
#include "ops/gemm/epilogue.hpp"
#include "ops/gemm/gemm_internal.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

template <class F> double microseconds_per_call(int calls, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilejit;
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200000;
  GemmProblem p;
  p.m = p.n = p.k = 4096;
  p.a = {1 << 20, DType::bf16, Layout::row_major};
  p.b = {1 << 21, DType::bf16, Layout::col_major};
  p.d = {1 << 22, DType::bf16, Layout::row_major};
  p.epilogue.body = "d = gelu(acc + bias[n]) * scale[m] + residual";
  p.epilogue.vectors = {{.name = "bias", .ptr = 1 << 23, .dtype = DType::bf16, .axis = EpilogueAxis::column},
                        {.name = "scale", .ptr = 1 << 24, .dtype = DType::f32, .axis = EpilogueAxis::row}};
  p.epilogue.inputs = {{.name = "residual", .matrix = {1 << 25, DType::bf16, Layout::row_major}}};
  std::uint64_t sink = 0;  // printed, so that no call is optimised away
  const double normalized = microseconds_per_call(calls, [&] { sink += ops::normalized(p).c.ptr; });
  const double reads_c = microseconds_per_call(calls, [&] { sink += ops::epilogue_reads_c(p.epilogue); });
  const double hash = microseconds_per_call(calls, [&] { sink += ops::epilogue_signature_hash(p.epilogue); });
  const double text = microseconds_per_call(calls, [&] { sink += ops::epilogue_signature(p.epilogue).size(); });
  std::printf("body '%s', %d calls each\n", p.epilogue.body.c_str(), calls);
  std::printf("normalized %.3f us, epilogue_reads_c %.3f us, epilogue_signature_hash %.3f us, epilogue_signature (string) %.3f us\n",
              normalized, reads_c, hash, text);
  std::printf("(checksum %llu)\n", static_cast<unsigned long long>(sink & 0xff));
  return 0;
}
