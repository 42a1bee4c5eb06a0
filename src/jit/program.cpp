// Programs on the JIT core (see program.hpp): the request a KernelSource makes, the public Program
// and Kernel over a cached jit::Kernel, and the checks every launch passes (users' and the
// library's alike) before its one cuLaunchKernel(Ex).
#include "jit/program.hpp"

#include "jit/cubin_info.hpp"
#include "jit/driver.hpp"
#include "jit/launch.hpp"
#include "util/files.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <mutex>
#include <set>

namespace tilejit {
namespace detail {

struct ProgramState {
  struct PerKernel {
    std::once_flag loaded;
    CUfunction fn = nullptr;
    KernelAttributes attributes;
  };
  std::shared_ptr<jit::Context> rt;
  std::shared_ptr<jit::Kernel> compiled;
  std::vector<std::string> names;
  CompiledKernelInfo info;
  std::vector<std::unique_ptr<PerKernel>> kernels;

  // The kernel's function on the device, its attributes and parameter sizes read once.
  PerKernel& load(std::size_t index) {
    PerKernel& k = *kernels[index];
    std::call_once(k.loaded, [&] {
      jit::make_current(rt->context(), rt->device_ordinal);
      CUfunction fn = compiled->function(rt->device_ordinal, index);
      const auto& api = jit::driver();
      auto attr = [&](CUfunction_attribute a) {
        int v = 0;
        jit::check(api.cuFuncGetAttribute(&v, a, fn), "cuFuncGetAttribute", rt->device_ordinal, names[index]);
        return v;
      };
      k.attributes.registers = attr(CU_FUNC_ATTRIBUTE_NUM_REGS);
      k.attributes.static_shared_bytes = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
      k.attributes.max_dynamic_shared_bytes = attr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
      k.attributes.local_bytes = attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
      k.attributes.max_threads_per_block = attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
      // The parameters' sizes as the cubin records them; where it does not say, from the driver, which
      // answers CUDA_ERROR_INVALID_VALUE past the last parameter (an error compute-sanitizer reports).
      const jit::CompiledKernel& cubin = compiled->compiled();
      if (auto sizes = jit::cubin_parameter_sizes(cubin.cubin, cubin.lowered_names[index])) {
        k.attributes.parameter_sizes = std::move(*sizes);
      } else {
        for (std::size_t i = 0;; ++i) {
          std::size_t offset = 0, size = 0;
          if (api.cuFuncGetParamInfo(fn, i, &offset, &size) != CUDA_SUCCESS) break;
          k.attributes.parameter_sizes.push_back(size);
        }
      }
      k.fn = fn;
    });
    return k;
  }
};

struct ProgramAccess {
  static Program make(std::shared_ptr<ProgramState> state) { return Program(std::move(state)); }
};

}  // namespace detail

namespace {

// Letters, digits and '_' only: the name becomes file names (dumps) and NVRTC's program name.
std::string program_name_of(const KernelSource& source) {
  std::string name = source.name.empty() ? std::string("user_kernel") : source.name;
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  return name;
}

}  // namespace

jit::KernelRequest jit::program_request(const jit::Context& rt, const KernelSource& source, const std::vector<std::string>& names,
                                        const std::string& arch, const jit::ProgramLabels& labels) {
  if (source.text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InvalidArgument(fmt::format("kernel source '{}' is empty", source.name));
  if (names.empty())
    throw InvalidArgument(fmt::format("kernel source '{}': give at least one name expression (the kernel to export, e.g. "
                                      "\"my_kernel<256, float>\")",
                                      source.name));
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (n.find_first_not_of(" \t") == std::string::npos)
      throw InvalidArgument(fmt::format("kernel source '{}': an empty name expression", source.name));
    if (!seen.insert(n).second) throw InvalidArgument(fmt::format("kernel source '{}': name expression '{}' is given twice", source.name, n));
  }
  jit::KernelRequest req;
  req.family = labels.family;
  req.arch = arch;
  req.compile.program_name = program_name_of(source);
  req.compile.source = source.text;
  req.compile.name_expressions = names;
  std::set<std::string> header_names;
  for (const auto& h : source.headers) {
    if (h.name.empty()) throw InvalidArgument(fmt::format("kernel source '{}': a header without a name", source.name));
    if (!header_names.insert(h.name).second)
      throw InvalidArgument(fmt::format("kernel source '{}': header '{}' is given twice", source.name, h.name));
    req.compile.headers.push_back({h.name, h.text});
  }
  // The library's device headers the source (or its headers) includes: their closures go to NVRTC
  // and their digests into the key, so that a changed template recompiles the user's kernel too.
  std::set<std::string> templates;
  auto scan = [&](const std::string& text) {
    for (const auto& inc : jit::all_includes(text))
      if (!header_names.count(inc) && rt.templates.has(inc)) templates.insert(inc);
  };
  scan(source.text);
  for (const auto& h : source.headers) scan(h.text);
  // One library template and nothing of the program's own (the library's ops): it is the entry
  // template of the key; otherwise every template and header is listed.
  if (templates.size() == 1 && header_names.empty())
    req.compile.entry_template = *templates.begin();
  else
    req.compile.include_templates.assign(templates.begin(), templates.end());
  req.compile.options = rt.compiler.options(arch, source.options, /*minimal=*/labels.library_options);
  req.dtypes = labels.dtypes;
  req.config = labels.config.empty() ? fmt::format("{} kernel{}", names.size(), names.size() == 1 ? "" : "s") : labels.config;
  return req;
}

KernelSource KernelSource::from_file(const std::filesystem::path& path, const std::vector<std::filesystem::path>& headers) {
  KernelSource s;
  auto text = util::read_file(path);
  if (!text) throw InvalidArgument(fmt::format("kernel source file {} cannot be read", path.string()));
  s.name = path.stem().string();
  s.text = std::move(*text);
  for (const auto& h : headers) {
    auto t = util::read_file(h);
    if (!t) throw InvalidArgument(fmt::format("kernel header file {} cannot be read", h.string()));
    s.headers.push_back({h.filename().string(), std::move(*t)});
  }
  return s;
}

Program jit::make_program(const std::shared_ptr<jit::Context>& jit, const jit::KernelRequest& request, bool* compiled) {
  auto s = std::make_shared<detail::ProgramState>();
  s->rt = jit;
  bool compiled_here = false;
  s->compiled = jit->cache.get(request, &compiled_here);
  if (compiled) *compiled = compiled_here;
  s->names = request.compile.name_expressions;
  s->info = jit::describe_kernel(*s->compiled, compiled_here);
  for (std::size_t i = 0; i < s->names.size(); ++i) s->kernels.push_back(std::make_unique<detail::ProgramState::PerKernel>());
  return detail::ProgramAccess::make(std::move(s));
}

CompiledKernelInfo jit::compile_program(jit::Context& jit, const jit::KernelRequest& request) {
  bool compiled = false;
  auto kernel = jit.cache.get(request, &compiled);
  return jit::describe_kernel(*kernel, compiled);
}

Kernel Program::kernel(std::string_view name_expression) const {
  const auto& names = state_->names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name_expression) return Kernel(state_, i);
  throw InvalidArgument(fmt::format("program {} has no kernel '{}'; its name expressions: {}", state_->info.program_name, name_expression,
                                    fmt::join(names, ", ")));
}

const std::vector<std::string>& Program::name_expressions() const noexcept { return state_->names; }
const CompiledKernelInfo& Program::info() const noexcept { return state_->info; }

const std::string& Kernel::name() const noexcept { return program_->names[index_]; }
const std::string& Kernel::symbol() const noexcept { return program_->compiled->compiled().lowered_names[index_]; }
const KernelAttributes& Kernel::attributes() const { return program_->load(index_).attributes; }
CUfunction Kernel::function() const { return program_->load(index_).fn; }

void Kernel::set_max_dynamic_shared_bytes(int bytes) const {
  auto& k = program_->load(index_);
  jit::make_current(program_->rt->context(), program_->rt->device_ordinal);
  jit::check(jit::driver().cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
             "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", program_->rt->device_ordinal, name());
  k.attributes.max_dynamic_shared_bytes = bytes;
}

void Kernel::launch_packed(const LaunchConfig& c, CUstream stream, const void* const* values, const std::size_t* sizes,
                           std::size_t count) const {
  auto& k = program_->load(index_);
  const auto& params = k.attributes.parameter_sizes;
  if (count != params.size())
    throw InvalidArgument(fmt::format("kernel {}: {} argument{} given, it takes {} parameter{}", name(), count, count == 1 ? "" : "s",
                                      params.size(), params.size() == 1 ? "" : "s"));
  for (std::size_t i = 0; i < count; ++i)
    if (sizes[i] != params[i])
      throw InvalidArgument(fmt::format("kernel {}: argument {} has {} bytes, its parameter {} takes {} (pass the parameter's exact type, "
                                        "e.g. 2.0f for a float, a CUdeviceptr or T* for a pointer)",
                                        name(), i, sizes[i], i, params[i]));
  const unsigned long long threads = 1ull * c.block.x * c.block.y * c.block.z;
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0 || threads == 0)
    throw InvalidArgument(fmt::format("kernel {}: grid {}x{}x{} and block {}x{}x{} must not be empty", name(), c.grid.x, c.grid.y, c.grid.z,
                                      c.block.x, c.block.y, c.block.z));
  if (threads > static_cast<unsigned long long>(k.attributes.max_threads_per_block))
    throw InvalidArgument(fmt::format("kernel {}: a block of {} threads; this kernel takes at most {} (its registers and launch bounds)",
                                      name(), threads, k.attributes.max_threads_per_block));
  if (c.shared_bytes > static_cast<unsigned>(k.attributes.max_dynamic_shared_bytes))
    throw InvalidArgument(fmt::format("kernel {}: {} bytes of dynamic shared memory asked, {} allowed; raise the limit with "
                                      "Kernel::set_max_dynamic_shared_bytes",
                                      name(), c.shared_bytes, k.attributes.max_dynamic_shared_bytes));
  jit::make_current(program_->rt->context(), program_->rt->device_ordinal);
  jit::LaunchShape shape;
  shape.grid_x = c.grid.x, shape.grid_y = c.grid.y, shape.grid_z = c.grid.z;
  shape.block_x = c.block.x, shape.block_y = c.block.y, shape.block_z = c.block.z;
  shape.shared_bytes = c.shared_bytes;
  shape.cluster_x = c.cluster.x, shape.cluster_y = c.cluster.y, shape.cluster_z = c.cluster.z;
  shape.programmatic = c.programmatic;
  jit::launch(k.fn, shape, stream, const_cast<void**>(values), program_->rt->device_ordinal, name().c_str());
}

}  // namespace tilejit
