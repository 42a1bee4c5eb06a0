// main() of every test binary: each test process gets a fresh, private kernel cache directory
// (removed at exit), so no test sees another's entries or the user's cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string dir = (std::filesystem::temp_directory_path() / "tilejit-test-cache-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return 1;
  ::setenv("TILEJIT_CACHE_DIR", dir.c_str(), 1);
  int rc = RUN_ALL_TESTS();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
