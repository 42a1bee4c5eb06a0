#include "util/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

namespace tilejit::util {

spdlog::logger& log() {
  // A logger of our own (not spdlog's registry), so a host application's spdlog set-up is untouched.
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("tilejit", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("[tilejit %L] %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return *logger;
}

void set_log_level(LogLevel level) {
  static constexpr spdlog::level::level_enum kMap[] = {spdlog::level::trace, spdlog::level::debug,
                                                       spdlog::level::info,  spdlog::level::warn,
                                                       spdlog::level::err,   spdlog::level::off};
  log().set_level(kMap[static_cast<int>(level)]);
}

}  // namespace tilejit::util
