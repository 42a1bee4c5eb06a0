// A program outside the source tree using an installed tilejit.
#include <tilejit/tilejit.hpp>

#include <cstdio>

int main() {
  try {
    tilejit::Runtime rt;
    tilejit::ElementwiseOp op{.body = "z = x * alpha + y",
                              .inputs = {{"x", tilejit::DType::f32}, {"y", tilejit::DType::f32}},
                              .outputs = {{"z", tilejit::DType::f32}},
                              .scalars = {{"alpha", 2.0f}},
                              .name = {}};
    auto info = rt.compile_elementwise(op, {});
    std::printf("compiled %s for %s: %zu bytes\n", info.program_name.c_str(), info.arch.c_str(), info.cubin_bytes);
    return 0;
  } catch (const tilejit::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
