// KernelKey: what makes a binary what it is, as canonical text and its 128-bit hash. Shared by the
// memory cache and the disk cache; disk entries store the whole text and compare it on load.
#pragma once

#include "util/hash.hpp"

#include <string>
#include <vector>

namespace tilejit::jit {

inline constexpr int kEntryFormatVersion = 1;

struct KernelKeyParts {
  std::string family;            // "elementwise", "gemm", ...
  std::string entry_template;    // "elementwise.cuh"; "user" for a user's program
  util::Hash128 template_digest; // content of the template and everything it includes (a user's program:
                                 // the library templates it includes and its own headers)
  util::Hash128 toolkit_digest;  // CUDA headers the templates may include
  std::string arch;              // exact: sm_90a is not sm_90
  std::string nvrtc_version;     // major.minor.build
  std::vector<std::string> options;  // compile options (sorted in the key; include paths left out)
  std::vector<std::string> name_expressions;
  std::string source;            // the instantiation
};

struct KernelKey {
  std::string text;
  util::Hash128 hash;
  static KernelKey from(const KernelKeyParts& parts);
};

}  // namespace tilejit::jit
