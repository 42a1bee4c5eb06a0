// One kernel launch through the driver: cuLaunchKernel, or cuLaunchKernelEx where a launch carries
// attributes (a cluster shape, programmatic dependent launch). Op-agnostic: the ops say what they
// launch, this says how.
#pragma once

#include <cuda.h>

namespace tilejit::jit {

struct LaunchShape {
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1, block_y = 1, block_z = 1;
  unsigned shared_bytes = 0;
  unsigned cluster_x = 1, cluster_y = 1, cluster_z = 1;  // blocks per cluster (1 x 1 x 1: no cluster)
  // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: the kernel may start before the previous
  // one on the stream ends; it must wait for it (griddepcontrol.wait) before touching memory
  // (kernels_templates/tilejit/grid_dependency.cuh). Only for kernels written that way, on sm_90+.
  bool programmatic = false;
};

// Throws DriverError naming the call, the device and `what` (e.g. "gemm").
void launch(CUfunction fn, const LaunchShape& shape, CUstream stream, void** args, int device, const char* what);

}  // namespace tilejit::jit
