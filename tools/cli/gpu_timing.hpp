// Timing on the GPU for the CLI's --bench: CUDA events around each launch, warm-up, median.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <string>
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

// How `tilejit bench gemm` times a kernel beside its reference (see time_methods_pair):
//   stream  groups of back-to-back launches on one stream between two events (as an application's
//           step queues its kernels), per-launch time = group time / launches;
//   graph   the same group captured once into a CUDA graph, its replays timed;
//   synced  events around each launch and a wait before the next (the GPU idles in between: this
//           hides fixed per-launch costs and flatters kernels that have them; a labelled extra).
enum class TimingMethod { stream, graph, synced };
// Throws InvalidArgument naming the expected values.
TimingMethod parse_timing_method(const std::string& text);
const char* timing_method_name(TimingMethod m);

struct MethodOptions {
  double group_ms = 50;  // stream, graph: launches per group, so that a group lasts about this long
  int groups = 5;        // groups (or, synced, launches) timed per side
  int warmup = 5;
};

// Per-launch times of `a` and `b` (median over the groups, in ms) with one method on `stream` (a
// stream that can be captured: not the legacy default stream, for graph). The two sides alternate,
// `a` first in even groups and `b` first in odd ones, and each group starts after the stream has
// drained and a 2 ms rest, so that clock and thermal drift land on both alike.
std::pair<Timing, Timing> time_methods_pair(TimingMethod method, const std::function<void(CUstream)>& a,
                                            const std::function<void(CUstream)>& b, CUstream stream, const MethodOptions& options);

// A non-blocking stream of the current context, destroyed with the object (the legacy default
// stream cannot be captured into a graph).
class OwnStream {
 public:
  OwnStream();
  ~OwnStream();
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  CUstream get() const noexcept { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

// Device-to-device copy bandwidth (bytes read + written per second, in GB/s) over `bytes`,
// timed with the same method; allocates two buffers of that size for the duration.
double copy_bandwidth_gbs(std::size_t bytes, CUstream stream);

}  // namespace tilejit::cli
