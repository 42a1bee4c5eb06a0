// The disk cache: corruption is always a miss, never a wrong kernel; concurrent processes compile
// once; killed writers leave nothing torn; I/O failures and unsafe directories degrade to memory.
#include "jit/disk_cache.hpp"
#include "runtime_impl.hpp"
#include "test_support.hpp"
#include "util/files.hpp"

#include <tilejit/tilejit.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>

namespace tilejit::jit {
namespace {

namespace fs = std::filesystem;

KernelKey synthetic_key(const std::string& name) {
  KernelKey k;
  k.text = "tilejit-kernel-key\nsynthetic " + name + "\n";
  k.hash = util::hash128(k.text);
  return k;
}

DiskEntry synthetic_entry(const KernelKey& key, std::size_t cubin_bytes) {
  DiskEntry e;
  e.key_text = key.text;
  e.meta.family = "test";
  e.meta.program_name = "synthetic";
  e.meta.name_expressions = {"k<1>"};
  e.meta.lowered_names = {"_Z1kILi1EEvv"};
  e.meta.arch = "sm_90a";
  e.meta.options = {"-std=c++17"};
  e.cubin.resize(cubin_bytes);
  for (std::size_t i = 0; i < cubin_bytes; ++i) e.cubin[i] = static_cast<char>(i * 7 + 1);
  return e;
}

ElementwiseOp axpy() {
  return {.body = "z = x * alpha + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}},
          .scalars = {{"alpha", 2.f}}};
}

class DiskCacheTest : public ::testing::Test {
 protected:
  test::TempDir dir;
  fs::path cache_dir() const { return dir.path() / "cache"; }
  std::unique_ptr<DiskCache> open(std::uint64_t max = 1ull << 30, util::CacheMode mode = util::CacheMode::on) {
    return std::make_unique<DiskCache>(cache_dir(), mode, max);
  }
};

TEST_F(DiskCacheTest, EntryRoundTripsAndDirectoryIsPrivate) {
  auto cache = open();
  ASSERT_TRUE(cache->enabled());
  auto key = synthetic_key("a");
  cache->publish(key, synthetic_entry(key, 5000));
  auto got = cache->lookup(key);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->cubin, synthetic_entry(key, 5000).cubin);
  EXPECT_EQ(got->meta.lowered_names, std::vector<std::string>{"_Z1kILi1EEvv"});
  struct stat st{};
  ASSERT_EQ(::stat(cache_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(cache->entry_path(key.hash.hex()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(cache->lookup(synthetic_key("missing")));
}

TEST_F(DiskCacheTest, FlippingAnyOf200BytesIsAMissAndCountedCorrupt) {
  auto cache = open();
  auto key = synthetic_key("flip");
  const DiskEntry entry = synthetic_entry(key, 3000);
  const std::string good = encode_entry(entry);
  const fs::path path = cache->entry_path(key.hash.hex());
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 200; ++i) {
    cache->publish(key, entry);
    std::string bad = good;
    const std::size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    util::write_file(path, bad);
    EXPECT_FALSE(cache->lookup(key)) << "byte " << at;
    EXPECT_FALSE(fs::exists(path)) << "a corrupt entry stays after a miss (byte " << at << ")";
  }
  EXPECT_EQ(cache->counters().corrupt, 200u);
}

TEST_F(DiskCacheTest, TruncatedEmptyAndSwappedEntriesAreMisses) {
  auto cache = open();
  auto a = synthetic_key("a"), b = synthetic_key("b");
  const std::string good = encode_entry(synthetic_entry(a, 2000));
  for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{39}, std::size_t{40}, good.size() / 2, good.size() - 1}) {
    cache->publish(a, synthetic_entry(a, 2000));
    util::write_file(cache->entry_path(a.hash.hex()), good.substr(0, len));
    EXPECT_FALSE(cache->lookup(a)) << "truncated to " << len;
  }
  // Swapped files: each is a valid entry, but for the other key.
  cache->publish(a, synthetic_entry(a, 2000));
  cache->publish(b, synthetic_entry(b, 3000));
  fs::path pa = cache->entry_path(a.hash.hex()), pb = cache->entry_path(b.hash.hex()), tmp = dir.path() / "swap";
  fs::rename(pa, tmp);
  fs::rename(pb, pa);
  fs::rename(tmp, pb);
  EXPECT_FALSE(cache->lookup(a));
  EXPECT_FALSE(cache->lookup(b));
  EXPECT_EQ(cache->counters().corrupt, 8u);
  // A wrong format version is a miss too.
  cache->publish(a, synthetic_entry(a, 100));
  std::string v2 = encode_entry(synthetic_entry(a, 100));
  v2[8] = 2;
  util::write_file(cache->entry_path(a.hash.hex()), v2);
  EXPECT_FALSE(cache->lookup(a));
}

TEST_F(DiskCacheTest, ARuntimeRecompilesACorruptEntry) {
  test::ScopedEnv env("TILEJIT_CACHE_DIR", cache_dir().string());
  RuntimeOptions o;
  o.arch = "sm_90a";
  std::string key;
  {
    Runtime rt(o);
    auto info = rt.compile_elementwise(axpy(), {});
    EXPECT_FALSE(info.from_cache);
    key = info.key;
  }
  {
    Runtime rt(o);  // a fresh memory cache: the kernel comes from disk
    auto info = rt.compile_elementwise(axpy(), {});
    EXPECT_TRUE(info.from_cache);
    EXPECT_EQ(rt.stats().compiles, 0u);
    EXPECT_EQ(rt.stats().disk_hits, 1u);
  }
  DiskCache cache(cache_dir(), util::CacheMode::on, 1ull << 30);
  const fs::path path = cache.entry_path(key);
  auto bytes = util::read_file(path);
  ASSERT_TRUE(bytes);
  (*bytes)[bytes->size() / 2] ^= 0x40;
  util::write_file(path, *bytes);
  {
    Runtime rt(o);
    auto info = rt.compile_elementwise(axpy(), {});
    EXPECT_FALSE(info.from_cache);
    EXPECT_EQ(rt.stats().compiles, 1u);
    EXPECT_EQ(info.key, key);
  }
  auto c = cache.counters();
  EXPECT_EQ(c.corrupt, 1u);
  EXPECT_EQ(c.compiles, 2u);
  EXPECT_EQ(c.disk_hits, 1u);
  for (const auto& e : cache.list(true)) EXPECT_TRUE(e.valid) << e.problem;
}

// Runs `tilejit ARGS...` in 16 processes released at the same moment on one cache directory, and
// checks that exactly one of them compiled and the others found its entry.
void sixteen_processes_compile_once(const fs::path& cache_dir, const std::vector<std::string>& args) {
  const fs::path cli = test::binary_dir() / "tilejit";
  std::vector<const char*> argv{"tilejit"};
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  std::vector<pid_t> pids;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  for (int i = 0; i < 16; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Every child waits for the parent's go, so all 16 ask at the same moment.
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) < 0) _exit(3);
      ::setenv("TILEJIT_CACHE_DIR", cache_dir.c_str(), 1);
      int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 1);
      ::execv(cli.c_str(), const_cast<char* const*>(argv.data()));
      _exit(4);
    }
    pids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);  // EOF releases every child at once
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  DiskCache cache(cache_dir, util::CacheMode::on, 1ull << 30);
  auto c = cache.counters();
  EXPECT_EQ(c.compiles, 1u);
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.disk_hits, 15u);
  auto entries = cache.list(true);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].valid) << entries[0].problem;
}

TEST_F(DiskCacheTest, SixteenProcessesCompileOnce) {
  sixteen_processes_compile_once(cache_dir(), {"compile", "elementwise", "-e", "z = sin(x) * cos(y) + x / 3.f", "--arch", "sm_90a"});
}

// A user's kernel (examples/rope.cu through `tilejit compile kernel`) follows the same rule.
TEST_F(DiskCacheTest, SixteenProcessesCompileAUserKernelOnce) {
  sixteen_processes_compile_once(cache_dir(), {"compile", "kernel", std::string(TILEJIT_EXAMPLES_DIR) + "/rope.cu", "--name",
                                               "rope<128, float>", "--arch", "sm_90a"});
  DiskCache cache(cache_dir(), util::CacheMode::on, 1ull << 30);
  auto entries = cache.list(true);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].entry.meta.family, "user");
  EXPECT_EQ(entries[0].entry.meta.name_expressions, std::vector<std::string>{"rope<128, float>"});
}

TEST_F(DiskCacheTest, KillNineMidWriteNeverLeavesABadEntry) {
  const fs::path writer = test::binary_dir() / "tilejit_cache_writer";
  open();  // create the directory
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::execl(writer.c_str(), "tilejit_cache_writer", cache_dir().c_str(), "1000", "2000000", static_cast<char*>(nullptr));
      _exit(4);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 60));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the writer finished before it was killed; make it write more";
  }
  auto cache = open();
  std::size_t entries = 0;
  for (const auto& e : cache->list(true)) {
    ++entries;
    EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
  }
  std::size_t temporaries = 0;
  for (const auto& f : fs::recursive_directory_iterator(cache->root()))
    temporaries += f.path().filename().string().find(".tmp.") != std::string::npos;
  EXPECT_GT(entries + temporaries, 0u);
  // Stale temporaries are cleaned up (here: any age).
  cache->prune(UINT64_MAX, std::nullopt, std::chrono::seconds(0));
  for (const auto& f : fs::recursive_directory_iterator(cache->root()))
    EXPECT_EQ(f.path().filename().string().find(".tmp."), std::string::npos) << f.path();
}

class DegradedCache : public DiskCacheTest, public ::testing::WithParamInterface<int> {};

TEST_P(DegradedCache, WorksFromMemoryAndWarnsOnce) {
  test::ScopedEnv env("TILEJIT_CACHE_DIR", cache_dir().string());
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  ASSERT_TRUE(detail::RuntimeAccess::jit(rt).disk && detail::RuntimeAccess::jit(rt).disk->enabled());
  detail::RuntimeAccess::jit(rt).disk->inject_write_failure(GetParam());
  ::testing::internal::CaptureStderr();
  auto first = rt.compile_elementwise(axpy(), {});
  ElementwiseOp other = axpy();
  other.body = "z = x - y * alpha";
  auto second = rt.compile_elementwise(other, {});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_GT(first.cubin_bytes, 0u);
  EXPECT_GT(second.cubin_bytes, 0u);
  EXPECT_FALSE(detail::RuntimeAccess::jit(rt).disk->enabled());
  std::size_t warnings = 0;
  for (auto at = err.find("disabled for this process"); at != std::string::npos; at = err.find("disabled for this process", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << err;
  EXPECT_NE(err.find(std::strerror(GetParam())), std::string::npos) << err;
  EXPECT_EQ(detail::RuntimeAccess::jit(rt).disk->counters().write_errors, 1u);
  EXPECT_TRUE(rt.compile_elementwise(axpy(), {}).from_cache);  // still cached in memory
}

INSTANTIATE_TEST_SUITE_P(Errors, DegradedCache, ::testing::Values(EROFS, ENOSPC, EACCES),
                         [](const auto& param_info) {
                           return std::string(param_info.param == EROFS ? "ReadOnlyFileSystem" : param_info.param == ENOSPC ? "NoSpace" : "PermissionDenied");
                         });

TEST_F(DiskCacheTest, ReadOnlyDirectoryForAnOrdinaryUser) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes through read-only permissions; the injected EROFS case covers this";
  open();
  ::chmod(cache_dir().c_str(), 0500);
  test::ScopedEnv env("TILEJIT_CACHE_DIR", cache_dir().string());
  RuntimeOptions o;
  o.arch = "sm_90a";
  Runtime rt(o);
  EXPECT_GT(rt.compile_elementwise(axpy(), {}).cubin_bytes, 0u);
  ::chmod(cache_dir().c_str(), 0700);
}

TEST_F(DiskCacheTest, WorldWritableOrForeignDirectoryIsRefused) {
  fs::create_directories(cache_dir());
  ::chmod(cache_dir().c_str(), 0777);
  ::testing::internal::CaptureStderr();
  auto cache = open();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache->enabled());
  EXPECT_NE(cache->disabled_reason().find("writable by others"), std::string::npos) << cache->disabled_reason();
  EXPECT_NE(err.find("not used"), std::string::npos) << err;
  ::chmod(cache_dir().c_str(), 0770);
  EXPECT_NE(open()->disabled_reason().find("writable by its group"), std::string::npos);
  ::chmod(cache_dir().c_str(), 0700);
  EXPECT_TRUE(open()->enabled());
  {
    test::ScopedEnv env("TILEJIT_CACHE_DIR", cache_dir().string());
    ::chmod(cache_dir().c_str(), 0777);
    RuntimeOptions o;
    o.arch = "sm_90a";
    Runtime rt(o);
    EXPECT_GT(rt.compile_elementwise(axpy(), {}).cubin_bytes, 0u);  // works from memory
    ::chmod(cache_dir().c_str(), 0700);
  }
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(cache_dir().c_str(), 65534, 65534), 0);
    auto foreign = open();
    EXPECT_FALSE(foreign->enabled());
    EXPECT_NE(foreign->disabled_reason().find("owned by uid 65534"), std::string::npos) << foreign->disabled_reason();
    ASSERT_EQ(::chown(cache_dir().c_str(), 0, 0), 0);
  }
}

TEST_F(DiskCacheTest, SizeLimitEvictsLeastRecentlyUsed) {
  const std::size_t entry_bytes = 20000;
  const std::uint64_t limit = 5 * (entry_bytes + 1000);  // five entries fit
  auto cache = open(limit);
  std::vector<KernelKey> keys;
  for (int i = 0; i < 5; ++i) {
    keys.push_back(synthetic_key("e" + std::to_string(i)));
    cache->publish(keys.back(), synthetic_entry(keys.back(), entry_bytes));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(cache->lookup(keys[0]));  // e0 becomes the most recently used
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  for (int i = 5; i < 7; ++i) {
    keys.push_back(synthetic_key("e" + std::to_string(i)));
    cache->publish(keys.back(), synthetic_entry(keys.back(), entry_bytes));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(fs::exists(cache->entry_path(keys[0].hash.hex())));
  EXPECT_FALSE(fs::exists(cache->entry_path(keys[1].hash.hex())));
  EXPECT_FALSE(fs::exists(cache->entry_path(keys[2].hash.hex())));
  EXPECT_TRUE(fs::exists(cache->entry_path(keys[6].hash.hex())));
  std::uint64_t total = 0;
  for (const auto& e : cache->list(false)) total += e.bytes;
  EXPECT_LE(total, limit);
  EXPECT_EQ(cache->counters().evictions, 2u);
}

TEST_F(DiskCacheTest, LockWaitsThenTimesOut) {
  auto a = open(), b = open();
  auto key = synthetic_key("locked");
  auto held = a->lock(key, std::chrono::milliseconds(100));
  ASSERT_TRUE(held.held());
  auto t0 = std::chrono::steady_clock::now();
  auto waiter = b->lock(key, std::chrono::milliseconds(150));
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_FALSE(waiter.held());
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_TRUE(b->lock(synthetic_key("other"), std::chrono::milliseconds(10)).held());  // other keys are free
  { auto released = std::move(held); }
  EXPECT_TRUE(b->lock(key, std::chrono::milliseconds(10)).held());
}

TEST_F(DiskCacheTest, ReadonlyModeNeverWrites) {
  auto writer = open();
  auto key = synthetic_key("shipped");
  writer->publish(key, synthetic_entry(key, 1000));
  const auto before = fs::last_write_time(writer->entry_path(key.hash.hex()));
  auto ro = open(1ull << 30, util::CacheMode::readonly);
  ASSERT_TRUE(ro->enabled());
  EXPECT_FALSE(ro->writable());
  EXPECT_TRUE(ro->lookup(key));
  auto other = synthetic_key("new");
  ro->publish(other, synthetic_entry(other, 1000));
  EXPECT_FALSE(fs::exists(ro->entry_path(other.hash.hex())));
  EXPECT_FALSE(ro->lock(other, std::chrono::milliseconds(10)).held());
  EXPECT_EQ(fs::last_write_time(writer->entry_path(key.hash.hex())), before);
  EXPECT_FALSE(open(1ull << 30, util::CacheMode::readonly).get() == nullptr);
  test::TempDir empty;
  EXPECT_FALSE(DiskCache(empty.path() / "none", util::CacheMode::readonly, 1).enabled());
}

TEST_F(DiskCacheTest, ImportVerifiesEntries) {
  auto cache = open();
  auto key = synthetic_key("imported");
  const std::string good = encode_entry(synthetic_entry(key, 1000));
  EXPECT_FALSE(cache->import_entry(key.hash.hex(), good));
  EXPECT_TRUE(cache->lookup(key));
  std::string bad = good;
  bad[100] ^= 1;
  EXPECT_TRUE(cache->import_entry(synthetic_key("x").hash.hex(), bad));
  EXPECT_TRUE(cache->import_entry(synthetic_key("x").hash.hex(), good));  // misnamed
}

}  // namespace
}  // namespace tilejit::jit
