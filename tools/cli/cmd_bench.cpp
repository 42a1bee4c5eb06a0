// `tilejit bench launch` (host overhead of a launch from the memory cache against a bare
// cuLaunchKernel of the same function) and `tilejit bench compile` (cold NVRTC compile times).
#include "commands.hpp"
#include "gemm_case.hpp"

#include <tilejit/tilejit.hpp>
#include <tilejit/tooling.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>
#include <string>
#include <optional>
#include <functional>

namespace tilejit::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_us, mean_us, p10_us, p90_us;
};
Stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return {v[v.size() / 2], mean, v[v.size() / 10], v[v.size() * 9 / 10]};
}

int bench_launch(int launches, bool gemm) {
  Runtime rt;
  if (!require_device(rt, "bench launch")) return kExitFailure;
  const auto& api = tooling::driver();
  ElementwiseOp op{.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}};
  const std::uint64_t n = 1024;  // one block: the GPU side is as short as a launch can be
  auto x = rt.alloc(n * 4), y = rt.alloc(n * 4), z = rt.alloc(n * 4);
  ElementwisePlan plan = rt.plan_elementwise(op);
  plan.run({x.ptr(), y.ptr()}, {z.ptr()}, n);
  rt.synchronize();

  // The same function the plan launches, for a bare cuLaunchKernel with the same parameters.
  CUfunction fn = plan.kernel().function();
  std::vector<std::byte> params = tooling::elementwise_arguments(plan, {x.ptr(), y.ptr()}, {z.ptr()}, n);
  void* args[] = {params.data()};
  const unsigned threads = static_cast<unsigned>(plan.config().threads);

  const CUdeviceptr ins[] = {x.ptr(), y.ptr()};
  const CUdeviceptr outs[] = {z.ptr()};
  std::vector<std::pair<std::string, std::function<void()>>> kinds = {
      {"bare cuLaunchKernel", [&] { tooling::check(api.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel"); }},
      {"ElementwisePlan::run", [&] { plan.run(std::span<const CUdeviceptr>(ins), std::span<const CUdeviceptr>(outs), n); }},
      {"Runtime::elementwise", [&] { rt.elementwise(op, std::span<const CUdeviceptr>(ins), std::span<const CUdeviceptr>(outs), n); }},
  };
  // GEMM: one 128x128x64 bf16 tile (NT), through its plan and through Runtime::gemm (signature hash,
  // plan lookup); on Hopper the wgmma kind, whose launch also passes three tensor maps.
  std::optional<GemmCase> gemm_case;
  std::optional<GemmPlan> gemm_plan;
  if (gemm) {
    GemmProblem shape;
    shape.m = shape.n = 128, shape.k = 64;
    shape.a = {0, DType::bf16, Layout::row_major};
    shape.b = {0, DType::bf16, Layout::col_major};
    shape.d = {0, DType::bf16, Layout::row_major};
    gemm_case.emplace(rt, shape, false, 7);
    gemm_plan.emplace(rt.plan_gemm(gemm_case->problem));
    gemm_plan->run();
    rt.synchronize();
    kinds.emplace_back(fmt::format("GemmPlan::run ({})", gemm_plan->config().to_string()), [&] { gemm_plan->run(); });
    kinds.emplace_back("Runtime::gemm", [&] { rt.gemm(gemm_case->problem); });
  }

  // Interleaved rounds so that clock or load drift hits every kind alike; the stream is drained
  // (untimed) between rounds so the launch queue never fills and every timing is host work only.
  std::vector<std::vector<double>> times(kinds.size());
  const int kRound = 250;
  for (int done = 0; done < launches; done += kRound) {
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      for (int i = 0; i < kRound; ++i) {
        auto t0 = Clock::now();
        kinds[k].second();
        times[k].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
      tooling::check(api.cuCtxSynchronize(), "cuCtxSynchronize");
    }
  }
  fmt::print("host time per launch over {} launches each (us): median / mean / p10 / p90, overhead = median - bare median\n",
             times[0].size());
  Stats b = summarize(times[0]);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    Stats s = summarize(times[k]);
    fmt::print("{:<22} {:7.3f} {:7.3f} {:7.3f} {:7.3f}  overhead {:+.3f}\n", kinds[k].first, s.median_us, s.mean_us, s.p10_us, s.p90_us,
               s.median_us - b.median_us);
  }
  return 0;
}

int bench_compile(const std::string& arch) {
  RuntimeOptions o;
  o.arch = arch;
  Runtime rt(o);
  // Distinct ops: the first compile of the process pays NVRTC's start-up too (that is the cold case).
  const std::vector<ElementwiseOp> ops_list = {
      {.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}},
      {.body = "z = x * alpha + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}},
       .scalars = {{"alpha", 2.f}}},
      {.body = "y = gelu(x)", .inputs = {{"x", DType::bf16}}, .outputs = {{"y", DType::bf16}}},
      {.body = "s = a + b; d = a - b", .inputs = {{"a", DType::f16}, {"b", DType::f16}}, .outputs = {{"s", DType::f16}, {"d", DType::f16}}},
  };
  fmt::print("NVRTC compile times for {} (process start-up included in the first):\n", arch);
  for (std::size_t i = 0; i < ops_list.size(); ++i) {
    auto t0 = Clock::now();
    auto info = rt.compile_elementwise(ops_list[i], {});
    double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    fmt::print("{:<44} {:8.1f} ms (NVRTC {:.1f} ms){}\n", info.program_name, wall, info.compile_ms, i == 0 ? "  <- cold" : "");
  }
  return 0;
}

// The first call of an op in a fresh process: plan (validation, configuration), then the first run
// (kernel key, memory miss, disk entry or compile, module load, launch). The device is set up first
// and not counted: a context exists in any process that launches anything.
// The steps of an op's first call in this process, timed one by one: plan (validation,
// configuration); the kernel from the JIT core (key, memory miss, disk entry verified, or a compile);
// the module loaded on the device; the launch.
struct FirstCallTimes {
  double plan = 0, lookup = 0, load = 0, launch = 0;
  bool disk_hit = false, compiled = false;
};
FirstCallTimes time_first_call(Runtime& rt, const ElementwiseOp& op, DevicePtrs in, DevicePtrs out, std::uint64_t n) {
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto before = rt.stats();
  const auto t0 = Clock::now();
  ElementwisePlan plan = rt.plan_elementwise(op);
  const auto t1 = Clock::now();
  Kernel kernel = plan.kernel();
  const auto t2 = Clock::now();
  kernel.function();
  const auto t3 = Clock::now();
  plan.run(in, out, n);
  const auto t4 = Clock::now();
  rt.synchronize();
  const auto after = rt.stats();
  return {ms(t1 - t0), ms(t2 - t1), ms(t3 - t2), ms(t4 - t3), after.disk_hits > before.disk_hits, after.compiles > before.compiles};
}

// A trivial module, loaded and unloaded before timing with --warm-loader: does the driver's first
// module load of a process cost more than the next ones?
constexpr const char* kWarmLoaderPtx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry tilejit_loader_warm_up() { ret; }
)";

int bench_first_call(bool warm_loader) {
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto c0 = Clock::now();
  Runtime rt;  // settings, templates, disk cache opened: no driver call yet
  const auto c1 = Clock::now();
  if (!require_device(rt, "bench first-call")) return kExitFailure;
  const std::uint64_t n = 1 << 20;
  auto x = rt.alloc(n * 4), y = rt.alloc(n * 4), z = rt.alloc(n * 4);
  rt.synchronize();
  double warm_ms = 0;
  if (warm_loader) {
    const auto w0 = Clock::now();
    tooling::make_current(rt);
    CUmodule m = nullptr;
    tooling::check(tooling::driver().cuModuleLoadData(&m, kWarmLoaderPtx), "cuModuleLoadData", "loader warm-up");
    tooling::driver().cuModuleUnload(m);
    warm_ms = ms(Clock::now() - w0);
  }
  ElementwiseOp op{.body = "z = x * alpha + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}},
                   .scalars = {{"alpha", 2.f}}};
  ElementwiseOp second{.body = "z = x - y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}};
  const FirstCallTimes a = time_first_call(rt, op, {x.ptr(), y.ptr()}, {z.ptr()}, n);
  const FirstCallTimes b = time_first_call(rt, second, {x.ptr(), y.ptr()}, {z.ptr()}, n);
  auto how = [](const FirstCallTimes& t) { return t.disk_hit ? "disk hit" : t.compiled ? "compiled" : "memory"; };
  fmt::print("{}: found and loaded in {:.3f} ms (plan {:.3f}, key + lookup {:.3f}, module load {:.3f}); first launch {:.3f} ms; "
             "first call {:.3f} ms; Runtime construction before it {:.3f} ms{}\n",
             how(a), a.plan + a.lookup + a.load, a.plan, a.lookup, a.load, a.launch, a.plan + a.lookup + a.load + a.launch, ms(c1 - c0),
             warm_loader ? fmt::format("; loader warm-up before it {:.3f} ms", warm_ms) : std::string());
  fmt::print("second op, {}: found and loaded in {:.3f} ms (plan {:.3f}, key + lookup {:.3f}, module load {:.3f}); launch {:.3f} ms\n",
             how(b), b.plan + b.lookup + b.load, b.plan, b.lookup, b.load, b.launch);
  return 0;
}

// A process's first compile, as a user meets it: Runtime, device set-up (cuInit, context, memory),
// then the first call of an op that is in no cache (compile, load, launch).
int bench_cold_call() {
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto t0 = Clock::now();
  Runtime rt;
  const auto t1 = Clock::now();
  if (!require_device(rt, "bench cold-call")) return kExitFailure;
  const std::uint64_t n = 1 << 20;
  auto x = rt.alloc(n * 4), y = rt.alloc(n * 4), z = rt.alloc(n * 4);
  rt.synchronize();
  const auto t2 = Clock::now();
  ElementwiseOp op{.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}};
  rt.elementwise(op, {x.ptr(), y.ptr()}, {z.ptr()}, n);
  rt.synchronize();
  const auto t3 = Clock::now();
  const auto st = rt.stats();
  fmt::print("Runtime {:.3f} ms, device set-up {:.1f} ms, first call {:.1f} ms ({}, NVRTC {:.1f} ms)\n", ms(t1 - t0), ms(t2 - t1),
             ms(t3 - t2), st.compiles ? "compiled" : st.disk_hits ? "disk hit" : "memory", st.compile_seconds * 1000);
  return 0;
}

}  // namespace

void register_bench(CLI::App& bench_app, Action& action) {
  CLI::App* bench = &bench_app;
  auto launches = std::make_shared<int>(10000);
  auto gemm = std::make_shared<bool>(false);
  CLI::App* launch = bench->add_subcommand("launch", "Host time of a launch from the memory cache vs a bare cuLaunchKernel");
  launch->add_option("--launches", *launches, "Launches of each kind");
  launch->add_flag("--gemm", *gemm, "Also a GEMM plan's and Runtime::gemm's launches (the bare launch stays the elementwise one)");
  launch->callback([&action, launches, gemm] { action = [launches, gemm] { return bench_launch(*launches, *gemm); }; });
  auto arch = std::make_shared<std::string>("sm_90a");
  CLI::App* compile = bench->add_subcommand("compile", "Cold and warm NVRTC compile times of elementwise kernels");
  compile->add_option("--arch", *arch, "Target architecture");
  compile->callback([&action, arch] { action = [arch] { return bench_compile(*arch); }; });
  CLI::App* cold = bench->add_subcommand("cold-call", "A fresh process's first call of an uncached op: device set-up, then compile, load, launch");
  cold->callback([&action] { action = [] { return bench_cold_call(); }; });
  CLI::App* first = bench->add_subcommand("first-call", "Time of an op's first call in this process (disk hit or compile)");
  auto warm_loader = std::make_shared<bool>(false);
  first->add_flag("--warm-loader", *warm_loader, "Load and unload a trivial module before timing");
  first->callback([&action, warm_loader] { action = [warm_loader] { return bench_first_call(*warm_loader); }; });
  register_bench_devices(*bench, action);
}

}  // namespace tilejit::cli
