// Elementwise: plans (op + configuration + kernels per vector width) and the launch path.
#include "ops/elementwise/codegen.hpp"
#include "ops/elementwise/elementwise_internal.hpp"
#include "ops/elementwise/expression.hpp"

#include "jit/driver.hpp"
#include "jit/program.hpp"
#include "util/log.hpp"

#include <tilejit/elementwise.hpp>
#include <tilejit/error.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <bit>
#include <optional>

namespace tilejit {

void ops::write_scalar(ops::ElementwiseScalarSlot& slot, const ScalarValue& v) {
  slot.i64 = 0;
  switch (v.dtype()) {
    case DType::f32: slot.f32 = static_cast<float>(v.as_double()); break;
    case DType::f64: slot.f64 = v.as_double(); break;
    case DType::i32: slot.i32 = static_cast<int>(v.as_int()); break;
    default: slot.i64 = v.as_int(); break;
  }
}

namespace {
using ops::ElementwiseParams;
using ops::write_scalar;

constexpr int kVariants = 5;  // vector widths 1, 2, 4, 8, 16
}  // namespace

ScalarValue ScalarValue::of(DType dtype, double value) {
  switch (dtype) {
    case DType::f32: return ScalarValue(static_cast<float>(value));
    case DType::f64: return ScalarValue(value);
    case DType::i32: return ScalarValue(static_cast<std::int32_t>(value));
    case DType::i64: return ScalarValue(static_cast<std::int64_t>(value));
    default:
      throw InvalidArgument(fmt::format("scalar dtype {} is not supported: scalars are f32, f64, i32 or i64", dtype_name(dtype)));
  }
}

void validate_elementwise(const ElementwiseOp& op) { ops::validate_op(op); }

std::span<const std::string_view> elementwise_functions() { return ops::allowed_functions(); }

namespace ops {
jit::KernelRequest elementwise_request(const jit::Context& rt, const ElementwiseOp& op, const ElementwiseConfig& config,
                                       int vector_width, const std::string& arch) {
  // The op's source, as any client of the JIT core gives one: the generated functor and parameter
  // block under `#include "elementwise.cuh"`, one name expression, the library's options.
  KernelSource source{.name = elementwise_program_name(op, config, vector_width), .text = elementwise_source(op)};
  jit::ProgramLabels labels{.family = "elementwise", .library_options = true};
  for (const auto* list : {&op.inputs, &op.outputs}) {
    if (list == &op.outputs) labels.dtypes += "->";
    for (std::size_t i = 0; i < list->size(); ++i) labels.dtypes += fmt::format("{}{}", i ? "," : "", dtype_name((*list)[i].dtype));
  }
  labels.config = fmt::format("tile={} threads={} vec={}", config.tile, config.threads, vector_width);
  return jit::program_request(rt, source, {elementwise_name_expression(op, config, vector_width)}, arch, labels);
}
}  // namespace ops

namespace detail {

struct ElementwisePlanState {
  std::shared_ptr<jit::Context> rt;
  ElementwiseOp op;
  ElementwiseConfig config;
  std::size_t operand_size[kMaxElementwiseInputs + kMaxElementwiseOutputs] = {};
  ElementwiseParams params{};  // scalars pre-filled from op.scalars
  std::mutex mutex;
  // The program of each vector width (1 << variant), made at first need; `loaded` points at its
  // kernel once it is on the device: the launch path reads that one pointer.
  std::array<std::optional<Program>, kVariants> programs;
  std::array<std::optional<Kernel>, kVariants> kernels;
  std::array<std::atomic<const Kernel*>, kVariants> loaded{};
  std::array<bool, kVariants> compiled_here{};  // this plan's request caused the compile

  jit::KernelRequest request(int vector_width, const std::string& arch) const {
    return ops::elementwise_request(*rt, op, config, vector_width, arch);
  }

  const Kernel& kernel(int variant) {
    std::lock_guard lock(mutex);
    if (!kernels[variant]) {
      programs[variant] = jit::make_program(rt, request(1 << variant, rt->arch(false)), &compiled_here[variant]);
      kernels[variant] = programs[variant]->kernel(programs[variant]->name_expressions().front());
    }
    return *kernels[variant];
  }

  // Slow path of run(): compile or fetch, then load on the device.
  const Kernel& resolve(int variant) {
    const Kernel& k = kernel(variant);
    k.function();
    loaded[variant].store(&k, std::memory_order_release);
    return k;
  }
};

}  // namespace detail

namespace {

}  // namespace

std::shared_ptr<detail::ElementwisePlanState> ops::make_elementwise_plan(std::shared_ptr<jit::Context> rt, const ElementwiseOp& op,
                                                                         const ElementwiseConfig& config) {
  ops::validate_op(op);
  auto s = std::make_shared<detail::ElementwisePlanState>();
  s->rt = std::move(rt);
  s->op = op;
  s->config = ops::resolve_config(op, config);
  std::size_t k = 0;
  for (const auto& o : op.inputs) s->operand_size[k++] = dtype_size(o.dtype);
  for (const auto& o : op.outputs) s->operand_size[k++] = dtype_size(o.dtype);
  for (std::size_t i = 0; i < op.scalars.size(); ++i) write_scalar(s->params.scalar[i], op.scalars[i].value);
  return s;
}

namespace {

std::uint64_t signature_hash(const ElementwiseOp& op) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  auto add = [&](std::string_view s) {
    XXH3_64bits_update(&st, s.data(), s.size());
    XXH3_64bits_update(&st, "", 1);  // a separator: ("ab","c") and ("a","bc") differ
  };
  add(op.body);
  add(op.name);
  for (const auto* list : {&op.inputs, &op.outputs})
    for (const auto& o : *list) {
      add(o.name);
      auto t = static_cast<char>(o.dtype);
      XXH3_64bits_update(&st, &t, 1);
    }
  for (const auto& s : op.scalars) {
    add(s.name);
    auto t = static_cast<char>(s.value.dtype());
    XXH3_64bits_update(&st, &t, 1);
  }
  return XXH3_64bits_digest(&st);
}

bool same_signature(const ElementwiseOp& a, const ElementwiseOp& b) {
  auto same_operands = [](const std::vector<Operand>& x, const std::vector<Operand>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i].name != y[i].name || x[i].dtype != y[i].dtype) return false;
    return true;
  };
  if (a.body != b.body || a.name != b.name || !same_operands(a.inputs, b.inputs) || !same_operands(a.outputs, b.outputs) ||
      a.scalars.size() != b.scalars.size())
    return false;
  for (std::size_t i = 0; i < a.scalars.size(); ++i)
    if (a.scalars[i].name != b.scalars[i].name || a.scalars[i].value.dtype() != b.scalars[i].value.dtype()) return false;
  return true;
}

}  // namespace

// ---- the launch path -------------------------------------------------------------------------

void ElementwisePlan::run(DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n, CUstream stream) const {
  run(inputs, outputs, n, {}, stream);
}

void ElementwisePlan::run(DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n, std::span<const ScalarValue> scalars,
                          CUstream stream) const {
  ops::run_elementwise_plan(*state_, inputs, outputs, n, scalars, stream);
}

void ops::run_elementwise_plan(detail::ElementwisePlanState& s, DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n,
                               std::span<const ScalarValue> scalars, CUstream stream) {
  const ElementwiseOp& op = s.op;
  if (inputs.size() != op.inputs.size())
    throw InvalidArgument(fmt::format("elementwise '{}': {} input pointers given, the op declares {}", op.body, inputs.size(), op.inputs.size()));
  if (outputs.size() != op.outputs.size())
    throw InvalidArgument(fmt::format("elementwise '{}': {} output pointers given, the op declares {}", op.body, outputs.size(), op.outputs.size()));
  if (n > (1ull << 62)) throw InvalidArgument(fmt::format("elementwise '{}': n = {} exceeds 2^62", op.body, n));

  ElementwiseParams p = s.params;
  if (!scalars.empty()) {
    if (scalars.size() != op.scalars.size())
      throw InvalidArgument(fmt::format("elementwise '{}': {} scalar values given, the op declares {}", op.body, scalars.size(), op.scalars.size()));
    for (std::size_t i = 0; i < scalars.size(); ++i) {
      if (scalars[i].dtype() != op.scalars[i].value.dtype())
        throw InvalidArgument(fmt::format("elementwise '{}': scalar '{}' is {}, a {} value was given", op.body, op.scalars[i].name,
                                          dtype_name(op.scalars[i].value.dtype()), dtype_name(scalars[i].dtype())));
      write_scalar(p.scalar[i], scalars[i]);
    }
  }

  // The widest vector every operand's alignment allows (any alignment works, narrower when needed).
  int vec = s.config.vector_width;
  std::size_t k = 0;
  auto check_operand = [&](CUdeviceptr ptr, const Operand& o, const char* role) {
    const std::size_t size = s.operand_size[k++];
    if (ptr == 0 && n > 0) throw InvalidArgument(fmt::format("elementwise '{}': {} '{}' is a null pointer", op.body, role, o.name));
    // More than 2^48 bytes (256 TiB) is more than any device holds; a span past the end of the
    // address space is a bad pointer. Either would otherwise fault on the device or wrap around.
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(n, size, &bytes) || bytes > (std::uint64_t{1} << 48) || ptr > ~CUdeviceptr{0} - bytes)
      throw InvalidArgument(fmt::format("elementwise '{}': {} '{}': {} elements of {} bytes at 0x{:x} span more than 2^48 bytes or run "
                                        "past the end of the address space", op.body, role, o.name, n, size, ptr));
    if (ptr % size != 0)
      throw InvalidArgument(fmt::format("elementwise '{}': {} '{}' ({}) at 0x{:x} is not aligned to its {}-byte elements", op.body,
                                        role, o.name, dtype_name(o.dtype), ptr, size));
    while (vec > 1 && ptr % std::min<std::size_t>(16, vec * size) != 0) vec >>= 1;
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    check_operand(inputs[i], op.inputs[i], "input");
    p.in[i] = reinterpret_cast<const void*>(inputs[i]);
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    check_operand(outputs[i], op.outputs[i], "output");
    p.out[i] = reinterpret_cast<void*>(outputs[i]);
  }
  if (n == 0) return;
  // Each thread reads its elements and then writes its elements, so an output may be an input (or
  // another output) element for element: the same address and element size. Any other overlap would
  // have threads write what others still read.
  const std::size_t ins = inputs.size();
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const CUdeviceptr out = outputs[o];
    const std::size_t out_size = s.operand_size[ins + o];
    auto check_apart = [&](CUdeviceptr other, std::size_t other_size, const Operand& what, const char* role) {
      const bool same = other == out && other_size == out_size;
      if (!same && out < other + n * other_size && other < out + n * out_size)
        throw InvalidArgument(fmt::format("elementwise '{}': output '{}' at 0x{:x} ({} bytes) overlaps {} '{}' at 0x{:x} ({} bytes) "
                                          "without being it element for element",
                                          op.body, op.outputs[o].name, out, n * out_size, role, what.name, other, n * other_size));
    };
    for (std::size_t i = 0; i < ins; ++i) check_apart(inputs[i], s.operand_size[i], op.inputs[i], "input");
    for (std::size_t q = 0; q < o; ++q) check_apart(outputs[q], s.operand_size[ins + q], op.outputs[q], "output");
  }
  p.n = static_cast<long long>(n);

  const int variant = std::countr_zero(static_cast<unsigned>(vec));
  const Kernel* kernel = s.loaded[variant].load(std::memory_order_acquire);
  if (kernel == nullptr) {
    jit::make_current(s.rt->context(), s.rt->device_ordinal);
    kernel = &s.resolve(variant);
  }

  const std::uint64_t tiles = (n + s.config.tile - 1) / s.config.tile;
  // Blocks walk tiles with a grid stride, so capping the grid only bounds block-scheduling work.
  const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(tiles, 1u << 20));
  kernel->launch({.grid = {grid}, .block = {static_cast<unsigned>(s.config.threads)}}, stream, p);
}

Kernel ElementwisePlan::kernel(int vector_width) const {
  const int width = vector_width == 0 ? state_->config.vector_width : vector_width;
  if (width < 1 || width > 16 || (width & (width - 1)) != 0 || width > state_->config.vector_width)
    throw InvalidArgument(fmt::format("ElementwisePlan::kernel: vector width {} is not one this plan runs: 1, 2, 4, ... up to its "
                                      "configuration's {}",
                                      vector_width, state_->config.vector_width));
  return state_->kernel(std::countr_zero(static_cast<unsigned>(width)));
}

const ElementwiseOp& ElementwisePlan::op() const { return state_->op; }
const ElementwiseConfig& ElementwisePlan::config() const { return state_->config; }

// ---- the plans behind Runtime::elementwise, compile-only, warm-up ----------------------------------

namespace ops {

void ElementwisePlans::run(const std::shared_ptr<jit::Context>& jit, const ElementwiseOp& op, DevicePtrs inputs, DevicePtrs outputs,
                           std::uint64_t n, CUstream stream) {
  const std::uint64_t h = signature_hash(op);
  std::shared_ptr<detail::ElementwisePlanState> state;
  {
    std::lock_guard lock(mutex_);
    for (const auto& candidate : plans_[h])
      if (same_signature(candidate->op, op)) {
        state = candidate;
        break;
      }
    if (state) jit->cache.note_memory_hit();
  }
  if (!state) {
    state = make_elementwise_plan(jit, op, ElementwiseConfig{});
    std::lock_guard lock(mutex_);
    plans_[h].push_back(state);
  }
  // The op's current scalar values, not those the plan was made with.
  ScalarValue values[kMaxElementwiseScalars] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  for (std::size_t i = 0; i < op.scalars.size(); ++i) values[i] = op.scalars[i].value;
  run_elementwise_plan(*state, inputs, outputs, n, std::span<const ScalarValue>(values, op.scalars.size()), stream);
}

std::size_t ElementwisePlans::size() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [h, list] : plans_) n += list.size();
  return n;
}

CompiledKernelInfo compile_elementwise(std::shared_ptr<jit::Context> jit, const ElementwiseOp& op, const ElementwiseConfig& config) {
  auto state = make_elementwise_plan(std::move(jit), op, config);
  const int variant = std::countr_zero(static_cast<unsigned>(state->config.vector_width));
  return jit::compile_program(*state->rt, state->request(1 << variant, state->rt->arch(false)));
}

void warm_up_first_call_host_path(const jit::Context& jit) {
  const ElementwiseOp op{.body = "z = x * a + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}},
                         .scalars = {{"a", 2.f}}};
  validate_op(op);
  const ElementwiseConfig config = resolve_config(op, ElementwiseConfig{});
  const jit::KernelKey key = jit.cache.key_for(elementwise_request(jit, op, config, config.vector_width, "sm_90"));
  jit::DiskEntry entry;
  entry.key_text = key.text;
  entry.cubin = "warm-up";
  std::string problem;
  (void)jit::decode_entry(jit::encode_entry(entry), &problem);
}

}  // namespace ops

}  // namespace tilejit
