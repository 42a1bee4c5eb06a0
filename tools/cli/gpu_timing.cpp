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

Timing time_launches(const std::function<void(CUstream)>& launch, CUstream stream, int warmup, int runs) {
  const auto& api = driver();
  for (int i = 0; i < warmup; ++i) launch(stream);
  check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  Event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    check(api.cuEventRecord(start.e, stream), "cuEventRecord");
    launch(stream);
    check(api.cuEventRecord(stop.e, stream), "cuEventRecord");
    check(api.cuEventSynchronize(stop.e), "cuEventSynchronize");
    float t = 0;
    check(api.cuEventElapsedTime(&t, start.e, stop.e), "cuEventElapsedTime");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), runs};
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
