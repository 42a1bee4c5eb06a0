#include "parallel_compile.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace tilejit::cli {

std::vector<CompileOutcome> run_compile_jobs(const std::vector<CompileJob>& jobs, int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(jobs.size()));
  std::vector<CompileOutcome> out(jobs.size());
  std::atomic<std::size_t> next{0};
  std::mutex print_mutex;
  std::size_t done = 0;
  const bool terminal = ::isatty(STDOUT_FILENO);
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      out[i].label = jobs[i].label;
      try {
        out[i].info = jobs[i].run();
      } catch (const std::exception& e) {
        out[i].error = e.what();
      }
      std::lock_guard lock(print_mutex);
      ++done;
      const auto& o = out[i];
      std::string what = o.info ? (o.info->from_cache ? std::string("cached") : fmt::format("{:.0f} ms", o.info->compile_ms)) : "FAILED";
      if (terminal) {
        const int width = 30;
        const int filled = static_cast<int>(width * done / jobs.size());
        fmt::print("\r[{}{}] {}/{} {:<60.60}", std::string(filled, '#'), std::string(width - filled, '.'), done, jobs.size(),
                   fmt::format("{} ({})", o.label, what));
        if (done == jobs.size()) fmt::print("\n");
      } else {
        fmt::print("[{}/{}] {} ({})\n", done, jobs.size(), o.label, what);
      }
      std::fflush(stdout);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace tilejit::cli
