#include "jit/nvrtc_compiler.hpp"

#include "util/files.hpp"
#include "util/log.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

namespace tilejit::jit {
namespace {

// Owns one nvrtcProgram.
struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const noexcept {
    if (p && *p) nvrtcDestroyProgram(p);
    delete p;
  }
};
using ProgramHandle = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

void check_nvrtc(nvrtcResult r, const char* call, const std::string& program) {
  if (r != NVRTC_SUCCESS)
    throw Error(fmt::format("{} failed for program '{}': {} ({})", call, program, nvrtcGetErrorString(r),
                            static_cast<int>(r)));
}

std::string program_log(nvrtcProgram p) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  nvrtcGetProgramLog(p, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// ptxas's advisories in an NVRTC log that cost a kernel its speed: wgmma serialized (C7508-C7520:
// "Potential Performance Loss: wgmma.mma_async instructions are serialized ...") or a wait inserted
// before accumulator registers are read ("warpgroup.wait is injected ..."). One line each.
std::vector<std::string> performance_advisories(const std::string& log) {
  std::vector<std::string> found;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(start, end - start);
    if (line.find("Potential Performance Loss") != std::string::npos || line.find("warpgroup.wait is injected") != std::string::npos) {
      const std::size_t code = line.find("(C");  // "ptxas info    : (C7511) ..." -> "(C7511) ..."
      found.push_back(code == std::string::npos ? line : line.substr(code));
    }
    start = end + 1;
  }
  return found;
}

std::string compute_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  // NVRTC reports no build number, and libnvrtc.so.13 carries none in its name; the size of the
  // loaded library tells one build from another (reading its 100 MB to hash it would cost a fresh
  // process far more than a cache hit should).
  std::string build = "unknown";
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) && info.dli_fname) {
    std::error_code ec;
    auto size = std::filesystem::file_size(std::filesystem::canonical(info.dli_fname, ec), ec);
    if (!ec) build = std::to_string(size);
  }
  return fmt::format("{}.{}+{}", major, minor, build);
}

}  // namespace

const std::string& NvrtcCompiler::version() {
  // Never destroyed: a runtime's warm-up thread may still read it while exit() runs destructors.
  static const std::string& v = *new std::string(compute_version());
  return v;
}

NvrtcCompiler::NvrtcCompiler(const TemplateSet& templates, std::filesystem::path cuda_home,
                             std::optional<std::filesystem::path> dump_dir, std::optional<std::filesystem::path> digest_memo,
                             bool memo_writable)
    : templates_(templates),
      cuda_include_(std::move(cuda_home) / "include"),
      dump_dir_(std::move(dump_dir)),
      digest_memo_(std::move(digest_memo)),
      memo_writable_(memo_writable) {}

const util::Hash128& NvrtcCompiler::toolkit_headers_digest() const {
  std::call_once(digest_once_, [this] {
    static constexpr const char* kHeaders[] = {"cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp"};
    // Fingerprint: path, size, mtime, inode of each header. A memo line maps it to the content digest.
    std::string fingerprint = cuda_include_.string();
    for (const char* h : kHeaders) {
      struct stat st{};
      if (::stat((cuda_include_ / h).c_str(), &st) == 0)
        fingerprint += fmt::format("|{}:{}:{}.{}:{}", h, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ino);
      else
        fingerprint += fmt::format("|{}:missing", h);
    }
    const std::string fp_hex = util::hash128(fingerprint).hex();
    if (digest_memo_) {
      if (auto memo = util::read_file(*digest_memo_)) {
        for (std::size_t at = 0; at + 65 <= memo->size();) {
          std::size_t nl = memo->find('\n', at);
          if (nl == std::string::npos) break;
          if (nl - at == 65 && memo->compare(at, 32, fp_hex) == 0) {
            const std::string d = memo->substr(at + 33, 32);
            toolkit_digest_ = {std::stoull(d.substr(16, 16), nullptr, 16), std::stoull(d.substr(0, 16), nullptr, 16)};
            return;
          }
          at = nl + 1;
        }
      }
    }
    std::string all;
    for (const char* h : kHeaders) {
      auto text = util::read_file(cuda_include_ / h);
      all += fmt::format("{}:{}\n", h, text ? util::hash128(*text).hex() : "missing");
    }
    toolkit_digest_ = util::hash128(all);
    if (digest_memo_ && memo_writable_) {
      // One short append (atomic with O_APPEND); a torn or stale line is simply never matched.
      const std::string line = fmt::format("{} {}\n", fp_hex, toolkit_digest_.hex());
      int fd = ::open(digest_memo_->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd >= 0) {
        [[maybe_unused]] ssize_t w = ::write(fd, line.data(), line.size());
        ::close(fd);
      }
    }
  });
  return toolkit_digest_;
}

void NvrtcCompiler::warm_up() noexcept {
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, "__global__ void tilejit_nvrtc_warm_up() {}\n", "tilejit_nvrtc_warm_up.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    return;
  const char* opts[] = {"--gpu-architecture=compute_80", "-std=c++17", "--minimal"};
  nvrtcCompileProgram(prog, 3, opts);
  nvrtcDestroyProgram(&prog);
}

std::vector<std::string> NvrtcCompiler::options(const std::string& arch, const std::vector<std::string>& extra, bool minimal) const {
  std::vector<std::string> opts = {
      "--gpu-architecture=" + arch,
      "-std=c++17",
      "--include-path=" + cuda_include_.string(),
      "-DTILEJIT_NVRTC=1",
  };
  // Leaves out texture/surface types and device-side runtime calls (printf among them), which no
  // library template uses: 6-8 ms less per compile on the development machine. Users' programs
  // keep them.
  if (minimal) opts.push_back("--minimal");
  opts.insert(opts.end(), extra.begin(), extra.end());
  return opts;
}

std::vector<TemplateHeader> NvrtcCompiler::headers_of(const CompileRequest& req) const {
  std::vector<TemplateHeader> headers;
  std::set<std::string> seen;
  std::vector<std::string> roots = req.include_templates;
  if (!req.entry_template.empty()) roots.insert(roots.begin(), req.entry_template);
  for (const auto& root : roots)
    for (auto& h : templates_.closure(root))
      if (seen.insert(h.path).second) headers.push_back(std::move(h));
  // The program's own headers come last and win over a library template of the same name.
  for (const auto& h : req.headers) {
    if (!seen.insert(h.path).second)
      headers.erase(std::remove_if(headers.begin(), headers.end(), [&](const TemplateHeader& t) { return t.path == h.path; }),
                    headers.end());
    headers.push_back(h);
  }
  return headers;
}

CompiledKernel NvrtcCompiler::compile(const CompileRequest& req) const {
  auto start = std::chrono::steady_clock::now();
  const std::vector<TemplateHeader> headers = headers_of(req);
  std::vector<const char*> header_texts, header_names;
  for (const auto& h : headers) {
    header_texts.push_back(h.text.c_str());
    header_names.push_back(h.path.c_str());
  }
  std::string cu_name = req.program_name + ".cu";
  ProgramHandle prog(new nvrtcProgram(nullptr));
  check_nvrtc(nvrtcCreateProgram(prog.get(), req.source.c_str(), cu_name.c_str(), static_cast<int>(headers.size()),
                                 header_texts.data(), header_names.data()),
              "nvrtcCreateProgram", req.program_name);
  for (const auto& name : req.name_expressions)
    check_nvrtc(nvrtcAddNameExpression(*prog, name.c_str()), "nvrtcAddNameExpression", req.program_name);

  std::vector<const char*> opt_ptrs;
  for (const auto& o : req.options) opt_ptrs.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(*prog, static_cast<int>(opt_ptrs.size()), opt_ptrs.data());
  std::string log = program_log(*prog);
  if (r != NVRTC_SUCCESS) {
    util::log().error("NVRTC failed to compile {}:\n{}", req.program_name, log);
    throw CompileError(fmt::format("NVRTC failed to compile '{}' ({}): {}\noptions: {}\ninstantiation: {}\nlog:\n{}",
                                   req.program_name, nvrtcGetErrorString(r), fmt::join(req.name_expressions, ", "),
                                   fmt::join(req.options, " "), fmt::join(req.name_expressions, ", "), log),
                       req.program_name, log, req.options, req.source);
  }

  CompiledKernel out;
  out.log = std::move(log);
  for (const auto& name : req.name_expressions) {
    const char* lowered = nullptr;
    check_nvrtc(nvrtcGetLoweredName(*prog, name.c_str(), &lowered), "nvrtcGetLoweredName", req.program_name);
    out.lowered_names.emplace_back(lowered);
  }
  std::size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(*prog, &size), "nvrtcGetCUBINSize", req.program_name);
  out.cubin.resize(size);
  check_nvrtc(nvrtcGetCUBIN(*prog, out.cubin.data()), "nvrtcGetCUBIN", req.program_name);
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  util::log().debug("compiled {} ({}) in {:.1f} ms, cubin {} bytes, options: {}", req.program_name,
                    fmt::join(req.name_expressions, ", "), out.compile_ms, out.cubin.size(), fmt::join(req.options, " "));
  if (!out.log.empty()) util::log().debug("NVRTC log for {}:\n{}", req.program_name, out.log);
  for (const auto& line : performance_advisories(out.log)) util::log().warn("ptxas on {}: {}", req.program_name, line);

  if (dump_dir_) {
    try {
      std::filesystem::create_directories(*dump_dir_);
      auto base = *dump_dir_ / req.program_name;
      util::write_file(base.string() + ".cu", req.source);
      for (const auto& h : req.headers) util::write_file(base.string() + ".header." + std::filesystem::path(h.path).filename().string(), h.text);
      util::write_file(base.string() + ".options.txt",
                       fmt::format("{}\nname expressions: {}\nlowered names: {}\n", fmt::join(req.options, "\n"),
                                   fmt::join(req.name_expressions, ", "), fmt::join(out.lowered_names, ", ")));
      util::write_file(base.string() + ".cubin", out.cubin);
      std::size_t ptx_size = 0;
      if (nvrtcGetPTXSize(*prog, &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
        std::string ptx(ptx_size, '\0');
        if (nvrtcGetPTX(*prog, ptx.data()) == NVRTC_SUCCESS) {
          ptx.pop_back();
          util::write_file(base.string() + ".ptx", ptx);
        }
      }
      if (!out.log.empty()) util::write_file(base.string() + ".log", out.log);
    } catch (const std::exception& e) {
      util::log().warn("TILEJIT_DUMP_DIR: {}", e.what());
    }
  }
  return out;
}

}  // namespace tilejit::jit
