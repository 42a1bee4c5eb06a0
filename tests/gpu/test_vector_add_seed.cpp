// The CUDA Tile C++ seed's vectorAdd, written on tilejit's tile API (examples/vector_add.cuh),
// compiled through the JIT core and launched through the driver layer.
#include "jit/driver.hpp"
#include "runtime_impl.hpp"
#include "test_support.hpp"

#include "host_data.hpp"

namespace tilejit {
namespace {

TEST(VectorAddSeed, TileOf1024WithMaskedTail) {
  Runtime rt;
  TILEJIT_REQUIRE_GPU(rt);
  auto& impl = rt.impl();
  jit::KernelRequest req;
  req.family = "example";
  req.arch = rt.target_arch();
  req.compile = {"vector_add_1024", "examples/vector_add.cuh", "#include \"examples/vector_add.cuh\"\n",
                 "tilejit::examples::vector_add<1024>", impl.compiler.options(req.arch)};
  auto kernel = impl.cache.get(req);
  for (unsigned long long n : {1ull, 1000ull, 1024ull, (1ull << 20) + 3, 2ull << 25}) {
    std::vector<float> a(n), b(n), out(n);
    cli::fill_random(DType::f32, a.data(), n, n);
    cli::fill_random(DType::f32, b.data(), n, n + 1);
    auto da = rt.alloc(n * 4), db = rt.alloc(n * 4), dout = rt.alloc(n * 4 + 4096);
    da.upload(a.data(), n * 4);
    db.upload(b.data(), n * 4);
    dout.fill_bytes(0xFF);
    CUfunction fn = kernel->function(rt.device_ordinal());
    CUdeviceptr pa = da.ptr(), pb = db.ptr(), po = dout.ptr();
    void* args[] = {&pa, &pb, &po, &n};
    const unsigned blocks = static_cast<unsigned>((n + 1023) / 1024);
    jit::check(jit::driver().cuLaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
    rt.synchronize();
    dout.download(out.data(), n * 4);
    for (unsigned long long i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << "n=" << n << " i=" << i;
    std::vector<unsigned char> guard(4096);
    dout.download(guard.data(), 4096, n * 4);
    for (unsigned char g : guard) ASSERT_EQ(g, 0xFF) << "wrote past n=" << n;
  }
}

}  // namespace
}  // namespace tilejit
