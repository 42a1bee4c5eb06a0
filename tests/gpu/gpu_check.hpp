// Runs an elementwise op on the GPU with fresh random inputs and poisoned outputs (plus poisoned
// guard elements around every operand), and compares with the float64 host reference.
#pragma once

#include "host_data.hpp"
#include "ops/elementwise/host_reference.hpp"
#include "test_support.hpp"

#include <tilejit/tilejit.hpp>

#include <cstring>
#include <random>

namespace tilejit::test {

struct CheckResult {
  std::vector<double> errors;  // per output
  bool guards_intact = true;
};

inline CheckResult run_and_check(Runtime& rt, const ElementwiseOp& op, std::uint64_t n, const std::vector<std::size_t>& offsets = {},
                                 const ElementwisePlan* plan = nullptr) {
  constexpr std::size_t kGuard = 64;
  static std::mt19937_64 seeds(std::random_device{}());
  std::vector<Operand> operands = op.inputs;
  operands.insert(operands.end(), op.outputs.begin(), op.outputs.end());
  std::vector<DeviceBuffer> bufs;
  std::vector<std::vector<unsigned char>> host;
  std::vector<CUdeviceptr> ins, outs;
  for (std::size_t k = 0; k < operands.size(); ++k) {
    const std::size_t es = dtype_size(operands[k].dtype);
    const std::size_t off = k < offsets.size() ? offsets[k] : 0;
    const std::size_t total = (off + n + kGuard) * es;
    bufs.push_back(rt.alloc(total));
    host.emplace_back(total, 0xFF);
    if (k < op.inputs.size()) cli::fill_random(operands[k].dtype, host[k].data() + off * es, n, seeds());
    bufs[k].upload(host[k].data(), total);
    (k < op.inputs.size() ? ins : outs).push_back(bufs[k].ptr() + off * es);
  }
  if (plan) plan->run(ins, outs, n);
  else rt.elementwise(op, ins, outs, n);
  rt.synchronize();

  std::vector<const void*> rin;
  std::vector<void*> rout;
  std::vector<std::vector<unsigned char>> ref;
  for (std::size_t k = 0; k < op.inputs.size(); ++k)
    rin.push_back(host[k].data() + (k < offsets.size() ? offsets[k] : 0) * dtype_size(operands[k].dtype));
  for (const auto& o : op.outputs) ref.emplace_back(n * dtype_size(o.dtype) + 1);
  for (auto& r : ref) rout.push_back(r.data());
  ops::HostReference(op).run(rin, rout, n);

  CheckResult result;
  for (std::size_t j = 0; j < op.outputs.size(); ++j) {
    const std::size_t k = op.inputs.size() + j;
    const std::size_t es = dtype_size(operands[k].dtype);
    const std::size_t off = k < offsets.size() ? offsets[k] : 0;
    std::vector<unsigned char> got(host[k].size());
    bufs[k].download(got.data(), got.size());
    result.errors.push_back(n == 0 ? 0 : cli::relative_error(operands[k].dtype, got.data() + off * es, ref[j].data(), n));
    for (std::size_t b = 0; b < off * es; ++b) result.guards_intact &= got[b] == 0xFF;
    for (std::size_t b = (off + n) * es; b < got.size(); ++b) result.guards_intact &= got[b] == 0xFF;
  }
  return result;
}

inline void expect_correct(Runtime& rt, const ElementwiseOp& op, std::uint64_t n, const std::vector<std::size_t>& offsets = {}) {
  auto r = run_and_check(rt, op, n, offsets);
  EXPECT_TRUE(r.guards_intact) << op.body << " n=" << n << ": wrote outside [0, n)";
  for (std::size_t j = 0; j < op.outputs.size(); ++j)
    EXPECT_LE(r.errors[j], cli::tolerance(op.outputs[j].dtype))
        << op.body << " output " << op.outputs[j].name << " (" << dtype_name(op.outputs[j].dtype) << ") n=" << n;
}

}  // namespace tilejit::test
