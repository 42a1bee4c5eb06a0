// NVRTC: one RAII owner per program, kernel names through name expressions, errors with the log.
#pragma once

#include "jit/template_registry.hpp"

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::jit {

struct CompileRequest {
  std::string program_name;     // names the program in NVRTC's log and the dump directory
  std::string entry_template;   // e.g. "elementwise.cuh": its include closure is handed to NVRTC (may be empty)
  // More library templates whose include closures NVRTC gets (a user program's `#include <tilejit/...>`).
  std::vector<std::string> include_templates;
  // Headers of the program's own, served by include name (a user program's).
  std::vector<TemplateHeader> headers;
  std::string source;           // built-ins: the instantiation (an #include and a few definitions); users: their source
  // The kernels the program exports, e.g. "tilejit::elementwise_kernel<...>" or "row_softmax<256, float>";
  // empty: compile only.
  std::vector<std::string> name_expressions;
  std::vector<std::string> options;  // full option list (see NvrtcCompiler::options)
};

struct CompiledKernel {
  std::string cubin;
  std::vector<std::string> lowered_names;  // one per name expression, in order
  std::string log;  // NVRTC's log (warnings), may be empty
  double compile_ms = 0;
};

class NvrtcCompiler {
 public:
  // `digest_memo` (optional): a small file remembering the toolkit headers' content digest by their
  // size, mtime and inode, so a fresh process need not read 600 KB of headers to make a kernel key.
  NvrtcCompiler(const TemplateSet& templates, std::filesystem::path cuda_home,
                std::optional<std::filesystem::path> dump_dir, std::optional<std::filesystem::path> digest_memo = std::nullopt,
                bool memo_writable = false);

  // The options for one target architecture, in a fixed order, plus `extra`; `minimal` (the library's
  // own kernels) leaves out what no template uses (textures, device printf).
  std::vector<std::string> options(const std::string& arch, const std::vector<std::string>& extra = {}, bool minimal = true) const;
  // Compiles; throws CompileError (log, options, instantiation) when NVRTC rejects the program.
  CompiledKernel compile(const CompileRequest& request) const;
  // Every header NVRTC gets for a request: the include closures of its templates, then its own
  // headers (which replace a template of the same name).
  std::vector<TemplateHeader> headers_of(const CompileRequest& request) const;

  // Compiles an empty program, so that NVRTC's one-time start-up (loading its builtins, growing its
  // heap: about 100 ms on the H200 machine's VM) is paid here, off the first real compile.
  static void warm_up() noexcept;

  const TemplateSet& templates() const noexcept { return templates_; }
  const std::filesystem::path& cuda_include_dir() const noexcept { return cuda_include_; }
  // XXH3-128 over the CUDA headers the templates may include (cuda_fp16/bf16 and their .hpp),
  // so that a changed toolkit header invalidates cached kernels.
  // Computed at first use.
  const util::Hash128& toolkit_headers_digest() const;

  // "13.0+109338064": NVRTC's major.minor and, as its build, the size of the loaded libnvrtc.
  static const std::string& version();

 private:
  const TemplateSet& templates_;
  std::filesystem::path cuda_include_;
  std::optional<std::filesystem::path> dump_dir_;
  std::optional<std::filesystem::path> digest_memo_;
  bool memo_writable_;
  mutable std::once_flag digest_once_;
  mutable util::Hash128 toolkit_digest_;
};

}  // namespace tilejit::jit
