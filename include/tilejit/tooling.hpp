// For tools built on tilejit: its own `tilejit` command-line tool and benchmarks, and yours. What a
// tool needs beyond the library's API (timing and capturing on streams, maintaining the disk cache,
// host references, the settings table) in one header, so that a tool links tilejit's public headers
// and this one and never its sources. Not included by <tilejit/tilejit.hpp>; it may change between
// minor versions, the rest of the public API does not.
#pragma once

#include <tilejit/dtype.hpp>
#include <tilejit/elementwise.hpp>
#include <tilejit/gemm.hpp>

#include <cuda.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit::tooling {

// ---- the CUDA driver, as tilejit loaded it (libcuda is opened at run time, never linked) ---------

// The driver entry points a tool times, captures and copies with, resolved by tilejit's loader.
struct DriverCalls {
  decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuMemAlloc) cuMemAlloc = nullptr;
  decltype(&::cuMemFree) cuMemFree = nullptr;
  decltype(&::cuMemsetD8) cuMemsetD8 = nullptr;
  decltype(&::cuMemcpyDtoDAsync) cuMemcpyDtoDAsync = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuStreamCreate) cuStreamCreate = nullptr;
  decltype(&::cuStreamDestroy) cuStreamDestroy = nullptr;
  decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;
  decltype(&::cuStreamBeginCapture) cuStreamBeginCapture = nullptr;
  decltype(&::cuStreamEndCapture) cuStreamEndCapture = nullptr;
  decltype(&::cuEventCreate) cuEventCreate = nullptr;
  decltype(&::cuEventDestroy) cuEventDestroy = nullptr;
  decltype(&::cuEventRecord) cuEventRecord = nullptr;
  decltype(&::cuEventSynchronize) cuEventSynchronize = nullptr;
  decltype(&::cuEventElapsedTime) cuEventElapsedTime = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) cuGraphInstantiateWithFlags = nullptr;
  decltype(&::cuGraphLaunch) cuGraphLaunch = nullptr;
  decltype(&::cuGraphDestroy) cuGraphDestroy = nullptr;
  decltype(&::cuGraphExecDestroy) cuGraphExecDestroy = nullptr;
  int driver_version = 0;  // e.g. 13000
};

// The loaded driver, initialised on first use; throws DriverError saying why there is none.
const DriverCalls& driver();
// Whether a usable driver is there (never throws); `why` gets the reason when not.
bool driver_available(std::string* why = nullptr);
// Throws DriverError naming the call, the error and `context` when `result` is not CUDA_SUCCESS.
void check(CUresult result, const char* call, const std::string& context = {});
// Makes the runtime's device context current on this thread (its streams and memory are there).
void make_current(Runtime& runtime);
// "13.0+<build>": the NVRTC that compiles and whose version is part of every kernel key.
const std::string& nvrtc_version();

// ---- settings -----------------------------------------------------------------------------------

struct SettingRow {
  std::string variable;  // TILEJIT_...
  std::string value;     // effective value
  bool from_environment = false;
  std::string default_text;
  std::string meaning;
};
struct SettingsView {
  std::filesystem::path cache_dir;
  std::optional<std::string> arch;  // TILEJIT_ARCH
  std::string cache_mode;           // TILEJIT_CACHE: "on", "off" or "readonly"
  std::vector<SettingRow> rows;     // every variable, in a fixed order
};
// Reads the TILEJIT_* environment; a bad value throws InvalidArgument naming the variable.
SettingsView read_settings();
// "2G", "500M", "64K", "1234" (powers of 1024); nullopt when not a size.
std::optional<std::uint64_t> parse_size(std::string_view text);
std::string format_size(std::uint64_t bytes);

// ---- the disk cache, for its maintenance (`tilejit cache ...`) -------------------------------------

struct CacheCounters {  // shared by every process using one directory
  std::uint64_t memory_hits = 0, disk_hits = 0, misses = 0, compiles = 0, compile_us = 0, corrupt = 0, write_errors = 0,
                evictions = 0;
};
struct CacheEntryMetadata {
  std::string family;  // "elementwise", "gemm", "gemm_pack", "user"
  std::string program_name;
  std::vector<std::string> name_expressions;
  std::vector<std::string> lowered_names;
  std::string dtypes, config, arch, nvrtc_version;
  std::vector<std::string> options;
  double compile_ms = 0;
  std::int64_t created_unix = 0;
};
struct CacheEntry {
  std::string key;  // 32 hex digits
  std::filesystem::path path;
  std::uint64_t bytes = 0;
  std::int64_t last_used_unix = 0;
  std::uint64_t hits = 0;
  bool valid = false;  // verified: format, checksum, key
  std::string problem;  // why not valid
  // Filled for a valid entry that was read:
  std::string key_text;  // everything the key hashes (ends with the source)
  CacheEntryMetadata meta;
  std::string cubin;
};

// The cache directory the TILEJIT_* settings name, opened for maintenance: TILEJIT_CACHE=readonly
// allows reading only; =off still opens it (managing a cache the library does not use is allowed).
class CacheDirectory {
 public:
  static CacheDirectory open();
  ~CacheDirectory();
  CacheDirectory(CacheDirectory&&) noexcept;

  bool enabled() const;
  bool writable() const;
  const std::filesystem::path& root() const;
  std::string disabled_reason() const;
  std::uint64_t max_bytes() const;

  CacheCounters counters() const;
  void zero_counters();
  void add_counters(const CacheCounters& delta);
  // Every entry; with `read_entries` each is read and verified (its metadata and cubin filled).
  std::vector<CacheEntry> list(bool read_entries) const;
  // Evicts least recently used entries down to `max_bytes` and those unused for `older_than`, and
  // temporaries older than `stale_after`; returns how many were removed.
  std::size_t prune(std::uint64_t max_bytes, std::optional<std::chrono::seconds> older_than = std::nullopt,
                    std::chrono::seconds stale_after = std::chrono::seconds(600));
  std::size_t clear();
  // Verifies an encoded entry (format, checksum, its key text hashing to `key_hex`) and publishes it;
  // returns why it was rejected.
  std::optional<std::string> import_entry(const std::string& key_hex, const std::string& bytes);

 private:
  struct State;
  explicit CacheDirectory(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// ---- host data and references --------------------------------------------------------------------

// Element i of an array of dtype t, as a double (exact for every dtype but i64 beyond 2^53).
double load_element(DType t, const void* base, std::size_t i);
// Stores by the elementwise conversion rules: floating values round to nearest (even); into integer
// dtypes truncated toward zero and saturated, NaN to 0.
void store_element_from_float(DType t, void* base, std::size_t i, double v);
// Stores an integer: exact or wrapped for integer dtypes, rounded for floating ones.
void store_element_from_int(DType t, void* base, std::size_t i, std::int64_t v);

// A float64 host evaluation of an elementwise op: the reference `--check` and the tests use.
class ElementwiseReference {
 public:
  explicit ElementwiseReference(const ElementwiseOp& op);  // throws InvalidArgument as validate_elementwise does
  ~ElementwiseReference();
  // Elements [0, n): inputs[k] and outputs[k] are host arrays of the op's dtypes.
  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs, std::size_t n) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// An op from a body alone: the names assigned at a statement's start are outputs (`output_dtype`),
// the other names that are not functions or `scalars` are inputs (`input_dtype`), in order of
// appearance.
ElementwiseOp elementwise_op_from_body(const std::string& body, DType input_dtype, DType output_dtype, std::vector<Scalar> scalars);

// A GEMM epilogue from its body alone (operands without pointers): `name[m]` and `name[n]` are
// per-row and per-column vectors, the names assigned besides d are outputs, and the other names that
// are not the body's own (acc, c, alpha, beta, m, n), functions or `scalars` are M x N inputs;
// vectors, inputs and outputs of `dtype`, matrices row-major, in order of appearance.
GemmEpilogue gemm_epilogue_from_body(const std::string& body, DType dtype, std::vector<Scalar> scalars);

// A float64 evaluation of a GEMM epilogue body (GemmEpilogue::body) at given output elements.
class GemmEpilogueReference {
 public:
  // Throws InvalidArgument for a body that does not parse, or one reading more than 8 values.
  GemmEpilogueReference(const GemmProblem& problem);
  ~GemmEpilogueReference();
  // For `count` elements: acc = alpha * (A B), C's element, the row and column, each vector's value
  // at the element (in GemmEpilogue::vectors order) and each input's (in `inputs` order); writes
  // d and each of `outputs` (in order).
  void run(std::size_t count, const double* acc, const double* c, const std::int64_t* rows, const std::int64_t* cols,
           const std::vector<const double*>& vectors, const std::vector<const double*>& inputs, double* d,
           const std::vector<double*>& outputs) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The parameter block a plan's kernel (ElementwisePlan::kernel()) takes for these operands, as
// bytes: a bare cuLaunchKernel of that kernel with it does what ElementwisePlan::run does.
std::vector<std::byte> elementwise_arguments(const ElementwisePlan& plan, DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n);

}  // namespace tilejit::tooling
