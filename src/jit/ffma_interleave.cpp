#include "jit/ffma_interleave.hpp"

#include "jit/cubin_info.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <unordered_set>

namespace tilejit::jit {
namespace {

// sm_90 instructions are 128 bits: the low word holds the opcode (bits 0-8; bits 9-11 select the
// operand forms) and the destination register (bits 16-23); the high word's bits 41-63 hold the
// scheduling controls: stall cycles (41-44), the yield bit (45, set: the warp keeps the scheduler),
// the barriers (46-57) and the reuse-cache flags of the operands (58-61).
constexpr std::uint64_t kOpcodeMask = 0x1ff, kOpcodeFfma = 0x023;
constexpr std::uint64_t kFormMask = 0xe00, kFormRegisters = 0x200;  // FFMA Rd, Ra, Rb, Rc
constexpr std::uint64_t kHoldsScheduler = std::uint64_t{1} << 45;
constexpr std::uint64_t kReuseFlags = std::uint64_t{0xf} << 58;
constexpr int kSupportedSm = 90;

struct Instruction {
  std::uint64_t low = 0, high = 0;
};

Instruction load(const std::string& code, std::size_t at) {
  Instruction i;
  std::memcpy(&i.low, code.data() + at, 8);
  std::memcpy(&i.high, code.data() + at + 8, 8);
  return i;
}

bool is_register_ffma(const Instruction& i) {
  return (i.low & kOpcodeMask) == kOpcodeFfma && (i.low & kFormMask) == kFormRegisters;
}

// The first `count` FFMAs of the run at [begin, begin + 16 * length): what changes, how many.
std::size_t release_run(std::string& cubin, std::size_t begin, std::size_t count) {
  std::unordered_set<unsigned> written;
  std::size_t changed = 0;
  bool last_changed = false;
  unsigned last_destination = ~0u;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t at = begin + 16 * k;
    Instruction i = load(cubin, at);
    const unsigned destination = static_cast<unsigned>((i.low >> 16) & 0xff);
    const bool first_write = written.insert(destination).second;
    // A register the run wrote before is a chain (x += a; x += b): its reuse flags stay, unless the
    // instruction before, released too, wrote the same register.
    const bool release = (i.high & kReuseFlags) != 0 && (first_write || (last_changed && destination == last_destination));
    if (release) {
      i.high &= ~(kReuseFlags | kHoldsScheduler);
      std::memcpy(cubin.data() + at + 8, &i.high, 8);
      ++changed;
    }
    last_changed = release;
    last_destination = destination;
  }
  return changed;
}

}  // namespace

int interleave_ffma_sixteenths(std::string_view option) {
  const std::string_view value = option.substr(kInterleaveFfmaOption.size());
  int n = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (!option.starts_with(kInterleaveFfmaOption) || error != std::errc() || end != value.data() + value.size() || n < 1 || n > 16)
    throw InvalidArgument(fmt::format("option '{}': expected {}N with N from 1 to 16 (sixteenths of each FFMA run)", option,
                                      kInterleaveFfmaOption));
  return n;
}

FfmaInterleaveCount interleave_ffma_runs(std::string& cubin, int sixteenths) {
  FfmaInterleaveCount count;
  if (sixteenths < 1 || sixteenths > 16) return count;
  if (cubin_sm(cubin) != kSupportedSm) return count;
  const auto sections = cubin_sections(cubin);
  if (!sections) return count;
  for (const CubinSection& s : *sections) {
    if (!s.name.starts_with(".text.")) continue;
    const std::size_t instructions = s.size / 16;
    std::size_t run = 0;
    for (std::size_t k = 0; k <= instructions; ++k) {
      if (k < instructions && is_register_ffma(load(cubin, s.offset + 16 * k))) {
        ++run;
        continue;
      }
      if (run >= kMinFfmaRun) {
        ++count.runs;
        count.instructions += release_run(cubin, s.offset + 16 * (k - run), run * static_cast<std::size_t>(sixteenths) / 16);
      }
      run = 0;
    }
  }
  return count;
}

}  // namespace tilejit::jit
