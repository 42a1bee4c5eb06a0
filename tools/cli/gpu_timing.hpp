// Timing on the GPU for the CLI's --bench: CUDA events around each launch, warm-up, median.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace tilejit::cli {

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int runs = 0;
};

// Runs `launch` `warmup` times, then times `runs` launches one by one with events on `stream`.
Timing time_launches(const std::function<void(CUstream)>& launch, CUstream stream, int warmup = 5, int runs = 50);

// Times two launches side by side: after the warm-ups, run i times `a` and `b` one after the other,
// `a` first on even runs and `b` first on odd ones, so clock and thermal drift over the run land on
// both alike. Returns {a's timing, b's timing}.
std::pair<Timing, Timing> time_launch_pair(const std::function<void(CUstream)>& a, const std::function<void(CUstream)>& b,
                                           CUstream stream, int warmup = 5, int runs = 50);

// Device-to-device copy bandwidth (bytes read + written per second, in GB/s) over `bytes`,
// timed with the same method; allocates two buffers of that size for the duration.
double copy_bandwidth_gbs(std::size_t bytes, CUstream stream);

}  // namespace tilejit::cli
