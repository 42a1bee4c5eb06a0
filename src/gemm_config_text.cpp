// The string form of GEMM configurations and the presets: part of the public vocabulary (like the
// dtype names), used by the settings (TILEJIT_GEMM_CONFIG is checked when it is read), the ops and
// the CLI. Pure text: no rule here depends on a problem or a device (those are in
// src/ops/gemm/gemm_config.cpp).
#include <tilejit/error.hpp>
#include <tilejit/gemm_config.hpp>

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace tilejit {
namespace {

// The first seed's kernels. Its tensor-core kernel takes f32 inputs as tf32, so the preset says so
// (the tf32 part): `tilejit gemm --dtype f32 --config puzzle33` runs it without --math tf32.
GemmConfig puzzle33() {
  GemmConfig c{GemmKind::mma, 128, 64, 32, 32, 32, 1};
  c.tf32 = true;
  return c;
}
constexpr GemmConfig kPuzzle33Tiled{GemmKind::simt, 32, 32, 32, 1, 32, 1};

[[noreturn]] void bad_config(std::string_view text, std::string_view why) {
  throw InvalidArgument(fmt::format("GEMM config '{}': {}; expected KIND:BMxBNxBK:WMxWN:STAGES[:kS][:tS][:pp][:cC][:sw][:kh][:tf32] "
                                    "(e.g. mma:128x64x32:32x32:1) with KIND simt, mma, wgmma or gemv, or a preset (puzzle33, puzzle33-tiled)",
                                    text, why));
}

std::vector<int> numbers(std::string_view text, std::string_view part, char sep, std::size_t count) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= part.size()) {
    std::size_t end = part.find(sep, start);
    if (end == std::string_view::npos) end = part.size();
    int v = 0;
    auto [ptr, ec] = std::from_chars(part.data() + start, part.data() + end, v);
    if (ec != std::errc() || ptr != part.data() + end || start == end) bad_config(text, fmt::format("'{}' is not a number list", part));
    out.push_back(v);
    start = end + 1;
  }
  if (out.size() != count) bad_config(text, fmt::format("'{}' needs {} numbers", part, count));
  return out;
}

bool digit(char ch) { return ch >= '0' && ch <= '9'; }

}  // namespace

std::string GemmConfig::to_string() const {
  const char* name = kind == GemmKind::simt ? "simt" : kind == GemmKind::mma ? "mma" : kind == GemmKind::gemv ? "gemv" : "wgmma";
  std::string out = fmt::format("{}:{}x{}x{}:{}x{}:{}", name, bm, bn, bk, wm, wn, stages);
  if (split_k != 1) out += fmt::format(":k{}", split_k);
  if (tail_split != 1) out += fmt::format(":t{}", tail_split);
  if (pingpong) out += ":pp";
  if (cluster != 1) out += fmt::format(":c{}", cluster);
  if (swap_ab) out += ":sw";
  if (k_halves) out += ":kh";
  if (tf32) out += ":tf32";
  if (a_registers) out += ":ra";
  return out;
}

GemmConfig GemmConfig::parse(std::string_view text) {
  if (text == "puzzle33") return puzzle33();
  if (text == "puzzle33-tiled") return kPuzzle33Tiled;
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(':', start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (parts.size() < 4 || parts.size() > 12)
    bad_config(text, "it has not four ':'-separated parts (and optional extras kS, tS, pp, cC, sw, kh, tf32 and ra)");
  GemmConfig c;
  if (parts[0] == "simt") c.kind = GemmKind::simt;
  else if (parts[0] == "mma") c.kind = GemmKind::mma;
  else if (parts[0] == "wgmma") c.kind = GemmKind::wgmma;
  else if (parts[0] == "gemv") c.kind = GemmKind::gemv;
  else bad_config(text, fmt::format("unknown kind '{}'", parts[0]));
  auto tile = numbers(text, parts[1], 'x', 3);
  auto warp = numbers(text, parts[2], 'x', 2);
  auto stages = numbers(text, parts[3], 'x', 1);
  c.bm = tile[0], c.bn = tile[1], c.bk = tile[2], c.wm = warp[0], c.wn = warp[1], c.stages = stages[0];
  for (std::size_t i = 4; i < parts.size(); ++i) {
    if (parts[i] == "pp" && !c.pingpong) {
      c.pingpong = true;
    } else if (parts[i] == "sw" && !c.swap_ab) {
      c.swap_ab = true;
    } else if (parts[i] == "kh" && !c.k_halves) {
      c.k_halves = true;
    } else if (parts[i] == "tf32" && !c.tf32) {
      c.tf32 = true;
    } else if (parts[i] == "ra" && !c.a_registers) {
      c.a_registers = true;
    } else if (parts[i].size() >= 2 && parts[i][0] == 'k' && digit(parts[i][1]) && c.split_k == 1) {
      c.split_k = numbers(text, parts[i].substr(1), 'x', 1)[0];
    } else if (parts[i].size() >= 2 && parts[i][0] == 't' && digit(parts[i][1]) && c.tail_split == 1) {
      c.tail_split = numbers(text, parts[i].substr(1), 'x', 1)[0];
    } else if (parts[i].size() >= 2 && parts[i][0] == 'c' && digit(parts[i][1]) && c.cluster == 1) {
      c.cluster = numbers(text, parts[i].substr(1), 'x', 1)[0];
    } else {
      bad_config(text, fmt::format("'{}' is not an extra part (split-K kS, e.g. k2, tail split tS, e.g. t3, ping-pong pp, cluster cC, "
                                   "e.g. c2, swapped operands sw, K halves kh, f32 inputs as tf32 tf32, A through registers ra; each at most once)",
                                   parts[i]));
    }
  }
  return c;
}

}  // namespace tilejit
