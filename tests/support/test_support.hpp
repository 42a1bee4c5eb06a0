// Helpers shared by the tests.
#pragma once

#include <gtest/gtest.h>

#include <tilejit/runtime.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tilejit::test {

// GPU tests call this first: without a driver or device they skip with the reason.
#define TILEJIT_REQUIRE_GPU(rt)                                    \
  do {                                                             \
    std::string tilejit_why_;                                      \
    if (!(rt).has_device(&tilejit_why_)) GTEST_SKIP() << tilejit_why_; \
  } while (0)

// Sets an environment variable for the scope of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// A fresh directory under the system temp directory, removed at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tilejit-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The directory of the running test binary (build/bin), where the CLI lives too.
inline std::filesystem::path binary_dir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path(); }

}  // namespace tilejit::test
