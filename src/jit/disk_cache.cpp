#include "jit/disk_cache.hpp"

#include "util/hash.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

namespace tilejit::jit {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'T', 'J', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 3 * 8;
constexpr std::size_t kChecksumBytes = 16;
constexpr std::uint64_t kStatsMagic = 0x3153544154534a54ull;  // "TJSTATS1"
constexpr int kStatsFields = 8;

void put_u32(std::string& s, std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& s, std::uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
std::uint32_t get_u32(const std::string& s, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
std::uint64_t get_u64(const std::string& s, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}

std::int64_t now_unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Reads a whole file through a descriptor; nullopt and errno set on failure.
std::optional<std::string> read_all(const fs::path& p, int* error_number) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error_number = errno;
    return std::nullopt;
  }
  struct stat st{};
  std::string out;
  if (::fstat(fd, &st) == 0) out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(got);
  ::close(fd);
  return out;
}

bool write_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t w = ::write(fd, data + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<std::size_t>(w);
  }
  return true;
}

// A byte-range OFD lock on one byte of `fd`; released when the descriptor closes (or the process dies).
bool try_lock_byte(int fd, off_t at, bool wait) {
  struct flock fl{};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = at;
  fl.l_len = 1;
  while (true) {
    if (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) == 0) return true;
    if (errno != EINTR) return false;
  }
}

nlohmann::json meta_to_json(const EntryMetadata& m) {
  return {{"family", m.family},       {"program_name", m.program_name}, {"name_expressions", m.name_expressions},
          {"lowered_names", m.lowered_names}, {"dtypes", m.dtypes},     {"config", m.config},
          {"arch", m.arch},           {"nvrtc_version", m.nvrtc_version}, {"options", m.options},
          {"compile_ms", m.compile_ms}, {"created_unix", m.created_unix}};
}

EntryMetadata meta_from_json(const nlohmann::json& j) {
  EntryMetadata m;
  m.family = j.at("family").get<std::string>();
  m.program_name = j.at("program_name").get<std::string>();
  // Entries written before programs could export several kernels name one of each.
  if (j.contains("name_expressions")) {
    m.name_expressions = j.at("name_expressions").get<std::vector<std::string>>();
    m.lowered_names = j.at("lowered_names").get<std::vector<std::string>>();
  } else {
    m.name_expressions = {j.at("name_expression").get<std::string>()};
    m.lowered_names = {j.at("lowered_name").get<std::string>()};
  }
  if (m.name_expressions.size() != m.lowered_names.size()) throw std::runtime_error("name expressions and symbols differ in number");
  m.dtypes = j.at("dtypes").get<std::string>();
  m.config = j.at("config").get<std::string>();
  m.arch = j.at("arch").get<std::string>();
  m.nvrtc_version = j.at("nvrtc_version").get<std::string>();
  m.options = j.at("options").get<std::vector<std::string>>();
  m.compile_ms = j.at("compile_ms").get<double>();
  m.created_unix = j.at("created_unix").get<std::int64_t>();
  return m;
}

bool mkdir_0700(const fs::path& p) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) return true;
  if (!p.parent_path().empty() && p.parent_path() != p && !mkdir_0700(p.parent_path())) return false;
  return ::mkdir(p.c_str(), 0700) == 0 || errno == EEXIST;
}

}  // namespace

// ---- entry encoding ------------------------------------------------------------------------

std::string encode_entry(const DiskEntry& e) {
  const std::string meta = meta_to_json(e.meta).dump();
  std::string out;
  out.reserve(kHeaderBytes + e.key_text.size() + meta.size() + e.cubin.size() + kChecksumBytes);
  out.append(kMagic, 8);
  put_u32(out, kDiskFormatVersion);
  put_u32(out, 0);
  put_u64(out, e.key_text.size());
  put_u64(out, meta.size());
  put_u64(out, e.cubin.size());
  out += e.key_text;
  out += meta;
  out += e.cubin;
  util::Hash128 sum = util::hash128(out);
  put_u64(out, sum.lo);
  put_u64(out, sum.hi);
  return out;
}

std::optional<DiskEntry> decode_entry(const std::string& b, std::string* problem) {
  auto bad = [&](std::string why) -> std::optional<DiskEntry> {
    if (problem) *problem = std::move(why);
    return std::nullopt;
  };
  if (b.size() < kHeaderBytes + kChecksumBytes) return bad(fmt::format("truncated: {} bytes", b.size()));
  if (std::memcmp(b.data(), kMagic, 8) != 0) return bad("bad magic");
  if (get_u32(b, 8) != kDiskFormatVersion) return bad(fmt::format("entry format {} (expected {})", get_u32(b, 8), kDiskFormatVersion));
  const std::uint64_t key_len = get_u64(b, 16), meta_len = get_u64(b, 24), cubin_len = get_u64(b, 32);
  const std::uint64_t body = b.size() - kHeaderBytes - kChecksumBytes;
  if (key_len > body || meta_len > body || cubin_len > body || key_len + meta_len + cubin_len != body)
    return bad("section sizes do not add up to the file size");
  util::Hash128 sum = util::hash128(std::string_view(b.data(), b.size() - kChecksumBytes));
  if (sum.lo != get_u64(b, b.size() - 16) || sum.hi != get_u64(b, b.size() - 8)) return bad("checksum mismatch");
  DiskEntry e;
  e.key_text = b.substr(kHeaderBytes, key_len);
  try {
    e.meta = meta_from_json(nlohmann::json::parse(b.substr(kHeaderBytes + key_len, meta_len)));
  } catch (const std::exception& ex) {
    return bad(fmt::format("metadata: {}", ex.what()));
  }
  e.cubin = b.substr(kHeaderBytes + key_len + meta_len, cubin_len);
  if (e.cubin.empty()) return bad("empty cubin");
  return e;
}

// ---- the cache -------------------------------------------------------------------------------

namespace {
// Creates (mode on) and checks the cache directory; returns why it cannot be used, or "".
std::string prepare_directory(const fs::path& dir, const fs::path& root, util::CacheMode mode) {
  if (mode == util::CacheMode::on && !mkdir_0700(dir)) return fmt::format("cannot create it: {}", std::strerror(errno));
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0) return fmt::format("cannot stat it: {}", std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  // As ssh does with key files: a directory that someone else could write would let them plant kernels.
  if (st.st_uid != ::geteuid()) return fmt::format("it is owned by uid {}, not by this user (uid {})", st.st_uid, ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("it is writable by {} (mode {:o}); run chmod go-w on it", (st.st_mode & S_IWOTH) ? "others" : "its group",
                       st.st_mode & 07777);
  if (mode == util::CacheMode::on) {
    if (!mkdir_0700(root / "entries")) return fmt::format("cannot create {}: {}", (root / "entries").string(), std::strerror(errno));
  } else if (!fs::is_directory(root / "entries")) {
    return "readonly mode and there is no cache there yet";
  }
  return "";
}
}  // namespace

DiskCache::DiskCache(const fs::path& dir, util::CacheMode mode, std::uint64_t max_bytes)
    : root_(dir / fmt::format("v{}", kDiskFormatVersion)), mode_(mode), max_bytes_(max_bytes) {
  disabled_reason_ = prepare_directory(dir, root_, mode);
  if (disabled_reason_.empty()) enabled_ = true;
  else util::log().warn("kernel cache {} not used: {}; kernels stay in memory only", dir.string(), disabled_reason_);
}

std::string DiskCache::disabled_reason() const {
  std::lock_guard lock(reason_mutex_);
  return disabled_reason_;
}

fs::path DiskCache::entry_path(const std::string& hex) const { return root_ / "entries" / hex.substr(0, 2) / (hex + ".tjk"); }

void DiskCache::degrade(const std::string& what, int error_number) {
  bool was = enabled_.exchange(false);
  {
    std::lock_guard lock(reason_mutex_);
    disabled_reason_ = fmt::format("{}: {}", what, std::strerror(error_number));
  }
  if (was)
    util::log().warn("kernel cache {} disabled for this process ({}: {}); kernels stay in memory only", root_.string(), what,
                     std::strerror(error_number));
  CacheCounters c;
  c.write_errors = 1;
  add_counters(c);
}

std::optional<DiskEntry> DiskCache::lookup(const KernelKey& key) {
  if (!enabled()) return std::nullopt;
  const fs::path path = entry_path(key.hash.hex());
  int err = 0;
  auto bytes = read_all(path, &err);
  if (!bytes) {
    if (err != ENOENT && err != ENOTDIR) degrade(fmt::format("reading {}", path.string()), err);
    return std::nullopt;
  }
  std::string problem;
  auto entry = decode_entry(*bytes, &problem);
  if (entry && entry->key_text != key.text) {
    entry.reset();
    problem = "its key text differs from the requested key (collision or misplaced file)";
  }
  if (!entry) {
    util::log().warn("kernel cache: corrupt entry {} ({}); removing it (a kernel is compiled again, a tuning result measured again)",
                     path.string(), problem);
    remove_corrupt(key);
    return std::nullopt;
  }
  if (writable()) {
    std::lock_guard lock(uses_mutex_);
    pending_uses_.push_back(path);
  }
  return entry;
}

DiskCache::~DiskCache() { flush_uses(); }

void DiskCache::flush_uses() {
  std::vector<fs::path> uses;
  {
    std::lock_guard lock(uses_mutex_);
    uses.swap(pending_uses_);
  }
  for (const auto& p : uses) record_use(p);
}

void DiskCache::record_use(const fs::path& entry) {
  fs::path use = entry;
  use.replace_extension(".use");
  int fd = ::open(use.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;  // best effort: last use only orders evictions
  std::uint64_t v[2] = {0, 0};
  if (::pread(fd, v, sizeof(v), 0) != static_cast<ssize_t>(sizeof(v))) v[0] = v[1] = 0;
  v[0] = static_cast<std::uint64_t>(now_unix_ns());
  v[1] += 1;
  [[maybe_unused]] ssize_t w = ::pwrite(fd, v, sizeof(v), 0);
  ::close(fd);
}

void DiskCache::publish(const KernelKey& key, const DiskEntry& entry) {
  if (!writable()) return;
  if (!write_entry_file(key.hash.hex(), encode_entry(entry))) return;
  enforce_bound();
}

std::optional<std::string> DiskCache::import_entry(const std::string& key_hex, const std::string& bytes) {
  if (!writable()) return std::string("the cache is not writable: ") + disabled_reason();
  std::string problem;
  auto e = decode_entry(bytes, &problem);
  if (!e) return problem;
  if (util::hash128(e->key_text).hex() != key_hex) return std::string("its key text does not hash to its name");
  if (!write_entry_file(key_hex, bytes)) return std::string("writing it failed: ") + disabled_reason();
  return std::nullopt;
}

bool DiskCache::write_entry_file(const std::string& hex, const std::string& bytes) {
  const fs::path path = entry_path(hex);
  if (!mkdir_0700(path.parent_path())) return degrade(fmt::format("creating {}", path.parent_path().string()), errno), false;
  static thread_local std::mt19937_64 rng(std::random_device{}());
  const fs::path tmp = path.parent_path() / fmt::format(".{}.tmp.{}.{:x}", hex, ::getpid(), rng());
  int fd = -1;
  if (int injected = injected_errno_.load()) {
    errno = injected;
  } else {
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  }
  if (fd < 0) return degrade(fmt::format("creating {}", tmp.string()), errno), false;
  if (!write_all(fd, bytes.data(), bytes.size()) || ::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return degrade(fmt::format("writing {}", tmp.string()), e), false;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return degrade(fmt::format("renaming {} to {}", tmp.string(), path.string()), e), false;
  }
  // The rename is durable once the directory is synced.
  if (int dfd = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  fs::path use = path;
  use.replace_extension(".use");
  if (int ufd = ::open(use.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600); ufd >= 0) {
    std::uint64_t v[2] = {static_cast<std::uint64_t>(now_unix_ns()), 0};
    [[maybe_unused]] bool ok = write_all(ufd, reinterpret_cast<const char*>(v), sizeof(v));
    ::close(ufd);
  }
  return true;
}

void DiskCache::enforce_bound() {
  // Enforce the bound; one process at a time does it, others skip (byte 0 of the lock file).
  int lfd = ::open((root_ / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lfd >= 0) {
    if (try_lock_byte(lfd, 0, false)) {
      std::size_t evicted = prune(max_bytes_);
      if (evicted) {
        CacheCounters c;
        c.evictions = evicted;
        add_counters(c);
      }
    }
    ::close(lfd);
  }
}

void DiskCache::remove_corrupt(const KernelKey& key) {
  if (writable()) {
    const fs::path path = entry_path(key.hash.hex());
    ::unlink(path.c_str());
    fs::path use = path;
    ::unlink(use.replace_extension(".use").c_str());
  }
  CacheCounters c;
  c.corrupt = 1;
  add_counters(c);
}

DiskCache::KeyLock::~KeyLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the OFD lock
}

DiskCache::KeyLock DiskCache::lock(const KernelKey& key, std::chrono::milliseconds timeout) {
  if (!writable()) return {};
  int fd = ::open((root_ / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    degrade(fmt::format("opening {}", (root_ / "lock").string()), errno);
    return {};
  }
  // One byte per key in one lock file: no lock-file inode per kernel, and collisions between keys
  // (which would only serialise two compiles) are one in 2^62. Byte 0 is the maintenance lock.
  const off_t at = static_cast<off_t>(1 + (key.hash.lo >> 2));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(500);
  while (true) {
    if (try_lock_byte(fd, at, false)) return KeyLock(fd);
    if (errno != EAGAIN && errno != EACCES) {
      int e = errno;
      ::close(fd);
      util::log().warn("kernel cache: locking {} failed ({}); compiling without the lock", key.hash.hex(), std::strerror(e));
      return {};
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      util::log().warn("kernel cache: waited {} ms for another process compiling {}; compiling here instead", timeout.count(),
                       key.hash.hex());
      return {};
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

// ---- shared counters ---------------------------------------------------------------------------

void DiskCache::add_counters(const CacheCounters& d) {
  if (mode_ != util::CacheMode::on) return;
  int fd = ::open((root_ / "stats").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (try_lock_byte(fd, 0, true)) {
    std::uint64_t v[kStatsFields + 1] = {};
    if (::pread(fd, v, sizeof(v), 0) != static_cast<ssize_t>(sizeof(v)) || v[0] != kStatsMagic) std::fill(std::begin(v), std::end(v), 0);
    v[0] = kStatsMagic;
    const std::uint64_t add[kStatsFields] = {d.memory_hits, d.disk_hits, d.misses, d.compiles, d.compile_us, d.corrupt, d.write_errors, d.evictions};
    for (int i = 0; i < kStatsFields; ++i) v[i + 1] += add[i];
    [[maybe_unused]] ssize_t w = ::pwrite(fd, v, sizeof(v), 0);
  }
  ::close(fd);
}

CacheCounters DiskCache::counters() const {
  CacheCounters c;
  int fd = ::open((root_ / "stats").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return c;
  std::uint64_t v[kStatsFields + 1] = {};
  if (::pread(fd, v, sizeof(v), 0) == static_cast<ssize_t>(sizeof(v)) && v[0] == kStatsMagic) {
    c = {v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
  }
  ::close(fd);
  return c;
}

void DiskCache::zero_counters() {
  int fd = ::open((root_ / "stats").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw CacheError(fmt::format("cannot open {}: {}", (root_ / "stats").string(), std::strerror(errno)));
  if (try_lock_byte(fd, 0, true)) {
    std::uint64_t v[kStatsFields + 1] = {kStatsMagic};
    [[maybe_unused]] ssize_t w = ::pwrite(fd, v, sizeof(v), 0);
  }
  ::close(fd);
}

// ---- maintenance -------------------------------------------------------------------------------

std::vector<EntryInfo> DiskCache::list(bool read_entries) const {
  std::vector<EntryInfo> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_ / "entries", ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".tjk" || it->path().filename().string().front() == '.') continue;
    EntryInfo info;
    info.path = it->path();
    info.key = it->path().stem().string();
    info.bytes = it->file_size(ec);
    fs::path use = it->path();
    use.replace_extension(".use");
    int err = 0;
    if (auto u = read_all(use, &err); u && u->size() >= 16) {
      info.last_used_ns = static_cast<std::int64_t>(get_u64(*u, 0));
      info.last_used_unix = info.last_used_ns / 1000000000;
      info.hits = get_u64(*u, 8);
    } else {
      struct stat st{};
      if (::stat(it->path().c_str(), &st) == 0) {
        info.last_used_unix = st.st_mtime;
        info.last_used_ns = st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
      }
    }
    if (read_entries) {
      auto bytes = read_all(it->path(), &err);
      std::string problem = bytes ? "" : std::strerror(err);
      std::optional<DiskEntry> e = bytes ? decode_entry(*bytes, &problem) : std::nullopt;
      if (e && util::hash128(e->key_text).hex() != info.key) {
        e.reset();
        problem = "stored under the wrong key (its key text hashes elsewhere)";
      }
      info.valid = e.has_value();
      info.problem = problem;
      if (e) info.entry = std::move(*e);
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

std::size_t DiskCache::prune(std::uint64_t max_bytes, std::optional<std::chrono::seconds> older_than,
                             std::chrono::seconds stale_after) {
  flush_uses();  // evictions must see this process's latest uses
  std::error_code ec;
  // Stale temporaries of writers that died.
  const auto now = fs::file_time_type::clock::now();
  for (auto it = fs::recursive_directory_iterator(root_ / "entries", ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.front() == '.' && name.find(".tmp.") != std::string::npos) {
      auto age = now - it->last_write_time(ec);
      if (!ec && age >= stale_after) fs::remove(it->path(), ec);
    }
  }
  std::vector<EntryInfo> entries = list(false);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.last_used_ns < b.last_used_ns; });
  std::uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  const std::int64_t cutoff =
      older_than ? std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count() -
                       older_than->count()
                 : INT64_MIN;
  std::size_t removed = 0;
  for (const auto& e : entries) {
    if (total <= max_bytes && e.last_used_unix >= cutoff) continue;
    fs::path use = e.path;
    use.replace_extension(".use");
    if (fs::remove(e.path, ec)) {
      fs::remove(use, ec);
      total -= e.bytes;
      ++removed;
    }
  }
  return removed;
}

std::size_t DiskCache::clear() {
  std::size_t n = 0;
  for (const auto& e : list(false)) {
    std::error_code ec;
    fs::path use = e.path;
    use.replace_extension(".use");
    n += fs::remove(e.path, ec);
    fs::remove(use, ec);
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_ / "entries", ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->path().filename().string().find(".tmp.") != std::string::npos) fs::remove(it->path(), ec);
  return n;
}

}  // namespace tilejit::jit
