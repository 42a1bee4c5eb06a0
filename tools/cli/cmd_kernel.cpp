// `tilejit compile kernel FILE --name EXPR ...`: a user's kernel source compiled into the caches
// through the same public API programs use (Runtime::compile_program), no GPU needed.
#include "commands.hpp"

#include <tilejit/tilejit.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace tilejit::cli {
namespace {

struct KernelArgs {
  std::string file, arch;
  std::vector<std::string> names, headers, options;
  bool source = false, json = false;
};

int compile_kernel_cmd(const KernelArgs& a) {
  std::vector<std::filesystem::path> headers(a.headers.begin(), a.headers.end());
  KernelSource src = KernelSource::from_file(a.file, headers);
  src.options = a.options;
  RuntimeOptions o;
  if (!a.arch.empty()) o.arch = a.arch;
  Runtime rt(o);
  const CompiledKernelInfo info = rt.compile_program(src, a.names, a.arch);
  if (a.json) {
    nlohmann::json j{{"program", info.program_name}, {"name_expressions", a.names},   {"symbols", info.lowered_name},
                     {"arch", info.arch},            {"key", info.key},               {"cubin_bytes", info.cubin_bytes},
                     {"from_cache", info.from_cache}, {"compile_ms", info.compile_ms}, {"compile_log", info.compile_log}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  print_compiled(info, /*several=*/true);
  if (a.source) fmt::print("options   {}\n--- source ---\n{}", fmt::join(info.options, " "), info.source);
  return 0;
}

}  // namespace

void register_kernel(CLI::App& compile, Action& action) {
  auto a = std::make_shared<KernelArgs>();
  CLI::App* c = compile.add_subcommand("kernel", "Compile a kernel source of your own into the caches (no GPU needed)");
  c->add_option("file", a->file, "The .cu source file")->required();
  c->add_option("--name,-n", a->names, "A name expression to export, e.g. 'rms_norm<1024, float>' (repeat for several)")->required();
  c->add_option("--header,-H", a->headers, "A header file the source includes by its file name (repeatable)");
  c->add_option("--option,-O", a->options, "An extra NVRTC option, e.g. -DBLOCK=256 (repeatable)")->allow_extra_args(false);
  c->add_option("--arch", a->arch, "Target architecture (default: TILEJIT_ARCH or the device's arch-specific one)");
  c->add_flag("--source", a->source, "Print the options and the source");
  c->add_flag("--json", a->json, "Print JSON");
  c->callback([&action, a] { action = [a] { return compile_kernel_cmd(*a); }; });
}

}  // namespace tilejit::cli
