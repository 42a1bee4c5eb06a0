// The library's logger (spdlog, stderr, name "tilejit"); its level comes from TILEJIT_LOG_LEVEL.
#pragma once

#include "util/settings.hpp"

#include <spdlog/spdlog.h>

namespace tilejit::util {

spdlog::logger& log();
void set_log_level(LogLevel level);

}  // namespace tilejit::util
