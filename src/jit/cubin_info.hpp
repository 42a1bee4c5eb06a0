// What a cubin says about its kernels without a driver: the parameter layout the compiler recorded.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace tilejit::jit {

// Bytes of each parameter of kernel `symbol` (its lowered name), in order, from the EIATTR_KPARAM_INFO
// records of the cubin's section ".nv.info.<symbol>". nullopt where the cubin does not say: not an
// ELF64 image, no such section, a record it cannot read, or parameters missing (the caller then asks
// the driver). Reads only inside `cubin`, whatever its bytes.
std::optional<std::vector<std::size_t>> cubin_parameter_sizes(std::string_view cubin, std::string_view symbol);

}  // namespace tilejit::jit
