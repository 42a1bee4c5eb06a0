// RAII owners for driver objects, and a compiled kernel loaded on one device.
#pragma once

#include <cuda.h>

#include <string>

namespace tilejit::jit {

// Owns a CUmodule; unloading errors in the destructor are logged, never thrown.
class Module {
 public:
  Module() = default;
  // Loads a cubin; throws DriverError naming the kernel and the device.
  Module(const std::string& cubin, const std::string& kernel_name, int device);
  Module(Module&& other) noexcept : module_(other.module_) { other.module_ = nullptr; }
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  CUmodule get() const noexcept { return module_; }
  CUfunction function(const std::string& lowered_name, int device) const;

 private:
  CUmodule module_ = nullptr;
};

}  // namespace tilejit::jit
