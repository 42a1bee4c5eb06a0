// Runtime: the facade. Owns the JIT context of its device and the ops' plan registries; every
// method calls down into src/ops or src/jit.
#include "runtime_impl.hpp"

#include "jit/driver.hpp"
#include "jit/program.hpp"
#include "ops/gemm/gemm_tuning.hpp"
#include "util/log.hpp"
#include "util/settings.hpp"

#include <tilejit/error.hpp>
#include <tilejit/elementwise.hpp>
#include <tilejit/gemm.hpp>
#include <tilejit/kernel.hpp>

#include <fmt/format.h>

namespace tilejit {

using jit::check;
using jit::driver;

Runtime::Impl::Impl(const RuntimeOptions& options)
    : jit(std::make_shared<jit::Context>(jit::ContextOptions{.device = options.device, .arch = options.arch})) {
  jit->start_key_warm_up([ctx = jit.get()] { ops::warm_up_first_call_host_path(*ctx); });
}

// The registries' plans (their modules and workspaces) go first, then the context if no plan or
// program held by the user keeps it.
Runtime::Impl::~Impl() = default;

// ---- Runtime ---------------------------------------------------------------------------------

Runtime::Runtime() : Runtime(RuntimeOptions{}) {}
Runtime::Runtime(const RuntimeOptions& options) : impl_(std::make_shared<Impl>(options)) {}
Runtime::~Runtime() = default;

bool Runtime::has_device(std::string* why) const {
  const auto& s = impl_->jit->device_state();
  if (!s.ok && why) *why = s.why;
  return s.ok;
}

const DeviceInfo& Runtime::device_info() const {
  impl_->jit->context();
  return impl_->jit->device_state().info;
}

int Runtime::device_ordinal() const noexcept { return impl_->jit->device_ordinal; }
std::string Runtime::target_arch() const { return impl_->jit->arch(false); }
std::string Runtime::target_arch_specific() const { return impl_->jit->arch(true); }

DeviceBuffer Runtime::alloc(std::size_t bytes) {
  jit::Context& j = *impl_->jit;
  CUcontext ctx = j.context();
  jit::make_current(ctx, j.device_ordinal);
  CUdeviceptr p = 0;
  if (bytes > 0) check(driver().cuMemAlloc(&p, bytes), "cuMemAlloc", j.device_ordinal, fmt::format("{} bytes", bytes));
  return DeviceBuffer(p, bytes, ctx, j.device_ordinal);
}

void Runtime::synchronize(CUstream stream) {
  jit::Context& j = *impl_->jit;
  jit::make_current(j.context(), j.device_ordinal);
  if (stream) check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize", j.device_ordinal);
  else check(driver().cuCtxSynchronize(), "cuCtxSynchronize", j.device_ordinal);
}

RuntimeStats Runtime::stats() const {
  auto s = impl_->jit->cache.stats();
  return {s.memory_hits, s.disk_hits, s.compiles, s.compile_seconds, s.shared_hits};
}

// ---- the operations: each op's code under src/ops, on the JIT context -------------------------

ElementwisePlan Runtime::plan_elementwise(const ElementwiseOp& op) { return plan_elementwise(op, ElementwiseConfig{}); }

ElementwisePlan Runtime::plan_elementwise(const ElementwiseOp& op, const ElementwiseConfig& config) {
  return ElementwisePlan(ops::make_elementwise_plan(impl_->jit, op, config));
}

void Runtime::elementwise(const ElementwiseOp& op, DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n, CUstream stream) {
  impl_->elementwise_plans.run(impl_->jit, op, inputs, outputs, n, stream);
}

CompiledKernelInfo Runtime::compile_elementwise(const ElementwiseOp& op, const ElementwiseConfig& config) {
  return ops::compile_elementwise(impl_->jit, op, config);
}

GemmPlan Runtime::plan_gemm(const GemmProblem& problem) { return GemmPlan(ops::make_prepared_gemm_plan(impl_->jit, problem, nullptr)); }

GemmPlan Runtime::plan_gemm(const GemmProblem& problem, const GemmConfig& config) {
  return GemmPlan(ops::make_prepared_gemm_plan(impl_->jit, problem, &config));
}

void Runtime::gemm(const GemmProblem& problem, CUstream stream) { impl_->gemm_plans.run(impl_->jit, problem, stream); }

CompiledKernelInfo Runtime::compile_gemm(const GemmProblem& problem, const GemmConfig* config) {
  return ops::compile_gemm(impl_->jit, problem, config);
}

GemmTuneResult Runtime::tune_gemm(const GemmProblem& problem) { return tune_gemm(problem, GemmTuneOptions{}); }

GemmTuneResult Runtime::tune_gemm(const GemmProblem& problem, const GemmTuneOptions& options) {
  return ops::tune_gemm(impl_->jit, problem, options);
}

// ---- users' programs: the same JIT core, family "user" ---------------------------------------

Program Runtime::program(const KernelSource& source, const std::vector<std::string>& name_expressions) {
  const auto& j = impl_->jit;
  return jit::make_program(j, jit::program_request(*j, source, name_expressions, j->arch(true)));
}

CompiledKernelInfo Runtime::compile_program(const KernelSource& source, const std::vector<std::string>& name_expressions,
                                            const std::string& arch) {
  jit::Context& j = *impl_->jit;
  const std::string target = arch.empty() ? j.arch(true) : arch;
  if (!util::is_valid_arch(target)) throw InvalidArgument(fmt::format("architecture '{}' is not valid: expected sm_80, sm_90a, ...", target));
  return jit::compile_program(j, jit::program_request(j, source, name_expressions, target));
}

// ---- DeviceBuffer ------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_), ctx_(o.ctx_), device_(o.device_) {
  o.ptr_ = 0;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    this->~DeviceBuffer();
    ptr_ = o.ptr_, bytes_ = o.bytes_, ctx_ = o.ctx_, device_ = o.device_;
    o.ptr_ = 0, o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ == 0) return;
  try {
    jit::make_current(ctx_, device_);
    CUresult r = driver().cuMemFree(ptr_);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_DEINITIALIZED)
      util::log().warn("cuMemFree failed on device {} with CUresult {}", device_, static_cast<int>(r));
  } catch (const std::exception& e) {
    util::log().warn("freeing device memory: {}", e.what());
  }
  ptr_ = 0;
}

namespace {
void check_range(std::size_t bytes, std::size_t offset, std::size_t size, const char* what) {
  if (offset > size || bytes > size - offset)
    throw InvalidArgument(fmt::format("DeviceBuffer::{}: {} bytes at offset {} exceed the buffer's {} bytes", what,
                                      bytes, offset, size));
}
}  // namespace

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  check_range(bytes, offset, bytes_, "upload");
  if (bytes == 0) return;
  jit::make_current(ctx_, device_);
  check(driver().cuMemcpyHtoD(ptr_ + offset, host, bytes), "cuMemcpyHtoD", device_);
  // From pageable memory the call may return before the data has reached the device (and a
  // kernel on a non-blocking stream does not wait for the legacy stream): done when we return.
  check(driver().cuStreamSynchronize(CU_STREAM_LEGACY), "cuStreamSynchronize", device_);
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  check_range(bytes, offset, bytes_, "download");
  if (bytes == 0) return;
  jit::make_current(ctx_, device_);
  check(driver().cuMemcpyDtoH(host, ptr_ + offset, bytes), "cuMemcpyDtoH", device_);
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  if (bytes_ == 0) return;
  jit::make_current(ctx_, device_);
  check(driver().cuMemsetD8(ptr_, value, bytes_), "cuMemsetD8", device_);
  // cuMemsetD8 may return before the fill is done, and a kernel on a non-blocking stream does not
  // wait for it (a benchmark's first check saw its output overwritten by the poison): done when we return.
  check(driver().cuStreamSynchronize(CU_STREAM_LEGACY), "cuStreamSynchronize", device_);
}

}  // namespace tilejit
