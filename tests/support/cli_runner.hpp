// Runs the tilejit CLI (next to the test binary) and captures its output and exit code.
#pragma once

#include "test_support.hpp"

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace tilejit::test {

struct CliResult {
  int code = -1;
  std::string out;  // stdout and stderr together
};

inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " + (binary_dir() / "tilejit").string() + " " + args + " 2>&1";
  CliResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  while (std::size_t got = std::fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), got);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace tilejit::test
