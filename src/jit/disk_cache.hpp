// The disk kernel cache: safe across processes, bounded, verified on every load.
//
// Layout under TILEJIT_CACHE_DIR (created 0700):
//   v1/entries/<hh>/<key>.tjk   one entry: header, key text, metadata (JSON), cubin, XXH3-128 checksum
//   v1/entries/<hh>/<key>.use   last use (ns since the epoch) and hits, updated in place on each load
//   v1/locks/<hh>/<key>.lock    per-key compile lock (fcntl OFD lock)
//   v1/stats                    counters shared by every process (updated under an OFD lock)
// Entries are published by writing a temporary file in the same directory, fsync, rename: a reader
// never sees half an entry. Any I/O failure turns the cache off for the process with one warning.
#pragma once

#include "jit/kernel_key.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "util/settings.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::jit {

inline constexpr int kDiskFormatVersion = 1;

// What an entry says about its kernel (JSON in the entry).
struct EntryMetadata {
  std::string family;
  std::string program_name;
  std::vector<std::string> name_expressions;  // the kernels the program exports
  std::vector<std::string> lowered_names;     // their symbols, in order
  std::string dtypes;
  std::string config;
  std::string arch;
  std::string nvrtc_version;
  std::vector<std::string> options;
  double compile_ms = 0;
  std::int64_t created_unix = 0;
};

struct DiskEntry {
  std::string key_text;
  EntryMetadata meta;
  std::string cubin;
};

// Counters shared by all processes using one cache directory.
struct CacheCounters {
  std::uint64_t memory_hits = 0, disk_hits = 0, misses = 0, compiles = 0, compile_us = 0, corrupt = 0, write_errors = 0,
                evictions = 0;
};

// One entry as listed by `tilejit cache list`.
struct EntryInfo {
  std::string key;  // 32 hex digits
  std::filesystem::path path;
  std::uint64_t bytes = 0;
  std::int64_t last_used_unix = 0;  // seconds
  std::int64_t last_used_ns = 0;    // orders evictions
  std::uint64_t hits = 0;
  bool valid = false;
  std::string problem;  // why not valid
  DiskEntry entry;      // filled when valid
};

// Serialises an entry (header, key text, metadata, cubin, checksum).
std::string encode_entry(const DiskEntry& e);
// Parses and verifies an entry; nullopt with `problem` set when anything is wrong.
std::optional<DiskEntry> decode_entry(const std::string& bytes, std::string* problem);

class DiskCache {
 public:
  // Opens (creating if needed) the cache under settings.cache_dir, or stays disabled with one warning
  // when the directory is unsafe or unusable. mode off: never constructed.
  DiskCache(const std::filesystem::path& dir, util::CacheMode mode, std::uint64_t max_bytes);

  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  bool enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }
  bool writable() const noexcept { return enabled() && mode_ == util::CacheMode::on; }
  const std::filesystem::path& root() const noexcept { return root_; }
  std::string disabled_reason() const;

  // A verified entry whose key text equals key.text; a corrupt or mismatched file is removed
  // (counted as corrupt) and reported as a miss.
  std::optional<DiskEntry> lookup(const KernelKey& key);
  // Publishes atomically (temporary file, fsync, rename), then enforces the size bound.
  void publish(const KernelKey& key, const DiskEntry& entry);
  // Imports an encoded entry (from `tilejit cache import`): verified (format, checksum, and its key
  // text hashing to `key_hex`) before it is published; returns why not when it is rejected.
  std::optional<std::string> import_entry(const std::string& key_hex, const std::string& bytes);
  // Removes an entry the driver refused to load.
  void remove_corrupt(const KernelKey& key);

  // The per-key lock across processes; waits at most `timeout`, after which the caller compiles on
  // its own (an owner that died releases its OFD lock with its file descriptors).
  class KeyLock {
   public:
    KeyLock() = default;
    KeyLock(KeyLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    KeyLock& operator=(KeyLock&&) = delete;
    ~KeyLock();
    bool held() const noexcept { return fd_ >= 0; }

   private:
    friend class DiskCache;
    explicit KeyLock(int fd) : fd_(fd) {}
    int fd_ = -1;
  };
  KeyLock lock(const KernelKey& key, std::chrono::milliseconds timeout);

  // Writes the last-use records of entries looked up since the last flush (done off the lookup path:
  // at destruction, and by KernelCache with its counters).
  void flush_uses();

  // Shared counters: add deltas (under the stats file lock), read, zero.
  void add_counters(const CacheCounters& delta);
  CacheCounters counters() const;
  void zero_counters();

  // Maintenance (CLI).
  std::vector<EntryInfo> list(bool read_entries) const;
  // Evicts least recently used entries until the total is at most `max_bytes`, and entries unused for
  // longer than `older_than` (when given); also removes temporaries older than `stale_after` (their
  // writer died: a live one finishes in milliseconds). Returns the entries removed.
  std::size_t prune(std::uint64_t max_bytes, std::optional<std::chrono::seconds> older_than = std::nullopt,
                    std::chrono::seconds stale_after = std::chrono::seconds(600));
  std::size_t clear();
  std::uint64_t max_bytes() const noexcept { return max_bytes_; }
  std::filesystem::path entry_path(const std::string& key_hex) const;

  // Test hook: make every later write fail with this errno (0: no injection).
  void inject_write_failure(int error_number) { injected_errno_ = error_number; }

 private:
  void degrade(const std::string& what, int error_number);
  // Temporary file, fsync, rename, sidecar; false (and degraded) on failure.
  bool write_entry_file(const std::string& key_hex, const std::string& bytes);
  // Evicts down to the size bound; one process at a time (the others skip).
  void enforce_bound();
  void record_use(const std::filesystem::path& entry);
  std::filesystem::path lock_path(const std::string& key_hex) const;

  std::filesystem::path root_;
  util::CacheMode mode_;
  std::uint64_t max_bytes_;
  std::atomic<bool> enabled_{false};
  mutable std::mutex reason_mutex_;
  std::string disabled_reason_;
  std::atomic<int> injected_errno_{0};
  std::mutex uses_mutex_;
  std::vector<std::filesystem::path> pending_uses_;
};

}  // namespace tilejit::jit
