#include "util/files.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilejit::util {

std::optional<std::string> read_file(const std::filesystem::path& path) {
  // POSIX calls: an ifstream costs tens of microseconds more, and small files are read on hot paths
  // (a fresh process making its first kernel key).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  std::string out;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (true) {
    if (got == out.size()) out.resize(out.size() + 4096);
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

}  // namespace tilejit::util
