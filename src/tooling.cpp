// The tooling API (include/tilejit/tooling.hpp) over the library's internals: the loaded driver,
// the settings, the disk cache's maintenance, the host references. Sits beside the Runtime facade:
// tools call it, nothing in the library does.
#include "jit/disk_cache.hpp"
#include "jit/driver.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "ops/elementwise/elementwise_internal.hpp"
#include "ops/elementwise/expression.hpp"
#include "ops/elementwise/host_reference.hpp"
#include "runtime_impl.hpp"
#include "util/host_dtype.hpp"
#include "util/settings.hpp"

#include <tilejit/error.hpp>
#include <tilejit/tooling.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <bit>
#include <cstring>

namespace tilejit::tooling {

// ---- driver ------------------------------------------------------------------------------------

const DriverCalls& driver() {
  static const DriverCalls calls = [] {
    const jit::DriverApi& d = jit::driver();
    DriverCalls c;
    c.cuDeviceGetCount = d.cuDeviceGetCount;
    c.cuCtxSynchronize = d.cuCtxSynchronize;
    c.cuMemAlloc = d.cuMemAlloc;
    c.cuMemFree = d.cuMemFree;
    c.cuMemsetD8 = d.cuMemsetD8;
    c.cuMemcpyDtoDAsync = d.cuMemcpyDtoDAsync;
    c.cuModuleLoadData = d.cuModuleLoadData;
    c.cuModuleUnload = d.cuModuleUnload;
    c.cuLaunchKernel = d.cuLaunchKernel;
    c.cuStreamCreate = d.cuStreamCreate;
    c.cuStreamDestroy = d.cuStreamDestroy;
    c.cuStreamSynchronize = d.cuStreamSynchronize;
    c.cuStreamBeginCapture = d.cuStreamBeginCapture;
    c.cuStreamEndCapture = d.cuStreamEndCapture;
    c.cuEventCreate = d.cuEventCreate;
    c.cuEventDestroy = d.cuEventDestroy;
    c.cuEventRecord = d.cuEventRecord;
    c.cuEventSynchronize = d.cuEventSynchronize;
    c.cuEventElapsedTime = d.cuEventElapsedTime;
    c.cuGraphInstantiateWithFlags = d.cuGraphInstantiateWithFlags;
    c.cuGraphLaunch = d.cuGraphLaunch;
    c.cuGraphDestroy = d.cuGraphDestroy;
    c.cuGraphExecDestroy = d.cuGraphExecDestroy;
    c.driver_version = d.driver_version;
    return c;
  }();
  return calls;
}

bool driver_available(std::string* why) { return jit::driver_available(why); }

void check(CUresult result, const char* call, const std::string& context) { jit::check(result, call, -1, context); }

void make_current(Runtime& runtime) {
  jit::Context& j = detail::RuntimeAccess::jit(runtime);
  jit::make_current(j.context(), j.device_ordinal);
}

const std::string& nvrtc_version() { return jit::NvrtcCompiler::version(); }

// ---- settings ----------------------------------------------------------------------------------

SettingsView read_settings() {
  const auto s = util::Settings::from_environment();
  SettingsView v;
  v.cache_dir = s.cache_dir;
  v.arch = s.arch;
  v.cache_mode = s.cache == util::CacheMode::readonly ? "readonly" : s.cache == util::CacheMode::off ? "off" : "on";
  for (const auto& r : s.rows) v.rows.push_back({r.variable, r.value, r.from_environment, r.default_text, r.meaning});
  return v;
}

std::optional<std::uint64_t> parse_size(std::string_view text) { return util::parse_size(text); }
std::string format_size(std::uint64_t bytes) { return util::format_size(bytes); }

// ---- the disk cache ----------------------------------------------------------------------------

struct CacheDirectory::State {
  std::unique_ptr<jit::DiskCache> cache;
};

namespace {
CacheCounters to_public(const jit::CacheCounters& c) {
  return {c.memory_hits, c.disk_hits, c.misses, c.compiles, c.compile_us, c.corrupt, c.write_errors, c.evictions};
}
jit::CacheCounters to_internal(const CacheCounters& c) {
  return {c.memory_hits, c.disk_hits, c.misses, c.compiles, c.compile_us, c.corrupt, c.write_errors, c.evictions};
}
}  // namespace

CacheDirectory CacheDirectory::open() {
  const auto s = util::Settings::from_environment();
  // Managing the directory works with TILEJIT_CACHE=off too; readonly forbids changes.
  const auto mode = s.cache == util::CacheMode::readonly ? util::CacheMode::readonly : util::CacheMode::on;
  auto state = std::make_unique<State>();
  state->cache = std::make_unique<jit::DiskCache>(s.cache_dir, mode, s.cache_max_size);
  return CacheDirectory(std::move(state));
}

CacheDirectory::CacheDirectory(std::unique_ptr<State> state) : state_(std::move(state)) {}
CacheDirectory::~CacheDirectory() = default;
CacheDirectory::CacheDirectory(CacheDirectory&&) noexcept = default;

bool CacheDirectory::enabled() const { return state_->cache->enabled(); }
bool CacheDirectory::writable() const { return state_->cache->writable(); }
const std::filesystem::path& CacheDirectory::root() const { return state_->cache->root(); }
std::string CacheDirectory::disabled_reason() const { return state_->cache->disabled_reason(); }
std::uint64_t CacheDirectory::max_bytes() const { return state_->cache->max_bytes(); }
CacheCounters CacheDirectory::counters() const { return to_public(state_->cache->counters()); }
void CacheDirectory::zero_counters() { state_->cache->zero_counters(); }
void CacheDirectory::add_counters(const CacheCounters& delta) { state_->cache->add_counters(to_internal(delta)); }

std::vector<CacheEntry> CacheDirectory::list(bool read_entries) const {
  std::vector<CacheEntry> out;
  for (auto& e : state_->cache->list(read_entries)) {
    CacheEntry c;
    c.key = std::move(e.key);
    c.path = std::move(e.path);
    c.bytes = e.bytes;
    c.last_used_unix = e.last_used_unix;
    c.hits = e.hits;
    c.valid = e.valid;
    c.problem = std::move(e.problem);
    c.key_text = std::move(e.entry.key_text);
    auto& m = e.entry.meta;
    c.meta = {std::move(m.family), std::move(m.program_name), std::move(m.name_expressions), std::move(m.lowered_names), std::move(m.dtypes),
              std::move(m.config), std::move(m.arch), std::move(m.nvrtc_version), std::move(m.options), m.compile_ms, m.created_unix};
    c.cubin = std::move(e.entry.cubin);
    out.push_back(std::move(c));
  }
  return out;
}

std::size_t CacheDirectory::prune(std::uint64_t max_bytes, std::optional<std::chrono::seconds> older_than, std::chrono::seconds stale_after) {
  return state_->cache->prune(max_bytes, older_than, stale_after);
}
std::size_t CacheDirectory::clear() { return state_->cache->clear(); }
std::optional<std::string> CacheDirectory::import_entry(const std::string& key_hex, const std::string& bytes) {
  return state_->cache->import_entry(key_hex, bytes);
}

// ---- host data and references --------------------------------------------------------------------

double load_element(DType t, const void* base, std::size_t i) { return util::load_element(t, base, i); }
void store_element_from_float(DType t, void* base, std::size_t i, double v) { util::store_element_from_float(t, base, i, v); }
void store_element_from_int(DType t, void* base, std::size_t i, std::int64_t v) { util::store_element_from_int(t, base, i, v); }

struct ElementwiseReference::State {
  explicit State(const ElementwiseOp& op) : reference(op) {}
  ops::HostReference reference;
};
ElementwiseReference::ElementwiseReference(const ElementwiseOp& op) : state_(std::make_unique<State>(op)) {}
ElementwiseReference::~ElementwiseReference() = default;
void ElementwiseReference::run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs, std::size_t n) const {
  state_->reference.run(inputs, outputs, n);
}

ElementwiseOp elementwise_op_from_body(const std::string& body, DType input_dtype, DType output_dtype, std::vector<Scalar> scalars) {
  ElementwiseOp op;
  op.body = body;
  op.scalars = std::move(scalars);
  auto tokens = ops::tokenize_body(body);
  auto known = [&](const std::string& name) {
    auto has = [&](const std::vector<Operand>& v) {
      return std::any_of(v.begin(), v.end(), [&](const Operand& o) { return o.name == name; });
    };
    return has(op.inputs) || has(op.outputs) ||
           std::any_of(op.scalars.begin(), op.scalars.end(), [&](const Scalar& s) { return s.name == name; });
  };
  // Outputs: the identifier starting each statement when an assignment operator follows it.
  bool statement_start = true;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (statement_start && t.kind == ops::BodyToken::Kind::identifier && tokens[i + 1].kind == ops::BodyToken::Kind::symbol &&
        tokens[i + 1].text.back() == '=' && tokens[i + 1].text != "==" && !known(t.text))
      op.outputs.push_back({t.text, output_dtype});
    statement_start = t.text == ";";
  }
  const auto functions = ops::allowed_functions();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (t.kind != ops::BodyToken::Kind::identifier || known(t.text)) continue;
    if (std::find(functions.begin(), functions.end(), t.text) != functions.end()) continue;
    if (t.text == "float" || t.text == "double" || t.text == "int" || t.text == "true" || t.text == "false") continue;
    op.inputs.push_back({t.text, input_dtype});
  }
  return op;
}


GemmEpilogue gemm_epilogue_from_body(const std::string& body, DType dtype, std::vector<Scalar> scalars) {
  GemmEpilogue e;
  e.body = body;
  e.scalars = std::move(scalars);
  static constexpr std::string_view kOwn[] = {"acc", "c", "alpha", "beta", "m", "n", "d"};
  std::set<std::string> known(std::begin(kOwn), std::end(kOwn));
  for (const auto& sc : e.scalars) known.insert(sc.name);
  const auto tokens = ops::tokenize_body(body, /*indexing=*/true);
  const auto functions = ops::allowed_functions();
  auto is_function = [&](const std::string& t) {
    return std::find(functions.begin(), functions.end(), t) != functions.end() || t == "float" || t == "double" || t == "int" ||
           t == "true" || t == "false";
  };
  // Vectors first (name[m], name[n]), then outputs (assigned at a statement's start), then inputs.
  for (std::size_t i = 0; i + 3 < tokens.size(); ++i)
    if (tokens[i].kind == ops::BodyToken::Kind::identifier && tokens[i + 1].text == "[" && !known.count(tokens[i].text)) {
      // Indexed by m: per row; by n (or anything else, which the parser then refuses by name): per column.
      known.insert(tokens[i].text);
      e.vectors.push_back({.name = tokens[i].text, .dtype = dtype, .axis = tokens[i + 2].text == "m" ? EpilogueAxis::row : EpilogueAxis::column});
    }
  bool start = true;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (start && t.kind == ops::BodyToken::Kind::identifier && tokens[i + 1].kind == ops::BodyToken::Kind::symbol &&
        tokens[i + 1].text.back() == '=' && tokens[i + 1].text != "==" && !known.count(t.text)) {
      known.insert(t.text);
      e.outputs.push_back({t.text, {0, dtype, Layout::row_major}});
    }
    start = t.text == ";";
  }
  for (const auto& t : tokens)
    if (t.kind == ops::BodyToken::Kind::identifier && !known.count(t.text) && !is_function(t.text)) {
      known.insert(t.text);
      e.inputs.push_back({t.text, {0, dtype, Layout::row_major}});
    }
  return e;
}

struct GemmEpilogueReference::State {
  std::optional<ops::HostReference> reference;
  // Which of acc, c, m, n, the vectors and the inputs the body reads, in the evaluator's order.
  bool acc = false, c = false, m = false, n = false;
  std::vector<bool> vectors, inputs;
  std::size_t outputs = 0;
};

GemmEpilogueReference::GemmEpilogueReference(const GemmProblem& p) : state_(std::make_unique<State>()) {
  const GemmEpilogue& e = p.epilogue;
  if (e.body.empty()) throw InvalidArgument("GemmEpilogueReference: the problem's epilogue has no body");
  std::set<std::string> named;
  std::string text;
  const auto tokens = ops::tokenize_body(e.body, /*indexing=*/true);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (t.kind == ops::BodyToken::Kind::end) break;
    // A vector's element is a plain value to the evaluator: drop "[m]" / "[n]".
    if (t.text == "[" && i + 2 < tokens.size() && tokens[i + 2].text == "]") {
      i += 2;
      continue;
    }
    if (t.kind == ops::BodyToken::Kind::identifier) named.insert(t.text);
    text += t.text + " ";
  }
  State& s = *state_;
  ElementwiseOp op{.body = text};
  auto value = [&](const std::string& name, bool integral = false) {
    if (!named.count(name)) return false;
    op.inputs.push_back({name, integral ? DType::i64 : DType::f64});
    return true;
  };
  s.acc = value("acc"), s.c = value("c"), s.m = value("m", true), s.n = value("n", true);
  for (const auto& v : e.vectors) s.vectors.push_back(value(v.name));
  for (const auto& x : e.inputs) s.inputs.push_back(value(x.name));
  if (op.inputs.empty()) op.inputs.push_back({"acc", DType::f64}), s.acc = true;  // the evaluator wants one input
  if (op.inputs.size() > kMaxElementwiseInputs)
    throw InvalidArgument(fmt::format("GemmEpilogueReference: the body reads {} values; the host evaluator takes at most {}",
                                      op.inputs.size(), kMaxElementwiseInputs));
  op.outputs.push_back({"d", DType::f64});
  for (const auto& x : e.outputs) op.outputs.push_back({x.name, DType::f64});
  s.outputs = e.outputs.size();
  op.scalars = {{"alpha", static_cast<double>(p.alpha)}, {"beta", static_cast<double>(p.beta)}};
  for (const auto& sc : e.scalars) op.scalars.push_back(sc);
  s.reference.emplace(op);
}

GemmEpilogueReference::~GemmEpilogueReference() = default;

void GemmEpilogueReference::run(std::size_t count, const double* acc, const double* c, const std::int64_t* rows, const std::int64_t* cols,
                                const std::vector<const double*>& vectors, const std::vector<const double*>& inputs, double* d,
                                const std::vector<double*>& outputs) const {
  const State& s = *state_;
  if (vectors.size() != s.vectors.size() || inputs.size() != s.inputs.size() || outputs.size() != s.outputs)
    throw InvalidArgument("GemmEpilogueReference::run: one array per vector, input and output of the epilogue");
  std::vector<const void*> in;
  if (s.acc) in.push_back(acc);
  if (s.c) in.push_back(c);
  if (s.m) in.push_back(rows);
  if (s.n) in.push_back(cols);
  for (std::size_t i = 0; i < vectors.size(); ++i)
    if (s.vectors[i]) in.push_back(vectors[i]);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (s.inputs[i]) in.push_back(inputs[i]);
  std::vector<void*> out{d};
  for (double* o : outputs) out.push_back(o);
  s.reference->run(in, out, count);
}

std::vector<std::byte> elementwise_arguments(const ElementwisePlan& plan, DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n) {
  const ElementwiseOp& op = plan.op();
  if (inputs.size() != op.inputs.size() || outputs.size() != op.outputs.size())
    throw InvalidArgument(fmt::format("elementwise_arguments: {} inputs and {} outputs given, the op has {} and {}", inputs.size(),
                                      outputs.size(), op.inputs.size(), op.outputs.size()));
  ops::ElementwiseParams p{};
  for (std::size_t i = 0; i < inputs.size(); ++i) p.in[i] = reinterpret_cast<const void*>(inputs[i]);
  for (std::size_t i = 0; i < outputs.size(); ++i) p.out[i] = reinterpret_cast<void*>(outputs[i]);
  p.n = static_cast<long long>(n);
  for (std::size_t i = 0; i < op.scalars.size(); ++i) ops::write_scalar(p.scalar[i], op.scalars[i].value);
  std::vector<std::byte> bytes(sizeof p);
  std::memcpy(bytes.data(), &p, sizeof p);
  return bytes;
}

}  // namespace tilejit::tooling
