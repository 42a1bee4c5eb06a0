// What a cubin says about its kernels without a driver: the parameter layout the compiler recorded.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace tilejit::jit {

// One section of an ELF64 image: its name and where its bytes lie in the image.
struct CubinSection {
  std::string_view name;
  std::size_t offset = 0, size = 0;
};

// The sections of a little-endian ELF64 image, every one inside it; nullopt where `cubin` is not
// such an image or a header or a section runs past its end.
std::optional<std::vector<CubinSection>> cubin_sections(std::string_view cubin);

// The SM version the image was compiled for (90 for sm_90 and sm_90a), from the ELF header's flags;
// nullopt where it is not a CUDA ELF64 image.
std::optional<int> cubin_sm(std::string_view cubin);

// Bytes of each parameter of kernel `symbol` (its lowered name), in order, from the EIATTR_KPARAM_INFO
// records of the cubin's section ".nv.info.<symbol>". nullopt where the cubin does not say: not an
// ELF64 image, no such section, a record it cannot read, or parameters missing (the caller then asks
// the driver). Reads only inside `cubin`, whatever its bytes.
std::optional<std::vector<std::size_t>> cubin_parameter_sizes(std::string_view cubin, std::string_view symbol);

}  // namespace tilejit::jit
