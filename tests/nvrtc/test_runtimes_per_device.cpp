// One Runtime per device in one process (issue 18): each has its own context, modules and plans,
// and a kernel one of them compiled (or read from disk) is handed to the others instead of being
// compiled again. Compile-only here (an arch override stands in for the devices' arch), so it runs
// without a GPU; ordinals 0 and 1 stand for two devices of one arch.
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <barrier>
#include <thread>

namespace tilejit {
namespace {

RuntimeOptions options_for(int device) {
  RuntimeOptions o;
  o.device = device;
  o.arch = "sm_90a";
  return o;
}

ElementwiseOp op_number(int i) {
  return {.body = "z = x * " + std::to_string(i + 2) + ".f + sin(x)", .inputs = {{"x", DType::f32}}, .outputs = {{"z", DType::f32}}};
}

// Compiles and disk reads of every Runtime together.
std::uint64_t builds(const RuntimeStats& s) { return s.compiles + s.disk_hits; }

TEST(RuntimesPerDevice, TheSecondDeviceReusesTheFirstsCompile) {
  test::ScopedEnv off("TILEJIT_CACHE", "off");  // no disk: what is shared comes from the other Runtime
  Runtime first(options_for(0)), second(options_for(1));
  EXPECT_EQ(first.device_ordinal(), 0);
  EXPECT_EQ(second.device_ordinal(), 1);
  const auto a = first.compile_elementwise(op_number(0), {});
  const auto b = second.compile_elementwise(op_number(0), {});
  EXPECT_FALSE(a.from_cache);
  EXPECT_TRUE(b.from_cache);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(first.stats().compiles, 1u);
  EXPECT_EQ(second.stats().compiles, 0u);
  EXPECT_EQ(second.stats().shared_hits, 1u);
  // A second request on the second device is its own memory hit, not another shared one.
  (void)second.compile_elementwise(op_number(0), {});
  EXPECT_EQ(second.stats().memory_hits, 1u);
  EXPECT_EQ(second.stats().shared_hits, 1u);
}

TEST(RuntimesPerDevice, TwoDevicesTwoThreadsEachOneCompilePerKernel) {
  test::ScopedEnv off("TILEJIT_CACHE", "off");
  Runtime devices[2] = {Runtime(options_for(0)), Runtime(options_for(1))};
  constexpr int kThreadsPerDevice = 2, kKernels = 4;
  std::barrier start(2 * kThreadsPerDevice);
  std::vector<std::thread> threads;
  std::vector<std::string> keys(2 * kThreadsPerDevice * kKernels);
  for (int d = 0; d < 2; ++d)
    for (int t = 0; t < kThreadsPerDevice; ++t)
      threads.emplace_back([&, d, t] {
        start.arrive_and_wait();
        for (int k = 0; k < kKernels; ++k) {
          const int i = (k + t) % kKernels;  // the threads of a device take the kernels in different orders
          keys[(d * kThreadsPerDevice + t) * kKernels + i] = devices[d].compile_elementwise(op_number(i), {}).key;
        }
      });
  for (auto& t : threads) t.join();
  const RuntimeStats s0 = devices[0].stats(), s1 = devices[1].stats();
  EXPECT_EQ(s0.compiles + s1.compiles, static_cast<std::uint64_t>(kKernels)) << "one compile per kernel in the process";
  EXPECT_EQ(s0.compiles + s0.shared_hits, static_cast<std::uint64_t>(kKernels)) << "each device builds or shares each kernel once";
  EXPECT_EQ(s1.compiles + s1.shared_hits, static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(s0.memory_hits + s1.memory_hits, static_cast<std::uint64_t>(2 * (kThreadsPerDevice - 1) * kKernels));
  for (int i = 0; i < kKernels; ++i)
    for (int j = 1; j < 2 * kThreadsPerDevice; ++j) EXPECT_EQ(keys[j * kKernels + i], keys[i]);
}

TEST(RuntimesPerDevice, WhatIsSharedGoesWithTheLastRuntime) {
  test::ScopedEnv off("TILEJIT_CACHE", "off");
  {
    Runtime rt(options_for(0));
    (void)rt.compile_elementwise(op_number(7), {});
    EXPECT_EQ(rt.stats().compiles, 1u);
  }
  Runtime later(options_for(1));  // no Runtime was left holding the cubin
  EXPECT_FALSE(later.compile_elementwise(op_number(7), {}).from_cache);
  EXPECT_EQ(later.stats().compiles, 1u);
  EXPECT_EQ(later.stats().shared_hits, 0u);
}

TEST(RuntimesPerDevice, AnotherArchIsAnotherKernel) {
  test::ScopedEnv off("TILEJIT_CACHE", "off");
  RuntimeOptions other = options_for(1);
  other.arch = "sm_80";
  Runtime hopper(options_for(0)), ampere(other);
  const auto a = hopper.compile_elementwise(op_number(3), {});
  const auto b = ampere.compile_elementwise(op_number(3), {});
  EXPECT_NE(a.key, b.key);
  EXPECT_EQ(ampere.stats().compiles, 1u);
  EXPECT_EQ(ampere.stats().shared_hits, 0u);
}

TEST(RuntimesPerDevice, AFailedCompileIsEachRuntimesOwnError) {
  test::ScopedEnv off("TILEJIT_CACHE", "off");
  Runtime first(options_for(0)), second(options_for(1));
  const KernelSource bad{.name = "broken", .text = "extern \"C\" __global__ void broken() { this is not C++; }\n"};
  EXPECT_THROW((void)first.compile_program(bad, {"broken"}), CompileError);
  EXPECT_THROW((void)second.compile_program(bad, {"broken"}), CompileError);
  EXPECT_EQ(builds(first.stats()) + builds(second.stats()), 0u);
}

TEST(RuntimesPerDevice, TheDiskCacheStillServesAFreshProcessesWorth) {
  // With the disk cache on, the first Runtime reads or compiles; the second shares what it got.
  test::TempDir cache;
  test::ScopedEnv dir("TILEJIT_CACHE_DIR", cache.path().string());
  {
    Runtime warm(options_for(0));
    (void)warm.compile_elementwise(op_number(11), {});
  }
  Runtime first(options_for(0)), second(options_for(1));
  EXPECT_TRUE(first.compile_elementwise(op_number(11), {}).from_cache);
  EXPECT_TRUE(second.compile_elementwise(op_number(11), {}).from_cache);
  EXPECT_EQ(first.stats().disk_hits, 1u);
  EXPECT_EQ(second.stats().disk_hits + second.stats().compiles, 0u);
  EXPECT_EQ(second.stats().shared_hits, 1u);
}

}  // namespace
}  // namespace tilejit
