#include "jit/driver.hpp"

#include "util/log.hpp"
#include "util/settings.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <dlfcn.h>

#include <mutex>

namespace tilejit::jit {
namespace {

struct LoadedDriver {
  DriverApi api;
  bool ok = false;
  std::string why;  // reason when !ok
};

const char* kNoGpuHint =
    "compiling, caching and the CLI's compile commands still work without a GPU (set TILEJIT_ARCH, e.g. sm_90a)";

std::string driver_library() {
  try {
    return util::Settings::from_environment().driver_library;
  } catch (const std::exception&) {
    // A bad unrelated variable is reported by the Runtime; the driver still loads from the default.
    return "libcuda.so.1";
  }
}

LoadedDriver load_driver() {
  LoadedDriver d;
  const std::string library = driver_library();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    d.why = fmt::format("no CUDA driver: dlopen(\"{}\") failed ({}); {}", library, err ? err : "unknown error",
                        kNoGpuHint);
    return d;
  }
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get_proc = reinterpret_cast<GetProc>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    d.why = fmt::format("the CUDA driver in {} is too old: it has no cuGetProcAddress_v2 (need a CUDA 12+ driver)",
                        library);
    return d;
  }
  std::string missing;
  auto resolve = [&](const char* name, void** slot, int version) {
    CUdriverProcAddressQueryResult status{};
    CUresult r = get_proc(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r != CUDA_SUCCESS || *slot == nullptr) {
      *slot = nullptr;
      missing += missing.empty() ? name : fmt::format(", {}", name);
    }
  };
#define TILEJIT_DRIVER_ENTRY(name, version) resolve(#name, reinterpret_cast<void**>(&d.api.name), version);
#include "jit/driver_entries.inc"
#undef TILEJIT_DRIVER_ENTRY
  if (!missing.empty()) {
    d.why = fmt::format("the CUDA driver in {} lacks {} (CUDA {} or newer needed)", library, missing,
                        CUDA_VERSION / 1000);
    return d;
  }
  CUresult r = d.api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.api.cuGetErrorName(r, &name);
    d.why = fmt::format("cuInit failed with {} ({}): no usable GPU; {}", name ? name : "?", static_cast<int>(r),
                        kNoGpuHint);
    return d;
  }
  d.api.cuDriverGetVersion(&d.api.driver_version);
  d.ok = true;
  util::log().debug("loaded CUDA driver {} from {}", d.api.driver_version, library);
  return d;
}

const LoadedDriver& loaded() {
  static const LoadedDriver d = load_driver();
  return d;
}

}  // namespace

const DriverApi& driver() {
  const LoadedDriver& d = loaded();
  if (!d.ok) throw DriverError(d.why, "dlopen/cuInit", -1, "CUDA_ERROR_NO_DEVICE", -1);
  return d.api;
}

bool driver_library_present() {
  // Once per process, as the driver itself is loaded once; kept open: loading the driver opens it
  // again, which then costs a reference count.
  static const bool present = dlopen(driver_library().c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr;
  return present;
}

bool driver_available(std::string* why) {
  const LoadedDriver& d = loaded();
  if (!d.ok && why) *why = d.why;
  return d.ok;
}

void check(CUresult result, const char* call, int device, const std::string& context) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  const DriverApi& api = loaded().api;
  if (api.cuGetErrorName) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(result, &text);
  std::string where = device >= 0 ? fmt::format(" on device {}", device) : std::string();
  std::string msg = fmt::format("{} failed{}: {} ({}): {}", call, where, name ? name : "unknown CUresult",
                                static_cast<int>(result), text ? text : "no description");
  if (!context.empty()) msg += fmt::format(" [{}]", context);
  throw DriverError(msg, call, static_cast<int>(result), name ? name : "", device);
}

void make_current(CUcontext ctx, int device) {
  const DriverApi& api = driver();
  CUcontext current = nullptr;
  api.cuCtxGetCurrent(&current);
  if (current != ctx) check(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", device);
}

}  // namespace tilejit::jit

#include <cudaTypedefs.h>
#include <type_traits>
// The ABI versions in driver_entries.inc must match the prototypes we call through.
static_assert(std::is_same_v<decltype(&::cuCtxSynchronize), PFN_cuCtxSynchronize_v2000>);
static_assert(std::is_same_v<decltype(&::cuMemAlloc), PFN_cuMemAlloc_v3020>);
static_assert(std::is_same_v<decltype(&::cuLaunchKernel), PFN_cuLaunchKernel_v4000>);
