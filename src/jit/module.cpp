#include "jit/module.hpp"

#include "jit/driver.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

namespace tilejit::jit {

Module::Module(const std::string& cubin, const std::string& kernel_name, int device) {
  check(driver().cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData", device,
        fmt::format("kernel {}, cubin {} bytes", kernel_name, cubin.size()));
}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    this->~Module();
    module_ = other.module_;
    other.module_ = nullptr;
  }
  return *this;
}

Module::~Module() {
  if (module_ == nullptr) return;
  std::string why;
  if (!driver_available(&why)) return;
  CUresult r = driver().cuModuleUnload(module_);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_DEINITIALIZED)
    util::log().warn("cuModuleUnload failed with CUresult {}", static_cast<int>(r));
  module_ = nullptr;
}

CUfunction Module::function(const std::string& lowered_name, int device) const {
  CUfunction fn = nullptr;
  check(driver().cuModuleGetFunction(&fn, module_, lowered_name.c_str()), "cuModuleGetFunction", device,
        fmt::format("symbol {}", lowered_name));
  return fn;
}

}  // namespace tilejit::jit
