#include "jit/kernel_key.hpp"

#include <tilejit/version.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace tilejit::jit {

KernelKey KernelKey::from(const KernelKeyParts& p) {
  std::vector<std::string> options;
  for (const auto& o : p.options) {
    // Where the CUDA headers live is not part of the binary's identity; their content is (toolkit digest).
    if (o.starts_with("--include-path=") || o.starts_with("-I")) continue;
    options.push_back(o);
  }
  std::sort(options.begin(), options.end());
  std::string text = fmt::format(
      "tilejit-kernel-key\nlibrary {}\nentry-format {}\nfamily {}\ntemplate {} {}\ntoolkit-headers {}\narch {}\n"
      "nvrtc {}\n",
      kVersionString, kEntryFormatVersion, p.family, p.entry_template, p.template_digest.hex(),
      p.toolkit_digest.hex(), p.arch, p.nvrtc_version);
  for (const auto& o : options) text += fmt::format("option {}\n", o);
  for (const auto& name : p.name_expressions) text += fmt::format("name {}\n", name);
  text += fmt::format("source {}\n{}", p.source.size(), p.source);
  KernelKey key;
  key.hash = util::hash128(text);
  key.text = std::move(text);
  return key;
}

}  // namespace tilejit::jit
