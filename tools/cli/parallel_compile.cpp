#include "parallel_compile.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <cerrno>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tilejit::cli {

namespace {

class Progress {
 public:
  Progress(std::size_t total, bool on) : total_(total), terminal_(::isatty(STDOUT_FILENO)), on_(on) {}
  void done(const CompileOutcome& o) {
    ++done_;
    if (!on_) return;
    std::string what = o.info ? (o.info->from_cache ? std::string("cached") : fmt::format("{:.0f} ms", o.info->compile_ms)) : "FAILED";
    if (terminal_) {
      const int width = 30;
      const int filled = static_cast<int>(width * done_ / total_);
      fmt::print("\r[{}{}] {}/{} {:<60.60}", std::string(filled, '#'), std::string(width - filled, '.'), done_, total_,
                 fmt::format("{} ({})", o.label, what));
      if (done_ == total_) fmt::print("\n");
    } else {
      fmt::print("[{}/{}] {} ({})\n", done_, total_, o.label, what);
    }
    std::fflush(stdout);
  }

 private:
  std::size_t total_, done_ = 0;
  bool terminal_, on_;
};

// Worker processes rather than threads: NVRTC compiles in threads of one process contend with each
// other (on the H200 machine 32 kernels took 4.5 s on one thread and no less than 1.6 s on 4 to 16).
// Each child compiles every k-th job (its results land in the disk cache) and reports one line per
// job through a pipe: index, status, compile ms, cached flag, error text.
std::vector<CompileOutcome> run_in_processes(const std::vector<CompileJob>& jobs, int workers, bool show) {
  std::vector<CompileOutcome> out(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) out[i].label = jobs[i].label;
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int w = 0; w < workers; ++w) {
    int p[2];
    if (::pipe(p) != 0) break;
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(p[0]);
      ::close(p[1]);
      break;
    }
    if (pid == 0) {
      ::close(p[0]);
      for (std::size_t i = static_cast<std::size_t>(w); i < jobs.size(); i += static_cast<std::size_t>(workers)) {
        std::string line;
        try {
          CompiledKernelInfo info = jobs[i].run();
          line = fmt::format("{}\tok\t{}\t{}\t{}\t{}\t{}\n", i, info.compile_ms, info.from_cache ? 1 : 0, info.program_name, info.key,
                             info.cubin_bytes);
        } catch (const std::exception& e) {
          std::string msg = e.what();
          for (auto& ch : msg)
            if (ch == '\n' || ch == '\t') ch = ' ';
          line = fmt::format("{}\terror\t{}\n", i, msg);
        }
        for (std::size_t done = 0; done < line.size();) {
          ssize_t n = ::write(p[1], line.data() + done, line.size() - done);
          if (n <= 0) ::_exit(3);
          done += static_cast<std::size_t>(n);
        }
      }
      ::_exit(0);
    }
    ::close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  Progress progress(jobs.size(), show);
  std::vector<std::string> buffers(fds.size());
  std::vector<pollfd> polls;
  for (int fd : fds) polls.push_back({fd, POLLIN, 0});
  std::size_t open_pipes = fds.size();
  while (open_pipes > 0) {
    if (::poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (std::size_t k = 0; k < polls.size(); ++k) {
      if (polls[k].fd < 0 || !(polls[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t n = ::read(polls[k].fd, buf, sizeof(buf));
      if (n <= 0) {
        ::close(polls[k].fd);
        polls[k].fd = -1;
        --open_pipes;
        continue;
      }
      buffers[k].append(buf, static_cast<std::size_t>(n));
      for (auto nl = buffers[k].find('\n'); nl != std::string::npos; nl = buffers[k].find('\n')) {
        std::string line = buffers[k].substr(0, nl);
        buffers[k].erase(0, nl + 1);
        std::vector<std::string> f;
        for (std::size_t a = 0, b; a <= line.size(); a = b + 1) {
          b = line.find('\t', a);
          if (b == std::string::npos) b = line.size();
          f.push_back(line.substr(a, b - a));
        }
        if (f.size() < 3) continue;
        const std::size_t i = std::stoul(f[0]);
        if (i >= out.size()) continue;
        if (f[1] == "ok" && f.size() >= 7) {
          CompiledKernelInfo info;
          info.compile_ms = std::stod(f[2]);
          info.from_cache = f[3] == "1";
          info.program_name = f[4];
          info.key = f[5];
          info.cubin_bytes = std::stoul(f[6]);
          out[i].info = info;
        } else {
          out[i].error = f[2];
        }
        progress.done(out[i]);
      }
    }
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  for (auto& o : out)
    if (!o.info && o.error.empty()) o.error = "the worker process died before reporting this kernel";
  return out;
}

}  // namespace

std::vector<CompileOutcome> run_compile_jobs(const std::vector<CompileJob>& jobs, int workers, bool show) {
  if (jobs.empty()) return {};
  if (workers <= 0) workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers = std::min<int>(workers, static_cast<int>(jobs.size()));
  if (workers > 1) return run_in_processes(jobs, workers, show);
  std::vector<CompileOutcome> out(jobs.size());
  Progress progress(jobs.size(), show);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    out[i].label = jobs[i].label;
    try {
      out[i].info = jobs[i].run();
    } catch (const std::exception& e) {
      out[i].error = e.what();
    }
    progress.done(out[i]);
  }
  return out;
}

}  // namespace tilejit::cli
