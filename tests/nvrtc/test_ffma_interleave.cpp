// The FFMA-run pass over Hopper cubins (jit/ffma_interleave.hpp) on kernels NVRTC compiles here:
// what it changes (only the reuse flags and the yield bit of FFMAs in long runs), that the option
// asks for it and stays in the key, that other archs and damaged images come back untouched, and
// that bad options are refused before compiling.
#include "jit/cubin_info.hpp"
#include "jit/ffma_interleave.hpp"
#include "jit/kernel_key.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "ffma_runs_kernel.hpp"
#include "test_support.hpp"
#include "util/settings.hpp"

#include <tilejit/error.hpp>

#include <cstdint>
#include <cstring>
#include <random>

namespace tilejit::jit {
namespace {

constexpr std::uint64_t kControlBitsCleared = (std::uint64_t{0xf} << 58) | (std::uint64_t{1} << 45);

CompiledKernel compile(const std::string& arch, std::vector<std::string> extra = {}) {
  TemplateSet templates;
  NvrtcCompiler compiler(templates, util::Settings::from_environment().cuda_home, std::nullopt);
  CompileRequest req;
  req.program_name = "ffma_interleave";
  req.source = kFfmaRunsKernel;
  req.name_expressions = {"promote"};
  req.options = compiler.options(arch, extra, true);
  return compiler.compile(req);
}

std::uint64_t word(const std::string& bytes, std::size_t at) {
  std::uint64_t w = 0;
  std::memcpy(&w, bytes.data() + at, 8);
  return w;
}

TEST(FfmaInterleave, ChangesOnlyTheControlBitsOfFfmasInRuns) {
  const CompiledKernel k = compile("sm_90a");
  ASSERT_EQ(cubin_sm(k.cubin), 90);
  std::string all = k.cubin, part = k.cubin;
  const FfmaInterleaveCount whole = interleave_ffma_runs(all, 16);
  const FfmaInterleaveCount nine = interleave_ffma_runs(part, 9);
  ASSERT_GE(whole.runs, 1u);
  EXPECT_EQ(nine.runs, whole.runs);
  EXPECT_GE(whole.instructions, 32u);
  EXPECT_GT(nine.instructions, 0u);
  EXPECT_LT(nine.instructions, whole.instructions);
  // Every changed byte lies in the high word of an FFMA in a code section, whose new value is the
  // old one with reuse flags and the yield bit cleared (some of them set before); nothing else moved.
  const auto sections = cubin_sections(k.cubin);
  ASSERT_TRUE(sections);
  std::size_t changed = 0, changed_bytes = 0, code_bytes = 0;
  for (const CubinSection& s : *sections) {
    if (!s.name.starts_with(".text.")) continue;
    for (std::size_t at = s.offset; at + 16 <= s.offset + s.size; at += 16) {
      if (std::memcmp(k.cubin.data() + at, all.data() + at, 16) == 0) continue;
      ++changed;
      EXPECT_EQ(word(k.cubin, at), word(all, at)) << at;
      EXPECT_EQ(word(k.cubin, at) & 0xfff, 0x223u) << at;  // FFMA Rd, Ra, Rb, Rc
      const std::uint64_t before = word(k.cubin, at + 8), after = word(all, at + 8);
      EXPECT_EQ(after, before & ~kControlBitsCleared) << at;
      EXPECT_NE(before & (std::uint64_t{0xf} << 58), 0u) << at;
      for (std::size_t b = 0; b < 16; ++b) code_bytes += k.cubin[at + b] != all[at + b];
    }
  }
  for (std::size_t b = 0; b < k.cubin.size(); ++b) changed_bytes += k.cubin[b] != all[b];
  EXPECT_EQ(changed, whole.instructions);
  EXPECT_EQ(changed_bytes, code_bytes);
  // A second pass finds nothing left to change.
  EXPECT_EQ(interleave_ffma_runs(all, 16).instructions, 0u);
}

TEST(FfmaInterleave, TheOptionAsksForItAndStaysInTheKey) {
  const CompiledKernel plain = compile("sm_90a");
  const CompiledKernel asked = compile("sm_90a", {"--tilejit-interleave-ffma=16"});
  std::string patched = plain.cubin;
  ASSERT_GT(interleave_ffma_runs(patched, 16).instructions, 0u);
  EXPECT_EQ(asked.cubin, patched);
  EXPECT_EQ(asked.lowered_names, plain.lowered_names);

  KernelKeyParts parts;
  parts.family = "user";
  parts.arch = "sm_90a";
  parts.source = kFfmaRunsKernel;
  parts.options = {"-arch=sm_90a"};
  const KernelKey without = KernelKey::from(parts);
  parts.options.push_back("--tilejit-interleave-ffma=16");
  const KernelKey with = KernelKey::from(parts);
  EXPECT_NE(with.hash, without.hash);
}

TEST(FfmaInterleave, OtherArchsAndDamagedImagesComeBackUntouched) {
  const CompiledKernel k80 = compile("sm_80");
  EXPECT_EQ(cubin_sm(k80.cubin), 80);
  std::string copy = k80.cubin;
  const FfmaInterleaveCount none = interleave_ffma_runs(copy, 16);
  EXPECT_EQ(none.instructions, 0u);
  EXPECT_EQ(copy, k80.cubin);
  // The option on sm_80 compiles and changes nothing either.
  EXPECT_EQ(compile("sm_80", {"--tilejit-interleave-ffma=9"}).cubin, k80.cubin);

  std::string text = "not an ELF image at all, though long enough to have a header of sixty-four bytes";
  const std::string text_before = text;
  EXPECT_EQ(interleave_ffma_runs(text, 16).instructions, 0u);
  EXPECT_EQ(text, text_before);
  std::string empty;
  EXPECT_EQ(interleave_ffma_runs(empty, 16).instructions, 0u);

  // Truncated and scrambled images: the pass stays inside them (run under a sanitizer to see it),
  // keeps their size and returns.
  const CompiledKernel k90 = compile("sm_90a");
  for (std::size_t n = 0; n < k90.cubin.size(); n += 97) {
    std::string cut = k90.cubin.substr(0, n);
    (void)interleave_ffma_runs(cut, 16);
    EXPECT_EQ(cut.size(), n);
  }
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bad = k90.cubin;
    for (int i = 0; i < 8; ++i) bad[rng() % bad.size()] = static_cast<char>(rng());
    (void)interleave_ffma_runs(bad, 16);
    EXPECT_EQ(bad.size(), k90.cubin.size());
  }
}

TEST(FfmaInterleave, BadOptionsAreRefusedBeforeCompiling) {
  for (const char* bad : {"--tilejit-interleave-ffma=0", "--tilejit-interleave-ffma=17", "--tilejit-interleave-ffma=",
                          "--tilejit-interleave-ffma=9x", "--tilejit-interleave-ffma=-3"}) {
    try {
      (void)compile("sm_90a", {bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("1 to 16"), std::string::npos) << e.what();
    }
  }
  try {
    (void)compile("sm_90a", {"--tilejit-interleave"});
    ADD_FAILURE() << "an unknown --tilejit- option was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown option '--tilejit-interleave'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(interleave_ffma_sixteenths("--tilejit-interleave-ffma=16"), 16);
  EXPECT_EQ(interleave_ffma_sixteenths("--tilejit-interleave-ffma=1"), 1);
}

}  // namespace
}  // namespace tilejit::jit
