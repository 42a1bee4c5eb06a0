// `tilejit bench devices`: the same GEMM, back to back on one stream per device, first on the first
// device alone and then on every listed device at once from one process (a thread and a Runtime per
// device), with the aggregate rate beside the one-device rate. Each device's D is checked against the
// float64 host reference afterwards.
#include "commands.hpp"
#include "gemm_args.hpp"
#include "gemm_case.hpp"
#include "gpu_timing.hpp"

#include <tilejit/tooling.hpp>

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <barrier>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

namespace tilejit::cli {
namespace {

using tooling::check;
using tooling::driver;

struct DevicesArgs {
  GemmArgs gemm;
  std::string devices = "0,1";
  double seconds = 1.0;  // of back-to-back launches per device and round
  int rounds = 3;
};

std::vector<int> parse_devices(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      const int d = std::stoi(item, &used);
      if (used != item.size() || d < 0) throw std::invalid_argument(item);
      out.push_back(d);
    } catch (const std::exception&) {
      throw InvalidArgument(fmt::format("--devices: '{}' is not a device ordinal (expected a list such as 0,1)", item));
    }
  }
  if (out.empty()) throw InvalidArgument("--devices: expected at least one device ordinal, e.g. 0,1");
  return out;
}

// One device: its Runtime, operands, plan and stream; timed from its own thread.
class DeviceGemm {
 public:
  DeviceGemm(int device, const GemmProblem& shape, const std::optional<GemmConfig>& config, std::uint64_t seed)
      : rt_(options_for(device)) {
    if (!rt_.has_device(&why_)) return;
    gc_ = std::make_unique<GemmCase>(rt_, shape, false, seed);
    plan_ = std::make_unique<GemmPlan>(config ? rt_.plan_gemm(gc_->problem, *config) : rt_.plan_gemm(gc_->problem));
    tooling::make_current(rt_);
    stream_ = std::make_unique<OwnStream>();
    check(driver().cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    check(driver().cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~DeviceGemm() {
    if (!why_.empty()) return;
    tooling::make_current(rt_);  // the stream and events live in this device's context
    if (start_) driver().cuEventDestroy(start_);
    if (stop_) driver().cuEventDestroy(stop_);
  }
  const std::string& why() const { return why_; }
  Runtime& runtime() { return rt_; }
  GemmPlan& plan() { return *plan_; }

  // TFLOP/s of about `seconds` of back-to-back launches (the count from a first group of 20).
  double rate(double seconds) {
    tooling::make_current(rt_);  // this thread may be new to the context
    const double per_launch_ms = group_ms(20) / 20;
    const int launches = std::max(20, static_cast<int>(seconds * 1000 / std::max(per_launch_ms, 1e-4)));
    return gc_->flops() * launches / (group_ms(launches) * 1e-3) * 1e-12;
  }
  double relative_error() { return gc_->relative_error(); }

 private:
  static RuntimeOptions options_for(int device) {
    RuntimeOptions o;
    o.device = device;
    return o;
  }
  double group_ms(int launches) {
    const auto& api = driver();
    check(api.cuStreamSynchronize(stream_->get()), "cuStreamSynchronize");
    check(api.cuEventRecord(start_, stream_->get()), "cuEventRecord");
    for (int i = 0; i < launches; ++i) plan_->run(stream_->get());
    check(api.cuEventRecord(stop_, stream_->get()), "cuEventRecord");
    check(api.cuEventSynchronize(stop_), "cuEventSynchronize");
    float ms = 0;
    check(api.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
    return ms;
  }
  Runtime rt_;
  std::string why_;
  std::unique_ptr<GemmCase> gc_;
  std::unique_ptr<GemmPlan> plan_;
  std::unique_ptr<OwnStream> stream_;
  CUevent start_ = nullptr, stop_ = nullptr;
};

int bench_devices(const DevicesArgs& a) {
  const std::vector<int> ordinals = parse_devices(a.devices);
  if (a.seconds <= 0 || a.rounds < 1) throw InvalidArgument("--seconds must be positive and --rounds at least 1");
  const GemmProblem shape = problem_of(a.gemm, a.gemm.layout);
  const std::optional<GemmConfig> config = config_of(a.gemm.config);
  std::vector<std::unique_ptr<DeviceGemm>> devices;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    devices.push_back(std::make_unique<DeviceGemm>(ordinals[i], shape, config, 1000 + i));
    if (!devices.back()->why().empty()) {
      fmt::print(stderr, "tilejit bench devices: device {}: {}\n", ordinals[i], devices.back()->why());
      return kExitFailure;
    }
  }
  std::vector<double> alone, together(devices.size() * a.rounds, 0.0);
  for (int r = 0; r < a.rounds; ++r) alone.push_back(devices[0]->rate(a.seconds));
  for (int r = 0; r < a.rounds; ++r) {
    std::barrier start(static_cast<std::ptrdiff_t>(devices.size()));
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          start.arrive_and_wait();
          together[r * devices.size() + i] = devices[i]->rate(a.seconds);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
  fmt::print("GEMM {}x{}x{} {} {} (config {}), back to back on one stream per device, {:.1f} s per device and round, "
             "median of {} rounds\n",
             shape.m, shape.n, shape.k, a.gemm.dtype, a.gemm.layout, devices[0]->plan().config().to_string(), a.seconds, a.rounds);
  double aggregate = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    std::vector<double> mine;
    for (int r = 0; r < a.rounds; ++r) mine.push_back(together[r * devices.size() + i]);
    const double m = median(mine), err = devices[i]->relative_error();
    aggregate += m;
    fmt::print("device {} ({}): {:.1f} TFLOP/s with the others; check {:.2e} {}\n", ordinals[i], devices[i]->runtime().device_info().name,
               m, err, err <= 1e-2 ? "PASS" : "FAIL");
  }
  const double one = median(alone);
  fmt::print("device {} alone {:.1f} TFLOP/s; {} devices together {:.1f} TFLOP/s: {:.3f}x\n", ordinals[0], one, devices.size(), aggregate,
             aggregate / one);
  RuntimeStats total{};
  for (auto& d : devices) {
    const RuntimeStats s = d->runtime().stats();
    total.compiles += s.compiles, total.shared_hits += s.shared_hits, total.disk_hits += s.disk_hits;
  }
  fmt::print("kernels: {} compiled, {} from disk, {} shared between the devices' Runtimes\n", total.compiles, total.disk_hits,
             total.shared_hits);
  for (auto& d : devices)
    if (!(d->relative_error() <= 1e-2)) return kExitFailure;
  return 0;
}

}  // namespace

void register_bench_devices(CLI::App& bench, Action& action) {
  auto a = std::make_shared<DevicesArgs>();
  a->gemm.m = a->gemm.n = a->gemm.k = 8192;
  a->gemm.layout = "NT";
  CLI::App* cmd = bench.add_subcommand("devices", "One GEMM back to back on each device at once from one process, beside one device alone");
  cmd->add_option("--devices", a->devices, "Device ordinals, the first also timed alone (default 0,1)");
  add_problem_options(cmd, a->gemm);  // default 8192^3 bf16 NT
  cmd->add_option("--seconds", a->seconds, "Seconds of launches per device and round");
  cmd->add_option("--rounds", a->rounds, "Rounds (medians are reported)");
  cmd->callback([&action, a] { action = [a] { return bench_devices(*a); }; });
}

}  // namespace tilejit::cli
