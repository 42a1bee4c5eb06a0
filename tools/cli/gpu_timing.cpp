#include "gpu_timing.hpp"

#include <tilejit/tooling.hpp>

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

namespace tilejit::cli {

using tooling::check;
using tooling::driver;

namespace {
struct Event {
  CUevent e = nullptr;
  Event() { check(driver().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate"); }
  ~Event() { driver().cuEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};
}  // namespace

namespace {
double time_one(const std::function<void(CUstream)>& launch, CUstream stream, Event& start, Event& stop) {
  const auto& api = driver();
  check(api.cuEventRecord(start.e, stream), "cuEventRecord");
  launch(stream);
  check(api.cuEventRecord(stop.e, stream), "cuEventRecord");
  check(api.cuEventSynchronize(stop.e), "cuEventSynchronize");
  float t = 0;
  check(api.cuEventElapsedTime(&t, start.e, stop.e), "cuEventElapsedTime");
  return t;
}

Timing summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), static_cast<int>(ms.size())};
}
}  // namespace

Timing time_launches(const std::function<void(CUstream)>& launch, CUstream stream, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) launch(stream);
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  Event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) ms.push_back(time_one(launch, stream, start, stop));
  return summarise(std::move(ms));
}

std::pair<Timing, Timing> time_launch_pair(const std::function<void(CUstream)>& a, const std::function<void(CUstream)>& b,
                                           CUstream stream, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) a(stream), b(stream);
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  Event start, stop;
  std::vector<double> ms_a, ms_b;
  for (int i = 0; i < runs; ++i) {
    if (i % 2 == 0) {
      ms_a.push_back(time_one(a, stream, start, stop));
      ms_b.push_back(time_one(b, stream, start, stop));
    } else {
      ms_b.push_back(time_one(b, stream, start, stop));
      ms_a.push_back(time_one(a, stream, start, stop));
    }
  }
  return {summarise(std::move(ms_a)), summarise(std::move(ms_b))};
}

TimingMethod parse_timing_method(const std::string& text) {
  if (text == "stream") return TimingMethod::stream;
  if (text == "graph") return TimingMethod::graph;
  if (text == "synced") return TimingMethod::synced;
  throw InvalidArgument(fmt::format("--method '{}': expected stream (back-to-back launches), graph (CUDA graph replay) or synced "
                                    "(a wait after each launch)",
                                    text));
}

const char* timing_method_name(TimingMethod m) {
  switch (m) {
    case TimingMethod::stream: return "stream";
    case TimingMethod::graph: return "graph";
    case TimingMethod::synced: return "synced";
  }
  return "?";
}

namespace {

// A CUDA graph of `launches` calls of `launch` captured on `stream`, instantiated; freed with it.
class CapturedGroup {
 public:
  CapturedGroup(const std::function<void(CUstream)>& launch, int launches, CUstream stream) : stream_(stream) {
    const auto& api = driver();
    check(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    try {
      for (int i = 0; i < launches; ++i) launch(stream);
    } catch (...) {
      CUgraph broken = nullptr;
      api.cuStreamEndCapture(stream, &broken);
      if (broken) api.cuGraphDestroy(broken);
      throw;
    }
    check(api.cuStreamEndCapture(stream, &graph_), "cuStreamEndCapture");
    check(api.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "cuGraphInstantiateWithFlags");
  }
  ~CapturedGroup() {
    if (exec_) driver().cuGraphExecDestroy(exec_);
    if (graph_) driver().cuGraphDestroy(graph_);
  }
  CapturedGroup(const CapturedGroup&) = delete;
  CapturedGroup& operator=(const CapturedGroup&) = delete;
  void replay() const { check(driver().cuGraphLaunch(exec_, stream_), "cuGraphLaunch"); }

 private:
  CUstream stream_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

// Launches per group for a kernel of `per_launch_ms`: about group_ms of work, at least 10 launches,
// at most 20000 (a graph of that many nodes still instantiates in well under a second).
int group_size(double per_launch_ms, double group_ms) {
  return static_cast<int>(std::clamp(std::ceil(group_ms / std::max(per_launch_ms, 1e-4)), 10.0, 20000.0));
}

}  // namespace

std::pair<Timing, Timing> time_methods_pair(TimingMethod method, const std::function<void(CUstream)>& a,
                                            const std::function<void(CUstream)>& b, CUstream stream, const MethodOptions& o) {
  if (method == TimingMethod::synced) return time_launch_pair(a, b, stream, o.warmup, o.groups);
  const auto& api = driver();
  for (int i = 0; i < o.warmup; ++i) a(stream), b(stream);
  check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  Event start, stop;
  // One launch-then-wait each, the fastest of three, sizes the groups.
  double ta = 1e30, tb = 1e30;
  for (int i = 0; i < 3; ++i) ta = std::min(ta, time_one(a, stream, start, stop)), tb = std::min(tb, time_one(b, stream, start, stop));
  const int na = group_size(ta, o.group_ms), nb = group_size(tb, o.group_ms);
  std::unique_ptr<CapturedGroup> ga, gb;
  if (method == TimingMethod::graph) {
    ga = std::make_unique<CapturedGroup>(a, na, stream);
    gb = std::make_unique<CapturedGroup>(b, nb, stream);
    ga->replay(), gb->replay();  // the first replay uploads the graph
  }
  auto group = [&](const std::function<void(CUstream)>& f, int n, const CapturedGroup* g) {
    check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the rest before each group
    check(api.cuEventRecord(start.e, stream), "cuEventRecord");
    if (g) g->replay();
    else
      for (int i = 0; i < n; ++i) f(stream);
    check(api.cuEventRecord(stop.e, stream), "cuEventRecord");
    check(api.cuEventSynchronize(stop.e), "cuEventSynchronize");
    float t = 0;
    check(api.cuEventElapsedTime(&t, start.e, stop.e), "cuEventElapsedTime");
    return static_cast<double>(t) / n;
  };
  std::vector<double> ms_a, ms_b;
  for (int i = 0; i < o.groups; ++i) {
    if (i % 2 == 0) {
      ms_a.push_back(group(a, na, ga.get()));
      ms_b.push_back(group(b, nb, gb.get()));
    } else {
      ms_b.push_back(group(b, nb, gb.get()));
      ms_a.push_back(group(a, na, ga.get()));
    }
  }
  return {summarise(std::move(ms_a)), summarise(std::move(ms_b))};
}

OwnStream::OwnStream() { check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"); }
OwnStream::~OwnStream() { driver().cuStreamDestroy(stream_); }

double copy_bandwidth_gbs(std::size_t bytes, CUstream stream) {
  const auto& api = driver();
  CUdeviceptr src = 0, dst = 0;
  check(api.cuMemAlloc(&src, bytes), "cuMemAlloc");
  check(api.cuMemAlloc(&dst, bytes), "cuMemAlloc");
  check(api.cuMemsetD8(src, 0x5a, bytes), "cuMemsetD8");
  Timing t = time_launches([&](CUstream s) { check(api.cuMemcpyDtoDAsync(dst, src, bytes, s), "cuMemcpyDtoDAsync"); }, stream);
  api.cuMemFree(src);
  api.cuMemFree(dst);
  return 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e-3) / 1e9;
}

}  // namespace tilejit::cli
