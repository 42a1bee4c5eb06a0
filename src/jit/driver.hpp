// The CUDA driver API, loaded at run time with dlopen (libcuda is never linked), so that everything
// but launching works on a machine without a GPU and says clearly why a launch cannot happen there.
#pragma once

#include <cuda.h>

#include <string>

namespace tilejit::jit {

// Every driver entry point tilejit uses, resolved once through cuGetProcAddress.
struct DriverApi {
#define TILEJIT_DRIVER_ENTRY(name, version) decltype(&::name) name = nullptr;
#include "jit/driver_entries.inc"
#undef TILEJIT_DRIVER_ENTRY
  int driver_version = 0;  // e.g. 13000
};

// The loaded driver, initialised (cuInit) on first use. Throws DriverError, with the reason and what
// still works without a GPU, when there is no usable driver.
const DriverApi& driver();
// Non-throwing probe; `why` gets the reason when it returns false.
bool driver_available(std::string* why = nullptr);
// Whether the driver library opens, without initialising it (cuInit): cheap, and false on a machine
// with no driver at all.
bool driver_library_present();

// Throws DriverError naming the call, the error's name and string, and the device (-1: none).
void check(CUresult result, const char* call, int device = -1, const std::string& context = {});

#define TILEJIT_CU(device, call_expr) ::tilejit::jit::check((call_expr), #call_expr, (device))

// Makes the device's primary context current on this thread (cheap when it already is).
void make_current(CUcontext ctx, int device);

}  // namespace tilejit::jit
