#include "host_data.hpp"

#include <tilejit/tooling.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace tilejit::cli {

namespace {
std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

namespace {
void fill_range(DType t, void* data, std::size_t first, std::size_t last, std::uint64_t seed) {
  std::uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  for (std::size_t i = first; i < last; ++i) {
    std::uint64_t r = splitmix(s);
    double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
    switch (t) {
      case DType::u8: tooling::store_element_from_int(t, data, i, static_cast<std::int64_t>(r % 256)); break;
      case DType::i8:
      case DType::i32:
      case DType::i64: tooling::store_element_from_int(t, data, i, static_cast<std::int64_t>(r % 201) - 100); break;
      default: tooling::store_element_from_float(t, data, i, 4.0 * u - 2.0); break;
    }
  }
}
}  // namespace

void fill_random(DType t, void* data, std::size_t count, std::uint64_t seed) {
  // Chunks of 1 Mi elements, each its own sequence, filled on up to 16 threads: a benchmark's
  // 8192^2 operands take a fraction of a second instead of seconds each.
  constexpr std::size_t kChunk = 1 << 20;
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  const unsigned threads = static_cast<unsigned>(std::min<std::size_t>({chunks, 16, std::max(1u, std::thread::hardware_concurrency())}));
  if (threads <= 1) {
    for (std::size_t c = 0; c < chunks; ++c) fill_range(t, data, c * kChunk, std::min(count, (c + 1) * kChunk), seed + c * 0x9E37ull);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < threads; ++w)
    pool.emplace_back([&] {
      for (std::size_t c = next++; c < chunks; c = next++) fill_range(t, data, c * kChunk, std::min(count, (c + 1) * kChunk), seed + c * 0x9E37ull);
    });
  for (auto& th : pool) th.join();
}

double relative_error(DType t, const void* out, const void* ref, std::size_t count) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < count; ++i) {
    double o = tooling::load_element(t, out, i), r = tooling::load_element(t, ref, i);
    if (std::isnan(o) != std::isnan(r)) return std::numeric_limits<double>::infinity();
    if (std::isnan(r)) continue;  // both NaN: the reference itself is NaN here
    if (std::isinf(o) || std::isinf(r)) {
      if (o != r) return std::numeric_limits<double>::infinity();
      continue;
    }
    num += (o - r) * (o - r);
    den += r * r;
  }
  if (den == 0) return num == 0 ? 0 : std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}

double tolerance(DType t) {
  switch (t) {
    case DType::f64: return 1e-12;
    case DType::f32: return 1e-5;
    case DType::f16:
    case DType::bf16: return 1e-2;
    // Half a unit in the last place, relative: what rounding a differently computed value may lose.
    case DType::e4m3: return 0x1p-4;
    case DType::e5m2: return 0x1p-3;
    default: return 1e-6;
  }
}

}  // namespace tilejit::cli
