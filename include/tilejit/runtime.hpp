// tilejit::Runtime: one CUDA device, its kernel caches and its settings.
#pragma once

#include <tilejit/info.hpp>

#include <cuda.h>  // CUdeviceptr, CUstream (a cudaStream_t is the same handle)

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tilejit {

struct ElementwiseOp;
struct ElementwiseConfig;
class ElementwisePlan;
struct GemmProblem;
struct GemmConfig;
class GemmPlan;
struct GemmTuneOptions;
struct GemmTuneResult;
struct KernelSource;
class Program;
namespace detail {
struct RuntimeAccess;
}

// A non-owning list of device pointers: `{x.ptr(), y.ptr()}`, a std::vector or a std::span.
class DevicePtrs {
 public:
  // The list's array lives until the end of the full expression holding the call, which is as long
  // as a DevicePtrs argument is used: the library never stores one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  DevicePtrs(std::initializer_list<CUdeviceptr> list) noexcept : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  DevicePtrs(std::span<const CUdeviceptr> span) noexcept : data_(span.data()), size_(span.size()) {}
  DevicePtrs(const std::vector<CUdeviceptr>& v) noexcept : data_(v.data()), size_(v.size()) {}
  const CUdeviceptr* begin() const noexcept { return data_; }
  const CUdeviceptr* end() const noexcept { return data_ + size_; }
  std::size_t size() const noexcept { return size_; }
  CUdeviceptr operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  const CUdeviceptr* data_;
  std::size_t size_;
};

// Device memory owned by this object (freed in the destructor, which never throws).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr ptr() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }
  // Synchronous copies; offset and size are checked against the allocation.
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  // Fills every byte with `value` (synchronous).
  void fill_bytes(unsigned char value);

 private:
  friend class Runtime;
  DeviceBuffer(CUdeviceptr ptr, std::size_t bytes, CUcontext ctx, int device) noexcept
      : ptr_(ptr), bytes_(bytes), ctx_(ctx), device_(device) {}
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
  CUcontext ctx_ = nullptr;
  int device_ = -1;
};

struct RuntimeOptions {
  std::optional<int> device;       // default: TILEJIT_DEVICE, else 0
  std::optional<std::string> arch; // default: TILEJIT_ARCH, else from the device
};

class Runtime {
 public:
  // Reads TILEJIT_* settings (a bad value throws InvalidArgument). Touches no driver: a Runtime
  // works on a machine without a GPU for everything except allocation and launches.
  Runtime();
  explicit Runtime(const RuntimeOptions& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // True when a driver and the selected device are usable; `why` gets the reason otherwise.
  bool has_device(std::string* why = nullptr) const;
  // Throws DriverError when there is no usable device.
  const DeviceInfo& device_info() const;
  int device_ordinal() const noexcept;
  // Target architecture for kernels that use no architecture-specific features (e.g. "sm_90");
  // TILEJIT_ARCH or RuntimeOptions::arch override it.
  std::string target_arch() const;
  // Target for kernels that need arch-specific instructions (wgmma, setmaxnreg): "sm_90a" on Hopper.
  std::string target_arch_specific() const;

  DeviceBuffer alloc(std::size_t bytes);
  void synchronize(CUstream stream = nullptr);

  // outputs = body(inputs, scalars) over n elements. See elementwise.hpp.
  void elementwise(const ElementwiseOp& op, DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n,
                   CUstream stream = nullptr);
  ElementwisePlan plan_elementwise(const ElementwiseOp& op);
  ElementwisePlan plan_elementwise(const ElementwiseOp& op, const ElementwiseConfig& config);
  // Compiles (or finds in a cache) the kernel a launch with this alignment would use, without a GPU.
  CompiledKernelInfo compile_elementwise(const ElementwiseOp& op, const ElementwiseConfig& config);

  // D = act(alpha * A * B + beta * C + bias). See gemm.hpp. TILEJIT_GEMM_CONFIG forces the configuration.
  void gemm(const GemmProblem& problem, CUstream stream = nullptr);
  GemmPlan plan_gemm(const GemmProblem& problem);
  GemmPlan plan_gemm(const GemmProblem& problem, const GemmConfig& config);
  // Compiles the kernel plan_gemm would use, without a GPU (TILEJIT_ARCH or RuntimeOptions::arch).
  CompiledKernelInfo compile_gemm(const GemmProblem& problem, const GemmConfig* config = nullptr);
  // Times candidate configurations for the problem's shape class on this device and keeps the fastest
  // in the disk cache for later plans (see "tuning" in gemm.hpp). The problem's memory is never
  // touched: the tuner runs on scratch buffers of its own. Synchronizes the device's work it queued.
  GemmTuneResult tune_gemm(const GemmProblem& problem);
  GemmTuneResult tune_gemm(const GemmProblem& problem, const GemmTuneOptions& options);

  // Your own kernels (see kernel.hpp): compiled by NVRTC for this runtime's device (its
  // arch-specific target, e.g. sm_90a, or TILEJIT_ARCH / RuntimeOptions::arch), served by the same
  // memory and disk caches as the built-in kernels. All name expressions compile in one program.
  Program program(const KernelSource& source, const std::vector<std::string>& name_expressions);
  // The same without a GPU, for `arch` (default: as program()); fills the caches.
  CompiledKernelInfo compile_program(const KernelSource& source, const std::vector<std::string>& name_expressions,
                                     const std::string& arch = {});

  RuntimeStats stats() const;

 private:
  struct Impl;
  friend struct detail::RuntimeAccess;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tilejit
