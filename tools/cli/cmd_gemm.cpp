// `tilejit gemm`, `tilejit compile gemm`, `tilejit bench gemm`, `tilejit bench puzzle33`.
#include "commands.hpp"
#include "cublas.hpp"
#include "gemm_args.hpp"
#include "gemm_case.hpp"
#include "gpu_timing.hpp"
#include "op_from_expr.hpp"
#include "parallel_compile.hpp"

#include <tilejit/tooling.hpp>

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <tuple>

#include <unistd.h>

namespace tilejit::cli {
namespace {

int run_gemm(const GemmArgs& a) {
  Runtime rt;
  if (!require_device(rt, "gemm")) return kExitFailure;
  GemmCase gc(rt, problem_of(a, a.layout), a.bias, static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  auto cfg = config_of(a.config);
  GemmPlan plan = cfg ? rt.plan_gemm(gc.problem, *cfg) : rt.plan_gemm(gc.problem);
  fmt::print("gemm {}x{}x{} batch {} {}{} {} -> {}  config {} ({})  on {}\n", a.m, a.n, a.k, a.batch, a.dtype,
             a.b_dtype.empty() ? std::string() : " x " + a.b_dtype, a.layout,
             dtype_name(gc.problem.d.dtype), plan.config().to_string(), config_origin_name(plan.config_origin()), rt.device_info().name);
  plan.run();
  rt.synchronize();
  bool ok = true;
  if (a.check || !a.bench) {
    const double err = gc.relative_error();
    // The plan's problem: a configuration may fix the math (puzzle33 takes f32 as tf32).
    ok = err <= gemm_tolerance(plan.problem());
    fmt::print("check: relative error {:.3e} (tolerance {:.0e}): {}\n", err, gemm_tolerance(plan.problem()), ok ? "PASS" : "FAIL");
  }
  if (a.bench) {
    Timing t = time_launches([&](CUstream s) { plan.run(s); }, nullptr, 5, a.runs > 0 ? a.runs : 20);
    fmt::print("bench: median {:.4f} ms  {:.1f} TFLOP/s (a wait after each launch)\n", t.median_ms, tflops(gc.flops(), t.median_ms));
  }
  return ok ? 0 : kExitFailure;
}

int compile_gemm_cmd(const GemmArgs& a) {
  RuntimeOptions o;
  if (!a.arch.empty()) o.arch = a.arch;
  Runtime rt(o);
  GemmProblem p = problem_of(a, a.layout);
  with_stand_in_pointers(p, a.bias);
  auto cfg = config_of(a.config);
  CompiledKernelInfo info = rt.compile_gemm(p, cfg ? &*cfg : nullptr);
  print_compiled(info);
  if (a.source) fmt::print("options   {}\n--- source ---\n{}", fmt::join(info.options, " "), info.source);
  return 0;
}

// bench gemm --rotate: a case's A and B and count - 1 device copies of them (one: the case's own only).
constexpr int kMaxRotateCopies = 64;
struct InputCopies {
  std::vector<DeviceBuffer> buffers;
  std::vector<CUdeviceptr> a, b;
  InputCopies(Runtime& rt, const GemmCase& gc, std::size_t count, CUstream stream) {
    a.push_back(gc.problem.a.ptr), b.push_back(gc.problem.b.ptr);
    for (std::size_t i = 1; i < count; ++i) {
      for (const auto& [from, bytes, to] : {std::tuple{gc.problem.a.ptr, gc.a_bytes(), &a}, std::tuple{gc.problem.b.ptr, gc.b_bytes(), &b}}) {
        buffers.push_back(rt.alloc(bytes));
        tooling::check(tooling::driver().cuMemcpyDtoDAsync(buffers.back().ptr(), from, bytes, stream), "cuMemcpyDtoDAsync");
        to->push_back(buffers.back().ptr());
      }
    }
    if (count > 1) tooling::check(tooling::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
};
// --rotate auto: copies enough that the inputs a replayed group goes through are twice the L2 size,
// at most kMaxRotateCopies and a quarter of the device's memory.
int rotate_copies_for(const GemmCase& gc, std::size_t l2_bytes, std::size_t device_bytes) {
  const std::size_t one = gc.a_bytes() + gc.b_bytes();
  std::size_t n = one == 0 ? 1 : (2 * l2_bytes + one - 1) / one;
  n = std::clamp<std::size_t>(n, 1, kMaxRotateCopies);
  while (n > 1 && n * one > device_bytes / 4) --n;
  return static_cast<int>(n);
}

int bench_gemm(const GemmArgs& a) {
  if (a.rounds < 1) throw InvalidArgument(fmt::format("--rounds {}: expected 1 or more passes", a.rounds));
  if (a.runs < 0) throw InvalidArgument(fmt::format("--runs {}: expected 1 or more", a.runs));
  if (!(a.group_ms > 0)) throw InvalidArgument(fmt::format("--group-ms {}: expected a positive number of milliseconds", a.group_ms));
  const TimingMethod method = parse_timing_method(a.method);
  if (a.lt_accum != "fast" && a.lt_accum != "precise")
    throw InvalidArgument(fmt::format("--lt-accum '{}': expected fast or precise", a.lt_accum));
  // --rotate N: each side's launches take N copies of A and B in turn, so that a replayed group does
  // not find its inputs in L2 from the launch before (as in an application, where the next GEMM
  // reads other weights); auto: enough copies for twice the L2 size.
  int rotate_copies = 0;  // 0: auto
  if (a.rotate != "auto") {
    std::size_t used = 0;
    try {
      rotate_copies = std::stoi(a.rotate, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != a.rotate.size() || rotate_copies < 1 || rotate_copies > kMaxRotateCopies)
      throw InvalidArgument(fmt::format("--rotate '{}': expected a count of copies from 1 to {}, or auto", a.rotate, kMaxRotateCopies));
  }
  // --config A,B,...: each configuration ("default" for the heuristic's pick) on the same inputs,
  // every one timed beside cuBLAS in the same rounds, so configurations compare within one run.
  // Parsed before the device is looked for: a typo fails the same with or without a GPU.
  std::vector<std::optional<GemmConfig>> configs;
  for (const auto& one : split_commas(a.config.empty() ? std::string("default") : a.config))
    configs.push_back(config_of(one == "default" ? std::string() : one));
  const auto shapes = parse_shapes(a.shapes.empty() ? "1024x1024x1024,4096x4096x4096,8192x8192x8192,4096x4096x512,16x8192x8192,"
                                                      "128x8192x8192,1000x1000x1000,4095x4095x4095"
                                                    : a.shapes);
  const auto layouts = split_commas(a.layout == "NN" && a.shapes.empty() ? "NN,NT,TN,TT" : a.layout);
  for (const auto& lay : layouts) {
    if (lay.size() < 2) layout_of('?', lay);
    layout_of(lay[0], lay), layout_of(lay[1], lay), d_layout_of(lay);
  }
  // --epilogue A --epilogue B ...: each body (or "none") on the same inputs, timed beside the same
  // cuBLAS GEMM (no epilogue) in the same rounds: what an epilogue costs is the ratio's change.
  std::vector<std::string> epilogues = a.epilogues.empty() ? std::vector<std::string>{"none"} : a.epilogues;
  for (const auto& e : epilogues) {
    GemmArgs one = a;
    one.epilogues = {e};
    validate_gemm([&] {  // a bad body fails before the device is looked for
      GemmProblem p = problem_of(one, layouts.front());
      with_stand_in_pointers(p, a.bias);
      return p;
    }());
  }
  Runtime rt;
  if (!require_device(rt, "bench gemm")) return kExitFailure;
  Cublas cublas;
  // A stream of its own: the legacy default stream cannot be captured into a graph.
  const OwnStream own_stream;
  const CUstream stream = own_stream.get();
  MethodOptions mo;
  mo.group_ms = a.group_ms;
  mo.groups = a.runs > 0 ? a.runs : method == TimingMethod::synced ? 20 : 5;
  const double copy_gbs = copy_bandwidth_gbs(std::size_t{2} << 30, stream);
  const std::string how =
      method == TimingMethod::stream  ? fmt::format("method stream: groups of back-to-back launches (about {} ms of work) between two events, "
                                                    "median of {} groups",
                                                    a.group_ms, mo.groups)
      : method == TimingMethod::graph ? fmt::format("method graph: a group of launches (about {} ms of work) captured into a CUDA graph, "
                                                    "median of {} replays",
                                                    a.group_ms, mo.groups)
                                      : fmt::format("method synced: events around each launch and a wait after it, median of {}", mo.groups);
  const std::size_t l2_bytes = rt.device_info().l2_bytes;
  const std::string rotation =
      rotate_copies == 1 ? std::string()
                         : fmt::format("; A and B rotated through {} copies per side (L2 {} MiB)",
                                       rotate_copies == 0 ? std::string("enough") : std::to_string(rotate_copies), l2_bytes >> 20);
  fmt::print("tilejit vs cuBLAS, {} -> {}, {} on {}; {}; tilejit and cuBLAS alternating, {} warm-ups{}{}; device copy {:.0f} GB/s\n",
             a.b_dtype.empty() ? a.dtype : fmt::format("{} x {}", a.dtype, a.b_dtype),
             dtype_name([&] {
               GemmArgs plain = a;
               plain.epilogues.clear();
               return problem_of(plain, layouts.front()).d.dtype;
             }()),
             a.math, rt.device_info().name, how, 5,
             a.rounds > 1 ? fmt::format("; {} rounds over every shape, medians over the rounds, ratio range in brackets", a.rounds)
                          : std::string(),
             rotation, copy_gbs);
  fmt::print("{:<18} {:<5} {:>9} {:>9} {:>7}  {:>8}  {:>9}  {}\n", "shape", "lay", "tilejit", "cuBLAS", "ratio", "B GB/s", "rel.err",
             "config");
  // With several rounds every case is made and checked first; then each round times them all in
  // turn, so that drift of the clocks over minutes lands on every shape (and, alternating, on both
  // sides) alike. One round times each case right after making it, with one case in memory at a time.
  struct Case {
    std::string shape, layout, config, epilogue;
    double flops = 0, err = 0, b_bytes = 0;
    bool pass = true;
    std::shared_ptr<GemmCase> gc;  // shared by the configurations of one shape and layout
    // cuBLASLt: a bias+GELU epilogue's reference (its fused one), and 8-bit inputs' (cuBLAS has none).
    std::shared_ptr<CublasLt> lt;
    std::string lt_what;             // what the reference is, where it is cuBLASLt
    std::shared_ptr<GemmCase> lt_gc;  // the K-major problem cuBLASLt's 8-bit matmul runs where the case's layout is not
    bool no_reference = false;        // 8-bit inputs cuBLASLt refuses: tilejit timed alone
    std::unique_ptr<GemmPlan> plan;
    std::vector<double> ours_ms, ref_ms;
    // --rotate: the inputs (the case's own first, then their copies), a plan and a cuBLAS problem for
    // each, and the copy each side's next launch takes; lt_copies: those of lt_gc.
    std::shared_ptr<const InputCopies> copies, lt_copies;
    std::vector<std::unique_ptr<GemmPlan>> rotated_plans;  // copies 1.. (copy 0: plan)
    std::vector<GemmProblem> ref_problems;                  // cuBLAS, one per copy
    std::size_t ours_next = 0, ref_next = 0;
    int rotated() const { return static_cast<int>(copies->a.size()); }
    const GemmPlan& plan_for(std::size_t i) const { return i == 0 ? *plan : *rotated_plans[i - 1]; }
  };
  ProgressLine progress(static_cast<int>(shapes.size() * layouts.size() * configs.size() * epilogues.size()) *
                    (a.rounds > 1 ? a.rounds + 1 : 1));
  auto time_round = [&](Case& c) {
    progress.show(fmt::format("{} {} {}: timing", c.shape, c.layout, c.config));
    const std::size_t n = static_cast<std::size_t>(c.rotated());
    const auto [ours, ref] = time_methods_pair(method, [&](CUstream st) { c.plan_for(c.ours_next++ % n).run(st); },
                                               [&](CUstream st) {
                                                 const std::size_t i = c.ref_next++ % n;
                                                 if (c.no_reference) c.plan_for(i).run(st);  // tilejit on both sides
                                                 else if (c.lt) {
                                                   const InputCopies& x = c.lt_copies ? *c.lt_copies : *c.copies;
                                                   c.lt->run(st, x.a[i], x.b[i]);
                                                 } else cublas.gemm(c.ref_problems[i], st);
                                               },
                                               stream, mo);
    c.ours_ms.push_back(ours.median_ms), c.ref_ms.push_back(c.no_reference ? std::nan("") : ref.median_ms);
  };
  nlohmann::json rows = nlohmann::json::array();
  auto report = [&](const Case& c) {
    std::vector<double> ratios;  // tilejit's speed over cuBLAS's, per round
    for (std::size_t r = 0; r < c.ours_ms.size(); ++r) ratios.push_back(c.ref_ms[r] / c.ours_ms[r]);
    const double ours_ms = median(c.ours_ms), ref_ms = median(c.ref_ms), ratio = median(ratios);
    const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    const double t_ours = tflops(c.flops, ours_ms), t_ref = tflops(c.flops, ref_ms);
    // Bytes of B read per second: the measure of decode-like shapes (M <= 32), which stream B.
    const double b_gbs = c.b_bytes / (ours_ms * 1e-3) / 1e9;
    progress.clear();
    fmt::print("{:<18} {:<5} {:>9.1f} {:>9.1f} {:>7.3f}  {:>8.0f}  {:>9.2e}{} {}{}{}{}{}\n", c.shape, c.layout, t_ours, t_ref, ratio, b_gbs, c.err,
               c.pass ? " " : "!", c.config, a.rounds > 1 ? fmt::format("  [{:.3f}-{:.3f}]", *lo, *hi) : std::string(),
               c.rotated() > 1 ? fmt::format("  inputs x{}", c.rotated()) : std::string(),
               c.epilogue == "none" ? std::string() : fmt::format("  epilogue: {}", c.epilogue),
               c.lt || c.no_reference ? fmt::format(" ({})", c.lt_what) : std::string());
    std::fflush(stdout);
    rows.push_back({{"shape", c.shape}, {"layout", c.layout}, {"dtype", a.dtype}, {"math", a.math}, {"method", a.method},
                    {"tilejit_tflops", t_ours}, {"cublas_tflops", t_ref}, {"ratio", ratio}, {"tilejit_ms", ours_ms}, {"cublas_ms", ref_ms},
                    {"b_gbs", b_gbs}, {"copy_gbs", copy_gbs}, {"rel_error", c.err}, {"config", c.config}, {"rounds", a.rounds},
                    {"ratio_min", *lo}, {"ratio_max", *hi}, {"epilogue", c.epilogue}, {"rotate", c.rotated()}, {"reference", c.no_reference ? std::string("none") : c.lt ? "cublasLt: " + c.lt_what : std::string("cublas")}});
  };
  std::vector<Case> cases;
  bool ok = true;
  for (const auto& s : shapes)
    for (const auto& lay : layouts) {
     for (const auto& epilogue : epilogues) {
      GemmArgs one = a;
      one.m = s[0], one.n = s[1], one.k = s[2];
      one.epilogues = {epilogue};
      auto gc = std::make_shared<GemmCase>(rt, problem_of(one, lay), a.bias, 42);
      const int copies_wanted = rotate_copies > 0 ? rotate_copies : rotate_copies_for(*gc, l2_bytes, rt.device_info().total_memory);
      const auto copies = std::make_shared<const InputCopies>(rt, *gc, copies_wanted, stream);
      // bias + GELU (the fixed form, or the body that spells it) is timed beside cuBLASLt's fused
      // GELU_BIAS epilogue on the same bias, where cuBLASLt has one (a row-major D).
      std::string squeezed;
      for (char ch : epilogue)
        if (ch != ' ') squeezed += ch;
      const GemmProblem& gp = gc->problem;
      const bool bias_gelu = (squeezed == "d=gelu(acc+bias[n])" && gp.epilogue.vectors.size() == 1) ||
                             (epilogue == "none" && gp.epilogue.bias && gp.epilogue.activation == Activation::gelu);
      std::shared_ptr<CublasLt> lt;
      std::shared_ptr<GemmCase> lt_gc;
      std::string lt_what;
      const bool eight_bit = dtype_size(gp.a.dtype) == 1;
      if (eight_bit) {
        // cuBLAS has no 8-bit GEMM; cuBLASLt's takes K-major operands (A row-major, B column-major)
        // only: other layouts are timed beside it on the K-major problem of the same shape, which
        // is what a user of cuBLASLt would have to transpose into.
        const bool k_major = gp.a.layout == Layout::row_major && gp.b.layout == Layout::col_major;
        if (!k_major) {
          const std::string nt = std::string("NT") + lay.substr(2);
          lt_gc = std::make_shared<GemmCase>(rt, problem_of(one, nt), a.bias, 43);
        }
        try {
          const GemmProblem& lp = lt_gc ? lt_gc->problem : gp;
          lt = std::make_shared<CublasLt>(lp, bias_gelu ? (lp.epilogue.bias ? lp.epilogue.bias : lp.epilogue.vectors[0].ptr) : 0,
                                          bias_gelu ? (lp.epilogue.bias ? lp.epilogue.bias_dtype : lp.epilogue.vectors[0].dtype) : DType::f32,
                                          a.lt_accum == "fast");
          lt_what = fmt::format("vs cuBLASLt{}{}{}, {} accumulation", bias_gelu ? " bias+GELU" : "", k_major ? "" : " on NT",
                                lp.scale_mode == ScaleMode::blocks ? " with per-tensor scales" : "", a.lt_accum);
        } catch (const Error& e) {
          // Nothing to time beside (e.g. cuBLASLt refuses 4095^3): said, and tilejit timed alone.
          progress.clear();
          fmt::print("{}x{}x{} {}: no cuBLASLt reference (tilejit timed alone): {}\n", s[0], s[1], s[2], lay, e.what());
          lt_what = "no reference";
        }
      } else if (bias_gelu && gp.d.layout == Layout::row_major && gp.batch == 1 && gp.beta == 0.f) {
        const CUdeviceptr bias = gp.epilogue.bias ? gp.epilogue.bias : gp.epilogue.vectors[0].ptr;
        const DType bias_dtype = gp.epilogue.bias ? gp.epilogue.bias_dtype : gp.epilogue.vectors[0].dtype;
        try {
          lt = std::make_shared<CublasLt>(gp, bias, bias_dtype);
          lt_what = "vs cuBLASLt bias+GELU";
        } catch (const Error& e) {
          progress.clear();
          fmt::print("(cuBLASLt bias+GELU not available here, timed beside cuBLAS: {})\n", e.what());
        }
      }
      // The K-major problem cuBLASLt runs in place of an 8-bit case's layout takes as many copies.
      std::shared_ptr<const InputCopies> lt_copies =
          lt_gc ? std::make_shared<const InputCopies>(rt, *lt_gc, copies->a.size(), stream) : nullptr;
      for (const auto& cfg : configs) {
        Case c;
        c.epilogue = epilogue == "none" && gp.epilogue.bias ? fmt::format("fixed bias+{}", a.act) : epilogue;
        c.lt = lt, c.lt_gc = lt_gc, c.lt_what = lt_what;
        c.no_reference = eight_bit && !lt;
        c.shape = fmt::format("{}x{}x{}", s[0], s[1], s[2]);
        c.layout = lay;
        progress.show(fmt::format("{} {}: compiling and checking", c.shape, c.layout));
        c.gc = gc;
        c.plan = std::make_unique<GemmPlan>(cfg ? rt.plan_gemm(c.gc->problem, *cfg) : rt.plan_gemm(c.gc->problem));
        c.copies = copies;
        c.lt_copies = lt_copies;
        for (std::size_t i = 0; i < copies->a.size(); ++i) {
          GemmProblem q = c.gc->problem;
          q.a.ptr = copies->a[i], q.b.ptr = copies->b[i];
          c.ref_problems.push_back(q);
          // The plan's configuration for every copy (a heuristic's pick could differ with the pointers).
          if (i > 0) c.rotated_plans.push_back(std::make_unique<GemmPlan>(rt.plan_gemm(q, c.plan->config())));
        }
        c.config = c.plan->config().to_string();
        c.flops = c.gc->flops();
        c.b_bytes = static_cast<double>(s[1]) * s[2] * static_cast<double>(dtype_size(c.gc->problem.b.dtype)) * a.batch;
        c.gc->reset_output();  // the previous configuration's D must not pass for this one's
        c.plan->run(stream);
        tooling::check(tooling::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
        c.err = c.gc->relative_error(1 << 14);
        c.pass = c.err <= gemm_tolerance(c.plan->problem());
        ok = ok && c.pass;
        if (a.rounds == 1) {
          time_round(c);
          report(c);
          continue;
        }
        cases.push_back(std::move(c));
      }
     }
    }
  for (int r = 0; r < a.rounds && a.rounds > 1; ++r)
    for (auto& c : cases) time_round(c);
  for (const auto& c : cases) report(c);
  progress.clear();
  if (!a.out.empty()) {
    std::ofstream f(a.out);
    if (a.out.ends_with(".json")) {
      f << rows.dump(2) << "\n";
    } else {
      f << "shape,layout,dtype,math,method,tilejit_tflops,cublas_tflops,ratio,tilejit_ms,cublas_ms,b_gbs,copy_gbs,rel_error,config,rounds,"
           "ratio_min,ratio_max,epilogue,rotate\n";
      for (const auto& r : rows)
        f << fmt::format("{},{},{},{},{},{:.2f},{:.2f},{:.4f},{:.5f},{:.5f},{:.0f},{:.0f},{:.3e},{},{},{:.4f},{:.4f},\"{}\",{}\n",
                         r["shape"].get<std::string>(), r["layout"].get<std::string>(), r["dtype"].get<std::string>(),
                         r["math"].get<std::string>(), r["method"].get<std::string>(), r["tilejit_tflops"].get<double>(),
                         r["cublas_tflops"].get<double>(), r["ratio"].get<double>(), r["tilejit_ms"].get<double>(),
                         r["cublas_ms"].get<double>(), r["b_gbs"].get<double>(), r["copy_gbs"].get<double>(),
                         r["rel_error"].get<double>(), r["config"].get<std::string>(), r["rounds"].get<int>(),
                         r["ratio_min"].get<double>(), r["ratio_max"].get<double>(), r["epilogue"].get<std::string>(),
                         r["rotate"].get<int>());
    }
  }
  return ok ? 0 : kExitFailure;
}

int bench_puzzle33(const GemmArgs& a) {
  Runtime rt;
  if (!require_device(rt, "bench puzzle33")) return kExitFailure;
  Cublas cublas;
  GemmArgs base = a;
  base.m = base.n = base.k = 1024;
  base.dtype = "f32";
  GemmProblem exact = problem_of(base, "NN");
  base.math = "tf32";
  GemmProblem tf32 = problem_of(base, "NN");
  const int runs = a.runs > 0 ? a.runs : 20;
  fmt::print("puzzle 33 at 1024^3, f32 A, B, C row-major, on {}: CUDA events per launch (a wait after each), median of {}\n",
             rt.device_info().name, runs);
  fmt::print("{:<34} {:>10} {:>10} {:>11}  {}\n", "kernel", "ms", "TFLOP/s", "rel.err", "config");
  bool ok = true;
  double tiled_ms = 0, best_tf32_ms = 1e30;
  auto report = [&](const std::string& name, GemmCase& gc, const std::function<void(CUstream)>& launch, const std::string& config) {
    gc.reset_output();
    launch(nullptr);
    rt.synchronize();
    const double err = gc.relative_error(1 << 20);  // every output of 1024^2
    const bool pass = err <= gemm_tolerance(gc.problem);
    ok = ok && pass;
    Timing t = time_launches(launch, nullptr, 5, runs);
    fmt::print("{:<34} {:>10.4f} {:>10.2f} {:>11.3e}{} {}\n", name, t.median_ms, tflops(gc.flops(), t.median_ms), err, pass ? " " : "!", config);
    std::fflush(stdout);
    return t.median_ms;
  };
  GemmCase ge(rt, exact, false, 7), gt(rt, tf32, false, 7);
  auto run_cfg = [&](GemmCase& gc, const std::string& cfg) {
    GemmPlan plan = rt.plan_gemm(gc.problem, GemmConfig::parse(cfg));
    return std::make_pair(plan, plan.config().to_string());
  };
  {
    auto [plan, c] = run_cfg(ge, "puzzle33-tiled");
    tiled_ms = report("puzzle33-tiled (SIMT, seed)", ge, [&](CUstream s) { plan.run(s); }, c);
  }
  {
    auto [plan, c] = run_cfg(gt, "puzzle33");
    report("puzzle33 (mma tf32, seed)", gt, [&](CUstream s) { plan.run(s); }, c);
  }
  std::string best_tf32, best_exact;
  double best_exact_ms = 1e30;
  for (const char* c : {"mma:64x128x32:32x64:4", "mma:64x128x32:32x64:3", "mma:64x128x16:32x64:4", "mma:64x64x32:32x32:4",
                        "mma:128x64x32:64x32:4", "mma:128x128x32:64x64:3"}) {
    auto [plan, cs] = run_cfg(gt, c);
    double ms = report(std::string("tf32 candidate"), gt, [&](CUstream s) { plan.run(s); }, cs);
    if (ms < best_tf32_ms) best_tf32_ms = ms, best_tf32 = cs;
  }
  for (const char* c : {"simt:128x128x8:64x32:2", "simt:64x64x8:32x16:2", "simt:128x64x8:64x32:2", "simt:64x128x8:32x32:2",
                        "simt:128x128x16:64x32:2"}) {
    auto [plan, cs] = run_cfg(ge, c);
    double ms = report(std::string("exact fp32 candidate"), ge, [&](CUstream s) { plan.run(s); }, cs);
    if (ms < best_exact_ms) best_exact_ms = ms, best_exact = cs;
  }
  report("cuBLAS TF32", gt, [&](CUstream s) { cublas.gemm(gt.problem, s); }, "cublasGemmEx COMPUTE_32F_FAST_TF32");
  report("cuBLAS SGEMM", ge, [&](CUstream s) { cublas.gemm(ge.problem, s); }, "cublasGemmEx COMPUTE_32F");
  fmt::print("best tf32: {} at {:.4f} ms = {:.1f}x faster than puzzle33-tiled; best exact fp32: {} at {:.4f} ms\n", best_tf32,
             best_tf32_ms, tiled_ms / best_tf32_ms, best_exact, best_exact_ms);
  return ok ? 0 : kExitFailure;
}

}  // namespace

void register_gemm(CLI::App& app, CLI::App& compile, CLI::App& bench, Action& action) {
  auto r = std::make_shared<GemmArgs>();
  CLI::App* run = app.add_subcommand("gemm", "Run one GEMM on the GPU, check it against float64 and time it");
  add_problem_options(run, *r);
  run->add_option("--batch", r->batch, "Batch count (strided)");
  run->add_option("--alpha", r->alpha, "alpha");
  run->add_option("--beta", r->beta, "beta (C is a separate random matrix)");
  run->add_flag("--bias", r->bias, "Add a random per-column bias");
  run->add_option("--act", r->act, "Activation: none, relu, gelu, silu");
  run->add_option("--epilogue,-e", r->epilogues,
                  "An epilogue body, e.g. 'd = gelu(acc + bias[n]) * scale[m] + residual' (vectors name[m] / name[n], M x N "
                  "inputs and outputs besides d made with random values, checked against float64)");
  run->add_option("--scalar", r->scalars, "A scalar of the epilogue body: NAME=VALUE (f32) or NAME:DTYPE=VALUE");
  run->add_flag("--check", r->check, "Compare with a float64 host reference (default when --bench is not given)");
  run->add_flag("--bench", r->bench, "Time it (CUDA events, median)");
  run->add_option("--runs", r->runs, "Timed runs");
  run->callback([&action, r] { action = [r] { return run_gemm(*r); }; });

  auto c = std::make_shared<GemmArgs>();
  CLI::App* cg = compile.add_subcommand("gemm", "Compile a GEMM kernel (no GPU needed)");
  add_problem_options(cg, *c);
  cg->add_flag("--bias", c->bias, "With a bias");
  cg->add_option("--act", c->act, "Activation");
  cg->add_option("--epilogue,-e", c->epilogues, "An epilogue body (see tilejit gemm --help)");
  cg->add_option("--scalar", c->scalars, "A scalar of the epilogue body: NAME=VALUE");
  cg->add_option("--arch", c->arch, "Target architecture (default: TILEJIT_ARCH or the device's)");
  cg->add_flag("--source", c->source, "Print the options and the instantiated source");
  cg->callback([&action, c] { action = [c] { return compile_gemm_cmd(*c); }; });

  auto b = std::make_shared<GemmArgs>();
  CLI::App* bg = bench.add_subcommand("gemm", "tilejit and cuBLAS side by side on the same problems, in one run");
  add_problem_options(bg, *b);
  bg->add_option("--shapes", b->shapes, "MxNxK,... (default: 1024^3, 4096^3, 8192^3, 4096x4096x512, 16x8192x8192, 128x8192x8192, 1000^3, 4095^3)");
  bg->get_option("--config")->description(
      "Configurations to time, comma-separated: KIND:BMxBNxBK:WMxWN:STAGES, a preset, or default (the heuristic's pick); "
      "each runs on the same inputs beside cuBLAS in the same rounds (default: default)");
  bg->get_option("--layout")->description(
      "A then B: N row-major, T column-major, and optionally :r or :c for D (row-major by default), comma-separated: NN,NT:c,...");
  bg->add_option("--method", b->method,
                 "stream (default: groups of back-to-back launches on one stream), graph (CUDA graph replay of such a group) or "
                 "synced (a wait after each launch; hides fixed per-launch costs)");
  bg->add_option("--group-ms", b->group_ms, "stream and graph: launches per timed group, enough for about this many ms (default 50)");
  bg->add_option("--rotate", b->rotate,
                 "Copies of A and B each side's launches take in turn, so that a launch does not find them in L2 from the one "
                 "before: a count, or auto (enough for twice the L2 size); default 1");
  bg->add_option("--out", b->out, "Also write FILE.csv or FILE.json");
  bg->add_option("--lt-accum", b->lt_accum,
                 "8-bit inputs: cuBLASLt's accumulation, fast (in the tensor cores, as tilejit's kernels: default) or precise "
                 "(partial sums added in f32)");
  bg->add_flag("--bias", b->bias, "The fixed-form epilogue's per-column bias");
  bg->add_option("--act", b->act, "The fixed-form epilogue's activation: none, relu, gelu, silu");
  bg->add_option("--epilogue,-e", b->epilogues,
                 "An epilogue body, repeatable ('none': no epilogue); each is timed beside the same cuBLAS GEMM in the same rounds");
  bg->add_option("--scalar", b->scalars, "A scalar of the epilogue bodies: NAME=VALUE");
  bg->add_option("--runs", b->runs, "Timed groups per side (stream, graph; default 5) or launches (synced; default 20)");
  bg->add_option("--rounds", b->rounds,
                 "Passes over every shape and layout (default 1); with more, each figure is the median over the rounds and "
                 "the ratio's range is printed");
  bg->callback([&action, b] { action = [b] { return bench_gemm(*b); }; });

  auto z = std::make_shared<GemmArgs>();
  CLI::App* pz = bench.add_subcommand("puzzle33", "The seed's puzzle at 1024^3 f32: its two kernels, tilejit's best, cuBLAS");
  pz->add_option("--runs", z->runs, "Timed runs per kernel");
  pz->callback([&action, z] { action = [z] { return bench_puzzle33(*z); }; });
}

}  // namespace tilejit::cli
