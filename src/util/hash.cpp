#include "util/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

namespace tilejit::util {

std::string Hash128::hex() const { return fmt::format("{:016x}{:016x}", hi, lo); }

Hash128 hash128(std::string_view data) {
  XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
  return {h.low64, h.high64};
}

std::uint64_t hash64(std::string_view data, std::uint64_t seed) {
  return XXH3_64bits_withSeed(data.data(), data.size(), seed);
}

}  // namespace tilejit::util
