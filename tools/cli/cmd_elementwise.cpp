// `tilejit elementwise` (run one operation, --check, --bench) and `tilejit compile elementwise`.
#include "commands.hpp"
#include "gpu_timing.hpp"
#include "host_data.hpp"
#include "op_from_expr.hpp"
#include "parallel_compile.hpp"

#include <tilejit/tooling.hpp>

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

namespace tilejit::cli {
namespace {

struct ElementwiseArgs {
  std::string expr;
  std::string dtype = "f32";
  std::string out_dtype;
  std::vector<std::string> scalars;
  std::uint64_t n = 1 << 20;
  bool check = false, bench = false, show_source = false;
  int threads = 0, vec = 0, tile = 0;
  std::uint64_t offset = 0;
  std::uint64_t seed = 0;
  int runs = 50;
  std::string arch;
};

void add_op_options(CLI::App* cmd, ElementwiseArgs& a) {
  cmd->add_option("--expr,-e", a.expr, "Body, e.g. 'z = x * alpha + y'; assigned names are outputs, others inputs")->required();
  cmd->add_option("--dtype,-t", a.dtype, "dtype of the inputs (and outputs unless --out-dtype): f32 f64 f16 bf16 i32 i64 i8 u8 e4m3 e5m2");
  cmd->add_option("--out-dtype", a.out_dtype, "dtype of the outputs");
  cmd->add_option("--scalar,-s", a.scalars, "Scalar parameter NAME=VALUE (f32) or NAME:DTYPE=VALUE (f32 f64 i32 i64)");
  cmd->add_option("--threads", a.threads, "Threads per block (0: choose)");
  cmd->add_option("--vec", a.vec, "Elements per vector access (0: 16 bytes)");
  cmd->add_option("--tile", a.tile, "Elements per block tile (0: choose)");
}

ElementwiseOp make_op(const ElementwiseArgs& a) {
  DType in = parse_dtype(a.dtype);
  DType out = a.out_dtype.empty() ? in : parse_dtype(a.out_dtype);
  return op_from_expression(a.expr, in, out, parse_scalars(a.scalars));
}

ElementwiseConfig make_config(const ElementwiseArgs& a) { return {a.threads, a.vec, a.tile}; }

int run_elementwise(const ElementwiseArgs& a) {
  const ElementwiseOp op = make_op(a);
  Runtime rt;
  if (!require_device(rt, "elementwise")) return kExitFailure;
  ElementwisePlan plan = rt.plan_elementwise(op, make_config(a));
  const auto& cfg = plan.config();
  const DeviceInfo& dev = rt.device_info();
  fmt::print("elementwise '{}'  n={}  inputs {}  outputs {}  tile={} threads={} vec={}  on {} ({})\n", op.body, a.n,
             a.dtype, a.out_dtype.empty() ? a.dtype : a.out_dtype, cfg.tile, cfg.threads, cfg.vector_width, dev.name,
             rt.target_arch());

  // Device operands, each offset by `offset` elements to exercise misaligned pointers.
  std::vector<DeviceBuffer> buffers;
  std::vector<CUdeviceptr> in_ptrs, out_ptrs;
  auto allocate = [&](const Operand& o) {
    const std::size_t es = dtype_size(o.dtype);
    buffers.push_back(rt.alloc((a.n + a.offset) * es));
    return buffers.back().ptr() + a.offset * es;
  };
  for (const auto& o : op.inputs) in_ptrs.push_back(allocate(o));
  for (const auto& o : op.outputs) out_ptrs.push_back(allocate(o));

  bool ok = true;
  const bool check = a.check || !a.bench;
  {
    // Fresh random inputs, poisoned outputs (0xFF bytes: NaN for floats, -1 for integers).
    std::vector<std::vector<unsigned char>> host_in;
    std::uint64_t seed = a.seed ? a.seed : static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      const std::size_t es = dtype_size(op.inputs[k].dtype);
      host_in.emplace_back(a.n * es);
      fill_random(op.inputs[k].dtype, host_in.back().data(), a.n, seed + k);
      buffers[k].upload(host_in.back().data(), a.n * es, a.offset * es);
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) buffers[op.inputs.size() + k].fill_bytes(0xFF);
    plan.run(in_ptrs, out_ptrs, a.n);
    rt.synchronize();
    if (check) {
      // Every element when n is moderate; otherwise 2^20 random elements plus the last 4096 (the tail).
      std::vector<std::size_t> idx;
      if (a.n <= (1u << 22)) {
        idx.resize(a.n);
        for (std::size_t i = 0; i < a.n; ++i) idx[i] = i;
      } else {
        std::mt19937_64 rng(seed);
        for (int i = 0; i < (1 << 20); ++i) idx.push_back(rng() % a.n);
        for (std::size_t i = a.n - 4096; i < a.n; ++i) idx.push_back(i);
      }
      std::vector<std::vector<unsigned char>> sin, sout, sref;
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        const std::size_t es = dtype_size(op.inputs[k].dtype);
        sin.emplace_back(idx.size() * es);
        for (std::size_t j = 0; j < idx.size(); ++j) std::memcpy(sin[k].data() + j * es, host_in[k].data() + idx[j] * es, es);
      }
      for (std::size_t k = 0; k < op.outputs.size(); ++k) {
        const std::size_t es = dtype_size(op.outputs[k].dtype);
        std::vector<unsigned char> full(a.n * es);
        buffers[op.inputs.size() + k].download(full.data(), a.n * es, a.offset * es);
        sout.emplace_back(idx.size() * es);
        for (std::size_t j = 0; j < idx.size(); ++j) std::memcpy(sout[k].data() + j * es, full.data() + idx[j] * es, es);
        sref.emplace_back(idx.size() * es);
      }
      std::vector<const void*> rin;
      std::vector<void*> rout;
      for (auto& v : sin) rin.push_back(v.data());
      for (auto& v : sref) rout.push_back(v.data());
      tooling::ElementwiseReference(op).run(rin, rout, idx.size());
      for (std::size_t k = 0; k < op.outputs.size(); ++k) {
        const DType t = op.outputs[k].dtype;
        const double err = relative_error(t, sout[k].data(), sref[k].data(), idx.size());
        const bool pass = err <= tolerance(t);
        ok = ok && pass;
        fmt::print("check: {} ({}) relative error {:.3e} over {} elements (tolerance {:.0e}): {}\n", op.outputs[k].name,
                   dtype_name(t), err, idx.size(), tolerance(t), pass ? "PASS" : "FAIL");
      }
    }
  }

  if (a.bench && a.n > 0) {
    std::size_t bytes = 0, largest = 0;
    for (const auto* list : {&op.inputs, &op.outputs})
      for (const auto& o : *list) bytes += a.n * dtype_size(o.dtype), largest = std::max(largest, a.n * dtype_size(o.dtype));
    Timing t = time_launches([&](CUstream s) { plan.run(in_ptrs, out_ptrs, a.n, s); }, nullptr, 5, a.runs);
    const double gbs = static_cast<double>(bytes) / (t.median_ms * 1e-3) / 1e9;
    const double copy = copy_bandwidth_gbs(std::max<std::size_t>(largest, 256u << 20), nullptr);
    fmt::print("bench: median {:.4f} ms (min {:.4f}, {} runs)  {:.1f} GB/s  device copy {:.1f} GB/s  ratio {:.3f}\n", t.median_ms,
               t.min_ms, t.runs, gbs, copy, gbs / copy);
  }
  return ok ? 0 : kExitFailure;
}

struct CompileArgs {
  ElementwiseArgs op;               // options shared with `tilejit elementwise`
  std::vector<std::string> exprs;   // several -e
  int jobs = 0;
};

// Every (expression, dtype, arch) combination, compiled in parallel; one kernel prints in detail.
int compile_elementwise(const CompileArgs& c) {
  std::vector<std::string> archs = split_commas(c.op.arch);
  if (archs.empty()) archs.push_back("");
  std::vector<std::string> dtypes = split_commas(c.op.dtype);
  std::vector<std::unique_ptr<Runtime>> runtimes;
  std::vector<CompileJob> jobs;
  for (const auto& arch : archs) {
    RuntimeOptions opts;
    if (!arch.empty()) opts.arch = arch;
    runtimes.push_back(std::make_unique<Runtime>(opts));
    Runtime* rt = runtimes.back().get();
    for (const auto& expr : c.exprs)
      for (const auto& dtype : dtypes) {
        ElementwiseArgs a = c.op;
        a.expr = expr;
        a.dtype = dtype;
        ElementwiseOp op = make_op(a);  // validates before any compile starts
        ElementwiseConfig cfg = make_config(a);
        jobs.push_back({fmt::format("{} [{}] {}", expr, dtype, arch.empty() ? rt->target_arch() : arch),
                        [rt, op, cfg] { return rt->compile_elementwise(op, cfg); }});
      }
  }
  if (jobs.size() == 1) {
    CompiledKernelInfo info = jobs[0].run();
    print_compiled(info);
    if (c.op.show_source) fmt::print("options   {}\n--- source ---\n{}", fmt::join(info.options, " "), info.source);
    return 0;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto outcomes = run_compile_jobs(jobs, c.jobs);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double sum_ms = 0;
  int failed = 0, cached = 0;
  for (const auto& o : outcomes) {
    if (!o.info) {
      ++failed;
      fmt::print(stderr, "FAILED {}: {}\n", o.label, o.error);
      continue;
    }
    cached += o.info->from_cache;
    sum_ms += o.info->compile_ms;
  }
  const int threads = c.jobs > 0 ? c.jobs : static_cast<int>(std::thread::hardware_concurrency());
  const int used = std::min<int>(threads, static_cast<int>(outcomes.size()));
  fmt::print("{} kernels in {:.2f} s {} ({} compiled, {} cached, {} failed; compile time summed {:.2f} s)\n", outcomes.size(), wall,
             used == 1 ? std::string("in this process") : fmt::format("on {} worker processes", used),
             outcomes.size() - cached - failed, cached, failed, sum_ms / 1000);
  return failed ? kExitFailure : 0;
}

}  // namespace

void register_elementwise(CLI::App& app, CLI::App& compile, Action& action) {
  auto args = std::make_shared<ElementwiseArgs>();
  CLI::App* run = app.add_subcommand("elementwise", "Run one elementwise operation on the GPU, check it and time it");
  add_op_options(run, *args);
  run->add_option("--n,-n", args->n, "Number of elements");
  run->add_flag("--check", args->check, "Compare with a float64 host reference (default when --bench is not given)");
  run->add_flag("--bench", args->bench, "Time it (CUDA events, median) beside the device's copy bandwidth");
  run->add_option("--offset", args->offset, "Offset every operand by this many elements (misaligned pointers)");
  run->add_option("--seed", args->seed, "Random seed (0: fresh)");
  run->add_option("--runs", args->runs, "Timed runs for --bench");
  run->callback([&action, args] { action = [args] { return run_elementwise(*args); }; });

  auto cargs = std::make_shared<CompileArgs>();
  CLI::App* c = compile.add_subcommand("elementwise", "Compile elementwise kernels, in parallel on all cores (no GPU needed)");
  c->add_option("--expr,-e", cargs->exprs, "Body (repeat for several)")->required();
  c->add_option("--dtype,-t", cargs->op.dtype, "dtype(s), comma-separated: f32,f16,...");
  c->add_option("--out-dtype", cargs->op.out_dtype, "dtype of the outputs");
  c->add_option("--scalar,-s", cargs->op.scalars, "Scalar parameter NAME=VALUE (f32) or NAME:DTYPE=VALUE");
  c->add_option("--threads", cargs->op.threads, "Threads per block (0: choose)");
  c->add_option("--vec", cargs->op.vec, "Elements per vector access (0: 16 bytes)");
  c->add_option("--tile", cargs->op.tile, "Elements per block tile (0: choose)");
  c->add_option("--arch", cargs->op.arch, "Target architecture(s), comma-separated, e.g. sm_80,sm_90a (default: TILEJIT_ARCH or the device's)");
  c->add_option("--jobs,-j", cargs->jobs, "Worker processes compiling in parallel (0: one per core, 1: in this process)");
  c->add_flag("--source", cargs->op.show_source, "Print the options and the instantiated source (one kernel)");
  c->callback([&action, cargs] { action = [cargs] { return compile_elementwise(*cargs); }; });
}

}  // namespace tilejit::cli
