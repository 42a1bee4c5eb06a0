// Without a driver: compiling works, and the first thing that needs the GPU says clearly why not.
#include "runtime_impl.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace tilejit {
namespace {

// Each test case runs in its own process under ctest, so the driver is first loaded here, from the
// library named by TILEJIT_LIBCUDA.
class NoDriver : public ::testing::Test {
 protected:
  test::ScopedEnv libcuda{"TILEJIT_LIBCUDA", "/nonexistent/libcuda.so.1"};
  ElementwiseOp op{.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}};
};

TEST_F(NoDriver, HasDeviceSaysWhy) {
  Runtime rt;
  std::string why;
  EXPECT_FALSE(rt.has_device(&why));
  EXPECT_NE(why.find("dlopen(\"/nonexistent/libcuda.so.1\") failed"), std::string::npos) << why;
  EXPECT_NE(why.find("TILEJIT_ARCH"), std::string::npos) << why;
}

TEST_F(NoDriver, AllocationThrowsDriverError) {
  Runtime rt;
  try {
    rt.alloc(1024);
    FAIL() << "allocated without a driver";
  } catch (const DriverError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA driver"), std::string::npos) << e.what();
    EXPECT_EQ(e.device(), 0);
  }
}

// A user's program compiles for TILEJIT_ARCH without a GPU; what needs the device says why not.
TEST_F(NoDriver, UserProgramsCompileAndSayWhyTheyCannotLaunch) {
  const KernelSource src{.name = "k", .text = "__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n"};
  {
    Runtime rt;
    try {
      rt.program(src, {"k"});
      FAIL() << "chose an arch without a device or TILEJIT_ARCH";
    } catch (const DriverError& e) {
      EXPECT_NE(std::string(e.what()).find("Set TILEJIT_ARCH"), std::string::npos) << e.what();
    }
  }
  test::ScopedEnv arch("TILEJIT_ARCH", "sm_90a");
  test::TempDir cache;
  test::ScopedEnv dir("TILEJIT_CACHE_DIR", cache.path().string());
  Runtime rt;
  Program prog = rt.program(src, {"k"});
  EXPECT_EQ(prog.info().arch, "sm_90a");
  EXPECT_GT(prog.info().cubin_bytes, 0u);
  Kernel k = prog.kernel("k");
  EXPECT_FALSE(k.symbol().empty());
  try {
    k.launch({.grid = {1}, .block = {32}}, nullptr, CUdeviceptr{1 << 20});
    FAIL() << "launched without a driver";
  } catch (const DriverError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA driver"), std::string::npos) << e.what();
  }
  EXPECT_THROW(k.attributes(), DriverError);
}

TEST_F(NoDriver, LaunchThrowsDriverErrorAfterValidatingArguments) {
  Runtime rt;
  // Bad input is reported first, as InvalidArgument.
  EXPECT_THROW(rt.elementwise(op, {1024}, {2048}, 16), InvalidArgument);
  ElementwiseOp bad = op;
  bad.body = "z = x + w";
  EXPECT_THROW(rt.elementwise(bad, {1024, 2048}, {4096}, 16), InvalidArgument);
  // An output overlapping an input other than element for element; one that is the input is fine.
  EXPECT_THROW(rt.elementwise(op, {1024, 2048}, {1024 + 4}, 16), InvalidArgument);
  EXPECT_THROW(rt.elementwise(op, {1024, 2048}, {2048 - 32}, 16), InvalidArgument);
  EXPECT_THROW(rt.elementwise(op, {1024, 2048}, {1024}, 16), DriverError);
  ElementwiseOp narrowing{.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f16}}};
  EXPECT_THROW(rt.elementwise(narrowing, {1024, 4096}, {1024}, 16), InvalidArgument);  // same start, other element size
  ElementwiseOp two{.body = "a = x; b = x", .inputs = {{"x", DType::f32}}, .outputs = {{"a", DType::f32}, {"b", DType::f32}}};
  EXPECT_THROW(rt.elementwise(two, {1024}, {4096, 4096 + 8}, 16), InvalidArgument);
  // Spans no device holds, or that run past the end of the address space.
  EXPECT_THROW(rt.elementwise(op, {1024, 2048}, {4096}, std::uint64_t{1} << 47), InvalidArgument);
  EXPECT_THROW(rt.elementwise(op, {1024, 2048}, {~CUdeviceptr{0} - 4095}, 2048), InvalidArgument);
  EXPECT_THROW(rt.elementwise(op, {1024, 2048}, {4096}, 16), DriverError);
  // n = 0 is a no-op even without a GPU.
  EXPECT_NO_THROW(rt.elementwise(op, {1024, 2048}, {4096}, 0));
}

// Runtime::elementwise and Runtime::gemm keep their plans inside the runtime. Those plans once owned
// the runtime back: a cycle that kept it (and its warm-up thread) alive past its end, which crashed
// about 1 process in 16 at exit when that thread ran into NVRTC's unloading. A plan the user holds
// still keeps its runtime alive, as documented.
TEST_F(NoDriver, RuntimeEndsWithItsLastOwnerNotWithTheProcess) {
  test::ScopedEnv arch("TILEJIT_ARCH", "sm_90a");
  const int before = jit::Context::live_count();
  {
    Runtime rt;
    EXPECT_EQ(jit::Context::live_count(), before + 1);
    EXPECT_THROW(rt.elementwise(op, {1024, 2048}, {4096}, 16), DriverError);
    EXPECT_EQ(detail::RuntimeAccess::impl(rt).elementwise_plans.size(), 1u) << "the one-call plan was not kept, so this test shows nothing";
    GemmProblem p;
    p.m = p.n = p.k = 256;
    p.a = {1 << 20, DType::bf16, Layout::row_major};
    p.b = {2 << 20, DType::bf16, Layout::col_major};
    p.d = {3 << 20, DType::bf16, Layout::row_major};
    EXPECT_THROW(rt.gemm(p), DriverError);
    EXPECT_EQ(detail::RuntimeAccess::impl(rt).gemm_plans.size(), 1u);
    // A plan per stream (one that copies operands into its workspace must not run on two at once);
    // pointers, alpha and beta's value come with each call.
    EXPECT_THROW(rt.gemm(p, reinterpret_cast<CUstream>(0x1000)), DriverError);
    EXPECT_EQ(detail::RuntimeAccess::impl(rt).gemm_plans.size(), 2u);
    p.a.ptr += 1 << 20;
    EXPECT_THROW(rt.gemm(p), DriverError);
    EXPECT_EQ(detail::RuntimeAccess::impl(rt).gemm_plans.size(), 2u);
    p.alpha = 2.f;
    EXPECT_THROW(rt.gemm(p), DriverError);
    EXPECT_EQ(detail::RuntimeAccess::impl(rt).gemm_plans.size(), 2u);
    // beta on D itself (no C) and beta on a separate C of another dtype are different plans (C is read
    // in both, from other places); another nonzero beta, or a tight leading dimension given as 0 or as a
    // number, is the same plan.
    p.beta = 0.5f;
    EXPECT_THROW(rt.gemm(p), DriverError);
    p.c = {1 << 22, DType::f32, Layout::row_major};
    EXPECT_THROW(rt.gemm(p), DriverError);
    EXPECT_EQ(detail::RuntimeAccess::impl(rt).gemm_plans.size(), 4u);
    p.c.ld = 256;
    p.beta = -1.f;
    EXPECT_THROW(rt.gemm(p), DriverError);
    EXPECT_EQ(detail::RuntimeAccess::impl(rt).gemm_plans.size(), 4u);
    // A stream per call, as a server might make: the plans stay bounded.
    for (std::uintptr_t s = 1; s <= ops::GemmPlans::kMax + 10; ++s)
      EXPECT_THROW(rt.gemm(p, reinterpret_cast<CUstream>(s << 12)), DriverError);
    EXPECT_LE(detail::RuntimeAccess::impl(rt).gemm_plans.size(), ops::GemmPlans::kMax);
  }
  EXPECT_EQ(jit::Context::live_count(), before);

  std::optional<ElementwisePlan> plan;
  {
    Runtime rt;
    plan = rt.plan_elementwise(op);
  }
  EXPECT_EQ(jit::Context::live_count(), before + 1) << "a user's plan must keep its runtime";
  plan.reset();
  EXPECT_EQ(jit::Context::live_count(), before);
}

// A runtime the program never destroys (leaked, or a static) still lets the process exit cleanly:
// its warm-up thread finishes before NVRTC is unloaded and uses nothing that exit() destroys. The
// crash this guards against came at exit, in about 1 process in 12, so the test runs 48 processes
// that each leak a runtime right after using it and exit at once.
TEST_F(NoDriver, ALeakedRuntimeLetsTheProcessExit) {
  if (std::getenv("TILEJIT_TEST_LEAK_CHILD") != nullptr) {
    auto* leaked = new Runtime;  // NOLINT: the point of the test
    EXPECT_THROW(leaked->elementwise(op, {1024, 2048}, {4096}, 16), DriverError);
    EXPECT_FALSE(detail::RuntimeAccess::jit(*leaked).nvrtc_warm_up_started()) << "NVRTC warmed up without a driver";
    return;
  }
  test::ScopedEnv child("TILEJIT_TEST_LEAK_CHILD", "1");
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  int crashed = 0;
  for (int i = 0; i < 48; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 1), ::dup2(devnull, 2);
      ::execl(self.c_str(), self.c_str(), "--gtest_filter=NoDriver.ALeakedRuntimeLetsTheProcessExit", nullptr);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++crashed;
  }
  EXPECT_EQ(crashed, 0) << "of 48 processes that leaked a runtime did not exit cleanly";
}

// An output that shares memory with an input gives order-dependent results: refused before anything
// is launched (here, before the missing driver is noticed), by Runtime::gemm and by a plan's run.
TEST_F(NoDriver, GemmOutputsMustNotOverlapInputs) {
  test::ScopedEnv arch("TILEJIT_ARCH", "sm_90a");
  Runtime rt;
  GemmProblem p;
  p.m = p.n = p.k = 256;
  p.a = {1 << 20, DType::bf16, Layout::row_major};
  p.b = {2 << 20, DType::bf16, Layout::col_major};
  p.d = {3 << 20, DType::bf16, Layout::row_major};
  EXPECT_THROW(rt.gemm(p), DriverError);  // apart: only the driver is missing
  auto refused = [&](GemmProblem q, const std::string& fragment) {
    try {
      rt.gemm(q);
      ADD_FAILURE() << "accepted; expected '" << fragment << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
    GemmPlan plan = rt.plan_gemm(q);  // planning (compiling) is fine with any pointers; running is not
    EXPECT_THROW(plan.run(), InvalidArgument);
  };
  GemmProblem q = p;
  q.d.ptr = p.a.ptr + 1000 * 2;  // D starts inside A
  refused(q, "overlaps A");
  q = p;
  q.d.ptr = p.b.ptr - 100 * 2;  // D ends inside B
  refused(q, "overlaps B");
  q = p;
  q.beta = 1.f;
  q.c = {p.d.ptr + 256 * 2, DType::bf16, Layout::row_major};  // C one row off D
  refused(q, "overlaps C");
  q = p;
  q.epilogue.bias = p.d.ptr + 4096;
  refused(q, "overlaps the bias");
  q = p;
  q.batch = 2;
  q.a.batch_stride = q.b.batch_stride = 0;
  q.d.batch_stride = 256 * 255;  // one row short of a matrix
  refused(q, "outputs of the batch overlap");
  // C that is D itself, element for element, is allowed.
  q = p;
  q.beta = 1.f;
  q.c = q.d;
  EXPECT_THROW(rt.gemm(q), DriverError);
}

TEST_F(NoDriver, TargetArchNeedsTilejitArch) {
  ::unsetenv("TILEJIT_ARCH");
  Runtime rt;
  try {
    rt.target_arch();
    FAIL();
  } catch (const DriverError& e) {
    EXPECT_NE(std::string(e.what()).find("Set TILEJIT_ARCH"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rt.compile_elementwise(op, {}), DriverError);
}

TEST_F(NoDriver, CompilingStillWorks) {
  test::ScopedEnv arch("TILEJIT_ARCH", "sm_90a");
  Runtime rt;
  EXPECT_EQ(rt.target_arch(), "sm_90a");
  auto info = rt.compile_elementwise(op, {});
  EXPECT_GT(info.cubin_bytes, 0u);
  EXPECT_EQ(info.arch, "sm_90a");
}

TEST_F(NoDriver, BadEnvironmentIsInvalidArgument) {
  test::ScopedEnv bad("TILEJIT_DEVICE", "gpu0");
  EXPECT_THROW(Runtime{}, InvalidArgument);
}

}  // namespace
}  // namespace tilejit
