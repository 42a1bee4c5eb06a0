// Programs on the JIT core: a KernelSource (include/tilejit/kernel.hpp) becomes a KernelRequest,
// served by the context's memory and disk caches, and comes back as a public Program whose Kernels
// load on the context's device and launch with checked arguments. Users' programs (Runtime::program)
// and the library's own operations (src/ops) go through these same functions; what differs is only
// how a program is labelled in cache listings and whether it takes the library's minimal options.
#pragma once

#include "jit/context.hpp"
#include "jit/kernel_cache.hpp"

#include <tilejit/kernel.hpp>

#include <memory>
#include <string>
#include <vector>

namespace tilejit::jit {

struct ProgramLabels {
  std::string family = "user";  // "elementwise", "gemm", "gemm_pack" for the library's own
  std::string dtypes;           // cache listings, e.g. "f32,f32->f32"
  std::string config;           // cache listings; empty: "<n> kernel(s)"
  // The library's templates use no textures or device printf: their options leave those out
  // (NvrtcCompiler::options, minimal), which compiles faster.
  bool library_options = false;
};

// The request for `source` exporting `names`, compiled for `arch`. The library templates the source
// and its headers include are found by name: their closures go to NVRTC and their digests into the
// key. Throws InvalidArgument for an empty source, no or duplicate name expressions, or a header
// without a name or given twice.
KernelRequest program_request(const Context& jit, const KernelSource& source, const std::vector<std::string>& names,
                              const std::string& arch, const ProgramLabels& labels = {});

// The program, compiled or from a cache; its kernels load on the context's device at first use.
// `compiled` (optional) is set to whether this call compiled it.
Program make_program(const std::shared_ptr<Context>& jit, const KernelRequest& request, bool* compiled = nullptr);

// The same without loading anything: what was compiled, for the compile-only entry points.
CompiledKernelInfo compile_program(Context& jit, const KernelRequest& request);

}  // namespace tilejit::jit
