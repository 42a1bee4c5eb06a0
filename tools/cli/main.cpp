// tilejit: inspect the runtime, compile and run kernels, and manage the kernel cache.
#include "commands.hpp"

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>

#include <cstdio>

namespace tilejit::cli {
bool require_device(const Runtime& rt, const char* command) {
  std::string why;
  if (rt.has_device(&why)) return true;
  std::fprintf(stderr, "tilejit %s: cannot launch: %s\n", command, why.c_str());
  return false;
}
}  // namespace tilejit::cli

int main(int argc, char** argv) {
  using namespace tilejit;
  CLI::App app{fmt::format("tilejit {}: run-time specialised GEMM and elementwise kernels for NVIDIA GPUs", kVersionString),
               "tilejit"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersionString));
  cli::Action action;
  cli::register_info(app, action);
  CLI::App* compile = app.add_subcommand("compile", "Compile kernels without launching them (no GPU needed)");
  compile->require_subcommand(1);
  cli::register_elementwise(app, *compile, action);
  cli::register_kernel(*compile, action);
  cli::register_demo(app, action);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (GPU timings beside a same-run reference)");
  bench->require_subcommand(1);
  cli::register_bench(*bench, action);
  cli::register_gemm(app, *compile, *bench, action);
  cli::register_cache(app, action);
  cli::register_tune(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : cli::kExitUsage;
  }
  try {
    return action ? action() : 0;
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "tilejit: invalid argument: %s\n", e.what());
    return cli::kExitUsage;
  } catch (const CompileError& e) {
    std::fprintf(stderr, "tilejit: compile error: %s\n", e.what());
    return cli::kExitFailure;
  } catch (const DriverError& e) {
    std::fprintf(stderr, "tilejit: CUDA driver error: %s\n", e.what());
    return cli::kExitFailure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilejit: error: %s\n", e.what());
    return cli::kExitFailure;
  }
}
