// GEMM tuning (see "tuning" in include/tilejit/gemm.hpp): shape classes, candidates, tuning records
// in the disk cache, and the tuner itself.
#include "ops/gemm/gemm_tuning.hpp"

#include "jit/driver.hpp"
#include "jit/program.hpp"
#include "ops/elementwise/codegen.hpp"
#include "ops/gemm/gemm_internal.hpp"
#include "util/hash.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>
#include <tilejit/version.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <mutex>
#include <regex>
#include <thread>
#include <unordered_map>

namespace tilejit {

std::string_view config_origin_name(GemmConfigOrigin o) noexcept {
  switch (o) {
    case GemmConfigOrigin::given: return "given";
    case GemmConfigOrigin::environment: return "TILEJIT_GEMM_CONFIG";
    case GemmConfigOrigin::tuned: return "tuned";
    case GemmConfigOrigin::heuristic: return "heuristic";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Values up to 16 exactly (decode-like sizes pick their own tiles), then half octaves.
std::string size_bucket(std::int64_t x) {
  if (x <= 16) return std::to_string(x);
  int e = 0;
  while ((std::int64_t{2} << e) <= x) ++e;  // 2^e <= x < 2^(e+1)
  const bool upper = static_cast<double>(x) >= std::ldexp(std::sqrt(2.0), e);
  return upper ? fmt::format("2^{}.5", e) : fmt::format("2^{}", e);
}

// The largest of 16, 8, 4, 2, 1 bytes dividing the pointer (when set), the leading dimension and,
// for batches, the batch stride.
int alignment_bytes(const MatrixRef& r, std::int64_t batch) {
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(r.dtype));
  for (int bytes = 16; bytes > 1; bytes /= 2)
    if (r.ptr % bytes == 0 && (r.ld * es) % bytes == 0 && (batch <= 1 || (r.batch_stride * es) % bytes == 0)) return bytes;
  return 1;
}

std::string operand_class(const MatrixRef& r, std::int64_t batch) {
  return fmt::format("{}/{}/{}", dtype_name(r.dtype), layout_name(r.layout), alignment_bytes(r, batch));
}

}  // namespace

std::string gemm_shape_class(const GemmProblem& in) {
  const GemmProblem p = ops::normalized(in);
  const bool reads_c = p.beta != 0.f || ops::epilogue_reads_c(p.epilogue);
  std::string epilogue = "none";
  if (!p.epilogue.body.empty()) {
    const std::string sig = ops::epilogue_signature(p.epilogue);
    epilogue = fmt::format("body:{:016x}", util::hash64(p.epilogue.body + "\n" + sig));
  } else if (p.epilogue.bias || p.epilogue.activation != Activation::none) {
    epilogue = fmt::format("{}{}", p.epilogue.bias ? fmt::format("bias-{}", dtype_name(p.epilogue.bias_dtype)) : std::string("nobias"),
                           p.epilogue.activation == Activation::none ? "" : fmt::format("+{}", activation_name(p.epilogue.activation)));
  }
  const bool eight_bit = ops::is_8bit_float(p.a.dtype);
  return fmt::format("gemm a={} b={} c={} d={} math={} scales={} epilogue={} m={} n={} k={} batch={}", operand_class(p.a, p.batch),
                     operand_class(p.b, p.batch),
                     !reads_c ? std::string("-") : p.c.ptr == p.d.ptr ? std::string("d") : operand_class(p.c, p.batch),
                     operand_class(p.d, p.batch), p.a.dtype == DType::f32 ? (p.math == MathMode::tf32 ? "tf32" : "exact") : "-",
                     !eight_bit ? std::string("-")
                                : fmt::format("{}{}", p.scale_mode == ScaleMode::blocks ? "blocks" : "per_tensor", p.scale_d ? "+d" : ""),
                     epilogue, size_bucket(p.m), size_bucket(p.n), size_bucket(p.k), size_bucket(p.batch));
}

std::vector<GemmConfig> gemm_tuning_candidates(const GemmProblem& in, const std::string& arch, int sms) {
  const GemmProblem p = ops::normalized(in);
  validate_gemm(p);
  std::vector<GemmConfig> out;
  auto valid = [&](const GemmConfig& c) {
    try {
      validate_gemm_config(c, p, arch);
      return true;
    } catch (const InvalidArgument&) {
      return false;
    }
  };
  auto add_one = [&](const GemmConfig& c) {
    if (std::find(out.begin(), out.end(), c) == out.end() && valid(c)) out.push_back(c);
  };
  // tf32 wgmma: a candidate whose kernel reads a column-major A takes it through registers (ra)
  // instead of transposing it at each launch (validation refuses ra for a row-major A): on the H200
  // ra ran 1.03-1.14x the transposing form at 4096^3 and 8192^3 (TT, TN, TT with D column-major)
  // (2026-12-03 18:03Z, docs/benchmarks.md, eighteenth session), so the transposing one is not timed.
  auto add = [&](const GemmConfig& c) {
    if (c.kind == GemmKind::wgmma && p.a.dtype == DType::f32 && !c.a_registers) {
      GemmConfig through_registers = c;
      through_registers.a_registers = true;
      if (valid(through_registers)) return add_one(through_registers);
    }
    add_one(c);
  };
  const GemmConfig heuristic = choose_gemm_config(p, arch, sms);
  add(heuristic);
  const long long batches = std::max<std::int64_t>(1, p.batch);
  auto tiles = [&](int bm, int bn) { return (p.m + bm - 1) / bm * ((p.n + bn - 1) / bn) * batches; };
  const bool wgmma = arch == "sm_90a" && !(p.a.dtype == DType::f32 && p.math == MathMode::exact);
  if (wgmma) {
    const int es = static_cast<int>(dtype_size(p.a.dtype));
    const bool block_scales = p.scale_mode == ScaleMode::blocks;
    const int bk1 = block_scales ? 128 : 128 / es, bk2 = 256 / es;
    // The most stages that fit (and, with `fewer`, one or two less: a deeper pipeline is not always
    // faster). Variants (split-K, clusters, ...) take the deepest only, to keep the set small.
    auto with_stages = [&](GemmConfig c, bool fewer = true) {
      int most = 0;
      for (int s = 8; s >= 2 && !most; --s) {
        c.stages = s;
        if (valid(c)) most = s;
      }
      if (!most) return;
      c.stages = most;
      add(c);
      c.stages = most > 4 ? most - 2 : most - 1;
      if (fewer && c.stages >= 2) add(c);
    };
    struct Tile {
      int bm, bn, wm;
    };
    const bool decode = p.m <= 32;
    // D column-major: the kernel may compute the row-major D^T instead (swapped operands).
    const bool swapped_too = p.d.layout == Layout::col_major || (heuristic.swap_ab && !decode);
    for (const Tile t : {Tile{128, 256, 64}, Tile{128, 128, 64}, Tile{64, 128, 64}, Tile{64, 256, 64}, Tile{128, 192, 64},
                         Tile{192, 128, 64}, Tile{256, 128, 128}, Tile{128, 64, 64}, Tile{64, 64, 64}}) {
      if (decode && t.bm != 64) continue;  // M <= 32: narrow swapped tiles below, and 64-row ones here
      for (const bool sw : {false, true}) {
        if (sw && !swapped_too) continue;
        GemmConfig c{GemmKind::wgmma, t.bm, t.bn, bk1, t.wm, t.bn, 4};
        c.swap_ab = sw;
        with_stages(c);
        const long long n_tiles = sw ? tiles(t.bn, t.bm) : tiles(t.bm, t.bn);
        const long long ktiles = (p.k + bk1 - 1) / bk1;
        if (n_tiles * 2 <= sms && ktiles >= 8)  // too few tiles to fill the device: K in slices
          for (int split : {2, 4})
            if (n_tiles * split <= 2 * sms && ktiles >= 4 * split) {
              c.split_k = split;
              with_stages(c, false);
            }
        c.split_k = 1;
        if (n_tiles > sms && n_tiles % sms != 0 && n_tiles % sms <= sms / 2 && t.wm == 64 && t.bm == 128) {
          c.tail_split = 2;  // a small last wave: its tiles in halves of K
          with_stages(c, false);
          c.tail_split = 1;
        }
        if (t.bm == 128 && (t.bn == 256 || t.bn == 128) && !block_scales && !decode) {
          c.cluster = 2;  // B tiles shared by a pair of blocks (TMA multicast)
          with_stages(c, false);
          c.cluster = 1;
        }
      }
    }
    if (!decode) {
      // Larger K steps: two 128-byte swizzle rows per stage.
      if (!block_scales)
        for (const Tile t : {Tile{128, 256, 64}, Tile{128, 128, 64}, Tile{64, 128, 64}})
          with_stages({GemmKind::wgmma, t.bm, t.bn, bk2, t.wm, t.bn, 4}, false);
      // Ping-pong consumers (whole tiles each, one's epilogue behind the other's MMAs) and K halves
      // (two consumers on one tile, for problems of fewer tiles than SMs).
      for (const Tile t : {Tile{128, 128, 128}, Tile{64, 256, 64}, Tile{64, 128, 64}}) {
        GemmConfig c{GemmKind::wgmma, t.bm, t.bn, bk1, t.wm, t.bn, 4};
        c.pingpong = true;
        with_stages(c, false);
        if (t.bm == 128 && !block_scales) {  // and in pairs sharing B
          c.cluster = 2;
          with_stages(c, false);
          c.cluster = 1;
        }
        c.pingpong = false;
        if (tiles(t.bm, t.bn) < sms) {
          c.k_halves = true;
          with_stages(c, false);
        }
      }
    } else {
      // Decode-like M: D^T = B^T A^T in narrow tiles, with and without split-K.
      for (const int bn : {16, 32}) {
        if (bn == 16 && p.m > 16) continue;
        for (const int bk : {bk1, bk2})
          for (const int split : {1, 2, 4}) {
            GemmConfig c{GemmKind::wgmma, 64, bn, bk, 64, bn, 8};
            c.swap_ab = true;
            c.split_k = split;
            with_stages(c, false);
            if (split == 1) {
              c.bm = 128;  // two consumers
              with_stages(c, false);
            }
          }
      }
    }
  }
  // Decode-like M (1 to 8 rows, any dtype): kind gemv, B streamed into registers; a K-major B in
  // blocks of 8 warps side by side or 4 by 2 along K, one or two columns a warp; an N-major one in
  // warps of 2 or 4 lanes per row, 1 or 2 of them along N; 4 or 8 steps of loads in flight. A matrix
  // times 1 to 8 vectors (N <= 8) takes the same swapped (sw): D^T = B^T A^T streams A.
  // (Not for tf32: gemv adds exact f32 products, which the tuner's comparison with the heuristic's
  // tf32 D, a few units of D's last place apart, would count as mismatches.)
  const bool swap_gemv = p.m > 8 && p.n <= 8;
  const bool tf32_inputs = p.a.dtype == DType::f32 && p.math == MathMode::tf32;
  if ((p.m <= 8 || swap_gemv) && p.scale_mode != ScaleMode::blocks && !tf32_inputs) {
    const GemmProblem q = swap_gemv ? ops::swapped_ab(p) : p;
    const int rows = q.m <= 1 ? 1 : q.m <= 2 ? 2 : q.m <= 4 ? 4 : 8, run = 16 / static_cast<int>(dtype_size(q.b.dtype));
    for (const int stages : {4, 8})
      for (const int across : {1, 2}) {
        std::vector<GemmConfig> gemvs;
        if (q.b.layout == Layout::col_major) {
          const int warps_n = across == 1 ? 8 : 4;
          for (const int wn : {1, 2}) gemvs.push_back({GemmKind::gemv, rows, warps_n * wn, 32 * run, rows, wn, stages});
        } else {
          for (const int lanes_n : {2, 4}) gemvs.push_back({GemmKind::gemv, rows, across * run * lanes_n, 32 / lanes_n, rows, run * lanes_n, stages});
        }
        for (GemmConfig& c : gemvs) {
          c.swap_ab = swap_gemv;
          add(c);
        }
      }
  }
  if (p.a.dtype == DType::f32 && p.math == MathMode::exact) {
    for (const char* c : {"simt:256x128x16:64x64:2", "simt:128x128x8:64x32:2", "simt:128x128x16:64x32:2", "simt:64x64x8:32x16:2",
                          "simt:128x64x8:64x32:2", "simt:64x128x8:32x32:2"})
      add(GemmConfig::parse(c));
  } else {
    // mma.sync (sm_80 and later; on Hopper too, where a layout or alignment rules wgmma out).
    const bool tf32 = p.a.dtype == DType::f32;
    for (const char* c : {"mma:128x256x32:64x64:4", "mma:128x256x32:64x64:3", "mma:128x128x32:64x64:4", "mma:128x128x32:64x64:3",
                          "mma:64x128x32:32x64:4", "mma:128x64x32:64x32:4", "mma:64x64x32:32x32:4", "mma:64x64x32:32x32:5",
                          "mma:64x64x16:32x32:4", "mma:128x128x16:64x64:4"}) {
      GemmConfig g = GemmConfig::parse(c);
      if (tf32) g.tf32 = false;  // the problem's MathMode says tf32
      add(g);
    }
  }
  return out;
}

namespace ops {

namespace {

std::string read_driver_text() {
  std::string text = fmt::format("cuda {}", jit::driver().driver_version);
  // The kernel module's release (e.g. 580.65.06), where the proc file says it: a driver update
  // within one CUDA version can change kernels' speed.
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (f && std::getline(f, line)) {
    static const std::regex release(R"((\d+\.\d+(\.\d+)?))");
    std::smatch m;
    if (std::regex_search(line, m, release)) text += fmt::format(" module {}", m[1].str());
  }
  return text;
}

const std::string& driver_text() {
  static const std::string text = read_driver_text();  // (the driver cannot change under a process)
  return text;
}

}  // namespace

TuningIdentity tuning_identity(jit::Context& jit) {
  jit.context();  // throws DriverError without a usable device
  const auto& info = jit.device_state().info;
  std::string digests;
  for (const char* t : {"gemm_simt.cuh", "gemm_mma.cuh", "gemm_wgmma.cuh", "gemm_pack.cuh"}) digests += jit.templates.digest(t).hex();
  return {.device = info.name,
          .multiprocessors = info.multiprocessors,
          .driver = driver_text(),
          .nvrtc = jit::NvrtcCompiler::version(),
          .library = kVersionString,
          .templates = util::hash128(digests).hex(),
          .arch = jit.arch(true)};
}

jit::KernelKey tuning_key(const TuningIdentity& id, const std::string& shape_class) {
  jit::KernelKey key;
  key.text = fmt::format(
      "tilejit-tuning-key\nentry-format {}\nlibrary {}\ngemm-templates {}\ndevice {}\nmultiprocessors {}\ndriver {}\nnvrtc {}\narch {}\n"
      "class {}\n",
      jit::kEntryFormatVersion, id.library, id.templates, id.device, id.multiprocessors, id.driver, id.nvrtc, id.arch, shape_class);
  key.hash = util::hash128(key.text);
  return key;
}

std::string encode_tuning_record(const TuningRecord& r) {
  nlohmann::json ms = nlohmann::json::array();
  for (const auto& m : r.measurements)
    ms.push_back({{"config", m.config}, {"ms", m.ms}, {"ok", m.ok}, {"error", m.error}, {"measured_unix", m.measured_unix}});
  return nlohmann::json({{"format", 1},
                         {"class", r.shape_class},
                         {"m", r.m},
                         {"n", r.n},
                         {"k", r.k},
                         {"batch", r.batch},
                         {"heuristic", r.heuristic},
                         {"chosen", r.chosen},
                         {"why", r.why},
                         {"measurements", ms}})
      .dump();
}

std::optional<TuningRecord> decode_tuning_record(const std::string& payload, std::string* problem) {
  try {
    const auto j = nlohmann::json::parse(payload);
    if (j.at("format").get<int>() != 1) throw std::runtime_error("format is not 1");
    TuningRecord r;
    r.shape_class = j.at("class").get<std::string>();
    r.m = j.at("m").get<std::int64_t>(), r.n = j.at("n").get<std::int64_t>(), r.k = j.at("k").get<std::int64_t>();
    r.batch = j.at("batch").get<std::int64_t>();
    r.heuristic = j.at("heuristic").get<std::string>();
    r.chosen = j.at("chosen").get<std::string>();
    r.why = j.at("why").get<std::string>();
    for (const auto& m : j.at("measurements")) {
      TuningMeasurement x{m.at("config").get<std::string>(), m.at("ms").get<double>(), m.at("ok").get<bool>(),
                          m.at("error").get<std::string>(), m.at("measured_unix").get<std::int64_t>()};
      GemmConfig::parse(x.config);  // a configuration this library can read
      r.measurements.push_back(std::move(x));
    }
    GemmConfig::parse(r.chosen);
    return r;
  } catch (const std::exception& e) {
    if (problem) *problem = fmt::format("not a tuning record: {}", e.what());
    return std::nullopt;
  }
}

void merge_tuning_records(TuningRecord& into, const TuningRecord& fresh) {
  if (!into.is_of(fresh.m, fresh.n, fresh.k, fresh.batch)) {
    into = fresh;  // the class's record becomes the latest problem's
    return;
  }
  for (const auto& m : fresh.measurements) {
    auto it = std::find_if(into.measurements.begin(), into.measurements.end(), [&](const TuningMeasurement& x) { return x.config == m.config; });
    if (it != into.measurements.end()) *it = m;
    else into.measurements.push_back(m);
  }
  into.shape_class = fresh.shape_class;
  into.m = fresh.m, into.n = fresh.n, into.k = fresh.k, into.batch = fresh.batch;
  into.heuristic = fresh.heuristic;
}

void choose_tuned(TuningRecord& r, double margin) {
  const TuningMeasurement* best = nullptr;
  const TuningMeasurement* heuristic = nullptr;
  for (const auto& m : r.measurements) {
    if (!m.ok) continue;
    if (!best || m.ms < best->ms) best = &m;
    if (m.config == r.heuristic) heuristic = &m;
  }
  if (!best) {
    r.chosen = r.heuristic;
    r.why = "no candidate ran correctly; the heuristic's configuration";
  } else if (heuristic && best != heuristic && best->ms * (1 + margin) > heuristic->ms) {
    r.chosen = r.heuristic;
    r.why = fmt::format("the fastest ({}, {:.4f} ms) is within {:.0f}% of the heuristic's ({:.4f} ms): the heuristic's kept", best->config,
                        best->ms, margin * 100, heuristic->ms);
  } else {
    r.chosen = best->config;
    r.why = heuristic && best != heuristic
                ? fmt::format("{:.4f} ms against the heuristic's {:.4f} ms ({:.3f}x)", best->ms, heuristic->ms, heuristic->ms / best->ms)
                : fmt::format("the fastest of {} measured, {:.4f} ms", r.measurements.size(), best->ms);
  }
}

jit::DiskEntry tuning_entry(const jit::KernelKey& key, const TuningIdentity& id, const TuningRecord& r, const std::string& dtypes) {
  jit::DiskEntry e;
  e.key_text = key.text;
  e.meta.family = "tuning";
  e.meta.program_name = "gemm_tuning";
  e.meta.name_expressions = {r.shape_class};
  e.meta.lowered_names = {r.chosen};  // (entries pair each name with what it resolves to)
  e.meta.dtypes = dtypes;
  e.meta.config = r.chosen;
  e.meta.arch = id.arch;
  e.meta.nvrtc_version = id.nvrtc;
  e.meta.created_unix = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  e.cubin = encode_tuning_record(r);  // the payload
  return e;
}

std::optional<TuningRecord> load_tuning_record(jit::DiskCache& disk, const jit::KernelKey& key) {
  auto e = disk.lookup(key);  // verified: checksum and key text
  if (!e) return std::nullopt;
  std::string problem;
  auto r = e->meta.family == "tuning" ? decode_tuning_record(e->cubin, &problem) : std::nullopt;
  if (!r) {
    util::log().warn("tuning entry {}: {}; ignored", key.hash.hex(), problem.empty() ? "not of family tuning" : problem);
    return std::nullopt;
  }
  return r;
}

TuningRecord store_tuning_record(jit::DiskCache* disk, const jit::KernelKey& key, const TuningIdentity& id, const TuningRecord& fresh,
                                 double margin, const std::string& dtypes, bool* stored) {
  if (stored) *stored = false;
  TuningRecord merged = fresh;
  if (!disk || !disk->writable()) {
    choose_tuned(merged, margin);
    return merged;
  }
  // Read, merge and publish under the key's lock, so that processes tuning one class at once each
  // add their measurements instead of the last one's replacing the others'.
  jit::DiskCache::KeyLock lock = disk->lock(key, std::chrono::seconds(60));
  if (!lock.held()) util::log().warn("tuning entry {}: its lock was not free within 60 s; publishing without it", key.hash.hex());
  if (auto old = load_tuning_record(*disk, key)) {
    merged = *old;
    merge_tuning_records(merged, fresh);
  }
  choose_tuned(merged, margin);
  disk->publish(key, tuning_entry(key, id, merged, dtypes));
  if (stored) *stored = disk->writable();
  return merged;
}

namespace {

// This process's tuned configurations by entry key (nullopt: the cache has none), so that a class is
// read from disk once.
struct TunedMemory {
  std::mutex mutex;
  std::unordered_map<util::Hash128, std::optional<std::string>, util::Hash128Hasher> chosen;
  std::mutex tuning;  // one implicit tuning at a time (TILEJIT_AUTOTUNE=on)
};
TunedMemory& tuned_memory() {
  static TunedMemory* m = new TunedMemory;  // never destroyed: plans may be made during exit
  return *m;
}

std::string dtypes_text(const GemmProblem& p) {
  return fmt::format("{},{}->{}", dtype_name(p.a.dtype), dtype_name(p.b.dtype), dtype_name(p.d.dtype));
}

}  // namespace

std::optional<GemmConfig> tuned_gemm_config(const std::shared_ptr<jit::Context>& jit, const GemmProblem& p, bool may_tune, std::string* why) {
  const util::AutotuneMode mode = jit->settings.autotune;
  if (mode == util::AutotuneMode::off || !jit->device_state().ok) return std::nullopt;
  if (p.m == 0 || p.n == 0) return std::nullopt;
  const TuningIdentity id = tuning_identity(*jit);
  const std::string shape_class = gemm_shape_class(p);
  const jit::KernelKey key = tuning_key(id, shape_class);
  TunedMemory& memory = tuned_memory();
  std::optional<std::string> chosen;
  bool known = false;
  {
    std::lock_guard lock(memory.mutex);
    if (auto it = memory.chosen.find(key.hash); it != memory.chosen.end()) chosen = it->second, known = true;
  }
  std::string origin = "tuning entry in this process";
  if (!known && jit->disk) {
    if (auto r = load_tuning_record(*jit->disk, key)) chosen = r->chosen, origin = fmt::format("tuning entry {} in the disk cache", key.hash.hex());
    std::lock_guard lock(memory.mutex);
    memory.chosen[key.hash] = chosen;
  }
  if (!chosen && mode == util::AutotuneMode::on && may_tune) {
    std::lock_guard one_at_a_time(memory.tuning);
    {
      std::lock_guard lock(memory.mutex);
      chosen = memory.chosen[key.hash];  // another thread may have tuned it meanwhile
    }
    if (!chosen) {
      util::log().info("GEMM {}x{}x{}: TILEJIT_AUTOTUNE=on and no tuning result for its class; tuning it now ({})", p.m, p.n, p.k, shape_class);
      const GemmTuneResult r = tune_gemm(jit, p, GemmTuneOptions{});
      util::log().info("GEMM {}x{}x{}: tuned in {:.1f} s ({:.1f} s compiling {} kernels, {:.1f} s timing {} candidates): {} ({})", p.m, p.n,
                       p.k, r.compile_seconds + r.timing_seconds, r.compile_seconds, r.compiled, r.timing_seconds, r.measurements.size(),
                       r.chosen.to_string(), r.why);
      chosen = r.chosen.to_string();
      origin = "tuned now (TILEJIT_AUTOTUNE=on)";
    }
  }
  if (!chosen) return std::nullopt;
  GemmConfig c = GemmConfig::parse(*chosen);
  try {
    validate_gemm_config(c, p, id.arch);
  } catch (const InvalidArgument& e) {
    util::log().debug("GEMM {}x{}x{}: the tuned configuration {} of its class does not suit it ({}); the heuristic decides", p.m, p.n, p.k,
                      *chosen, e.what());
    return std::nullopt;
  }
  if (why) *why = origin;
  return c;
}

namespace {

// Mirrors tilejit::tuning_compare_params in kernels_templates/gemm_tuning.cuh.
struct TuningCompareParams {
  const void* x;
  const void* reference;
  long long lines, width, ld, stride;
  long long batch;
  float rtol, atol;
  unsigned long long* mismatches;
};
static_assert(sizeof(TuningCompareParams) == 72, "must match tuning_compare_params in gemm_tuning.cuh");

// Device memory the tuner owns, freed with it.
class Scratch {
 public:
  explicit Scratch(int device) : device_(device) {}
  ~Scratch() {
    for (CUdeviceptr p : blocks_) jit::driver().cuMemFree(p);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // `bytes` at an address with the same remainder modulo 256 as `like` (so that alignment-selected
  // kernel variants are the ones the user's pointers get).
  CUdeviceptr alloc(std::size_t bytes, CUdeviceptr like = 0) {
    CUdeviceptr p = 0;
    jit::check(jit::driver().cuMemAlloc(&p, std::max<std::size_t>(bytes, 1) + 256), "cuMemAlloc", device_,
               fmt::format("{} bytes of GEMM tuning scratch", bytes));
    blocks_.push_back(p);
    return p + like % 256;
  }

 private:
  int device_;
  std::vector<CUdeviceptr> blocks_;
};

class Tuner {
 public:
  Tuner(const std::shared_ptr<jit::Context>& jit, const GemmProblem& p, const GemmTuneOptions& o)
      : jit_(jit), user_(p), options_(o), device_(jit->device_ordinal), scratch_(device_) {}

  ~Tuner() {
    if (start_) jit::driver().cuEventDestroy(start_);
    if (stop_) jit::driver().cuEventDestroy(stop_);
    if (stream_) jit::driver().cuStreamDestroy(stream_);
  }

  GemmTuneResult run();

 private:
  struct Candidate {
    GemmConfig config;
    std::shared_ptr<detail::GemmPlanState> plan;
    std::string error;
    double t_one = 0;
    int group = 1;
    std::vector<double> ms, reference_ms;  // its groups, and the reference's groups beside them
    double ratio = 1;                       // the reference's median over its own
    bool confirmed = false;                 // measured a second time, in longer groups
  };

  void make_scratch_problem();
  void fill(CUdeviceptr ptr, DType t, std::size_t elements, float lo, float hi);
  const Kernel& helper(const std::string& kernel, DType t);
  void restore_output();
  std::uint64_t mismatches();
  double time_group(const GemmPlan& plan, int launches);

  std::shared_ptr<jit::Context> jit_;
  GemmProblem user_;
  GemmTuneOptions options_;
  int device_;
  Scratch scratch_;
  GemmProblem scratch_problem_;
  std::size_t d_bytes_ = 0;
  CUdeviceptr reference_ = 0, pristine_c_ = 0, counter_ = 0;
  std::unordered_map<std::string, Program> helpers_;
  std::unordered_map<std::string, Kernel> helper_kernels_;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  std::uint64_t seed_ = 0x7e11a5eedull;
};

const Kernel& Tuner::helper(const std::string& kernel, DType t) {
  const std::string expression = fmt::format("tilejit::{}_kernel<{}>", kernel, device_type(t));
  if (auto it = helper_kernels_.find(expression); it != helper_kernels_.end()) return it->second;
  const KernelSource source{.name = fmt::format("gemm_tuning_{}_{}", kernel, dtype_name(t)),
                            .text = std::string(is_8bit_float(t) ? "#define TILEJIT_FP8_TYPES 1\n" : "") + "#include \"gemm_tuning.cuh\"\n"};
  const jit::ProgramLabels labels{.family = "gemm_tuning", .dtypes = std::string(dtype_name(t)), .config = "threads=256", .library_options = true};
  auto [pit, _] = helpers_.emplace(expression, jit::make_program(jit_, jit::program_request(*jit_, source, {expression}, jit_->arch(false), labels)));
  return helper_kernels_.emplace(expression, pit->second.kernel(expression)).first->second;
}

void Tuner::fill(CUdeviceptr ptr, DType t, std::size_t elements, float lo, float hi) {
  if (!elements) return;
  const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>((elements + 255) / 256, 1, 4096));
  helper("fill_uniform", t).launch({.grid = {blocks}, .block = {256}}, stream_, ptr, static_cast<unsigned long long>(elements), seed_++, lo, hi);
}

void Tuner::make_scratch_problem() {
  GemmProblem q = user_;
  const std::int64_t batch = q.batch;
  auto matrix = [&](MatrixRef& r, std::int64_t rows, std::int64_t cols, float lo, float hi, bool fill_it) {
    const std::int64_t bytes = matrix_span_bytes(r, rows, cols, batch);
    const CUdeviceptr like = r.ptr;
    r.ptr = scratch_.alloc(static_cast<std::size_t>(bytes), like);
    if (fill_it) fill(r.ptr, r.dtype, static_cast<std::size_t>(bytes) / dtype_size(r.dtype), lo, hi);
    return static_cast<std::size_t>(bytes);
  };
  const bool c_is_d = (user_.beta != 0.f || epilogue_reads_c(user_.epilogue)) && user_.c.ptr == user_.d.ptr;
  matrix(q.a, q.m, q.k, -1.f, 1.f, true);
  matrix(q.b, q.k, q.n, -1.f, 1.f, true);
  d_bytes_ = matrix(q.d, q.m, q.n, -1.f, 1.f, false);
  if (user_.c.ptr && !c_is_d) matrix(q.c, q.m, q.n, -1.f, 1.f, true);
  if (c_is_d) {
    // C is D (beta's term reads what the GEMM overwrites): every check run starts from the same C.
    q.c.ptr = q.d.ptr;
    pristine_c_ = scratch_.alloc(d_bytes_);
    fill(pristine_c_, q.d.dtype, d_bytes_ / dtype_size(q.d.dtype), -1.f, 1.f);
  }
  reference_ = scratch_.alloc(d_bytes_);
  counter_ = scratch_.alloc(8);
  if (q.epilogue.bias) {
    q.epilogue.bias = scratch_.alloc(static_cast<std::size_t>(q.n) * dtype_size(q.epilogue.bias_dtype), q.epilogue.bias);
    fill(q.epilogue.bias, q.epilogue.bias_dtype, static_cast<std::size_t>(q.n), -1.f, 1.f);
  }
  for (auto& v : q.epilogue.vectors) {
    const std::int64_t len = v.axis == EpilogueAxis::row ? q.m : q.n;
    const std::size_t elements = static_cast<std::size_t>(len + v.batch_stride * (batch - 1));
    v.ptr = scratch_.alloc(elements * dtype_size(v.dtype), v.ptr);
    fill(v.ptr, v.dtype, elements, -1.f, 1.f);
  }
  for (auto& in : q.epilogue.inputs) matrix(in.matrix, q.m, q.n, -1.f, 1.f, true);
  for (auto& out : q.epilogue.outputs) matrix(out.matrix, q.m, q.n, 0.f, 0.f, false);
  const bool blocks = q.scale_mode == ScaleMode::blocks;
  const std::size_t kblocks = static_cast<std::size_t>((q.k + 127) / 128);
  if (q.scale_a || blocks) {
    const std::size_t n = blocks ? kblocks * static_cast<std::size_t>(q.m * batch) : 1;
    q.scale_a = scratch_.alloc(n * 4);
    fill(q.scale_a, DType::f32, n, 0.5f, 1.5f);
  }
  if (q.scale_b || blocks) {
    const std::size_t n = blocks ? kblocks * static_cast<std::size_t>((q.n + 127) / 128 * batch) : 1;
    q.scale_b = scratch_.alloc(n * 4);
    fill(q.scale_b, DType::f32, n, 0.5f, 1.5f);
  }
  if (q.scale_d) {
    q.scale_d = scratch_.alloc(4);
    fill(q.scale_d, DType::f32, 1, 0.5f, 1.5f);
  }
  scratch_problem_ = q;
}

// D poisoned (NaN in every float dtype) so that an element a candidate leaves unwritten shows, or
// with C aliasing D, the pristine C.
void Tuner::restore_output() {
  const auto& api = jit::driver();
  const GemmProblem& q = scratch_problem_;
  if (pristine_c_) jit::check(api.cuMemcpyDtoDAsync(q.d.ptr, pristine_c_, d_bytes_, stream_), "cuMemcpyDtoDAsync", device_, "GEMM tuning");
  else jit::check(api.cuMemsetD8Async(q.d.ptr, 0xff, d_bytes_, stream_), "cuMemsetD8Async", device_, "GEMM tuning");
}

std::uint64_t Tuner::mismatches() {
  const auto& api = jit::driver();
  const GemmProblem& q = scratch_problem_;
  jit::check(api.cuMemsetD8Async(counter_, 0, 8, stream_), "cuMemsetD8Async", device_, "GEMM tuning");
  const bool row = q.d.layout == Layout::row_major;
  // Different configurations add the K products in different orders (split-K, K halves) and may
  // round the last bit of D differently: a tolerance of a few units in D's last place, relative to
  // the element and to the size of D's elements (sqrt(K) / 3 for products of uniform [-1, 1] values).
  const float rtol = q.d.dtype == DType::f32 ? 1e-3f : dtype_size(q.d.dtype) == 2 ? 1.f / 64 : 0.3f;
  const float magnitude = static_cast<float>(std::max(1.0, std::sqrt(static_cast<double>(q.k)) / 3 * std::max(1.f, std::fabs(q.alpha))));
  TuningCompareParams cp{reinterpret_cast<const void*>(q.d.ptr), reinterpret_cast<const void*>(reference_), row ? q.m : q.n, row ? q.n : q.m,
                         q.d.ld, q.d.batch_stride, q.batch, rtol, rtol * magnitude, reinterpret_cast<unsigned long long*>(counter_)};
  const std::size_t elements = static_cast<std::size_t>(q.m * q.n * q.batch);
  const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>((elements + 255) / 256, 1, 4096));
  helper("count_mismatches", q.d.dtype).launch({.grid = {blocks}, .block = {256}}, stream_, cp);
  jit::check(api.cuStreamSynchronize(stream_), "cuStreamSynchronize", device_, "GEMM tuning: checking a candidate");
  std::uint64_t bad = 0;
  jit::check(api.cuMemcpyDtoH(&bad, counter_, 8), "cuMemcpyDtoH", device_, "GEMM tuning");
  return bad;
}

double Tuner::time_group(const GemmPlan& plan, int launches) {
  const auto& api = jit::driver();
  // The stream is idle here (the last group was waited for): a short rest before each group, as
  // `tilejit bench gemm` has, so that every group starts from the same state of the clocks.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  jit::check(api.cuEventRecord(start_, stream_), "cuEventRecord", device_);
  for (int i = 0; i < launches; ++i) plan.run(stream_);
  jit::check(api.cuEventRecord(stop_, stream_), "cuEventRecord", device_);
  jit::check(api.cuEventSynchronize(stop_), "cuEventSynchronize", device_, "GEMM tuning: timing a candidate");
  float ms = 0;
  jit::check(api.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime", device_);
  return static_cast<double>(ms) / launches;
}

GemmTuneResult Tuner::run() {
  const GemmProblem p = normalized(user_);
  validate_gemm(p);
  if (p.m == 0 || p.n == 0) throw InvalidArgument(fmt::format("tune_gemm: a {}x{}x{} problem has no outputs to time", p.m, p.n, p.k));
  if (options_.rounds < 1 || options_.rounds > 100) throw InvalidArgument(fmt::format("tune_gemm: rounds {} must be 1 to 100", options_.rounds));
  if (!(options_.group_ms > 0) || options_.group_ms > 1000)
    throw InvalidArgument(fmt::format("tune_gemm: group_ms {} must be above 0 and at most 1000", options_.group_ms));
  if (!(options_.margin >= 0) || options_.margin > 1) throw InvalidArgument(fmt::format("tune_gemm: margin {} must be 0 to 1", options_.margin));
  user_ = p;
  jit::make_current(jit_->context(), device_);
  const auto& api = jit::driver();
  const TuningIdentity id = tuning_identity(*jit_);
  const int sms = jit_->device_state().info.multiprocessors;
  GemmTuneResult result;
  result.shape_class = gemm_shape_class(p);
  const jit::KernelKey key = tuning_key(id, result.shape_class);
  result.key = key.hash.hex();
  result.heuristic = choose_gemm_config(p, id.arch, sms);

  // Which candidates to time: the new ones, and the heuristic's and the best so far again, so that
  // the comparison that decides is made in one run.
  std::vector<GemmConfig> configs = options_.candidates.empty() ? gemm_tuning_candidates(p, id.arch, sms) : options_.candidates;
  if (std::find(configs.begin(), configs.end(), result.heuristic) == configs.end()) configs.insert(configs.begin(), result.heuristic);
  std::optional<TuningRecord> old = jit_->disk ? load_tuning_record(*jit_->disk, key) : std::nullopt;
  if (old && !old->is_of(p.m, p.n, p.k, p.batch)) old.reset();  // another problem's times
  std::vector<Candidate> cands;
  for (const auto& c : configs) {
    const std::string text = c.to_string();
    const bool measured = old && std::any_of(old->measurements.begin(), old->measurements.end(), [&](const TuningMeasurement& m) { return m.config == text; });
    if (measured && !options_.retime && !(c == result.heuristic) && !(old && old->chosen == text)) continue;
    if (std::any_of(cands.begin(), cands.end(), [&](const Candidate& x) { return x.config == c; })) continue;
    cands.push_back({c});
  }

  jit::check(api.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate", device_, "GEMM tuning");
  jit::check(api.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate", device_);
  jit::check(api.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate", device_);
  make_scratch_problem();

  // Compile on several threads (NVRTC in one process scales to about 3x; `tilejit tune gemm`
  // compiles in worker processes first, and these then come from the disk cache).
  const auto compile_start = Clock::now();
  {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = std::clamp(options_.compile_threads > 0 ? options_.compile_threads : std::min(hw, 8), 1, static_cast<int>(cands.size()));
    std::atomic<std::size_t> next{0};
    std::atomic<int> compiled{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (std::size_t i; (i = next.fetch_add(1)) < cands.size();) {
          try {
            validate_gemm_config(cands[i].config, scratch_problem_, id.arch);
            const CompiledKernelInfo info = compile_gemm(jit_, scratch_problem_, &cands[i].config);
            if (!info.from_cache) compiled.fetch_add(1);
          } catch (const std::exception& e) {
            cands[i].error = e.what();
          }
        }
      });
    for (auto& t : pool) t.join();
    result.compiled = compiled.load();
  }
  for (auto& c : cands) {
    if (!c.error.empty()) continue;
    try {
      c.plan = make_prepared_gemm_plan(jit_, scratch_problem_, &c.config);
    } catch (const std::exception& e) {
      c.error = e.what();
    }
  }
  result.compile_seconds = seconds_since(compile_start);

  const auto timing_start = Clock::now();
  // The reference: the heuristic's configuration, whose correctness the test suite covers.
  Candidate* reference = nullptr;
  for (auto& c : cands)
    if (c.config == result.heuristic) reference = &c;
  if (!reference || !reference->plan)
    throw Error(fmt::format("tune_gemm: the heuristic's configuration {} did not compile: {}", result.heuristic.to_string(),
                            reference ? reference->error : "(missing)"));
  restore_output();
  detail::GemmPlanAccess::make(reference->plan).run(stream_);
  jit::check(api.cuMemcpyDtoDAsync(reference_, scratch_problem_.d.ptr, d_bytes_, stream_), "cuMemcpyDtoDAsync", device_, "GEMM tuning");
  jit::check(api.cuStreamSynchronize(stream_), "cuStreamSynchronize", device_, "GEMM tuning: the reference run");
  std::vector<Candidate*> timed;
  for (auto& c : cands) {
    if (!c.plan) continue;
    const GemmPlan plan = detail::GemmPlanAccess::make(c.plan);
    try {
      restore_output();
      plan.run(stream_);
      if (const std::uint64_t bad = mismatches())
        c.error = fmt::format("{} of {} elements of D differ from the heuristic configuration's", bad, p.m * p.n * p.batch);
    } catch (const DriverError& e) {
      c.error = e.what();
      // A launch that failed for its own resources leaves the context usable; anything sticky does not.
      jit::check(api.cuStreamSynchronize(stream_), "cuStreamSynchronize", device_, fmt::format("GEMM tuning, after candidate {}", c.config.to_string()));
    }
    if (!c.error.empty()) continue;
    plan.run(stream_);  // warm-up
    c.t_one = time_group(plan, 1);
    c.group = static_cast<int>(std::clamp(std::ceil(options_.group_ms / std::max(c.t_one, 1e-4)), 2.0, 5000.0));
    timed.push_back(&c);
  }
  // Every candidate is timed beside the heuristic's configuration, the two alternating (which goes
  // first alternates too), as `tilejit bench gemm` times tilejit beside cuBLAS: what decides is each
  // candidate's ratio to the reference in the same stretch of time, so that drift of the clocks and
  // the state a previous group left lands on both alike. Times stored are the reference's median
  // over the ratio.
  auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  if (std::find(timed.begin(), timed.end(), reference) == timed.end())
    throw Error(fmt::format("tune_gemm: the heuristic's configuration {} failed its own run: {}", result.heuristic.to_string(), reference->error));
  const GemmPlan reference_plan = detail::GemmPlanAccess::make(reference->plan);
  std::vector<double> reference_all;
  auto pairs = [&](Candidate& c, int count, double scale) {
    const GemmPlan plan = detail::GemmPlanAccess::make(c.plan);
    const int mine = std::max(2, static_cast<int>(c.group * scale)), theirs = std::max(2, static_cast<int>(reference->group * scale));
    c.ms.clear(), c.reference_ms.clear();
    for (int r = 0; r < count; ++r) {
      if (r % 2 == 0) {
        c.ms.push_back(time_group(plan, mine));
        c.reference_ms.push_back(time_group(reference_plan, theirs));
      } else {
        c.reference_ms.push_back(time_group(reference_plan, theirs));
        c.ms.push_back(time_group(plan, mine));
      }
    }
    c.ratio = median_of(c.reference_ms) / median_of(c.ms);
  };
  std::vector<Candidate*> others;
  for (Candidate* c : timed)
    if (c != reference) others.push_back(c);
  for (Candidate* c : others) {
    pairs(*c, options_.rounds, 1.0);
    reference_all.insert(reference_all.end(), c->reference_ms.begin(), c->reference_ms.end());
  }
  if (others.empty())
    for (int r = 0; r < options_.rounds; ++r) reference_all.push_back(time_group(reference_plan, reference->group));
  // The best again, in twice as many pairs of groups three times as long, until the best is one
  // measured twice: picking the best of dozens of noisy ratios favours the lucky. A ratio measured
  // twice counts by the lower of the two (the state of the GPU, its clocks and temperature, moves
  // ratios of a few per cent between one stretch of time and the next: the choice must hold in both).
  for (int confirmations = 0; confirmations < 6 && !others.empty(); ++confirmations) {
    Candidate* best = *std::max_element(others.begin(), others.end(), [](Candidate* a, Candidate* b) { return a->ratio < b->ratio; });
    if (best->confirmed) break;
    const double first = best->ratio;
    pairs(*best, 2 * options_.rounds, 3.0);
    best->ratio = std::min(first, best->ratio), best->confirmed = true;
  }
  // Past the limit, a ratio measured once never outranks the best measured twice.
  double best_confirmed = 0;
  for (Candidate* c : others)
    if (c->confirmed) best_confirmed = std::max(best_confirmed, c->ratio);
  for (Candidate* c : others)
    if (!c->confirmed && best_confirmed > 0) c->ratio = std::min(c->ratio, best_confirmed * 0.999);
  const double reference_ms = median_of(reference_all);
  reference->ms = {reference_ms};
  for (Candidate* c : others) c->ms = {reference_ms / c->ratio};
  result.timing_seconds = seconds_since(timing_start);

  TuningRecord fresh;
  fresh.shape_class = result.shape_class;
  fresh.m = p.m, fresh.n = p.n, fresh.k = p.k, fresh.batch = p.batch;
  fresh.heuristic = result.heuristic.to_string();
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (auto& c : cands) {
    TuningMeasurement m{c.config.to_string(), 0, c.error.empty(), c.error, now};
    if (m.ok) m.ms = c.ms.front();
    fresh.measurements.push_back(std::move(m));
  }
  TuningRecord merged;
  if (options_.store) {
    merged = store_tuning_record(jit_->disk.get(), key, id, fresh, options_.margin, dtypes_text(p), &result.stored);
  } else {
    merged = old ? *old : fresh;
    if (old) merge_tuning_records(merged, fresh);
    choose_tuned(merged, options_.margin);
  }
  {
    TunedMemory& memory = tuned_memory();
    std::lock_guard lock(memory.mutex);
    if (options_.store) memory.chosen[key.hash] = merged.chosen;
  }
  result.chosen = GemmConfig::parse(merged.chosen);
  result.why = merged.why;
  for (const auto& m : merged.measurements) {
    const bool now_measured = std::any_of(fresh.measurements.begin(), fresh.measurements.end(), [&](const TuningMeasurement& f) { return f.config == m.config; });
    result.measurements.push_back({GemmConfig::parse(m.config), m.ok ? m.ms : 0, m.ok, m.error, now_measured});
    if (m.ok && m.config == merged.chosen) result.chosen_ms = m.ms;
    if (m.ok && m.config == merged.heuristic) result.heuristic_ms = m.ms;
  }
  std::stable_sort(result.measurements.begin(), result.measurements.end(), [](const GemmTuneMeasurement& a, const GemmTuneMeasurement& b) {
    if (a.ok != b.ok) return a.ok;
    return a.ok && a.ms < b.ms;
  });
  return result;
}

}  // namespace

GemmTuneResult tune_gemm(const std::shared_ptr<jit::Context>& jit, const GemmProblem& problem, const GemmTuneOptions& options) {
  Tuner tuner(jit, problem, options);
  return tuner.run();
}

}  // namespace ops
}  // namespace tilejit
