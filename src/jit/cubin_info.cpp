#include "jit/cubin_info.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

namespace tilejit::jit {
namespace {

// Little-endian fields at `at`, or false where they would run past the image.
template <class T> bool read(std::string_view bytes, std::size_t at, T& out) {
  if (at > bytes.size() || bytes.size() - at < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + at, sizeof(T));
  return true;
}

// The ELF64 section headers' fields this reader needs.
struct Section {
  std::uint32_t name = 0;
  std::uint64_t offset = 0, size = 0;
};

bool section_at(std::string_view elf, std::uint64_t table, std::uint16_t entry_size, std::uint16_t i, Section& s) {
  const std::uint64_t at = table + std::uint64_t{entry_size} * i;
  return read(elf, at, s.name) && read(elf, at + 24, s.offset) && read(elf, at + 32, s.size) && s.offset <= elf.size() &&
         s.size <= elf.size() - s.offset;
}

// The records of a .nv.info section: a format byte, an attribute byte and 16 bits that are the value
// (formats 1 to 3) or the size of the value that follows (format 4, EIFMT_SVAL).
constexpr std::uint8_t kSizedValue = 4;
constexpr std::uint8_t kParameterInfo = 0x17;  // EIATTR_KPARAM_INFO: index, ordinal, offset, flags with the size
constexpr std::uint8_t kParameterBank = 0x0a;  // EIATTR_PARAM_CBANK: symbol, the bank's offset, the parameters' bytes

}  // namespace

std::optional<std::vector<std::size_t>> cubin_parameter_sizes(std::string_view cubin, std::string_view symbol) {
  constexpr std::string_view kMagic("\x7f""ELF", 4);
  if (cubin.size() < 64 || cubin.substr(0, 4) != kMagic || cubin[4] != 2 /* ELFCLASS64 */ || cubin[5] != 1 /* little-endian */)
    return std::nullopt;
  std::uint64_t table = 0;
  std::uint16_t entry_size = 0, count = 0, names_index = 0;
  if (!read(cubin, 0x28, table) || !read(cubin, 0x3A, entry_size) || !read(cubin, 0x3C, count) || !read(cubin, 0x3E, names_index) ||
      entry_size < 40 || names_index >= count)
    return std::nullopt;
  Section names;
  if (!section_at(cubin, table, entry_size, names_index, names)) return std::nullopt;
  const std::string_view strings = cubin.substr(names.offset, names.size);
  const std::string wanted = ".nv.info." + std::string(symbol);
  for (std::uint16_t i = 0; i < count; ++i) {
    Section s;
    if (!section_at(cubin, table, entry_size, i, s)) return std::nullopt;
    if (s.name >= strings.size()) continue;
    const std::string_view name = strings.substr(s.name, strings.find('\0', s.name) - s.name);
    if (name != wanted) continue;
    const std::string_view info = cubin.substr(s.offset, s.size);
    std::map<std::uint16_t, std::size_t> sizes;  // by ordinal
    std::size_t end = 0;                          // of the last parameter
    std::optional<std::size_t> bank_bytes;
    for (std::size_t at = 0; at + 4 <= info.size();) {
      const auto format = static_cast<std::uint8_t>(info[at]), attribute = static_cast<std::uint8_t>(info[at + 1]);
      std::uint16_t value = 0;
      read(info, at + 2, value);
      if (format == 0 || format > kSizedValue) return std::nullopt;  // a record this reader does not know
      if (format != kSizedValue) {
        at += 4;
        continue;
      }
      if (info.size() - at - 4 < value) return std::nullopt;
      if (attribute == kParameterInfo) {
        std::uint16_t ordinal = 0, offset = 0;
        std::uint32_t flags = 0;
        if (value < 12 || !read(info, at + 8, ordinal) || !read(info, at + 10, offset) || !read(info, at + 12, flags)) return std::nullopt;
        const std::size_t size = (flags >> 18) & 0x3fff;
        if (!sizes.emplace(ordinal, size).second) return std::nullopt;
        end = std::max(end, std::size_t{offset} + size);
      } else if (attribute == kParameterBank) {
        std::uint16_t bytes = 0;
        if (value < 8 || !read(info, at + 10, bytes)) return std::nullopt;
        bank_bytes = bytes;
      }
      at += 4 + value;
    }
    // Ordinals 0 .. n-1, each once, within the parameters' bytes the bank record gives (which also
    // tells a kernel without parameters from records this reader missed).
    if (!bank_bytes || end > *bank_bytes || sizes.empty() != (*bank_bytes == 0)) return std::nullopt;
    std::vector<std::size_t> out;
    for (const auto& [ordinal, size] : sizes) {
      if (ordinal != out.size() || size == 0) return std::nullopt;
      out.push_back(size);
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace tilejit::jit
