// GEMM tuning entries in the disk cache: the kernel entries' guarantees hold for them too (a corrupt
// entry is ignored and removed, processes merging at once lose nobody's measurements, a killed writer
// leaves nothing torn), a stale entry is never used, and the CLI lists, shows, exports and imports them.
#include "cli_runner.hpp"
#include "jit/disk_cache.hpp"
#include "ops/gemm/gemm_tuning.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>
#include <thread>

namespace tilejit::ops {
namespace {

namespace fs = std::filesystem;

const TuningIdentity kIdentity{"Test GPU", 132, "cuda 13000", "13.0.0", "0.1.0", "t", "sm_90a"};

TuningRecord record(const std::string& shape_class, std::initializer_list<std::pair<const char*, double>> times) {
  TuningRecord r;
  r.shape_class = shape_class;
  r.m = 512, r.n = 512, r.k = 512;
  r.heuristic = times.begin()->first;
  for (auto [c, ms] : times) r.measurements.push_back({c, ms, true, "", 1700000000});
  return r;
}

class TuningCacheTest : public ::testing::Test {
 protected:
  test::TempDir dir;
  fs::path cache_dir() const { return dir.path() / "cache"; }
  std::unique_ptr<jit::DiskCache> open() { return std::make_unique<jit::DiskCache>(cache_dir(), util::CacheMode::on, 1ull << 30); }
  fs::path writer() const { return test::binary_dir() / "tilejit_cache_writer"; }
};

TEST_F(TuningCacheTest, StoredRecordLoadsBackAsAnEntryOfItsOwnKind) {
  auto cache = open();
  const auto key = tuning_key(kIdentity, "gemm a");
  bool stored = false;
  const auto merged = store_tuning_record(cache.get(), key, kIdentity,
                                          record("gemm a", {{"simt:64x64x8:32x16:2", 2.0}, {"simt:128x64x8:64x32:2", 1.0}}), 0.02,
                                          "f32,f32->f32", &stored);
  EXPECT_TRUE(stored);
  EXPECT_EQ(merged.chosen, "simt:128x64x8:64x32:2");
  auto back = load_tuning_record(*cache, key);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->chosen, merged.chosen);
  EXPECT_EQ(back->measurements.size(), 2u);
  auto entries = cache->list(true);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].valid);
  EXPECT_EQ(entries[0].entry.meta.family, "tuning");
  EXPECT_EQ(entries[0].entry.meta.config, "simt:128x64x8:64x32:2");
}

TEST_F(TuningCacheTest, FlippingAnyByteMakesTheEntryIgnoredAndRemoved) {
  auto cache = open();
  const auto key = tuning_key(kIdentity, "gemm flip");
  store_tuning_record(cache.get(), key, kIdentity, record("gemm flip", {{"simt:64x64x8:32x16:2", 2.0}}), 0.02, "", nullptr);
  const fs::path path = cache->entry_path(key.hash.hex());
  std::string good;
  {
    std::ifstream f(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(f), {});
  }
  ASSERT_GT(good.size(), 200u);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    std::string bad = good;
    bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << bad;
    }
    EXPECT_FALSE(load_tuning_record(*cache, key)) << "trial " << trial;
    EXPECT_FALSE(fs::exists(path)) << "a corrupt entry stays";
  }
  EXPECT_GE(cache->counters().corrupt, 60u);
}

// An entry another driver, library or device wrote has another key: it is never found for this one,
// and stays for the software that wrote it.
TEST_F(TuningCacheTest, StaleEntriesAreNeverUsed) {
  auto cache = open();
  std::vector<TuningIdentity> stale(4, kIdentity);
  stale[0].driver = "cuda 12080";
  stale[1].library = "0.0.9";
  stale[2].templates = "older";
  stale[3].multiprocessors = 114;
  for (const auto& id : stale) {
    store_tuning_record(cache.get(), tuning_key(id, "gemm s"), id, record("gemm s", {{"simt:64x64x8:32x16:2", 1.0}}), 0.02, "", nullptr);
    EXPECT_TRUE(load_tuning_record(*cache, tuning_key(id, "gemm s")));
  }
  EXPECT_FALSE(load_tuning_record(*cache, tuning_key(kIdentity, "gemm s")));
  // A kernel entry under a tuning key (or any entry whose payload is not a record) is not used either.
  const auto key = tuning_key(kIdentity, "gemm k");
  jit::DiskEntry e = tuning_entry(key, kIdentity, record("gemm k", {{"simt:64x64x8:32x16:2", 1.0}}), "");
  e.meta.family = "gemm";
  cache->publish(key, e);
  EXPECT_FALSE(load_tuning_record(*cache, key));
  e.meta.family = "tuning";
  e.cubin = "\x7f" "ELF";
  cache->publish(key, e);
  EXPECT_FALSE(load_tuning_record(*cache, key));
}

// Twelve processes released together each add their own candidates to one class's entry, twice:
// the lock serialises the merges, so the entry ends with every process's measurements.
TEST_F(TuningCacheTest, ConcurrentWritersKeepEveryonesMeasurements) {
  open();
  constexpr int kWriters = 12, kEach = 5;
  std::vector<pid_t> pids;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  for (int i = 0; i < kWriters; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) < 0) _exit(3);
      const std::string index = std::to_string(i), each = std::to_string(kEach);
      ::execl(writer().c_str(), "tilejit_cache_writer", cache_dir().c_str(), "tuning", index.c_str(), each.c_str(), "2",
              static_cast<char*>(nullptr));
      _exit(4);
    }
    pids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  auto cache = open();
  const TuningIdentity id{"Test GPU", 132, "cuda 13000", "13.0.0", "0.1.0", "t", "sm_90a"};  // the writer's
  auto r = load_tuning_record(*cache, tuning_key(id, "gemm concurrency test"));
  ASSERT_TRUE(r);
  std::set<std::string> configs;
  for (const auto& m : r->measurements) configs.insert(m.config);
  EXPECT_EQ(configs.size(), static_cast<std::size_t>(kWriters * kEach));
  EXPECT_EQ(r->measurements.size(), static_cast<std::size_t>(kWriters * kEach));
  EXPECT_EQ(r->chosen, "simt:64x64x8:32x16:2");  // writer 0's first, the fastest
  for (const auto& e : cache->list(true)) EXPECT_TRUE(e.valid) << e.problem;
}

TEST_F(TuningCacheTest, KillNineMidWriteNeverLeavesABadEntry) {
  open();
  std::mt19937 rng(11);
  for (int i = 0; i < 15; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Records of 20000 measurements (about 2 MB of JSON), rewritten again and again.
      ::execl(writer().c_str(), "tilejit_cache_writer", cache_dir().c_str(), "tuning", "1", "20000", "1000", static_cast<char*>(nullptr));
      _exit(4);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 150));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the writer finished before it was killed; make it write more";
  }
  auto cache = open();
  for (const auto& e : cache->list(true)) EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
  const TuningIdentity id{"Test GPU", 132, "cuda 13000", "13.0.0", "0.1.0", "t", "sm_90a"};
  if (auto r = load_tuning_record(*cache, tuning_key(id, "gemm concurrency test"))) {
    EXPECT_EQ(r->measurements.size(), 20000u);
  }
}

TEST_F(TuningCacheTest, CliListsShowsExportsAndImportsTuningEntries) {
  auto cache = open();
  const auto key = tuning_key(kIdentity, "gemm cli");
  store_tuning_record(cache.get(), key, kIdentity, record("gemm cli", {{"simt:64x64x8:32x16:2", 2.0}, {"simt:128x64x8:64x32:2", 1.0}}), 0.02,
                      "f32,f32->f32", nullptr);
  jit::DiskEntry kernel;  // and one kernel entry beside it
  kernel.key_text = "tilejit-kernel-key\nsynthetic\n";
  kernel.meta.family = "gemm";
  kernel.meta.program_name = "gemm_synthetic";
  kernel.cubin = "cubin";
  jit::KernelKey kk{kernel.key_text, util::hash128(kernel.key_text)};
  cache->publish(kk, kernel);
  const std::string env = "TILEJIT_CACHE_DIR=" + cache_dir().string();
  auto list = test::run_cli("cache list --kind tuning --json", env);
  ASSERT_EQ(list.code, 0) << list.out;
  auto rows = nlohmann::json::parse(list.out);
  ASSERT_EQ(rows.size(), 1u) << list.out;
  EXPECT_EQ(rows[0]["family"], "tuning");
  EXPECT_EQ(rows[0]["tuning"]["chosen"], "simt:128x64x8:64x32:2");
  auto kernels = test::run_cli("cache list --kind kernels --json", env);
  ASSERT_EQ(kernels.code, 0) << kernels.out;
  EXPECT_EQ(nlohmann::json::parse(kernels.out).size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(test::run_cli("cache list --json", env).out).size(), 2u);
  auto bad = test::run_cli("cache list --kind cubins", env);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("expected kernels, tuning or all"), std::string::npos) << bad.out;
  auto show = test::run_cli("cache show " + key.hash.hex().substr(0, 10), env);
  ASSERT_EQ(show.code, 0) << show.out;
  for (const char* part : {"family         tuning", "class          gemm cli", "chosen         simt:128x64x8:64x32:2", "simt:64x64x8:32x16:2",
                           "2.0000 ms"})
    EXPECT_NE(show.out.find(part), std::string::npos) << part << " in\n" << show.out;
  // A bundle carries tuning entries to another cache, verified on the way in.
  const fs::path tar = dir.path() / "bundle.tar";
  ASSERT_EQ(test::run_cli("cache export " + tar.string(), env).code, 0);
  test::TempDir other;
  const std::string env2 = "TILEJIT_CACHE_DIR=" + (other.path() / "c").string();
  auto imp = test::run_cli("cache import " + tar.string(), env2);
  ASSERT_EQ(imp.code, 0) << imp.out;
  jit::DiskCache second(other.path() / "c", util::CacheMode::on, 1ull << 30);
  auto r = load_tuning_record(second, key);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->chosen, "simt:128x64x8:64x32:2");
}

}  // namespace
}  // namespace tilejit::ops
