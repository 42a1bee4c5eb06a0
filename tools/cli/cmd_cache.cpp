// `tilejit cache stats|zero-stats|list|show|verify|prune|clear|export|import`.
#include "commands.hpp"
#include "tar.hpp"

#include <tilejit/error.hpp>
#include <tilejit/tooling.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <ctime>
#include <memory>
#include <unistd.h>

namespace tilejit::cli {
namespace {

using tooling::CacheDirectory;

struct CacheArgs {
  bool json = false;
  std::string kernel, arch, key, file, max_size, kind;
  double older_than_days = -1;
  bool source = false, sass = false, fix = false;
};

// Managing the directory works with TILEJIT_CACHE=off too; readonly forbids changes.
std::unique_ptr<CacheDirectory> open_cache() { return std::make_unique<CacheDirectory>(CacheDirectory::open()); }

void require_writable(const CacheDirectory& cache, const char* what) {
  if (!cache.writable())
    throw InvalidArgument(fmt::format("cache {}: the cache at {} cannot be changed ({})", what, cache.root().string(),
                                      cache.disabled_reason().empty() ? "TILEJIT_CACHE=readonly" : cache.disabled_reason()));
}

std::string iso_time(std::int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string source_of(const std::string& key_text) {
  // The key text ends with "source <bytes>\n<source>".
  auto at = key_text.rfind("\nsource ");
  if (at == std::string::npos) return {};
  auto nl = key_text.find('\n', at + 1);
  return nl == std::string::npos ? std::string() : key_text.substr(nl + 1);
}

nlohmann::json entry_json(const tooling::CacheEntry& e) {
  nlohmann::json j = {{"key", e.key}, {"bytes", e.bytes}, {"last_used", iso_time(e.last_used_unix)}, {"hits", e.hits},
                      {"valid", e.valid}};
  if (!e.valid) j["problem"] = e.problem;
  if (e.valid) {
    const auto& m = e.meta;
    j.update({{"family", m.family},         {"kernel", m.program_name}, {"instantiation", fmt::format("{}", fmt::join(m.name_expressions, ", "))},
              {"symbol", fmt::format("{}", fmt::join(m.lowered_names, ", "))},   {"dtypes", m.dtypes},       {"config", m.config},
              {"name_expressions", m.name_expressions}, {"symbols", m.lowered_names},
              {"arch", m.arch},             {"nvrtc", m.nvrtc_version}, {"options", m.options},
              {"compile_ms", m.compile_ms}, {"created", iso_time(m.created_unix)}, {"cubin_bytes", e.cubin.size()}});
    if (m.family == "tuning") {
      // The payload is the tuning record (JSON) in place of a cubin.
      j.erase("cubin_bytes");
      j["tuning"] = nlohmann::json::parse(e.cubin, nullptr, false);
    }
  }
  return j;
}

int cache_stats(const CacheArgs& a) {
  auto cache = open_cache();
  auto c = cache->counters();
  auto entries = cache->list(false);
  std::uint64_t bytes = 0;
  for (const auto& e : entries) bytes += e.bytes;
  nlohmann::json j = {{"directory", cache->root().string()},
                      {"enabled", cache->enabled()},
                      {"mode", tooling::read_settings().cache_mode},
                      {"entries", entries.size()},
                      {"bytes", bytes},
                      {"max_bytes", cache->max_bytes()},
                      {"memory_hits", c.memory_hits},
                      {"disk_hits", c.disk_hits},
                      {"misses", c.misses},
                      {"compiles", c.compiles},
                      {"compile_seconds", static_cast<double>(c.compile_us) * 1e-6},
                      {"corrupt_entries", c.corrupt},
                      {"write_errors", c.write_errors},
                      {"evictions", c.evictions}};
  if (!cache->enabled()) j["disabled_reason"] = cache->disabled_reason();
  if (a.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("cache directory      {}{}\n", cache->root().string(), cache->enabled() ? "" : fmt::format(" (not usable: {})", cache->disabled_reason()));
  fmt::print("entries              {} ({} of {})\n", entries.size(), tooling::format_size(bytes), tooling::format_size(cache->max_bytes()));
  fmt::print("memory hits          {}\ndisk hits            {}\nmisses               {}\n", c.memory_hits, c.disk_hits, c.misses);
  fmt::print("compiles             {} ({:.2f} s)\ncorrupt entries      {}\nwrite errors         {}\nevictions            {}\n",
             c.compiles, static_cast<double>(c.compile_us) * 1e-6, c.corrupt, c.write_errors, c.evictions);
  return 0;
}

int cache_zero_stats() {
  auto cache = open_cache();
  require_writable(*cache, "zero-stats");
  cache->zero_counters();
  fmt::print("counters zeroed in {}\n", cache->root().string());
  return 0;
}

// --kind: kernels (every compiled program), tuning (GEMM tuning results) or all.
bool of_kind(const tooling::CacheEntry& e, const std::string& kind) {
  if (kind.empty() || kind == "all") return true;
  const bool tuning = e.valid && e.meta.family == "tuning";
  return kind == "tuning" ? tuning : !tuning;
}

int cache_list(const CacheArgs& a) {
  if (!a.kind.empty() && a.kind != "all" && a.kind != "kernels" && a.kind != "tuning")
    throw InvalidArgument(fmt::format("cache list --kind '{}': expected kernels, tuning or all", a.kind));
  auto cache = open_cache();
  nlohmann::json rows = nlohmann::json::array();
  std::vector<tooling::CacheEntry> shown;
  for (auto& e : cache->list(true)) {
    if (!a.kernel.empty() && (!e.valid || (e.meta.program_name.find(a.kernel) == std::string::npos &&
                                           e.meta.family != a.kernel)))
      continue;
    if (!a.arch.empty() && (!e.valid || e.meta.arch != a.arch)) continue;
    if (!of_kind(e, a.kind)) continue;
    rows.push_back(entry_json(e));
    shown.push_back(std::move(e));
  }
  if (a.json) {
    fmt::print("{}\n", rows.dump(2));
    return 0;
  }
  fmt::print("{:<12} {:<40} {:<22} {:<7} {:>9} {:<20} {:>5}  {}\n", "key", "kernel", "dtypes", "arch", "size", "last used", "hits",
             "instantiation");
  for (const auto& e : shown) {
    if (!e.valid) {
      fmt::print("{:<12} INVALID: {}\n", e.key.substr(0, 12), e.problem);
      continue;
    }
    const auto& m = e.meta;
    const std::string what = m.family == "tuning" ? fmt::format("{} -> {}", fmt::join(m.name_expressions, ", "), m.config)
                                                  : fmt::format("{}", fmt::join(m.name_expressions, ", "));
    fmt::print("{:<12} {:<40} {:<22} {:<7} {:>9} {:<20} {:>5}  {}\n", e.key.substr(0, 12), m.program_name, m.dtypes, m.arch,
               tooling::format_size(e.bytes), iso_time(e.last_used_unix), e.hits, what);
  }
  fmt::print("{} entr{}\n", shown.size(), shown.size() == 1 ? "y" : "ies");
  return 0;
}

int cache_show(const CacheArgs& a) {
  auto cache = open_cache();
  std::vector<tooling::CacheEntry> matches;
  for (auto& e : cache->list(true))
    if (e.key.starts_with(a.key)) matches.push_back(std::move(e));
  if (matches.empty()) throw InvalidArgument(fmt::format("cache show: no entry with a key starting '{}'", a.key));
  if (matches.size() > 1) throw InvalidArgument(fmt::format("cache show: '{}' matches {} entries; give more digits", a.key, matches.size()));
  const auto& e = matches[0];
  if (a.json) {
    auto j = entry_json(e);
    if (e.valid && a.source) j["source"] = source_of(e.key_text);
    fmt::print("{}\n", j.dump(2));
    return e.valid ? 0 : kExitFailure;
  }
  if (!e.valid) {
    fmt::print("{}: INVALID ({})\n", e.key, e.problem);
    return kExitFailure;
  }
  const auto& m = e.meta;
  if (m.family == "tuning") {
    // A GEMM tuning result: its class, choice and every candidate's time.
    const auto r = nlohmann::json::parse(e.cubin, nullptr, false);
    fmt::print("key            {}\nfile           {}\nfamily         tuning (GEMM)\nclass          {}\ndtypes         {}\narch           {}\n", e.key,
               e.path.string(), fmt::join(m.name_expressions, ", "), m.dtypes, m.arch);
    if (r.is_discarded() || !r.is_object()) {
      fmt::print("payload        not a tuning record\n");
      return kExitFailure;
    }
    fmt::print("measured on    {}x{}x{} batch {}\nheuristic      {}\nchosen         {} ({})\ncreated        {}\nlast used      {}\nhits           {}\n",
               r.value("m", 0), r.value("n", 0), r.value("k", 0), r.value("batch", 1), r.value("heuristic", ""), r.value("chosen", ""),
               r.value("why", ""), iso_time(m.created_unix), iso_time(e.last_used_unix), e.hits);
    fmt::print("--- candidates ---\n");
    for (const auto& x : r.value("measurements", nlohmann::json::array()))
      fmt::print("{:<44} {}\n", x.value("config", ""),
                 x.value("ok", false) ? fmt::format("{:.4f} ms  (measured {})", x.value("ms", 0.0), iso_time(x.value("measured_unix", std::int64_t{0})))
                                      : "FAILED: " + x.value("error", std::string()));
    if (a.source) fmt::print("--- key ---\n{}", e.key_text);
    return 0;
  }
  fmt::print("key            {}\nfile           {}\nkernel         {}\nfamily         {}\ninstantiation  {}\nsymbol         {}\n", e.key,
             e.path.string(), m.program_name, m.family, fmt::join(m.name_expressions, ", "), fmt::join(m.lowered_names, ", "));
  fmt::print("dtypes         {}\nconfig         {}\narch           {}\nnvrtc          {}\noptions        {}\n", m.dtypes, m.config, m.arch,
             m.nvrtc_version, fmt::join(m.options, " "));
  fmt::print("compile        {:.1f} ms\ncreated        {}\nlast used      {}\nhits           {}\ncubin          {} bytes\n", m.compile_ms,
             iso_time(m.created_unix), iso_time(e.last_used_unix), e.hits, e.cubin.size());
  if (a.source) fmt::print("--- source ---\n{}", source_of(e.key_text));
  if (a.sass) {
    std::string tool;
    for (const char* candidate : {"cuobjdump", "/usr/local/cuda/bin/cuobjdump"}) {
      if (std::string(candidate).find('/') == std::string::npos) {
        if (std::system(fmt::format("command -v {} >/dev/null 2>&1", candidate).c_str()) == 0) tool = candidate;
      } else if (::access(candidate, X_OK) == 0) {
        tool = candidate;
      }
      if (!tool.empty()) break;
    }
    if (tool.empty()) {
      fmt::print("--- sass ---\ncuobjdump not found (on PATH or in /usr/local/cuda/bin)\n");
      return 0;
    }
    std::string tmp = (std::filesystem::temp_directory_path() / fmt::format("tilejit-{}-{}.cubin", e.key, ::getpid())).string();
    write_file(tmp, e.cubin);
    std::fflush(stdout);
    fmt::print("--- sass ---\n");
    std::fflush(stdout);
    int rc = std::system(fmt::format("{} --dump-sass '{}'", tool, tmp).c_str());
    std::filesystem::remove(tmp);
    if (rc != 0) return kExitFailure;
  }
  return 0;
}

int cache_verify(const CacheArgs& a) {
  auto cache = open_cache();
  if (a.fix) require_writable(*cache, "verify --fix");
  std::size_t good = 0, bad = 0, fixed = 0;
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& e : cache->list(true)) {
    if (e.valid) {
      ++good;
      continue;
    }
    ++bad;
    problems.push_back({{"key", e.key}, {"file", e.path.string()}, {"problem", e.problem}});
    if (!a.json) fmt::print("BAD  {}  {}\n", e.path.string(), e.problem);
    if (a.fix) {
      std::error_code ec;
      std::filesystem::path use = e.path;
      fixed += std::filesystem::remove(e.path, ec);
      std::filesystem::remove(use.replace_extension(".use"), ec);
    }
  }
  std::size_t temps = 0;
  if (a.fix) temps = cache->prune(UINT64_MAX, std::nullopt, std::chrono::seconds(60));
  if (a.json) {
    fmt::print("{}\n", nlohmann::json({{"valid", good}, {"invalid", bad}, {"removed", fixed}, {"problems", problems}}).dump(2));
  } else {
    fmt::print("{} valid, {} invalid{}\n", good, bad, a.fix ? fmt::format(", {} removed", fixed) : std::string());
  }
  (void)temps;
  return bad > fixed ? kExitFailure : 0;
}

int cache_prune(const CacheArgs& a) {
  auto cache = open_cache();
  require_writable(*cache, "prune");
  std::uint64_t limit = cache->max_bytes();
  if (!a.max_size.empty()) {
    auto v = tooling::parse_size(a.max_size);
    if (!v) throw InvalidArgument(fmt::format("cache prune --max-size '{}': expected a size such as 500M or 2G", a.max_size));
    limit = *v;
  }
  std::optional<std::chrono::seconds> older;
  if (a.older_than_days >= 0) older = std::chrono::seconds(static_cast<long long>(a.older_than_days * 86400));
  std::size_t n = cache->prune(limit, older);
  if (n) {
    tooling::CacheCounters c;
    c.evictions = n;
    cache->add_counters(c);
  }
  fmt::print("removed {} entr{} (limit {}{})\n", n, n == 1 ? "y" : "ies", tooling::format_size(limit),
             older ? fmt::format(", unused for {} days", a.older_than_days) : std::string());
  return 0;
}

int cache_clear() {
  auto cache = open_cache();
  require_writable(*cache, "clear");
  std::size_t n = cache->clear();
  fmt::print("removed {} entr{} from {}\n", n, n == 1 ? "y" : "ies", cache->root().string());
  return 0;
}

int cache_export(const CacheArgs& a) {
  auto cache = open_cache();
  std::vector<TarMember> members;
  std::size_t skipped = 0;
  for (const auto& e : cache->list(true)) {
    if (!e.valid) {
      ++skipped;
      continue;
    }
    auto bytes = read_file(e.path);
    if (!bytes) continue;
    members.push_back({fmt::format("entries/{}/{}.tjk", e.key.substr(0, 2), e.key), std::move(*bytes)});
  }
  write_file(a.file, write_tar(members));
  fmt::print("exported {} entr{} to {}{}\n", members.size(), members.size() == 1 ? "y" : "ies", a.file,
             skipped ? fmt::format(" ({} invalid entries skipped)", skipped) : std::string());
  return 0;
}

int cache_import(const CacheArgs& a) {
  auto cache = open_cache();
  require_writable(*cache, "import");
  auto archive = read_file(a.file);
  if (!archive) throw InvalidArgument(fmt::format("cache import: cannot read {}", a.file));
  std::size_t imported = 0, rejected = 0;
  for (const auto& m : read_tar(*archive)) {
    auto slash = m.name.rfind('/');
    std::string base = m.name.substr(slash == std::string::npos ? 0 : slash + 1);
    if (!base.ends_with(".tjk") || base.size() != 36) {
      fmt::print("skipped {}: not a cache entry\n", m.name);
      continue;
    }
    if (auto why = cache->import_entry(base.substr(0, 32), m.data)) {
      ++rejected;
      fmt::print("REJECTED {}: {}\n", m.name, *why);
    } else {
      ++imported;
    }
  }
  fmt::print("imported {} entr{}, rejected {}\n", imported, imported == 1 ? "y" : "ies", rejected);
  return rejected ? kExitFailure : 0;
}

}  // namespace

void register_cache(CLI::App& app, Action& action) {
  auto a = std::make_shared<CacheArgs>();
  CLI::App* cache = app.add_subcommand("cache", "Inspect and manage the disk kernel cache (TILEJIT_CACHE_DIR)");
  cache->require_subcommand(1);
  auto on = [&action, a](CLI::App* cmd, int (*fn)(const CacheArgs&)) {
    cmd->callback([&action, a, fn] { action = [a, fn] { return fn(*a); }; });
  };
  CLI::App* stats = cache->add_subcommand("stats", "Counters shared by all processes, entries, bytes and the size limit");
  stats->add_flag("--json", a->json, "Print JSON");
  on(stats, cache_stats);
  CLI::App* zero = cache->add_subcommand("zero-stats", "Set the shared counters to zero");
  on(zero, [](const CacheArgs&) { return cache_zero_stats(); });
  CLI::App* list = cache->add_subcommand("list", "Entries: kernel, instantiation, dtypes, arch, size, last use, hits");
  list->add_flag("--json", a->json, "Print JSON");
  list->add_option("--kernel", a->kernel, "Only kernels whose name contains this (or of this family)");
  list->add_option("--arch", a->arch, "Only entries for this architecture");
  list->add_option("--kind", a->kind, "kernels (compiled programs), tuning (GEMM tuning results) or all (default)");
  on(list, cache_list);
  CLI::App* show = cache->add_subcommand("show", "One entry's metadata and options");
  show->add_option("key", a->key, "The entry's key (a unique prefix is enough)")->required();
  show->add_flag("--json", a->json, "Print JSON");
  show->add_flag("--source", a->source, "Print the instantiated source (a tuning entry: its key text)");
  show->add_flag("--sass", a->sass, "Disassemble the cubin with cuobjdump (when it is installed)");
  on(show, cache_show);
  CLI::App* verify = cache->add_subcommand("verify", "Check every entry; exit 1 if any is bad (and not fixed)");
  verify->add_flag("--fix", a->fix, "Remove bad entries and stale temporary files");
  verify->add_flag("--json", a->json, "Print JSON");
  on(verify, cache_verify);
  CLI::App* prune = cache->add_subcommand("prune", "Evict least recently used entries down to a size, or unused ones");
  prune->add_option("--max-size", a->max_size, "Size to prune down to (default TILEJIT_CACHE_MAX_SIZE)");
  prune->add_option("--older-than", a->older_than_days, "Also remove entries unused for this many days");
  on(prune, cache_prune);
  CLI::App* clear = cache->add_subcommand("clear", "Remove every entry");
  on(clear, [](const CacheArgs&) { return cache_clear(); });
  CLI::App* exp = cache->add_subcommand("export", "Write every valid entry into a tar archive");
  exp->add_option("file", a->file, "Archive to write")->required();
  on(exp, cache_export);
  CLI::App* imp = cache->add_subcommand("import", "Verify and add the entries of a tar archive");
  imp->add_option("file", a->file, "Archive to read")->required();
  on(imp, cache_import);
}

}  // namespace tilejit::cli
