// Your own kernels through tilejit's JIT core: a source (text or file) with headers given by name,
// compile options and name expressions chosen at run time, compiled by NVRTC under the same kernel
// key, memory cache, disk cache, settings and dumps as the built-in operations, loaded on the
// runtime's device and launched with typed, checked arguments.
//
//   tilejit::KernelSource src{.name = "scale", .text = R"(
//       template <int Block, class T> __global__ void scale(T* y, const T* x, T a, int n) {
//         int i = blockIdx.x * Block + threadIdx.x;
//         if (i < n) y[i] = a * x[i];
//       })"};
//   tilejit::Program prog = rt.program(src, {"scale<256, float>"});   // compiles once, then cached
//   tilejit::Kernel k = prog.kernel("scale<256, float>");
//   k.launch({.grid = {(n + 255) / 256}, .block = {256}}, stream, y.ptr(), x.ptr(), 2.0f, n);
//
// Device code may include the tile API and the arch helpers from the library's own headers:
// `#include <tilejit/tile.cuh>` (spans, partition views, masked loads and stores: the CUDA Tile C++
// model on CUDA 13.0), `<tilejit/mma_sm80.cuh>`, `<tilejit/sm90.cuh>`, `<tilejit/grid_dependency.cuh>`.
//
// The built-in operations are clients of this same API: an ElementwisePlan or a GemmPlan hands out
// the Kernel it launches (plan.kernel()), with the same attributes and argument checks.
#pragma once

#include <tilejit/info.hpp>

#include <cuda.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tilejit {

// A header the source includes by `name` (`#include "name"` or `#include <name>`).
struct KernelHeader {
  std::string name;
  std::string text;
};

struct KernelSource {
  std::string name = "user_kernel";  // names the program in NVRTC's log, dumps and cache listings
  std::string text;
  std::vector<KernelHeader> headers;
  // Extra NVRTC options, e.g. "-DBLOCK=256", "--use_fast_math", "-lineinfo" (the target and the
  // library's include paths are added by tilejit).
  std::vector<std::string> options;
  // The source in `path` (its name: the file name without extension) and `headers`, each included
  // by its file name. Throws InvalidArgument naming a file that cannot be read.
  static KernelSource from_file(const std::filesystem::path& path, const std::vector<std::filesystem::path>& headers = {});
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct LaunchConfig {
  Dim3 grid, block;
  unsigned shared_bytes = 0;  // dynamic shared memory per block
  Dim3 cluster;               // blocks per cluster (sm_90+); 1 x 1 x 1: no cluster
  // Programmatic dependent launch (sm_90+): the kernel may start before the previous one on the
  // stream ends, so it must call tilejit::wait_for_prior_grids() (<tilejit/grid_dependency.cuh>)
  // before it touches memory the previous kernels write or read.
  bool programmatic = false;
};

struct KernelAttributes {
  int registers = 0;                // per thread
  int static_shared_bytes = 0;
  int max_dynamic_shared_bytes = 0;  // what a launch may ask for now (see Kernel::set_max_dynamic_shared_bytes)
  int local_bytes = 0;               // per thread (spills, local arrays)
  int max_threads_per_block = 0;
  std::vector<std::size_t> parameter_sizes;  // bytes of each parameter, in order
};

namespace detail {
struct ProgramState;
struct ProgramAccess;
}  // namespace detail

// One kernel of a Program: its module loads on the runtime's device at first use.
class Kernel {
 public:
  const std::string& name() const noexcept;    // the name expression, e.g. "scale<256, float>"
  const std::string& symbol() const noexcept;  // its lowered (mangled) name in the cubin
  // Throws DriverError where there is no usable device.
  const KernelAttributes& attributes() const;
  // The driver's handle, the module loaded on the runtime's device at first use, for calling the
  // driver yourself (cuLaunchKernel, cuOccupancy*); throws DriverError where there is no usable device.
  CUfunction function() const;
  // Raises the dynamic shared memory a launch may ask for (above 48 KB needs this).
  void set_max_dynamic_shared_bytes(int bytes) const;

  // Launches with these arguments, copied as bytes: their number and sizes must match the kernel's
  // parameters, or InvalidArgument says which one differs, before anything is launched. Pass device
  // pointers as CUdeviceptr or typed pointers, scalars as the parameter's exact type (an int for an
  // int, a 2.0f for a float).
  template <class... Args> void launch(const LaunchConfig& config, CUstream stream, const Args&... args) const {
    static_assert((std::is_trivially_copyable_v<Args> && ...), "kernel arguments are copied as bytes: pass trivially copyable values");
    const void* values[] = {static_cast<const void*>(&args)..., nullptr};
    const std::size_t sizes[] = {sizeof(Args)..., 0};
    launch_packed(config, stream, values, sizes, sizeof...(Args));
  }
  // The same with the arguments' addresses and sizes given by the caller.
  void launch_packed(const LaunchConfig& config, CUstream stream, const void* const* values, const std::size_t* sizes,
                     std::size_t count) const;

 private:
  friend class Program;
  friend struct detail::ProgramAccess;
  Kernel(std::shared_ptr<detail::ProgramState> program, std::size_t index) : program_(std::move(program)), index_(index) {}
  std::shared_ptr<detail::ProgramState> program_;
  std::size_t index_;
};

// A compiled source and the kernels it exports (one per name expression, compiled together).
class Program {
 public:
  // Throws InvalidArgument when `name_expression` is not one the program was made with.
  Kernel kernel(std::string_view name_expression) const;
  const std::vector<std::string>& name_expressions() const noexcept;
  // What was compiled: program name, symbols, arch, key, cubin size, whether a cache served it.
  const CompiledKernelInfo& info() const noexcept;

 private:
  friend struct detail::ProgramAccess;
  explicit Program(std::shared_ptr<detail::ProgramState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ProgramState> state_;
};

}  // namespace tilejit
