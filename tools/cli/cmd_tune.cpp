// `tilejit tune gemm`: tunes the shape classes of a list of problems (Runtime::tune_gemm) after
// compiling every candidate in worker processes, and with --compare times each tuned configuration
// beside the heuristic's on real data, by the stream method, in the same run.
#include "commands.hpp"
#include "gemm_args.hpp"
#include "gemm_case.hpp"
#include "gpu_timing.hpp"
#include "parallel_compile.hpp"

#include <tilejit/tooling.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <thread>

#include <stdlib.h>

namespace tilejit::cli {
namespace {

struct TuneArgs {
  GemmArgs problem;
  std::string candidates;  // comma-separated configurations; empty: the library's set
  int workers = 0;         // compile processes (0: one per core)
  int rounds = GemmTuneOptions{}.rounds;  // tuning: the library's defaults
  double group_ms = GemmTuneOptions{}.group_ms;
  double margin = GemmTuneOptions{}.margin;
  bool retime = false, json = false, compare = false, all = false;
  int compare_rounds = 3;   // --compare: rounds over every problem
  double compare_ms = 30;   // --compare: work per timed group
};

int tune_gemm_cmd(const TuneArgs& a) {
  if (a.rounds < 1 || a.rounds > 100) throw InvalidArgument(fmt::format("--rounds {}: expected 1 to 100", a.rounds));
  if (a.compare_rounds < 1) throw InvalidArgument(fmt::format("--compare-rounds {}: expected 1 or more", a.compare_rounds));
  if (!(a.group_ms > 0) || !(a.compare_ms > 0)) throw InvalidArgument("--group-ms and --compare-ms: expected positive milliseconds");
  const auto shapes = parse_shapes(a.problem.shapes.empty() ? fmt::format("{}x{}x{}", a.problem.m, a.problem.n, a.problem.k) : a.problem.shapes);
  const auto layouts = split_commas(a.problem.layout);
  std::vector<GemmConfig> given;
  for (const auto& c : split_commas(a.candidates)) given.push_back(GemmConfig::parse(c));
  // Every problem first (a typo fails before the device is looked for).
  struct Item {
    std::string shape, layout;
    GemmArgs args;
    GemmProblem problem;  // stand-in pointers: tuning touches none
    std::optional<GemmTuneResult> result;
    std::string error;
    std::vector<double> tuned_ms, heuristic_ms;
    double err_tuned = 0, err_heuristic = 0;
    bool same = false;
  };
  std::vector<Item> items;
  for (const auto& s : shapes)
    for (const auto& lay : layouts) {
      Item it;
      it.args = a.problem;
      it.args.m = s[0], it.args.n = s[1], it.args.k = s[2];
      it.shape = fmt::format("{}x{}x{}", s[0], s[1], s[2]);
      it.layout = lay;
      it.problem = problem_of(it.args, lay);
      with_stand_in_pointers(it.problem, a.problem.bias);
      if (it.problem.beta != 0.f) it.problem.c.ptr = 1 << 23;  // a C of its own, as `tilejit gemm --beta` and --compare have
      validate_gemm(it.problem);
      items.push_back(std::move(it));
    }
  // The compile phase forks worker processes: no NVRTC warm-up thread may be inside NVRTC then (this
  // process compiles nothing itself; its kernels come from the workers through the disk cache).
  ::setenv("TILEJIT_NVRTC_WARMUP", "0", 1);
  Runtime rt;
  if (!require_device(rt, "tune gemm")) return kExitFailure;
  const std::string arch = rt.target_arch_specific();
  const int sms = rt.device_info().multiprocessors;

  // Compile every candidate of every problem in worker processes (into the disk cache, where the
  // tuner then finds them); configurations that make the same kernel for two problems once.
  const auto compile_start = std::chrono::steady_clock::now();
  std::vector<CompileJob> jobs;
  std::set<std::string> seen;
  for (const auto& it : items) {
    std::string kernel_class = gemm_shape_class(it.problem);
    kernel_class = kernel_class.substr(0, kernel_class.find(" m="));  // the sizes make no kernel of their own
    for (const auto& c : given.empty() ? gemm_tuning_candidates(it.problem, arch, sms) : given) {
      if (!seen.insert(kernel_class + " " + c.to_string()).second) continue;
      GemmProblem p = it.problem;
      jobs.push_back({fmt::format("{} {} {}", it.shape, it.layout, c.to_string()), [&rt, p, c] { return rt.compile_gemm(p, &c); }});
    }
  }
  if (!a.json) fmt::print("compiling {} candidate kernels for {} problem(s) on {} worker processes\n", jobs.size(), items.size(),
                          a.workers > 0 ? a.workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  std::size_t compiled = 0, cached = 0, failed = 0;
  for (const auto& o : run_compile_jobs(jobs, a.workers, !a.json)) {
    if (!o.info) ++failed;
    else if (o.info->from_cache) ++cached;
    else ++compiled;
  }
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  if (!a.json)
    fmt::print("compiled {} ({} from the cache, {} failed, left to the tuner to report) in {:.1f} s\n", compiled, cached, failed, compile_s);

  GemmTuneOptions o;
  o.candidates = given;
  o.rounds = a.rounds;
  o.group_ms = a.group_ms;
  o.margin = a.margin;
  o.retime = a.retime;
  ProgressLine progress(static_cast<int>(items.size()));
  if (!a.json)
    fmt::print("{:<18} {:<5} {:>4} {:>9} {:>9} {:>7} {:>7}  {:<34} {}\n", "shape", "lay", "cand", "heur ms", "tuned ms", "gain", "time s",
               "tuned config", "heuristic config");
  for (auto& it : items) {
    progress.show(fmt::format("{} {}: tuning", it.shape, it.layout));
    try {
      it.result = rt.tune_gemm(it.problem, o);
    } catch (const Error& e) {
      it.error = e.what();
    }
    progress.clear();
    if (a.json) continue;
    if (!it.result) {
      fmt::print("{:<18} {:<5} FAILED: {}\n", it.shape, it.layout, it.error);
      continue;
    }
    const auto& r = *it.result;
    fmt::print("{:<18} {:<5} {:>4} {:>9.4f} {:>9.4f} {:>7.3f} {:>7.1f}  {:<34} {}\n", it.shape, it.layout, r.measurements.size(), r.heuristic_ms,
               r.chosen_ms, r.chosen_ms > 0 ? r.heuristic_ms / r.chosen_ms : std::nan(""), r.compile_seconds + r.timing_seconds,
               r.chosen.to_string(), r.heuristic.to_string());
    if (a.all)
      for (const auto& m : r.measurements)
        fmt::print("    {:<40} {}\n", m.config.to_string(),
                   m.ok ? fmt::format("{:.4f} ms{}", m.ms, m.measured_now ? "" : " (cached)") : "FAILED: " + m.error);
    std::fflush(stdout);
  }

  // --compare: the tuned configuration beside the heuristic's on random data (checked against
  // float64), stream method, rounds over every problem so that drift lands on all alike.
  if (a.compare) {
    const OwnStream own_stream;
    const CUstream stream = own_stream.get();
    struct Live {
      Item* item;
      std::unique_ptr<GemmCase> gc;
      std::unique_ptr<GemmPlan> tuned, heuristic;
    };
    std::vector<Live> live;
    for (auto& it : items) {
      if (!it.result) continue;
      Live l{&it};
      GemmProblem shape = problem_of(it.args, it.layout);
      l.gc = std::make_unique<GemmCase>(rt, shape, a.problem.bias, 77);
      it.same = it.result->chosen == it.result->heuristic;
      l.tuned = std::make_unique<GemmPlan>(rt.plan_gemm(l.gc->problem, it.result->chosen));
      l.heuristic = std::make_unique<GemmPlan>(rt.plan_gemm(l.gc->problem, it.result->heuristic));
      for (auto [plan, err] : {std::pair{l.tuned.get(), &it.err_tuned}, std::pair{l.heuristic.get(), &it.err_heuristic}}) {
        l.gc->reset_output();
        plan->run(stream);
        tooling::check(tooling::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
        *err = l.gc->relative_error(1 << 14);
      }
      live.push_back(std::move(l));
    }
    MethodOptions mo;
    mo.group_ms = a.compare_ms;
    mo.groups = 3;
    for (int r = 0; r < a.compare_rounds; ++r)
      for (auto& l : live) {
        progress.show(fmt::format("{} {}: tuned vs heuristic, round {}", l.item->shape, l.item->layout, r + 1));
        if (l.item->same) continue;  // the same configuration: nothing to compare
        const auto [t, h] = time_methods_pair(TimingMethod::stream, [&](CUstream s) { l.tuned->run(s); }, [&](CUstream s) { l.heuristic->run(s); },
                                              stream, mo);
        l.item->tuned_ms.push_back(t.median_ms), l.item->heuristic_ms.push_back(h.median_ms);
      }
    progress.clear();
  }

  std::vector<double> ratios;
  nlohmann::json rows = nlohmann::json::array();
  bool ok = true;
  if (a.compare && !a.json)
    fmt::print("\ntuned vs heuristic, same run, stream method (groups of about {} ms, median of {} rounds x 3 groups):\n{:<18} {:<5} {:>10} "
               "{:>10} {:>7}  {:>9} {:>9}  {}\n",
               a.compare_ms, a.compare_rounds, "shape", "lay", "heur TF/s", "tuned TF/s", "ratio", "err heur", "err tuned", "tuned config");
  for (const auto& it : items) {
    nlohmann::json j = {{"shape", it.shape}, {"layout", it.layout}, {"dtype", a.problem.dtype}};
    if (!it.result) {
      j["error"] = it.error;
      ok = false;
      rows.push_back(j);
      continue;
    }
    const auto& r = *it.result;
    nlohmann::json ms = nlohmann::json::array();
    for (const auto& m : r.measurements)
      ms.push_back({{"config", m.config.to_string()}, {"ok", m.ok}, {"ms", m.ms}, {"error", m.error}, {"measured_now", m.measured_now}});
    j.update({{"class", r.shape_class}, {"key", r.key}, {"heuristic", r.heuristic.to_string()}, {"chosen", r.chosen.to_string()},
              {"heuristic_ms", r.heuristic_ms}, {"chosen_ms", r.chosen_ms}, {"why", r.why}, {"compiled", r.compiled},
              {"compile_seconds", r.compile_seconds}, {"timing_seconds", r.timing_seconds}, {"stored", r.stored}, {"measurements", ms}});
    if (a.compare) {
      const double flops = 2.0 * static_cast<double>(it.args.m) * it.args.n * it.args.k * it.args.batch;
      std::vector<double> rr;
      for (std::size_t i = 0; i < it.tuned_ms.size(); ++i) rr.push_back(it.heuristic_ms[i] / it.tuned_ms[i]);
      const double ratio = it.same ? 1.0 : median(rr);
      const double th = it.same ? std::nan("") : tflops(flops, median(it.heuristic_ms)), tt = it.same ? th : tflops(flops, median(it.tuned_ms));
      const GemmProblem shape = problem_of(it.args, it.layout);
      const bool pass = it.err_tuned <= gemm_tolerance(shape) && it.err_heuristic <= gemm_tolerance(shape);
      ok = ok && pass;
      ratios.push_back(ratio);
      j.update({{"compare_ratio", ratio}, {"compare_same_config", it.same}, {"heuristic_tflops", th}, {"tuned_tflops", tt},
                {"rel_error_tuned", it.err_tuned}, {"rel_error_heuristic", it.err_heuristic}});
      if (!a.json)
        fmt::print("{:<18} {:<5} {:>10.1f} {:>10.1f} {:>7.3f}  {:>9.2e} {:>9.2e}{} {}\n", it.shape, it.layout, th, tt, ratio, it.err_heuristic,
                   it.err_tuned, pass ? " " : "!", it.same ? "(the heuristic's: same configuration)" : r.chosen.to_string());
    }
    rows.push_back(j);
  }
  if (a.compare && !ratios.empty() && !a.json) {
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    const auto gained = std::count_if(ratios.begin(), ratios.end(), [](double x) { return x > 1.05; });
    fmt::print("{} problems: median ratio {:.3f}, lowest {:.3f}, highest {:.3f}; {} above 1.05\n", ratios.size(), median(ratios), sorted.front(),
               sorted.back(), gained);
  }
  if (a.json) fmt::print("{}\n", rows.dump(2));
  if (!a.problem.out.empty()) {
    std::ofstream f(a.problem.out);
    if (a.problem.out.ends_with(".json")) {
      f << rows.dump(2) << "\n";
    } else {
      f << "shape,layout,dtype,heuristic,chosen,heuristic_ms,chosen_ms,candidates,tune_seconds,compare_ratio,heuristic_tflops,tuned_tflops\n";
      for (const auto& r : rows) {
        if (r.contains("error")) continue;
        f << fmt::format("{},{},{},{},{},{:.5f},{:.5f},{},{:.2f},{:.4f},{:.1f},{:.1f}\n", r["shape"].get<std::string>(), r["layout"].get<std::string>(),
                         r["dtype"].get<std::string>(), r["heuristic"].get<std::string>(), r["chosen"].get<std::string>(),
                         r["heuristic_ms"].get<double>(), r["chosen_ms"].get<double>(), r["measurements"].size(),
                         r["compile_seconds"].get<double>() + r["timing_seconds"].get<double>(), r.value("compare_ratio", std::nan("")),
                         r.value("heuristic_tflops", std::nan("")), r.value("tuned_tflops", std::nan("")));
      }
    }
  }
  return ok ? 0 : kExitFailure;
}

}  // namespace

void register_tune(CLI::App& app, Action& action) {
  CLI::App* tune = app.add_subcommand("tune", "Tune GEMM configurations on the GPU; results go into the disk cache for later plans");
  tune->require_subcommand(1);
  auto t = std::make_shared<TuneArgs>();
  CLI::App* g = tune->add_subcommand("gemm", "Tune the shape classes of GEMM problems (see TILEJIT_AUTOTUNE)");
  add_problem_options(g, t->problem);
  g->get_option("--layout")->description("A then B: N row-major, T column-major, optionally :c for a column-major D; comma-separated");
  g->get_option("--config")->description("(not used here: see --candidates)");
  g->add_option("--shapes", t->problem.shapes, "MxNxK,... (default: --m x --n x --k)");
  g->add_option("--batch", t->problem.batch, "Batch count (strided)");
  g->add_option("--alpha", t->problem.alpha, "alpha");
  g->add_option("--beta", t->problem.beta, "beta (C is read)");
  g->add_flag("--bias", t->problem.bias, "With a per-column bias");
  g->add_option("--act", t->problem.act, "Activation: none, relu, gelu, silu");
  g->add_option("--epilogue,-e", t->problem.epilogues, "An epilogue body (see tilejit gemm --help)");
  g->add_option("--scalar", t->problem.scalars, "A scalar of the epilogue body: NAME=VALUE");
  g->add_option("--candidates", t->candidates, "Configurations to time, comma-separated (default: the library's candidate set)");
  g->add_option("--workers", t->workers, "Compile processes (default: one per core)");
  g->add_option("--rounds", t->rounds, "Pairs of timed groups (candidate, heuristic's) per candidate (default 3)");
  g->add_option("--group-ms", t->group_ms, "Work per timed group while tuning (default 10 ms)");
  g->add_option("--margin", t->margin, "How much faster than the heuristic's a configuration must be to replace it (default 0.05)");
  g->add_flag("--retime", t->retime, "Time again the candidates the cache has measured already");
  g->add_flag("--all", t->all, "Print every candidate's time");
  g->add_flag("--compare", t->compare, "Then time each tuned configuration beside the heuristic's on random data, stream method");
  g->add_option("--compare-rounds", t->compare_rounds, "--compare: rounds over every problem (default 3)");
  g->add_option("--compare-ms", t->compare_ms, "--compare: work per timed group (default 30 ms)");
  g->add_option("--out", t->problem.out, "Also write FILE.csv or FILE.json");
  g->add_flag("--json", t->json, "Print JSON (every measurement) instead of the tables");
  g->callback([&action, t] { action = [t] { return tune_gemm_cmd(*t); }; });
}

}  // namespace tilejit::cli
