// The tilejit command-line tool: one file per command group, each registering its subcommands.
#pragma once

#include <tilejit/runtime.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

namespace tilejit::cli {

// Exit codes: 0 success, 1 a real failure (wrong result, driver or compile error), 2 bad usage.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// A command's action returns the exit code; exceptions are turned into messages by main().
using Action = std::function<int()>;

// False (after saying why on stderr) when `rt` has no usable GPU; every launching command starts so.
bool require_device(const Runtime& rt, const char* command);

// s cut at each `sep`, empty parts dropped: split_on("a,b,,c", ',') -> {"a", "b", "c"}.
inline std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto at = s.find(sep, start);
    std::string part = s.substr(start, at == std::string::npos ? std::string::npos : at - start);
    if (!part.empty()) out.push_back(std::move(part));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}
inline std::vector<std::string> split_commas(const std::string& s) { return split_on(s, ','); }

// What `tilejit compile ...` prints about one kernel: its names, key, size and compile time, then
// NVRTC's log line by line (compiler warnings, ptxas's advisories such as wgmma serialization).
// `several`: the program holds several kernels (labels "kernels" / "symbols").
inline void print_compiled(const CompiledKernelInfo& info, bool several = false) {
  fmt::print("program   {}\n{}{}\n{}{}\narch      {}\nkey       {}\ncubin     {} bytes\ncompile   {}\n", info.program_name,
             several ? "kernels   " : "kernel    ", info.kernel_name, several ? "symbols   " : "symbol    ", info.lowered_name, info.arch,
             info.key, info.cubin_bytes, info.from_cache ? std::string("cached") : fmt::format("{:.1f} ms", info.compile_ms));
  for (const auto& line : split_on(info.compile_log, '\n')) fmt::print("log       {}\n", line);
}

void register_info(CLI::App& app, Action& action);
void register_elementwise(CLI::App& app, CLI::App& compile, Action& action);
void register_demo(CLI::App& app, Action& action);
void register_bench(CLI::App& bench, Action& action);
void register_bench_devices(CLI::App& bench, Action& action);
void register_gemm(CLI::App& app, CLI::App& compile, CLI::App& bench, Action& action);
void register_cache(CLI::App& app, Action& action);
void register_kernel(CLI::App& compile, Action& action);
void register_tune(CLI::App& app, Action& action);

}  // namespace tilejit::cli
