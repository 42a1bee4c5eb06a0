#include "util/settings.hpp"

#include <tilejit/error.hpp>
#include <tilejit/gemm_config.hpp>

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace tilejit::util {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

[[noreturn]] void bad_value(std::string_view var, std::string_view value, std::string_view expected) {
  throw InvalidArgument(fmt::format("{}='{}' is not valid: expected {}", var, value, expected));
}

bool parse_bool(std::string_view var, const std::string& v) {
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  bad_value(var, v, "1/on/true/yes or 0/off/false/no");
}

std::filesystem::path default_cache_dir() {
  if (auto xdg = env("XDG_CACHE_HOME")) return std::filesystem::path(*xdg) / "tilejit";
  if (auto home = env("HOME")) return std::filesystem::path(*home) / ".cache" / "tilejit";
  return std::filesystem::temp_directory_path() / "tilejit-cache";
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string suffix(end, text.data() + text.size());
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.ends_with("IB")) suffix.resize(suffix.size() - 2);
  else if (suffix.size() > 1 && suffix.ends_with("B")) suffix.resize(suffix.size() - 1);
  int shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else return std::nullopt;
  if (shift > 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::string format_size(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

bool is_valid_arch(std::string_view arch) {
  if (!arch.starts_with("sm_")) return false;
  std::string_view rest = arch.substr(3);
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) rest.remove_suffix(1);
  if (rest.size() < 2 || rest.size() > 3) return false;
  for (char c : rest)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return std::stoi(std::string(rest)) >= 75;
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
  }
  return "?";
}

std::string_view autotune_mode_name(AutotuneMode mode) {
  switch (mode) {
    case AutotuneMode::off: return "off";
    case AutotuneMode::cached: return "cached";
    case AutotuneMode::on: return "on";
  }
  return "?";
}

Settings Settings::from_environment() {
  Settings s;
  auto row = [&](const char* var, const std::optional<std::string>& raw, std::string value,
                 std::string default_text, std::string meaning) {
    s.rows.push_back({var, raw ? *raw : std::move(value), raw.has_value(), std::move(default_text),
                      std::move(meaning)});
  };

  auto cache_dir = env("TILEJIT_CACHE_DIR");
  s.cache_dir = cache_dir ? std::filesystem::path(*cache_dir) : default_cache_dir();
  row("TILEJIT_CACHE_DIR", cache_dir, s.cache_dir.string(), "$XDG_CACHE_HOME/tilejit, else ~/.cache/tilejit",
      "disk cache location");

  auto cache = env("TILEJIT_CACHE");
  if (cache) {
    if (*cache == "on") s.cache = CacheMode::on;
    else if (*cache == "off") s.cache = CacheMode::off;
    else if (*cache == "readonly") s.cache = CacheMode::readonly;
    else bad_value("TILEJIT_CACHE", *cache, "on, off (memory only) or readonly");
  }
  row("TILEJIT_CACHE", cache, "on", "on", "on, off (memory only), readonly (never write)");

  auto max_size = env("TILEJIT_CACHE_MAX_SIZE");
  if (max_size) {
    auto v = parse_size(*max_size);
    if (!v || *v == 0) bad_value("TILEJIT_CACHE_MAX_SIZE", *max_size, "a size such as 500M, 2G or 1048576");
    s.cache_max_size = *v;
  }
  row("TILEJIT_CACHE_MAX_SIZE", max_size, "2G", "2G", "disk cache size bound; least recently used entries go");

  auto arch = env("TILEJIT_ARCH");
  if (arch) {
    if (!is_valid_arch(*arch)) bad_value("TILEJIT_ARCH", *arch, "an architecture such as sm_80, sm_90 or sm_90a");
    s.arch = *arch;
  }
  row("TILEJIT_ARCH", arch, "(from the device)", "the device's", "target architecture; needed to compile without a GPU");

  auto device = env("TILEJIT_DEVICE");
  if (device) {
    int d = -1;
    auto [end, ec] = std::from_chars(device->data(), device->data() + device->size(), d);
    if (ec != std::errc() || end != device->data() + device->size() || d < 0)
      bad_value("TILEJIT_DEVICE", *device, "a device ordinal (0, 1, ...)");
    s.device = d;
  }
  row("TILEJIT_DEVICE", device, "0", "0", "device ordinal used by Runtime");

  auto level = env("TILEJIT_LOG_LEVEL");
  if (level) {
    static const std::pair<const char*, LogLevel> kLevels[] = {{"trace", LogLevel::trace}, {"debug", LogLevel::debug},
                                                               {"info", LogLevel::info},   {"warn", LogLevel::warn},
                                                               {"error", LogLevel::error}, {"off", LogLevel::off}};
    bool found = false;
    for (auto& [name, l] : kLevels)
      if (*level == name) s.log_level = l, found = true;
    if (!found) bad_value("TILEJIT_LOG_LEVEL", *level, "trace, debug, info, warn, error or off");
  }
  row("TILEJIT_LOG_LEVEL", level, "warn", "warn", "log level (debug logs every compile)");

  auto gemm = env("TILEJIT_GEMM_CONFIG");
  if (gemm) {
    // Its syntax now, so that `tilejit config` and the Runtime refuse a typo by name instead of the
    // first GEMM; whether it suits a problem and a device is checked per problem.
    try {
      GemmConfig::parse(*gemm);
    } catch (const InvalidArgument& e) {
      bad_value("TILEJIT_GEMM_CONFIG", *gemm, fmt::format("a GEMM configuration ({})", e.what()));
    }
  }
  s.gemm_config = gemm;
  row("TILEJIT_GEMM_CONFIG", gemm, "(unset)", "unset", "force every GEMM's configuration");

  auto autotune = env("TILEJIT_AUTOTUNE");
  if (autotune) {
    if (*autotune == "off") s.autotune = AutotuneMode::off;
    else if (*autotune == "cached") s.autotune = AutotuneMode::cached;
    else if (*autotune == "on") s.autotune = AutotuneMode::on;
    else
      bad_value("TILEJIT_AUTOTUNE", *autotune,
                "off (the heuristic only), cached (tuned configurations where the cache has them) or on (also tune a shape class "
                "the first time it is planned)");
  }
  row("TILEJIT_AUTOTUNE", autotune, "cached", "cached",
      "GEMM configurations from tuning results in the disk cache: off, cached (use them, never tune implicitly), on (tune a shape class "
      "the first time a plan needs it); TILEJIT_GEMM_CONFIG wins over both");

  auto tdir = env("TILEJIT_TEMPLATE_DIR");
  if (tdir) s.template_dir = *tdir;
  row("TILEJIT_TEMPLATE_DIR", tdir, "(embedded)", "unset", "read kernel templates from here instead of the embedded copy");

  auto cuda_home = env("TILEJIT_CUDA_HOME");
  auto cuda_home2 = env("CUDA_HOME");
  s.cuda_home = cuda_home ? *cuda_home : cuda_home2 ? *cuda_home2 : "/usr/local/cuda";
  row("TILEJIT_CUDA_HOME", cuda_home, s.cuda_home.string(), "CUDA_HOME, then /usr/local/cuda",
      "where include/cuda_fp16.h and friends live");

  auto dump = env("TILEJIT_DUMP_DIR");
  if (dump) s.dump_dir = *dump;
  row("TILEJIT_DUMP_DIR", dump, "(unset)", "unset", "write each compiled kernel's source, options, PTX and cubin here");

  auto always = env("TILEJIT_ALWAYS_COMPILE");
  if (always) s.always_compile = parse_bool("TILEJIT_ALWAYS_COMPILE", *always);
  row("TILEJIT_ALWAYS_COMPILE", always, "0", "0", "ignore the caches (tilejit's and NVRTC's own) and compile every kernel (debugging, compile timing)");

  auto warmup = env("TILEJIT_NVRTC_WARMUP");
  if (warmup) s.nvrtc_warmup = parse_bool("TILEJIT_NVRTC_WARMUP", *warmup);
  row("TILEJIT_NVRTC_WARMUP", warmup, "1", "1",
      "start NVRTC on a background thread when a Runtime sets up its device (0: not, for processes that only load cached kernels)");

  auto pdl = env("TILEJIT_PDL");
  if (pdl) s.programmatic_launch = parse_bool("TILEJIT_PDL", *pdl);
  row("TILEJIT_PDL", pdl, "1", "1",
      "launch GEMM kernels with programmatic dependent launch on sm_90+, so that each one's prologue overlaps the previous kernel's "
      "tail (0: plain stream order)");

  auto libcuda = env("TILEJIT_LIBCUDA");
  if (libcuda) s.driver_library = *libcuda;
  row("TILEJIT_LIBCUDA", libcuda, s.driver_library, "libcuda.so.1", "the CUDA driver library loaded at run time");
  return s;
}

}  // namespace tilejit::util
