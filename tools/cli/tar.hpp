// A minimal POSIX ustar reader and writer for `tilejit cache export/import` (regular files only),
// and the whole-file reads and writes around them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit::cli {

struct TarMember {
  std::string name;
  std::string data;
};

std::string write_tar(const std::vector<TarMember>& members);
// Throws tilejit::Error on a malformed archive (bad header checksum, truncated data).
std::vector<TarMember> read_tar(const std::string& archive);

// A whole file's bytes, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);
// Writes (truncating); throws tilejit::Error naming the path on failure.
void write_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace tilejit::cli
