// Small file helpers shared by the template registry, the dump directory and the disk cache.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tilejit::util {

// Whole file as bytes, or nullopt if it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);
// Writes bytes to path (truncating); throws tilejit::Error naming the path on failure.
void write_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace tilejit::util
