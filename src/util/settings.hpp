// One typed accessor for every TILEJIT_* environment variable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit::util {

enum class CacheMode { on, off, readonly };
enum class LogLevel { trace, debug, info, warn, error, off };
// TILEJIT_AUTOTUNE: whether GEMM plans use tuned configurations (cached), and whether a shape class
// seen for the first time is tuned on the spot (on).
enum class AutotuneMode { off, cached, on };

// One row of `tilejit config`: the variable, its effective value and where it came from.
struct SettingRow {
  std::string variable;
  std::string value;
  bool from_environment = false;
  std::string default_text;
  std::string meaning;
};

struct Settings {
  std::filesystem::path cache_dir;
  CacheMode cache = CacheMode::on;
  std::uint64_t cache_max_size = 2ull << 30;
  std::optional<std::string> arch;
  int device = 0;
  LogLevel log_level = LogLevel::warn;
  std::optional<std::string> gemm_config;
  std::optional<std::filesystem::path> template_dir;
  std::filesystem::path cuda_home;
  std::optional<std::filesystem::path> dump_dir;
  bool always_compile = false;
  bool nvrtc_warmup = true;
  bool programmatic_launch = true;  // TILEJIT_PDL
  AutotuneMode autotune = AutotuneMode::cached;
  std::string driver_library = "libcuda.so.1";
  std::vector<SettingRow> rows;  // every variable, for display

  // Reads the environment; a bad value throws InvalidArgument naming the variable and the form.
  static Settings from_environment();
};

// Parses "2G", "500M", "64K", "1234" (bytes; K/M/G/T are powers of 1024, optional trailing B/iB).
std::optional<std::uint64_t> parse_size(std::string_view text);
std::string format_size(std::uint64_t bytes);
// Validates an arch name: sm_XY or sm_XYa / sm_XYf (e.g. sm_80, sm_90a).
bool is_valid_arch(std::string_view arch);
std::string_view log_level_name(LogLevel level);
std::string_view autotune_mode_name(AutotuneMode mode);

}  // namespace tilejit::util
