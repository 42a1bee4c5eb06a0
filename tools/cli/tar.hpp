// A minimal POSIX ustar reader and writer for `tilejit cache export/import` (regular files only).
#pragma once

#include <string>
#include <vector>

namespace tilejit::cli {

struct TarMember {
  std::string name;
  std::string data;
};

std::string write_tar(const std::vector<TarMember>& members);
// Throws tilejit::Error on a malformed archive (bad header checksum, truncated data).
std::vector<TarMember> read_tar(const std::string& archive);

}  // namespace tilejit::cli
