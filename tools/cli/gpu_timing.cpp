#include "gpu_timing.hpp"

#include "jit/driver.hpp"

#include <algorithm>

namespace tilejit::cli {

using jit::check;
using jit::driver;

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
