// A program outside the source tree using an installed tilejit: an elementwise op compiled from the
// embedded templates, and a kernel of its own from a string whose template argument (the block
// size) is chosen at run time: launched and checked where there is a GPU, compiled for
// TILEJIT_ARCH (and the reason for not launching printed) where there is none.
#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>  // installed and self-contained too (this program uses none of it)

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char* kSource = R"(
#include <tilejit/tile.cuh>
// y = a * x + b over n elements in tiles of Block * 4, the last one masked.
template <int Block>
__global__ void axpb(float* y, const float* x, float a, float b, long long n) {
  namespace ct = tilejit::tiles;
  const auto xs = ct::partition_view{ct::tensor_span{x, ct::extents{n}}, ct::shape<Block * 4>{}};
  const auto ys = ct::partition_view{ct::tensor_span{y, ct::extents{n}}, ct::shape<Block * 4>{}};
  ys.store_masked(xs.load_masked(ct::bid().x) * a + b, ct::bid().x);
}
)";

}  // namespace

int main(int argc, char** argv) {
  try {
    tilejit::Runtime rt;
    tilejit::ElementwiseOp op{.body = "z = x * alpha + y",
                              .inputs = {{"x", tilejit::DType::f32}, {"y", tilejit::DType::f32}},
                              .outputs = {{"z", tilejit::DType::f32}},
                              .scalars = {{"alpha", 2.0f}},
                              .name = {}};
    auto info = rt.compile_elementwise(op, {});
    std::printf("compiled %s for %s: %zu bytes\n", info.program_name.c_str(), info.arch.c_str(), info.cubin_bytes);

    const int block = argc > 1 ? std::atoi(argv[1]) : 256;  // a template argument chosen at run time
    const std::string name = "axpb<" + std::to_string(block) + ">";
    const tilejit::KernelSource src{.name = "consumer_axpb", .text = kSource};
    std::string why;
    if (!rt.has_device(&why)) {
      auto k = rt.compile_program(src, {name});
      std::printf("user kernel %s compiled for %s: %zu bytes; not launched: %s\n", name.c_str(), k.arch.c_str(), k.cubin_bytes, why.c_str());
      return 0;
    }
    tilejit::Program prog = rt.program(src, {name});
    tilejit::Kernel kernel = prog.kernel(name);
    const long long n = 1000003;
    std::vector<float> x(n), y(n);
    for (long long i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
    auto dx = rt.alloc(n * 4), dy = rt.alloc(n * 4);
    dx.upload(x.data(), n * 4);
    dy.fill_bytes(0xFF);
    const unsigned tiles = static_cast<unsigned>((n + block * 4 - 1) / (block * 4));
    kernel.launch({.grid = {tiles}, .block = {static_cast<unsigned>(block)}}, nullptr, dy.ptr(), dx.ptr(), 3.0f, 0.25f, n);
    rt.synchronize();
    dy.download(y.data(), n * 4);
    double worst = 0;
    for (long long i = 0; i < n; ++i) worst = std::fmax(worst, std::fabs(y[i] - (3.0 * x[i] + 0.25)));
    std::printf("user kernel %s launched on %s: %lld elements, max error %.3g\n", name.c_str(), rt.device_info().name.c_str(), n, worst);
    return worst <= 1e-6 ? 0 : 1;
  } catch (const tilejit::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
