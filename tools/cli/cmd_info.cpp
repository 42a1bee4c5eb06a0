// `tilejit info` and `tilejit config`.
#include "commands.hpp"

#include <tilejit/tooling.hpp>

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace tilejit::cli {
namespace {

int run_info(bool json) {
  auto settings = tooling::read_settings();
  nlohmann::json j;
  j["version"] = kVersionString;
  j["nvrtc_version"] = tooling::nvrtc_version();
  j["cache_dir"] = settings.cache_dir.string();
  std::string why;
  const bool has_driver = tooling::driver_available(&why);
  j["driver_version"] = has_driver ? tooling::driver().driver_version : 0;
  nlohmann::json devices = nlohmann::json::array();
  if (has_driver) {
    const auto& api = tooling::driver();
    int count = 0;
    tooling::check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    for (int d = 0; d < count; ++d) {
      RuntimeOptions o;
      o.device = d;
      Runtime rt(o);
      const DeviceInfo& info = rt.device_info();
      devices.push_back({{"ordinal", d},
                         {"name", info.name},
                         {"compute_capability", fmt::format("{}.{}", info.cc_major, info.cc_minor)},
                         {"multiprocessors", info.multiprocessors},
                         {"memory_bytes", info.total_memory},
                         {"l2_bytes", info.l2_bytes},
                         {"arch", rt.target_arch()},
                         {"arch_specific", rt.target_arch_specific()}});
    }
  }
  j["devices"] = devices;
  if (!has_driver) j["no_gpu_reason"] = why;
  std::string default_arch = settings.arch ? *settings.arch : devices.empty() ? std::string("none (set TILEJIT_ARCH)")
                                                                               : devices[0]["arch"].get<std::string>();
  j["default_arch"] = default_arch;
  if (json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("tilejit         {}\nNVRTC           {}\n", kVersionString, tooling::nvrtc_version());
  if (has_driver) fmt::print("CUDA driver     {}.{}\n", j["driver_version"].get<int>() / 1000, (j["driver_version"].get<int>() % 1000) / 10);
  else fmt::print("CUDA driver     none: {}\n", why);
  if (devices.empty()) fmt::print("GPUs            none\n");
  for (const auto& d : devices)
    fmt::print("GPU {}           {} (compute {}, {} SMs, {:.1f} GiB, L2 {:.0f} MiB) -> {} / {}\n", d["ordinal"].get<int>(),
               d["name"].get<std::string>(), d["compute_capability"].get<std::string>(), d["multiprocessors"].get<int>(),
               d["memory_bytes"].get<double>() / (1 << 30), d["l2_bytes"].get<double>() / (1 << 20),
               d["arch"].get<std::string>(), d["arch_specific"].get<std::string>());
  fmt::print("default arch    {}\ncache dir       {}\n", default_arch, settings.cache_dir.string());
  return 0;
}

int run_config(bool json) {
  auto settings = tooling::read_settings();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : settings.rows)
      j.push_back({{"variable", r.variable},
                   {"value", r.value},
                   {"source", r.from_environment ? "environment" : "default"},
                   {"default", r.default_text},
                   {"meaning", r.meaning}});
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  for (const auto& r : settings.rows)
    fmt::print("{:<24} {:<40} ({})\n", r.variable, r.value, r.from_environment ? "environment" : "default");
  return 0;
}

}  // namespace

void register_info(CLI::App& app, Action& action) {
  auto json = std::make_shared<bool>(false);
  CLI::App* info = app.add_subcommand("info", "Devices, driver and NVRTC versions, default arch, cache directory");
  info->add_flag("--json", *json, "Print JSON");
  info->callback([&action, json] { action = [json] { return run_info(*json); }; });

  auto cjson = std::make_shared<bool>(false);
  CLI::App* config = app.add_subcommand("config", "Every TILEJIT_* setting, its value and where it came from");
  config->add_flag("--json", *cjson, "Print JSON");
  config->callback([&action, cjson] { action = [cjson] { return run_config(*cjson); }; });
}

}  // namespace tilejit::cli
