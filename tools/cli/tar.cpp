#include "tar.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include <cstring>
#include <ctime>

namespace tilejit::cli {
namespace {

constexpr std::size_t kBlock = 512;

void put_octal(char* field, std::size_t width, unsigned long long value) {
  // width - 1 octal digits and a NUL, as ustar expects.
  std::string s = fmt::format("{:0{}o}", value, width - 1);
  std::memcpy(field, s.data(), width - 1);
  field[width - 1] = '\0';
}

unsigned long long get_octal(const char* field, std::size_t width) {
  unsigned long long v = 0;
  for (std::size_t i = 0; i < width && field[i] >= '0' && field[i] <= '7'; ++i) v = v * 8 + static_cast<unsigned>(field[i] - '0');
  return v;
}

unsigned header_checksum(const char* h) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  return sum;
}

}  // namespace

std::string write_tar(const std::vector<TarMember>& members) {
  std::string out;
  for (const auto& m : members) {
    if (m.name.size() >= 100) throw Error(fmt::format("tar: name too long: {}", m.name));
    char h[kBlock] = {};
    std::memcpy(h, m.name.data(), m.name.size());
    put_octal(h + 100, 8, 0600);
    put_octal(h + 108, 8, 0);
    put_octal(h + 116, 8, 0);
    put_octal(h + 124, 12, m.data.size());
    put_octal(h + 136, 12, static_cast<unsigned long long>(std::time(nullptr)));
    h[156] = '0';
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    std::memcpy(h + 265, "tilejit", 7);
    std::memcpy(h + 297, "tilejit", 7);
    put_octal(h + 148, 7, header_checksum(h));
    h[155] = ' ';
    out.append(h, kBlock);
    out += m.data;
    out.append((kBlock - m.data.size() % kBlock) % kBlock, '\0');
  }
  out.append(2 * kBlock, '\0');
  return out;
}

std::vector<TarMember> read_tar(const std::string& a) {
  std::vector<TarMember> out;
  std::size_t at = 0;
  while (at + kBlock <= a.size()) {
    const char* h = a.data() + at;
    bool zero = true;
    for (std::size_t i = 0; i < kBlock && zero; ++i) zero = h[i] == 0;
    if (zero) return out;
    if (get_octal(h + 148, 8) != header_checksum(h)) throw Error(fmt::format("tar: bad header checksum at offset {}", at));
    const unsigned long long size = get_octal(h + 124, 12);
    std::string name(h, strnlen(h, 100));
    std::string prefix(h + 345, strnlen(h + 345, 155));
    if (!prefix.empty()) name = prefix + "/" + name;
    at += kBlock;
    if (size > a.size() - at) throw Error(fmt::format("tar: member {} is truncated", name));
    if (h[156] == '0' || h[156] == '\0') out.push_back({name, a.substr(at, size)});
    at += (size + kBlock - 1) / kBlock * kBlock;
  }
  throw Error("tar: the archive ends without its end-of-archive blocks");
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error(fmt::format("cannot write {}", path.string()));
}

}  // namespace tilejit::cli
