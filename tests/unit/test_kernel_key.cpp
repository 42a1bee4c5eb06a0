// KernelKey covers everything that changes the binary, and nothing that does not.
#include "jit/kernel_key.hpp"
#include "jit/template_registry.hpp"
#include "test_support.hpp"
#include "util/files.hpp"

#include <tilejit/error.hpp>

#include <functional>

namespace tilejit::jit {
namespace {

KernelKeyParts base() {
  KernelKeyParts p;
  p.family = "elementwise";
  p.entry_template = "elementwise.cuh";
  p.template_digest = util::hash128("template");
  p.toolkit_digest = util::hash128("toolkit");
  p.arch = "sm_90a";
  p.nvrtc_version = "13.0+1";
  p.options = {"--gpu-architecture=sm_90a", "-std=c++17", "--include-path=/usr/local/cuda/include"};
  p.name_expressions = {"k<1>"};
  p.source = "#include \"elementwise.cuh\"\n";
  return p;
}

TEST(KernelKey, EveryPartChangesTheKey) {
  const auto h = KernelKey::from(base()).hash;
  std::vector<std::function<void(KernelKeyParts&)>> changes = {
      [](auto& p) { p.family = "gemm"; },
      [](auto& p) { p.entry_template = "gemm.cuh"; },
      [](auto& p) { p.template_digest = util::hash128("template2"); },
      [](auto& p) { p.toolkit_digest = util::hash128("toolkit2"); },
      [](auto& p) { p.arch = "sm_90"; },
      [](auto& p) { p.nvrtc_version = "13.1+1"; },
      [](auto& p) { p.options.push_back("-lineinfo"); },
      [](auto& p) { p.name_expressions = {"k<2>"}; },
      [](auto& p) { p.name_expressions = {"k<1>", "k<2>"}; },
      [](auto& p) { p.source += " "; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    auto p = base();
    changes[i](p);
    EXPECT_NE(KernelKey::from(p).hash, h) << "change " << i;
  }
}

TEST(KernelKey, OptionOrderAndIncludePathDoNotMatter) {
  auto a = base(), b = base();
  std::reverse(b.options.begin(), b.options.end());
  b.options[0] = "--include-path=/opt/cuda-13.0/include";
  EXPECT_EQ(KernelKey::from(a).hash, KernelKey::from(b).hash);
  EXPECT_EQ(KernelKey::from(a).text, KernelKey::from(b).text);
}

TEST(KernelKey, TextHoldsTheWholeIdentity) {
  auto k = KernelKey::from(base());
  EXPECT_NE(k.text.find("arch sm_90a"), std::string::npos);
  EXPECT_NE(k.text.find("nvrtc 13.0+1"), std::string::npos);
  EXPECT_NE(k.text.find("entry-format"), std::string::npos);
  EXPECT_NE(k.text.find("library 0.1.0"), std::string::npos);
  EXPECT_EQ(k.hash, util::hash128(k.text));
  EXPECT_EQ(k.hash.hex().size(), 32u);
}

TEST(TemplateSet, EmbeddedTemplatesAreAllThere) {
  TemplateSet set;
  auto paths = set.paths();
  for (const char* p : {"elementwise.cuh", "tilejit/tile.cuh", "tilejit/dtype.cuh", "tilejit/meta.cuh", "examples/vector_add.cuh"})
    EXPECT_NE(std::find(paths.begin(), paths.end(), p), paths.end()) << p;
  auto closure = set.closure("elementwise.cuh");
  std::vector<std::string> names;
  for (const auto& h : closure) names.push_back(h.path);
  EXPECT_EQ(names, (std::vector<std::string>{"elementwise.cuh", "tilejit/body_functions.cuh", "tilejit/dtype.cuh", "tilejit/meta.cuh", "tilejit/tile.cuh"}));
}

TEST(TemplateSet, DigestFollowsIncludedHeaders) {
  test::TempDir dir;
  TemplateSet embedded;
  for (const auto& p : embedded.paths()) {
    std::filesystem::create_directories((dir.path() / p).parent_path());
    util::write_file(dir.path() / p, embedded.text(p));
  }
  util::Hash128 before = TemplateSet(dir.path()).digest("elementwise.cuh");
  EXPECT_EQ(before, embedded.digest("elementwise.cuh"));
  // A change two includes deep (elementwise.cuh -> tile.cuh -> meta.cuh) changes the digest.
  util::write_file(dir.path() / "tilejit/meta.cuh", embedded.text("tilejit/meta.cuh") + "\n// changed\n");
  EXPECT_NE(TemplateSet(dir.path()).digest("elementwise.cuh"), before);
  EXPECT_EQ(TemplateSet(dir.path()).digest("examples/vector_add.cuh") == embedded.digest("examples/vector_add.cuh"), false);
  EXPECT_THROW(TemplateSet(dir.path()).text("missing.cuh"), Error);
}

TEST(TemplateSet, QuotedIncludes) {
  EXPECT_EQ(quoted_includes("#include \"a.cuh\"\n  #  include \"b/c.cuh\"\n#include <cuda_fp16.h>\n// #include \"no\"\n"),
            (std::vector<std::string>{"a.cuh", "b/c.cuh"}));
}

}  // namespace
}  // namespace tilejit::jit
