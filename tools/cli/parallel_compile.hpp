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

// Runs the jobs on `workers` worker processes (0: one per core; 1: in this process) and returns their
// outcomes in job order. Workers publish to the disk cache; only a summary comes back. `progress`:
// a bar on a terminal, a line per kernel otherwise (on stdout); false: nothing printed.
std::vector<CompileOutcome> run_compile_jobs(const std::vector<CompileJob>& jobs, int workers, bool progress = true);

}  // namespace tilejit::cli
