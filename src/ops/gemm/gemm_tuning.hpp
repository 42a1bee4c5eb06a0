// GEMM tuning: shape classes, the candidate set, the tuner (scratch operands, checks, stream
// timing) and tuning records, which live in the disk cache as entries of family "tuning" (see
// "tuning" in include/tilejit/gemm.hpp).
#pragma once

#include "jit/context.hpp"
#include "jit/disk_cache.hpp"
#include "jit/kernel_key.hpp"

#include <tilejit/gemm.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::ops {

// What a tuning result is valid for besides its shape class: the kind of device and the software
// that built and ran the kernels. Every field is part of the entry's key.
struct TuningIdentity {
  std::string device;  // e.g. "NVIDIA H200"
  int multiprocessors = 0;
  std::string driver;  // cuDriverGetVersion, and the kernel module's version where /proc says it
  std::string nvrtc;
  std::string library;    // kVersionString
  std::string templates;  // digest of the GEMM templates (and all they include)
  std::string arch;       // the arch-specific target, e.g. sm_90a
};
// The identity of the context's device (throws DriverError without one).
TuningIdentity tuning_identity(jit::Context& jit);

// The key of a class's tuning entry for a device: text (everything above and the class) and hash.
jit::KernelKey tuning_key(const TuningIdentity& id, const std::string& shape_class);

// What a tuning entry holds (its payload, as JSON).
struct TuningMeasurement {
  std::string config;  // GemmConfig::to_string
  double ms = 0;
  bool ok = false;
  std::string error;
  std::int64_t measured_unix = 0;
};
struct TuningRecord {
  std::string shape_class;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;  // the problem the measurements are of
  std::string heuristic;                        // the heuristic's configuration for it
  std::string chosen;
  std::string why;
  std::vector<TuningMeasurement> measurements;  // one per candidate (by config)
  // Whether the measurements are of this problem (times of another problem of the class do not
  // compare with them).
  bool is_of(std::int64_t pm, std::int64_t pn, std::int64_t pk, std::int64_t pbatch) const {
    return m == pm && n == pn && k == pk && batch == pbatch;
  }
};
std::string encode_tuning_record(const TuningRecord& r);
// Nullopt and `problem` set when the payload is not a tuning record.
std::optional<TuningRecord> decode_tuning_record(const std::string& payload, std::string* problem);
// Adds `fresh`'s measurements to `into`, replacing those of the same configuration and keeping the
// others; the problem, heuristic and choice become fresh's. A record of another problem is replaced
// by `fresh` whole.
void merge_tuning_records(TuningRecord& into, const TuningRecord& fresh);
// Sets r.chosen and r.why: the fastest configuration that passed, unless it is less than `margin`
// faster than the heuristic's (then the heuristic's, when it was measured).
void choose_tuned(TuningRecord& r, double margin);

// The cache entry for a record (family "tuning"; the payload in place of a cubin).
jit::DiskEntry tuning_entry(const jit::KernelKey& key, const TuningIdentity& id, const TuningRecord& r, const std::string& dtypes);
// The record of `key` in the disk cache, verified (checksum and key text, as every entry), or nullopt.
std::optional<TuningRecord> load_tuning_record(jit::DiskCache& disk, const jit::KernelKey& key);
// Under the key's lock (across processes): merges `fresh` into the stored record, chooses and
// publishes; returns the merged record (`fresh` chosen alone when the cache is not writable).
TuningRecord store_tuning_record(jit::DiskCache* disk, const jit::KernelKey& key, const TuningIdentity& id, const TuningRecord& fresh,
                                 double margin, const std::string& dtypes, bool* stored);

// For a plan without a given configuration: the tuned configuration of the problem's class, per
// TILEJIT_AUTOTUNE (off: none; cached: from this process's memory or the disk cache; on: tuned now
// if there is none and `may_tune`: a plan that will launch, not a compile-only request), when it is
// valid for the problem; `why` says where it came from.
std::optional<GemmConfig> tuned_gemm_config(const std::shared_ptr<jit::Context>& jit, const GemmProblem& normalized_problem,
                                            bool may_tune, std::string* why);

GemmTuneResult tune_gemm(const std::shared_ptr<jit::Context>& jit, const GemmProblem& problem, const GemmTuneOptions& options);

}  // namespace tilejit::ops
