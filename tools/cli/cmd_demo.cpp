// `tilejit demo`: the main job. With a GPU: runs, checks and times a few kernels. Without one:
// compiles the same kernels for sm_90a, lists them, and says why it did not launch.
#include "commands.hpp"
#include "gpu_timing.hpp"
#include "gemm_case.hpp"
#include "host_data.hpp"

#include <tilejit/tooling.hpp>

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>

#include <chrono>

namespace tilejit::cli {
namespace {

std::vector<ElementwiseOp> demo_ops() {
  return {
      {.body = "z = x + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}}, .name = "vector_add"},
      {.body = "z = x * alpha + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}},
       .scalars = {{"alpha", 2.5f}}, .name = "axpy"},
      {.body = "y = gelu(x)", .inputs = {{"x", DType::bf16}}, .outputs = {{"y", DType::bf16}}, .name = "gelu_bf16"},
      {.body = "s = a + b; d = a - b", .inputs = {{"a", DType::f16}, {"b", DType::f16}},
       .outputs = {{"s", DType::f16}, {"d", DType::f16}}, .name = "sum_diff_f16"},
      {.body = "y = float(q) * scale", .inputs = {{"q", DType::i8}}, .outputs = {{"y", DType::f32}},
       .scalars = {{"scale", 0.125f}}, .name = "dequant_i8"},
  };
}

GemmProblem demo_gemm_shape() {
  GemmProblem p;
  p.m = p.n = p.k = 2048;
  p.a = {0, DType::bf16, Layout::row_major};
  p.b = {0, DType::bf16, Layout::col_major};
  p.d = {0, DType::bf16, Layout::row_major};
  return p;
}

int demo_without_gpu(const std::string& why) {
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  fmt::print("tilejit demo: no GPU here; compiling the demo kernels for sm_90a\n");
  fmt::print("{:<36} {:>10} {:>12}  {}\n", "program", "cubin", "compile", "key");
  for (const auto& op : demo_ops()) {
    auto info = rt.compile_elementwise(op, {});
    fmt::print("{:<36} {:>8} B {:>12}  {}\n", info.program_name, info.cubin_bytes,
               info.from_cache ? std::string("cached") : fmt::format("{:.1f} ms", info.compile_ms), info.key);
  }
  GemmProblem g = demo_gemm_shape();
  g.a.ptr = g.b.ptr = g.d.ptr = 1 << 20;  // stand-ins, 256-byte aligned as cuMemAlloc's
  auto info = rt.compile_gemm(g);
  fmt::print("{:<36} {:>8} B {:>12}  {}\n", info.program_name, info.cubin_bytes,
             info.from_cache ? std::string("cached") : fmt::format("{:.1f} ms", info.compile_ms), info.key);
  fmt::print("not launched: {}\n", why);
  return 0;
}

int demo_with_gpu(Runtime& rt) {
  const std::uint64_t n = (1u << 24) + 3;  // 64 MiB of f32: past the 50-60 MB L2, with a tail
  fmt::print("tilejit demo on {} ({}), n = {}\n", rt.device_info().name, rt.target_arch(), n);
  fmt::print("{:<16} {:>10} {:>10} {:>11} {:>10}  {}\n", "op", "compile", "time", "GB/s", "rel.err", "result");
  bool ok = true;
  std::uint64_t seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (const auto& op : demo_ops()) {
    auto t0 = std::chrono::steady_clock::now();
    ElementwisePlan plan = rt.plan_elementwise(op);
    auto info = rt.compile_elementwise(op, {});
    double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::vector<DeviceBuffer> bufs;
    std::vector<CUdeviceptr> ins, outs;
    std::vector<std::vector<unsigned char>> host_in, host_out, ref;
    std::size_t bytes = 0;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      const std::size_t es = dtype_size(op.inputs[k].dtype);
      host_in.emplace_back(n * es);
      fill_random(op.inputs[k].dtype, host_in.back().data(), n, seed++);
      bufs.push_back(rt.alloc(n * es));
      bufs.back().upload(host_in.back().data(), n * es);
      ins.push_back(bufs.back().ptr());
      bytes += n * es;
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      const std::size_t es = dtype_size(op.outputs[k].dtype);
      bufs.push_back(rt.alloc(n * es));
      bufs.back().fill_bytes(0xFF);
      outs.push_back(bufs.back().ptr());
      host_out.emplace_back(n * es);
      ref.emplace_back(n * es);
      bytes += n * es;
    }
    plan.run(ins, outs, n);
    rt.synchronize();
    std::vector<const void*> rin;
    std::vector<void*> rout;
    for (auto& v : host_in) rin.push_back(v.data());
    for (auto& v : ref) rout.push_back(v.data());
    tooling::ElementwiseReference(op).run(rin, rout, n);
    double worst = 0;
    bool pass = true;
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      const DType t = op.outputs[k].dtype;
      bufs[op.inputs.size() + k].download(host_out[k].data(), host_out[k].size());
      double err = relative_error(t, host_out[k].data(), ref[k].data(), n);
      worst = std::max(worst, err);
      pass = pass && err <= tolerance(t);
    }
    Timing t = time_launches([&](CUstream s) { plan.run(ins, outs, n, s); }, nullptr, 3, 20);
    fmt::print("{:<16} {:>7.1f} ms {:>7.3f} ms {:>11.1f} {:>10.2e}  {}{}\n", op.name, compile_ms, t.median_ms,
               static_cast<double>(bytes) / (t.median_ms * 1e-3) / 1e9, worst, pass ? "ok" : "WRONG",
               info.from_cache ? "" : "");
    ok = ok && pass;
  }
  {
    // A bf16 GEMM, A row-major and B column-major, checked against float64 on sampled outputs.
    auto t0 = std::chrono::steady_clock::now();
    GemmCase gc(rt, demo_gemm_shape(), false, seed++);
    GemmPlan plan = rt.plan_gemm(gc.problem);
    plan.run();
    rt.synchronize();
    double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double err = gc.relative_error(1 << 14);
    const bool pass = err <= gemm_tolerance(gc.problem);
    Timing t = time_launches([&](CUstream s) { plan.run(s); }, nullptr, 3, 20);
    fmt::print("{:<16} {:>7.1f} ms {:>7.3f} ms {:>8.1f} TF/s {:>7.2e}  {}  ({} 2048^3 bf16, {})\n", "gemm_bf16", compile_ms, t.median_ms,
               gc.flops() / (t.median_ms * 1e-3) / 1e12, err, pass ? "ok" : "WRONG", "NT", plan.config().to_string());
    ok = ok && pass;
  }
  return ok ? 0 : kExitFailure;
}

}  // namespace

void register_demo(CLI::App& app, Action& action) {
  CLI::App* demo = app.add_subcommand("demo", "Run, check and time a few kernels (compile only when there is no GPU)");
  demo->callback([&action] {
    action = [] {
      Runtime rt;
      std::string why;
      if (!rt.has_device(&why)) return demo_without_gpu(why);
      return demo_with_gpu(rt);
    };
  });
}

}  // namespace tilejit::cli
