#include "jit/launch.hpp"

#include "jit/driver.hpp"

namespace tilejit::jit {

void launch(CUfunction fn, const LaunchShape& s, CUstream stream, void** args, int device, const char* what) {
  const bool cluster = s.cluster_x * s.cluster_y * s.cluster_z > 1;
  if (!cluster && !s.programmatic) {
    check(driver().cuLaunchKernel(fn, s.grid_x, s.grid_y, s.grid_z, s.block_x, s.block_y, s.block_z, s.shared_bytes, stream, args,
                                  nullptr),
          "cuLaunchKernel", device, what);
    return;
  }
  CUlaunchAttribute attrs[2] = {};
  unsigned n = 0;
  if (cluster) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = s.cluster_x;
    attrs[n].value.clusterDim.y = s.cluster_y;
    attrs[n].value.clusterDim.z = s.cluster_z;
    ++n;
  }
  if (s.programmatic) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n].value.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  CUlaunchConfig lc{};
  lc.gridDimX = s.grid_x, lc.gridDimY = s.grid_y, lc.gridDimZ = s.grid_z;
  lc.blockDimX = s.block_x, lc.blockDimY = s.block_y, lc.blockDimZ = s.block_z;
  lc.sharedMemBytes = s.shared_bytes;
  lc.hStream = stream;
  lc.attrs = attrs;
  lc.numAttrs = n;
  check(driver().cuLaunchKernelEx(&lc, fn, args, nullptr), "cuLaunchKernelEx", device, what);
}

}  // namespace tilejit::jit
