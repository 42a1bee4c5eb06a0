#include "runtime_impl.hpp"

#include "jit/driver.hpp"
#include "ops/elementwise/codegen.hpp"
#include "ops/elementwise/elementwise_internal.hpp"
#include "ops/elementwise/expression.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>
#include <tilejit/elementwise.hpp>
#include <tilejit/gemm.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

namespace tilejit {

using jit::check;
using jit::driver;

namespace {
// A fork() while a warm-up thread holds one of the JIT core's locks (or is inside a call_once) would
// leave the child waiting forever; the prepare handler lets warm-ups finish first (they take about a
// millisecond), so a process may fork right after creating a Runtime. The exit handler does the
// same for a Runtime the program never destroys (a leaked or static one): exit() runs it before the
// shared libraries' destructors, so a warm-up never runs into an NVRTC that is being unloaded.
struct WarmupsInFlight {
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::condition_variable& idle() {
    static std::condition_variable cv;
    return cv;
  }
  static int& count() {
    static int n = 0;
    return n;
  }
  static void begin() {
    static std::once_flag registered;
    std::call_once(registered, [] {
      (void)mutex(), (void)idle(), (void)count();  // constructed first, so destroyed after the exit handler runs
      ::pthread_atfork(&WarmupsInFlight::wait_all, nullptr, nullptr);
      std::atexit(&WarmupsInFlight::wait_all);
    });
    std::lock_guard lock(mutex());
    ++count();
  }
  static void end() {
    std::lock_guard lock(mutex());
    if (--count() == 0) idle().notify_all();
  }
  static void wait_all() {
    std::unique_lock lock(mutex());
    idle().wait(lock, [] { return count() == 0; });
  }
};
}  // namespace

namespace {
std::atomic<int>& live_impls() {
  static std::atomic<int> n{0};
  return n;
}
}  // namespace

int Runtime::Impl::live_count() noexcept { return live_impls().load(); }

Runtime::Impl::Impl(const RuntimeOptions& options)
    : settings(util::Settings::from_environment()),
      device_ordinal(options.device.value_or(settings.device)),
      arch_override(options.arch ? options.arch : settings.arch),
      templates(settings.template_dir),
      disk(settings.cache == util::CacheMode::off
               ? nullptr
               : std::make_unique<jit::DiskCache>(settings.cache_dir, settings.cache, settings.cache_max_size)),
      compiler(templates, settings.cuda_home, settings.dump_dir,
               disk && disk->enabled() ? std::optional(disk->root() / "toolkit-digests") : std::nullopt,
               disk && disk->writable()),
      cache(compiler, disk.get(), settings.always_compile) {
  util::set_log_level(settings.log_level);
  if (arch_override && !util::is_valid_arch(*arch_override))
    throw InvalidArgument(fmt::format("architecture '{}' is not valid: expected sm_80, sm_90, sm_90a, ...", *arch_override));
  if (device_ordinal < 0) throw InvalidArgument(fmt::format("device ordinal {} is negative", device_ordinal));
  live_impls().fetch_add(1);
  WarmupsInFlight::begin();
  key_warmup = std::async(std::launch::async, [this] {
    struct End {
      ~End() { WarmupsInFlight::end(); }
    } end;
    try {
      jit::NvrtcCompiler::version();
      compiler.toolkit_headers_digest();
      for (const auto& path : templates.paths())
        if (path.find('/') == std::string::npos) templates.digest(path);  // entry templates live at the top
      warm_up_first_call_host_path();
    } catch (const std::exception& e) {
      util::log().debug("key warm-up: {}", e.what());  // the first key computes what is missing
    }
  });
}

// Runs, once and off the caller's thread, the host code of an op's first call up to the disk read:
// validation, code generation, key, an entry's encoding and verification. Their first run
// in a process costs page faults, lazy symbol binding and first allocations: 0.2 ms on the
// development machine against 0.03 ms for a second op, which would otherwise land on the first
// disk hit the user waits for.
void Runtime::Impl::warm_up_first_call_host_path() {
  const ElementwiseOp op{.body = "z = x * a + y", .inputs = {{"x", DType::f32}, {"y", DType::f32}}, .outputs = {{"z", DType::f32}},
                         .scalars = {{"a", 2.f}}};
  ops::validate_op(op);
  const ElementwiseConfig config = ops::resolve_config(op, ElementwiseConfig{});
  const jit::KernelKey key = cache.key_for(ops::elementwise_request(*this, op, config, config.vector_width, "sm_90"));
  jit::DiskEntry entry;
  entry.key_text = key.text;
  entry.cubin = "warm-up";
  std::string problem;
  (void)jit::decode_entry(jit::encode_entry(entry), &problem);
}

void Runtime::Impl::start_nvrtc_warm_up() {
  WarmupsInFlight::begin();
  nvrtc_warmup = std::async(std::launch::async, [] {
    struct End {
      ~End() { WarmupsInFlight::end(); }
    } end;
    jit::NvrtcCompiler::warm_up();
  });
}

Runtime::Impl::~Impl() {
  live_impls().fetch_sub(1);
  if (key_warmup.valid()) key_warmup.wait();
  if (nvrtc_warmup.valid()) nvrtc_warmup.wait();
  // Modules first: they must be unloaded while the context they live in is still retained.
  elementwise_plans.clear();
  gemm_plans.clear();
  cache.clear();
  if (device_.context != nullptr && jit::driver_available()) driver().cuDevicePrimaryCtxRelease(device_.device);
}

const Runtime::Impl::DeviceState& Runtime::Impl::device_state() {
  std::call_once(device_once_, [this] {
    try {
      if (settings.nvrtc_warmup && jit::driver_library_present()) start_nvrtc_warm_up();  // overlaps cuInit
      const auto& api = driver();
      int count = 0;
      check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
      if (device_ordinal >= count)
        throw DriverError(fmt::format("device {} requested (TILEJIT_DEVICE or RuntimeOptions::device) but {} CUDA device{} found",
                                      device_ordinal, count, count == 1 ? " is" : "s are"),
                          "cuDeviceGet", CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", device_ordinal);
      DeviceState s;
      check(api.cuDeviceGet(&s.device, device_ordinal), "cuDeviceGet", device_ordinal);
      char name[256] = {};
      check(api.cuDeviceGetName(name, sizeof(name), s.device), "cuDeviceGetName", device_ordinal);
      auto attr = [&](CUdevice_attribute a) {
        int v = 0;
        check(api.cuDeviceGetAttribute(&v, a, s.device), "cuDeviceGetAttribute", device_ordinal);
        return v;
      };
      s.info.ordinal = device_ordinal;
      s.info.name = name;
      s.info.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
      s.info.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
      s.info.multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
      s.info.l2_bytes = static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
      s.info.max_shared_memory_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
      s.info.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
      check(api.cuDeviceTotalMem(&s.info.total_memory, s.device), "cuDeviceTotalMem", device_ordinal);
      check(api.cuDevicePrimaryCtxRetain(&s.context, s.device), "cuDevicePrimaryCtxRetain", device_ordinal);
      s.programmatic_launch = settings.programmatic_launch && s.info.cc_major >= 9;
      s.ok = true;
      device_ = std::move(s);
      util::log().debug("device {}: {} (sm_{}{}, {} SMs)", device_ordinal, device_.info.name, device_.info.cc_major,
                        device_.info.cc_minor, device_.info.multiprocessors);
    } catch (const Error& e) {
      device_.ok = false;
      device_.why = e.what();
    }
  });
  return device_;
}

CUcontext Runtime::Impl::context() {
  const DeviceState& s = device_state();
  if (!s.ok) throw DriverError(s.why, "device initialisation", CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", device_ordinal);
  return s.context;
}

std::string Runtime::Impl::arch(bool arch_specific) {
  if (arch_override) return *arch_override;
  const DeviceState& s = device_state();
  if (!s.ok)
    throw DriverError(fmt::format("cannot choose a target architecture: {}. Set TILEJIT_ARCH (e.g. sm_90a) to compile "
                                  "without a GPU",
                                  s.why),
                      "device initialisation", CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", device_ordinal);
  // Arch-specific features (wgmma, setmaxnreg) exist from sm_90 on and need the 'a' target.
  bool a = arch_specific && s.info.cc_major >= 9;
  return fmt::format("sm_{}{}{}", s.info.cc_major, s.info.cc_minor, a ? "a" : "");
}

CompiledKernelInfo describe_kernel(const jit::Kernel& kernel, bool compiled_here) {
  const auto& req = kernel.request();
  CompiledKernelInfo info;
  info.program_name = req.compile.program_name;
  info.kernel_name = fmt::format("{}", fmt::join(req.compile.name_expressions, ", "));
  info.lowered_name = fmt::format("{}", fmt::join(kernel.compiled().lowered_names, ", "));
  info.arch = req.arch;
  info.key = kernel.key().hash.hex();
  info.options = req.compile.options;
  info.source = req.compile.source;
  info.from_cache = !compiled_here;
  info.compile_ms = compiled_here ? kernel.compiled().compile_ms : 0;
  info.cubin_bytes = kernel.compiled().cubin.size();
  return info;
}

// ---- Runtime ---------------------------------------------------------------------------------

Runtime::Runtime() : Runtime(RuntimeOptions{}) {}
Runtime::Runtime(const RuntimeOptions& options) : impl_(std::make_shared<Impl>(options)) {}
Runtime::~Runtime() = default;

bool Runtime::has_device(std::string* why) const {
  const auto& s = impl_->device_state();
  if (!s.ok && why) *why = s.why;
  return s.ok;
}

const DeviceInfo& Runtime::device_info() const {
  impl_->context();
  return impl_->device_state().info;
}

int Runtime::device_ordinal() const noexcept { return impl_->device_ordinal; }
std::string Runtime::target_arch() const { return impl_->arch(false); }
std::string Runtime::target_arch_specific() const { return impl_->arch(true); }

DeviceBuffer Runtime::alloc(std::size_t bytes) {
  CUcontext ctx = impl_->context();
  jit::make_current(ctx, impl_->device_ordinal);
  CUdeviceptr p = 0;
  if (bytes > 0)
    check(driver().cuMemAlloc(&p, bytes), "cuMemAlloc", impl_->device_ordinal, fmt::format("{} bytes", bytes));
  return DeviceBuffer(p, bytes, ctx, impl_->device_ordinal);
}

void Runtime::synchronize(CUstream stream) {
  jit::make_current(impl_->context(), impl_->device_ordinal);
  if (stream) check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize", impl_->device_ordinal);
  else check(driver().cuCtxSynchronize(), "cuCtxSynchronize", impl_->device_ordinal);
}

RuntimeStats Runtime::stats() const {
  auto s = impl_->cache.stats();
  return {s.memory_hits, s.disk_hits, s.compiles, s.compile_seconds};
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
}

}  // namespace tilejit
