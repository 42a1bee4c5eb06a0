// Test helper: publishes entries into a disk cache in a loop, so that a test can kill it with SIGKILL
// in the middle of a write, or run many of it at once.
//   tilejit_cache_writer DIR COUNT BYTES                    COUNT synthetic kernel entries of BYTES each
//   tilejit_cache_writer DIR tuning INDEX MEASUREMENTS REPEAT  stores REPEAT times, into one tuning entry,
//                                                         MEASUREMENTS candidate times of its own (INDEX)
#include "jit/disk_cache.hpp"
#include "ops/gemm/gemm_tuning.hpp"

#include <cstdlib>
#include <random>
#include <string>

namespace {

// The identity and class every writer's tuning records share.
const tilejit::ops::TuningIdentity kIdentity{"Test GPU", 132, "cuda 13000", "13.0.0", "0.1.0", "t", "sm_90a"};
const char* kClass = "gemm concurrency test";

int write_tuning(const char* dir, int index, int measurements, int repeat) {
  using namespace tilejit;
  jit::DiskCache cache(dir, util::CacheMode::on, 1ull << 40);
  const jit::KernelKey key = ops::tuning_key(kIdentity, kClass);
  for (int r = 0; r < repeat; ++r) {
    ops::TuningRecord fresh;
    fresh.shape_class = kClass;
    fresh.m = fresh.n = fresh.k = 256;
    fresh.heuristic = "simt:64x64x8:32x16:2";
    for (int i = 0; i < measurements; ++i)
      fresh.measurements.push_back({"simt:" + std::to_string(64 + index) + "x" + std::to_string(64 + i) + "x8:32x16:2",
                                    1.0 + index + 0.001 * i, true, "", 1700000000 + r});
    bool stored = false;
    ops::store_tuning_record(&cache, key, kIdentity, fresh, 0.02, "bf16,bf16->bf16", &stored);
    if (!stored) return 5;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilejit;
  if (argc == 6 && std::string(argv[2]) == "tuning") return write_tuning(argv[1], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  if (argc != 4) return 2;
  jit::DiskCache cache(argv[1], util::CacheMode::on, 1ull << 40);
  const int count = std::atoi(argv[2]);
  const std::size_t bytes = std::strtoull(argv[3], nullptr, 10);
  std::mt19937_64 rng(std::random_device{}());
  for (int i = 0; i < count; ++i) {
    jit::KernelKey key;
    key.text = "synthetic kernel " + std::to_string(rng());
    key.hash = util::hash128(key.text);
    jit::DiskEntry e;
    e.key_text = key.text;
    e.meta.family = "test";
    e.meta.program_name = "synthetic";
    e.cubin.assign(bytes, static_cast<char>(i));
    cache.publish(key, e);
  }
  return 0;
}
