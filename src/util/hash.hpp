// 128-bit content hashes (xxHash XXH3-128), used for kernel keys and template digests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tilejit::util {

struct Hash128 {
  std::uint64_t lo = 0, hi = 0;
  friend bool operator==(const Hash128&, const Hash128&) = default;
  std::string hex() const;  // 32 lowercase hex digits, high half first
};

struct Hash128Hasher {
  std::size_t operator()(const Hash128& h) const noexcept { return static_cast<std::size_t>(h.lo ^ (h.hi * 0x9E3779B97F4A7C15ull)); }
};

Hash128 hash128(std::string_view data);
std::uint64_t hash64(std::string_view data, std::uint64_t seed = 0);

}  // namespace tilejit::util
