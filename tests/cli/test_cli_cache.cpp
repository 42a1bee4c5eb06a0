// `tilejit cache ...` and the parallel `tilejit compile`: every command runs, every --json parses.
#include "cli_runner.hpp"

#include "util/files.hpp"

#include <nlohmann/json.hpp>

namespace tilejit {
namespace {

using test::run_cli;

class CacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    env = "TILEJIT_CACHE_DIR=" + (dir.path() / "cache").string();
    auto r = run_cli("compile elementwise -e 'z = x + y' -e 'z = x * 2.f' --dtype f32,bf16 --arch sm_90a,sm_80", env);
    ASSERT_EQ(r.code, 0) << r.out;
  }
  nlohmann::json json(const std::string& args) {
    auto r = run_cli(args + " --json", env);
    EXPECT_EQ(r.code, 0) << r.out;
    return nlohmann::json::parse(r.out);
  }
  test::TempDir dir;
  std::string env;
};

TEST_F(CacheCli, ParallelCompileReportsProgressAndTotals) {
  auto r = run_cli("compile elementwise -e 'z = x - y' -e 'z = x / y' --dtype f32,f16 --arch sm_90a --jobs 2", env);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("[4/4]"), std::string::npos) << r.out;  // plain lines when not on a terminal
  EXPECT_NE(r.out.find("4 kernels in"), std::string::npos) << r.out;
  auto again = run_cli("compile elementwise -e 'z = x - y' -e 'z = x / y' --dtype f32,f16 --arch sm_90a", env);
  EXPECT_NE(again.out.find("0 compiled, 4 cached"), std::string::npos) << again.out;
}

TEST_F(CacheCli, StatsAndZeroStats) {
  auto s = json("cache stats");
  EXPECT_EQ(s["entries"], 8);
  EXPECT_EQ(s["compiles"], 8);
  EXPECT_EQ(s["misses"], 8);
  EXPECT_GT(s["bytes"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(s["max_bytes"], 2ull << 30);
  EXPECT_TRUE(s["enabled"].get<bool>());
  auto text = run_cli("cache stats", env);
  EXPECT_NE(text.out.find("compiles             8"), std::string::npos) << text.out;
  EXPECT_EQ(run_cli("cache zero-stats", env).code, 0);
  EXPECT_EQ(json("cache stats")["compiles"], 0);
}

TEST_F(CacheCli, ListFiltersAndShow) {
  auto all = json("cache list");
  ASSERT_EQ(all.size(), 8u);
  for (const auto& e : all) {
    EXPECT_TRUE(e["valid"].get<bool>());
    EXPECT_TRUE(e.contains("instantiation"));
    EXPECT_TRUE(e.contains("dtypes"));
    EXPECT_TRUE(e.contains("last_used"));
    EXPECT_TRUE(e.contains("hits"));
  }
  EXPECT_EQ(json("cache list --arch sm_80").size(), 4u);
  EXPECT_EQ(json("cache list --kernel z_eq_x_plus_y").size(), 4u);
  EXPECT_EQ(json("cache list --kernel elementwise --arch sm_90a").size(), 4u);
  const std::string key = all[0]["key"];
  auto shown = json("cache show " + key.substr(0, 10) + " --source");
  EXPECT_EQ(shown["key"], key);
  EXPECT_NE(shown["source"].get<std::string>().find("#include \"elementwise.cuh\""), std::string::npos);
  auto text = run_cli("cache show " + key + " --sass", env);
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("--- sass ---"), std::string::npos);
  EXPECT_EQ(run_cli("cache show ffffffffffff", env).code, 2);
  auto table = run_cli("cache list", env);
  EXPECT_NE(table.out.find("8 entries"), std::string::npos) << table.out;
}

TEST_F(CacheCli, VerifyFindsAndFixesCorruption) {
  EXPECT_EQ(run_cli("cache verify", env).code, 0);
  auto all = json("cache list");
  std::filesystem::path path = dir.path() / "cache" / "v1" / "entries" / all[3]["key"].get<std::string>().substr(0, 2) /
                               (all[3]["key"].get<std::string>() + ".tjk");
  auto bytes = util::read_file(path);
  ASSERT_TRUE(bytes);
  (*bytes)[50] ^= 0x10;
  util::write_file(path, *bytes);
  auto bad = run_cli("cache verify", env);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("checksum mismatch"), std::string::npos) << bad.out;
  auto verify_json = json("cache verify --fix");
  EXPECT_EQ(verify_json["invalid"], 1);
  EXPECT_EQ(verify_json["removed"], 1);
  EXPECT_EQ(run_cli("cache verify", env).code, 0);
  EXPECT_EQ(json("cache list").size(), 7u);
}

TEST_F(CacheCli, ExportImportClear) {
  const std::string archive = (dir.path() / "warm.tar").string();
  auto exp = run_cli("cache export " + archive, env);
  ASSERT_EQ(exp.code, 0) << exp.out;
  {
    FILE* p = ::popen(("tar -tf " + archive + " | wc -l").c_str(), "r");
    char buf[64] = {};
    ASSERT_TRUE(std::fgets(buf, sizeof(buf), p));
    ::pclose(p);
    EXPECT_EQ(std::stoi(buf), 8);  // a real tar archive
  }
  auto clear = run_cli("cache clear", env);
  EXPECT_EQ(clear.code, 0) << clear.out;
  EXPECT_EQ(json("cache list").size(), 0u);
  auto imp = run_cli("cache import " + archive, env);
  EXPECT_EQ(imp.code, 0) << imp.out;
  EXPECT_NE(imp.out.find("imported 8 entries, rejected 0"), std::string::npos) << imp.out;
  EXPECT_EQ(run_cli("cache verify", env).code, 0);
  // A tampered archive: the entry is rejected, the rest imported.
  auto bytes = util::read_file(archive);
  ASSERT_TRUE(bytes);
  (*bytes)[512 + 700] ^= 0x01;  // inside the first member's data
  const std::string tampered = (dir.path() / "tampered.tar").string();
  util::write_file(tampered, *bytes);
  run_cli("cache clear", env);
  auto timp = run_cli("cache import " + tampered, env);
  EXPECT_EQ(timp.code, 1) << timp.out;
  EXPECT_NE(timp.out.find("REJECTED"), std::string::npos) << timp.out;
  EXPECT_EQ(json("cache list").size(), 7u);
  // Imported kernels are served from disk without compiling.
  auto again = run_cli("compile elementwise -e 'z = x * 2.f' --dtype f32 --arch sm_80", env);
  EXPECT_EQ(again.code, 0);
}

TEST_F(CacheCli, PruneBySizeAndAge) {
  auto r = run_cli("cache prune --older-than 1", env);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(json("cache list").size(), 8u);  // all used just now
  r = run_cli("cache prune --max-size 1", env);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("removed 8 entries"), std::string::npos) << r.out;
  EXPECT_EQ(json("cache stats")["evictions"], 8);
  EXPECT_EQ(run_cli("cache prune --max-size lots", env).code, 2);
}

TEST_F(CacheCli, ReadonlyRefusesChanges) {
  auto r = run_cli("cache clear", env + " TILEJIT_CACHE=readonly");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot be changed"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("cache list", env + " TILEJIT_CACHE=readonly").code, 0);
}

TEST_F(CacheCli, HelpOnEveryCacheCommand) {
  for (const char* c : {"cache", "cache stats", "cache zero-stats", "cache list", "cache show", "cache verify", "cache prune",
                        "cache clear", "cache export", "cache import"}) {
    auto r = run_cli(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0) << c;
  }
}

}  // namespace
}  // namespace tilejit
