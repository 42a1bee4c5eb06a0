#include "jit/context.hpp"

#include "jit/driver.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

namespace tilejit::jit {

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
std::atomic<int>& live_contexts() {
  static std::atomic<int> n{0};
  return n;
}
}  // namespace

int Context::live_count() noexcept { return live_contexts().load(); }

Context::Context(const ContextOptions& options)
    : settings(util::Settings::from_environment()),
      device_ordinal(options.device.value_or(settings.device)),
      arch_override(options.arch ? options.arch : settings.arch),
      templates(settings.template_dir),
      disk(settings.cache == util::CacheMode::off
               ? nullptr
               : std::make_unique<DiskCache>(settings.cache_dir, settings.cache, settings.cache_max_size)),
      compiler(templates, settings.cuda_home, settings.dump_dir,
               disk && disk->enabled() ? std::optional(disk->root() / "toolkit-digests") : std::nullopt,
               disk && disk->writable()),
      cache(compiler, disk.get(), settings.always_compile) {
  util::set_log_level(settings.log_level);
  if (arch_override && !util::is_valid_arch(*arch_override))
    throw InvalidArgument(fmt::format("architecture '{}' is not valid: expected sm_80, sm_90, sm_90a, ...", *arch_override));
  if (device_ordinal < 0) throw InvalidArgument(fmt::format("device ordinal {} is negative", device_ordinal));
  live_contexts().fetch_add(1);
}

void Context::start_key_warm_up(std::function<void()> host_path) {
  WarmupsInFlight::begin();
  key_warmup_ = std::async(std::launch::async, [this, host_path = std::move(host_path)] {
    struct End {
      ~End() { WarmupsInFlight::end(); }
    } end;
    try {
      NvrtcCompiler::version();
      compiler.toolkit_headers_digest();
      for (const auto& path : templates.paths())
        if (path.find('/') == std::string::npos) templates.digest(path);  // entry templates live at the top
      if (host_path) host_path();
    } catch (const std::exception& e) {
      util::log().debug("key warm-up: {}", e.what());  // the first key computes what is missing
    }
  });
}

void Context::start_nvrtc_warm_up() {
  WarmupsInFlight::begin();
  nvrtc_warmup_ = std::async(std::launch::async, [] {
    struct End {
      ~End() { WarmupsInFlight::end(); }
    } end;
    jit::NvrtcCompiler::warm_up();
  });
}

Context::~Context() {
  live_contexts().fetch_sub(1);
  if (key_warmup_.valid()) key_warmup_.wait();
  if (nvrtc_warmup_.valid()) nvrtc_warmup_.wait();
  // Modules first: they must be unloaded while the context they live in is still retained.
  cache.clear();
  if (device_.context != nullptr && jit::driver_available()) driver().cuDevicePrimaryCtxRelease(device_.device);
}

const Context::DeviceState& Context::device_state() {
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

CUcontext Context::context() {
  const DeviceState& s = device_state();
  if (!s.ok) throw DriverError(s.why, "device initialisation", CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", device_ordinal);
  return s.context;
}

std::string Context::arch(bool arch_specific) {
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

CompiledKernelInfo describe_kernel(const Kernel& kernel, bool compiled_here) {
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
  if (compiled_here) info.compile_log = kernel.compiled().log;
  return info;
}

}  // namespace tilejit::jit
