#include "jit/template_registry.hpp"

#include "util/files.hpp"

#include <tilejit/error.hpp>

#include <fmt/format.h>

#include <set>

namespace tilejit::jit {

namespace {
// Every `#include "..."` (and with angle brackets too, `<...>`) of a source text, in order.
std::vector<std::string> includes(std::string_view source, bool angle_too) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < source.size()) {
    std::size_t eol = source.find('\n', pos);
    if (eol == std::string_view::npos) eol = source.size();
    std::string_view line = source.substr(pos, eol - pos);
    pos = eol + 1;
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line.substr(i, 7) != "include") continue;
    std::size_t q1 = line.find_first_not_of(" \t", i + 7);
    if (q1 == std::string_view::npos) continue;
    const char close = line[q1] == '"' ? '"' : line[q1] == '<' && angle_too ? '>' : '\0';
    if (!close) continue;
    std::size_t q2 = line.find(close, q1 + 1);
    if (q2 == std::string_view::npos) continue;
    out.emplace_back(line.substr(q1 + 1, q2 - q1 - 1));
  }
  return out;
}
}  // namespace

std::vector<std::string> quoted_includes(std::string_view source) { return includes(source, false); }
std::vector<std::string> all_includes(std::string_view source) { return includes(source, true); }

TemplateSet::TemplateSet(std::optional<std::filesystem::path> dir) : dir_(std::move(dir)) {
  if (!dir_) {
    for (const auto& t : embedded_templates()) texts_.emplace(std::string(t.path), std::string(t.text));
  }
}

bool TemplateSet::has(const std::string& path) const {
  try {
    text(path);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string TemplateSet::origin() const { return dir_ ? dir_->string() : std::string("embedded"); }

const std::string& TemplateSet::text(const std::string& path) const {
  std::lock_guard lock(mutex_);
  auto it = texts_.find(path);
  if (it != texts_.end()) return it->second;
  if (dir_) {
    auto content = util::read_file(*dir_ / path);
    if (content) return texts_.emplace(path, std::move(*content)).first->second;
  }
  throw Error(fmt::format("kernel template '{}' not found in {} (TILEJIT_TEMPLATE_DIR {})", path, origin(),
                          dir_ ? "is set" : "is unset"));
}

std::vector<TemplateHeader> TemplateSet::closure(const std::string& path) const {
  std::set<std::string> seen;
  std::vector<std::string> stack{path};
  std::vector<TemplateHeader> out;
  while (!stack.empty()) {
    std::string p = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(p).second) continue;
    const std::string& t = text(p);
    out.push_back({p, t});
    for (auto& inc : quoted_includes(t))
      if (!seen.count(inc)) stack.push_back(inc);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

util::Hash128 TemplateSet::digest(const std::string& path) const {
  {
    std::lock_guard lock(mutex_);
    auto it = digests_.find(path);
    if (it != digests_.end()) return it->second;
  }
  // Paths, sizes and contents of the closure, streamed into one hash without copying the texts.
  std::vector<std::string> names;
  {
    std::set<std::string> seen;
    std::vector<std::string> stack{path};
    while (!stack.empty()) {
      std::string p = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(p).second) continue;
      for (auto& inc : quoted_includes(text(p)))
        if (!seen.count(inc)) stack.push_back(std::move(inc));
      names.push_back(std::move(p));
    }
  }
  std::sort(names.begin(), names.end());
  std::string framed;
  for (const auto& n : names) {
    const std::string& t = text(n);
    framed += n;
    framed += '\n';
    framed += std::to_string(t.size());
    framed += '\n';
    framed.append(t);
    framed += '\n';
  }
  util::Hash128 d = util::hash128(framed);
  std::lock_guard lock(mutex_);
  digests_[path] = d;
  return d;
}

std::vector<std::string> TemplateSet::paths() const {
  std::vector<std::string> out;
  if (dir_) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(*dir_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".cuh")
        out.push_back(std::filesystem::relative(it->path(), *dir_).generic_string());
    }
  } else {
    for (const auto& t : embedded_templates()) out.emplace_back(t.path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tilejit::jit
