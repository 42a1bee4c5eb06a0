// Compiles many kernels on all cores for `tilejit compile`: a progress bar on a terminal, plain
// lines otherwise.
#pragma once

#include <tilejit/runtime.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::cli {

struct CompileJob {
  std::string label;
  std::function<CompiledKernelInfo()> run;
};

struct CompileOutcome {
  std::string label;
  std::optional<CompiledKernelInfo> info;
  std::string error;  // when info is empty
};

// Runs the jobs on `threads` threads (0: every core) and returns their outcomes in job order.
std::vector<CompileOutcome> run_compile_jobs(const std::vector<CompileJob>& jobs, int threads);

}  // namespace tilejit::cli
