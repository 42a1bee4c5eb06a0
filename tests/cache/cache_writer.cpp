// Test helper: publishes large synthetic entries into a disk cache in a loop, so that a test can
// kill it with SIGKILL in the middle of a write.  Usage: tilejit_cache_writer DIR COUNT BYTES
#include "jit/disk_cache.hpp"

#include <cstdlib>
#include <random>
#include <string>

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  using namespace tilejit;
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
