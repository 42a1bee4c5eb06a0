// Compiled kernels carry no device globals: NVRTC emits every static constexpr data member a kernel
// names as one, and the driver allocates and initialises them when it loads the module (on the H200
// an elementwise cubin with 37 of them loaded in 0.22-0.39 ms, one without in 0.04-0.06 ms). Device
// templates use enumerators or constexpr functions instead; this test catches a data member that
// comes back.
#include "ops/elementwise/codegen.hpp"
#include "ops/elementwise/elementwise_internal.hpp"
#include "ops/gemm/gemm_internal.hpp"
#include "runtime_impl.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

namespace tilejit {
namespace {

// Section names live in the cubin's string table: .nv.global (zero-initialised globals) and
// .nv.global.init (initialised ones).
bool has_device_globals(const std::string& cubin) { return cubin.find(".nv.global") != std::string::npos; }

TEST(DeviceGlobals, NoneInElementwiseKernels) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  auto& impl = detail::RuntimeAccess::jit(rt);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i64}) {
    ElementwiseOp op{.body = "z = max(x, y) * 2 + x", .inputs = {{"x", t}, {"y", t}}, .outputs = {{"z", DType::f32}}};
    const ElementwiseConfig config = ops::resolve_config(op, ElementwiseConfig{});
    auto kernel = impl.cache.get(ops::elementwise_request(impl, op, config, config.vector_width, "sm_90a"));
    EXPECT_FALSE(has_device_globals(kernel->compiled().cubin)) << dtype_name(t);
  }
}

TEST(DeviceGlobals, NoneInGemmKernels) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  auto& impl = detail::RuntimeAccess::jit(rt);
  for (const char* cfg : {"wgmma:128x256x64:64x256:4", "wgmma:64x128x64:64x128:8:kh", "mma:128x128x32:64x64:3", "simt:64x64x8:32x16:2"}) {
    GemmProblem p;
    p.m = p.n = p.k = 512;
    p.a = {1 << 20, DType::bf16, Layout::row_major};
    p.b = {1 << 20, DType::bf16, Layout::col_major};
    p.d = {1 << 20, DType::bf16, Layout::row_major};
    const GemmProblem n = ops::normalized(p);
    const GemmConfig c = GemmConfig::parse(cfg);
    auto kernel = impl.cache.get(ops::gemm_request(impl, n, ops::gemm_variant(c, n), "sm_90a"));
    EXPECT_FALSE(has_device_globals(kernel->compiled().cubin)) << cfg;
  }
}

}  // namespace
}  // namespace tilejit
