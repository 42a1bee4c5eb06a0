#include "gemm_case.hpp"

#include "host_data.hpp"
#include <tilejit/tooling.hpp>

#include <cctype>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

namespace tilejit::cli {

namespace {
std::int64_t ld_of(const MatrixRef& r, std::int64_t rows, std::int64_t cols) {
  return r.ld ? r.ld : std::max<std::int64_t>(1, r.layout == Layout::row_major ? cols : rows);
}
std::int64_t at(const MatrixRef& r, std::int64_t ld, std::int64_t row, std::int64_t col) {
  return r.layout == Layout::row_major ? row * ld + col : col * ld + row;
}
double activate(Activation a, double x) {
  switch (a) {
    case Activation::relu: return x > 0 ? x : 0;
    case Activation::gelu: return 0.5 * x * (1 + std::erf(x * 0.70710678118654752440));
    case Activation::silu: return x / (1 + std::exp(-x));
    default: return x;
  }
}
// Whether an epilogue body names `c` (C's element): then C gets random values too.
bool names_c(const std::string& body) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    auto ident = [&](std::size_t j) { return j < body.size() && (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '_'); };
    if (body[i] == 'c' && (i == 0 || !ident(i - 1)) && !ident(i + 1)) return true;
  }
  return false;
}
}  // namespace

double gemm_tolerance(const GemmProblem& p) {
  // 8-bit inputs: against the product of the dequantized inputs (exact in float64), what is left is
  // the f32 accumulation (Hopper's 8-bit MMAs add with fewer bits than f32) and D's rounding.
  // An 8-bit D: its own rounding (2^-4 relative for e4m3, 2^-3 for e5m2) dominates.
  if (dtype_size(p.d.dtype) == 1) return tolerance(p.d.dtype);
  if (dtype_size(p.a.dtype) == 1) return 1e-2;
  if (p.d.dtype != DType::f32) return 1e-2;
  if (p.a.dtype == DType::f32) return p.math == MathMode::tf32 ? 2e-3 : 1e-5;
  return 5e-3;  // f16/bf16 inputs, f32 output
}

std::size_t GemmCase::elements(const MatrixRef& r, std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  const std::int64_t ld = ld_of(r, rows, cols);
  const std::int64_t one = (r.layout == Layout::row_major ? rows : cols) * ld;
  const std::int64_t stride = batch > 1 ? r.batch_stride : 0;
  return static_cast<std::size_t>(std::max<std::int64_t>(1, one + stride * (batch - 1)));
}

GemmCase::GemmCase(Runtime& rt, const GemmProblem& shape, bool with_bias, std::uint64_t seed, bool separate_c)
    : problem(shape) {
  GemmProblem& p = problem;
  auto setup = [&](MatrixRef& r, std::int64_t rows, std::int64_t cols, std::vector<unsigned char>& host, DeviceBuffer& dev,
                   bool fill, std::uint64_t s) {
    const std::size_t n = elements(r, rows, cols, p.batch), es = dtype_size(r.dtype);
    host.assign(n * es, 0xFF);
    if (fill) fill_random(r.dtype, host.data(), n, s);
    dev = rt.alloc(n * es + 256);  // slack after the last element: overruns show as poison changes
    dev.fill_bytes(0xFF);
    dev.upload(host.data(), n * es);
    r.ptr = dev.ptr();
  };
  setup(p.a, p.m, p.k, a_, da_, true, seed);
  setup(p.b, p.k, p.n, b_, db_, true, seed + 1);
  if (dtype_size(p.a.dtype) == 1 && p.scale_mode == ScaleMode::blocks) {
    // Scales per block of 128 along K: A's per row, B's per 128 x 128 block, values in [0.25, 2).
    const std::int64_t kblocks = (p.k + 127) / 128, nblocks = (p.n + 127) / 128;
    block_a_.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, kblocks * p.m * p.batch)));
    block_b_.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, kblocks * nblocks * p.batch)));
    std::mt19937_64 rng(seed + 6);
    for (auto* v : {&block_a_, &block_b_})
      for (float& x : *v) x = static_cast<float>(0.25 + 1.75 * static_cast<double>(rng() % 4096) / 4096.0);
    dblock_a_ = rt.alloc(block_a_.size() * sizeof(float));
    dblock_b_ = rt.alloc(block_b_.size() * sizeof(float));
    dblock_a_.upload(block_a_.data(), block_a_.size() * sizeof(float));
    dblock_b_.upload(block_b_.data(), block_b_.size() * sizeof(float));
    p.scale_a = dblock_a_.ptr();
    p.scale_b = dblock_b_.ptr();
  } else if (dtype_size(p.a.dtype) == 1) {
    // Per-tensor scales, as a quantized model has them: values that are not powers of two, so that
    // a kernel that drops one, or applies one twice, fails.
    std::mt19937_64 rng(seed + 5);
    scales_[0] = static_cast<float>(0.25 + 0.5 * static_cast<double>(rng() % 1000) / 1000.0);
    scales_[1] = static_cast<float>(1.1 + static_cast<double>(rng() % 1000) / 1000.0);
    // Each on its own 256-byte boundary, as an allocation of its own would be.
    dscales_ = rt.alloc(512);
    dscales_.upload(&scales_[0], sizeof(float), 0);
    dscales_.upload(&scales_[1], sizeof(float), 256);
    p.scale_a = dscales_.ptr();
    p.scale_b = dscales_.ptr() + 256;
  }
  std::vector<unsigned char> d_host;
  setup(p.d, p.m, p.n, d_host, dd_, false, 0);
  if (dtype_size(p.d.dtype) == 1) {
    // An 8-bit D takes an output scale that keeps the values well inside its range (e4m3: 448).
    std::mt19937_64 rng(seed + 7);
    d_scale_ = static_cast<float>(0.2 + 0.2 * static_cast<double>(rng() % 1000) / 1000.0);
    d_scale_buffer_ = rt.alloc(256);
    d_scale_buffer_.upload(&d_scale_, sizeof d_scale_);
    p.scale_d = d_scale_buffer_.ptr();
  }
  if (p.beta != 0.f || names_c(p.epilogue.body)) {
    if (separate_c) {
      if (p.c.ptr == 0 && p.c.dtype == DType::f32 && p.c.ld == 0) p.c.dtype = p.d.dtype, p.c.layout = p.d.layout;
      setup(p.c, p.m, p.n, c_, dc_, true, seed + 2);
    } else {
      c_is_d_ = true;
      p.c = p.d;
      c_.resize(d_host.size());
      fill_random(p.d.dtype, c_.data(), c_.size() / dtype_size(p.d.dtype), seed + 2);
    }
  }
  if (with_bias) {
    bias_.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, p.n)) * dtype_size(p.epilogue.bias_dtype));
    fill_random(p.epilogue.bias_dtype, bias_.data(), bias_.size() / dtype_size(p.epilogue.bias_dtype), seed + 3);
    dbias_ = rt.alloc(bias_.size());
    dbias_.upload(bias_.data(), bias_.size());
    p.epilogue.bias = dbias_.ptr();
  }
  // An epilogue body's operands.
  std::uint64_t s_ = seed + 10;
  for (auto& v : p.epilogue.vectors) {
    const std::int64_t len = v.axis == EpilogueAxis::row ? p.m : p.n;
    if (p.batch > 1 && v.batch_stride == 0) v.batch_stride = 0;  // one vector for the whole batch
    const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(1, len + v.batch_stride * (p.batch - 1)));
    vec_.emplace_back(n * dtype_size(v.dtype));
    fill_random(v.dtype, vec_.back().data(), n, s_++);
    dvec_.push_back(rt.alloc(vec_.back().size()));
    dvec_.back().upload(vec_.back().data(), vec_.back().size());
    v.ptr = dvec_.back().ptr();
  }
  for (auto& x : p.epilogue.inputs) {
    if (p.batch > 1 && x.matrix.batch_stride == 0) x.matrix.batch_stride = p.m * p.n;
    std::vector<unsigned char> host;
    DeviceBuffer dev;
    setup(x.matrix, p.m, p.n, host, dev, true, s_++);
    in_.push_back(std::move(host));
    din_.push_back(std::move(dev));
  }
  for (auto& x : p.epilogue.outputs) {
    if (p.batch > 1 && x.matrix.batch_stride == 0) x.matrix.batch_stride = p.m * p.n;
    std::vector<unsigned char> host;
    DeviceBuffer dev;
    setup(x.matrix, p.m, p.n, host, dev, false, 0);
    dout_.push_back(std::move(dev));
  }
  reset_output();
}

void GemmCase::reload_inputs() {
  da_.download(a_.data(), a_.size());
  db_.download(b_.data(), b_.size());
}

void GemmCase::reset_output() {
  dd_.fill_bytes(0xFF);
  for (auto& o : dout_) o.fill_bytes(0xFF);
  if (c_is_d_) dd_.upload(c_.data(), c_.size());
}

double GemmCase::relative_error(std::size_t max_samples) {
  const GemmProblem& p = problem;
  const std::size_t d_elems = elements(p.d, p.m, p.n, p.batch);
  std::vector<unsigned char> d(d_elems * dtype_size(p.d.dtype));
  dd_.download(d.data(), d.size());
  const std::int64_t lda = ld_of(p.a, p.m, p.k), ldb = ld_of(p.b, p.k, p.n), ldd = ld_of(p.d, p.m, p.n);
  const std::int64_t ldc = !c_.empty() ? ld_of(p.c, p.m, p.n) : 0;
  struct Sample {
    std::int64_t batch, row, col;
  };
  std::vector<Sample> samples;
  const double total = static_cast<double>(p.m) * p.n * p.batch;
  if (total <= static_cast<double>(max_samples)) {
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t r = 0; r < p.m; ++r)
        for (std::int64_t c = 0; c < p.n; ++c) samples.push_back({b, r, c});
  } else {
    std::mt19937_64 rng(12345);
    for (std::size_t i = 0; i < max_samples; ++i)
      samples.push_back({static_cast<std::int64_t>(rng() % p.batch), static_cast<std::int64_t>(rng() % p.m),
                         static_cast<std::int64_t>(rng() % p.n)});
    for (std::int64_t r = 0; r < p.m; r += std::max<std::int64_t>(1, p.m / 256)) samples.push_back({p.batch - 1, r, p.n - 1});
    for (std::int64_t c = 0; c < p.n; c += std::max<std::int64_t>(1, p.n / 256)) samples.push_back({p.batch - 1, p.m - 1, c});
  }
  std::vector<double> ref(samples.size()), got(samples.size()), floor(samples.size());
  const bool body = !p.epilogue.body.empty();
  std::vector<double> accs(body ? samples.size() : 0), cs(body ? samples.size() : 0);
  auto work = [&](std::size_t first, std::size_t last) {
    for (std::size_t s = first; s < last; ++s) {
      const auto& q = samples[s];
      double acc = 0, magnitude = 0;
      const std::int64_t ao = q.batch * p.a.batch_stride, bo = q.batch * p.b.batch_stride;
      const bool blocks = !block_a_.empty();
      const std::int64_t kblocks = (p.k + 127) / 128, nblocks = (p.n + 127) / 128;
      for (std::int64_t k = 0; k < p.k; ++k) {
        double ab = tooling::load_element(p.a.dtype, a_.data(), static_cast<std::size_t>(ao + at(p.a, lda, q.row, k))) *
                    tooling::load_element(p.b.dtype, b_.data(), static_cast<std::size_t>(bo + at(p.b, ldb, k, q.col)));
        if (blocks) {
          const std::int64_t kb = q.batch * kblocks + k / 128;
          ab *= static_cast<double>(block_a_[static_cast<std::size_t>(kb * p.m + q.row)]) *
                static_cast<double>(block_b_[static_cast<std::size_t>(kb * nblocks + q.col / 128)]);
        }
        acc += ab;
        magnitude += std::abs(ab);
      }
      // A sum whose terms cancel (likely with a few random terms, e.g. K = 8) is small beside the
      // rounding of its terms; its share of the norm below is at least the size of a sum of K random
      // terms, sum |a b| / sqrt(K), so such an element cannot fail a correct kernel.
      const double scale = blocks ? 1.0 : (p.scale_a ? scales_[0] : 1.0) * (p.scale_b ? scales_[1] : 1.0);
      floor[s] = std::abs(p.alpha * scale) * magnitude / std::sqrt(static_cast<double>(std::max<std::int64_t>(1, p.k)));
      double v = p.alpha * scale * acc;
      if (body) {
        accs[s] = v;
        const MatrixRef& cr = c_is_d_ ? p.d : p.c;
        cs[s] = c_.empty() ? 0.0 : tooling::load_element(cr.dtype, c_.data(), static_cast<std::size_t>(q.batch * cr.batch_stride + at(cr, ldc ? ldc : ldd, q.row, q.col)));
        got[s] = tooling::load_element(p.d.dtype, d.data(), static_cast<std::size_t>(q.batch * p.d.batch_stride + at(p.d, ldd, q.row, q.col)));
        continue;
      }
      if (p.beta != 0.f) {
        const MatrixRef& cr = c_is_d_ ? p.d : p.c;
        v += p.beta * tooling::load_element(cr.dtype, c_.data(), static_cast<std::size_t>(q.batch * cr.batch_stride + at(cr, ldc ? ldc : ldd, q.row, q.col)));
      }
      if (!bias_.empty()) v += tooling::load_element(p.epilogue.bias_dtype, bias_.data(), static_cast<std::size_t>(q.col));
      ref[s] = activate(p.epilogue.activation, v);
      got[s] = tooling::load_element(p.d.dtype, d.data(), static_cast<std::size_t>(q.batch * p.d.batch_stride + at(p.d, ldd, q.row, q.col)));
    }
  };
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(work, samples.size() * t / threads, samples.size() * (t + 1) / threads);
  for (auto& t : pool) t.join();
  double worst = 0;  // an epilogue body's other outputs
  if (body) {
    // The body in float64 at the samples: vectors and inputs read there, then d and the outputs.
    const std::size_t ns = samples.size();
    std::vector<std::int64_t> rows(ns), cols(ns);
    std::vector<std::vector<double>> vecs(p.epilogue.vectors.size(), std::vector<double>(ns)),
        ins(p.epilogue.inputs.size(), std::vector<double>(ns)), outs(p.epilogue.outputs.size(), std::vector<double>(ns));
    for (std::size_t i = 0; i < ns; ++i) {
      const auto& q = samples[i];
      rows[i] = q.row, cols[i] = q.col;
      for (std::size_t k = 0; k < vecs.size(); ++k) {
        const auto& v = p.epilogue.vectors[k];
        vecs[k][i] = tooling::load_element(v.dtype, vec_[k].data(),
                                           static_cast<std::size_t>(q.batch * v.batch_stride + (v.axis == EpilogueAxis::row ? q.row : q.col)));
      }
      for (std::size_t k = 0; k < ins.size(); ++k) {
        const MatrixRef& r = p.epilogue.inputs[k].matrix;
        ins[k][i] = tooling::load_element(r.dtype, in_[k].data(),
                                          static_cast<std::size_t>(q.batch * r.batch_stride + at(r, ld_of(r, p.m, p.n), q.row, q.col)));
      }
    }
    std::vector<const double*> vp, ip;
    std::vector<double*> op;
    for (auto& v : vecs) vp.push_back(v.data());
    for (auto& v : ins) ip.push_back(v.data());
    for (auto& v : outs) op.push_back(v.data());
    tooling::GemmEpilogueReference(p).run(ns, accs.data(), cs.data(), rows.data(), cols.data(), vp, ip, ref.data(), op);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const MatrixRef& r = p.epilogue.outputs[k].matrix;
      std::vector<unsigned char> host(elements(r, p.m, p.n, p.batch) * dtype_size(r.dtype));
      dout_[k].download(host.data(), host.size());
      double num = 0, den = 0;
      for (std::size_t i = 0; i < ns; ++i) {
        const auto& q = samples[i];
        const double g = tooling::load_element(r.dtype, host.data(),
                                               static_cast<std::size_t>(q.batch * r.batch_stride + at(r, ld_of(r, p.m, p.n), q.row, q.col)));
        if (!std::isfinite(g)) return std::numeric_limits<double>::infinity();
        num += (g - outs[k][i]) * (g - outs[k][i]), den += std::max(outs[k][i] * outs[k][i], floor[i] * floor[i]);
      }
      worst = std::max(worst, den > 0 ? std::sqrt(num / den) : (num == 0 ? 0 : std::numeric_limits<double>::infinity()));
    }
  }
  if (d_scale_buffer_.bytes() > 0 && p.scale_d)
    for (std::size_t i = 0; i < samples.size(); ++i) ref[i] *= d_scale_, floor[i] *= d_scale_;  // an 8-bit D: quantized
  double num = 0, den = 0;
  for (std::size_t s = 0; s < samples.size(); ++s) {
    if (!std::isfinite(got[s])) return std::numeric_limits<double>::infinity();
    num += (got[s] - ref[s]) * (got[s] - ref[s]);
    den += std::max(ref[s] * ref[s], floor[s] * floor[s]);
  }
  if (den == 0) return num == 0 ? worst : std::numeric_limits<double>::infinity();
  return std::max(worst, std::sqrt(num / den));
}

}  // namespace tilejit::cli
