// Many threads asking for one uncompiled kernel at once cause exactly one compile.
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <atomic>
#include <barrier>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace tilejit {
namespace {

TEST(SingleFlight, EightThreadsOneKeyOneCompile) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  ElementwiseOp op{.body = "z = sin(x) * cos(x) + 7.f", .inputs = {{"x", DType::f32}}, .outputs = {{"z", DType::f32}}};
  constexpr int kThreads = 8;
  std::barrier start(kThreads);
  std::vector<std::string> keys(kThreads);
  std::atomic<int> compiled_here{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      auto info = rt.compile_elementwise(op, {});
      keys[i] = info.key;
      compiled_here += !info.from_cache;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(rt.stats().compiles, 1u);
  EXPECT_EQ(rt.stats().memory_hits, static_cast<std::uint64_t>(kThreads - 1));
  EXPECT_EQ(compiled_here.load(), 1);
  for (const auto& k : keys) EXPECT_EQ(k, keys[0]);
}

TEST(SingleFlight, AFailedCompileReachesEveryWaiterAndCanBeRetried) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  // Valid for the validator, refused by NVRTC: a float constant out of range.
  ElementwiseOp bad{.body = "z = x + 1e99999f * y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}};
  constexpr int kThreads = 4;
  std::barrier start(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&] {
      start.arrive_and_wait();
      try {
        rt.compile_elementwise(bad, {});
      } catch (const CompileError&) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), kThreads);
  // The failure is not cached: a later call compiles (and fails) again.
  EXPECT_THROW(rt.compile_elementwise(bad, {}), CompileError);
}

TEST(Fork, RightAfterCreatingARuntimeTheChildCanCompile) {
  // The Runtime's background warm-up must not leave a lock held in a child process.
  for (int i = 0; i < 5; ++i) {
    RuntimeOptions o;
    o.arch = "sm_90a";
    Runtime rt(o);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::alarm(60);
      try {
        rt.compile_elementwise({.body = "z = x * 3.f", .inputs = {{"x", DType::f32}}, .outputs = {{"z", DType::f32}}}, {});
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
}

}  // namespace
}  // namespace tilejit
