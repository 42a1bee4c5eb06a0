// Elementwise operations: outputs = f(inputs, scalars) over n elements, with f a C++ expression
// written at run time, as in CuPy's ElementwiseKernel.
//
//   tilejit::ElementwiseOp axpy{.body = "z = x * alpha + y",
//                               .inputs = {{"x", DType::f32}, {"y", DType::f32}},
//                               .outputs = {{"z", DType::f32}},
//                               .scalars = {{"alpha", 2.0f}}};
//   rt.elementwise(axpy, {x.ptr(), y.ptr()}, {z.ptr()}, n, stream);
//
// The body: one or more assignments `out = expr` (also `+=`, `-=`, `*=`, `/=`), separated by `;`,
// each to a declared output. Expressions use the declared inputs, outputs and scalars, numeric
// literals, C++ operators, `?:`, casts float(...), double(...), int(...), and the math functions
// listed by elementwise_functions(). Anything else (`#`, braces, strings, other names) is rejected
// with tilejit::InvalidArgument naming the token and its column, before anything is compiled.
//
// Conversion rules. Each dtype has a compute type, which is what the body sees:
//   f32 -> float, f64 -> double, f16 -> float, bf16 -> float, i32 -> int, i64 -> long long,
//   i8 -> int, u8 -> int, e4m3 -> float, e5m2 -> float.
// - Inputs are converted exactly to their compute type when loaded.
// - Outputs are variables of their compute type, starting at 0. Assigning follows C++: a floating
//   value assigned to an integer output truncates toward zero and saturates to the range of int
//   (long long for i64), NaN gives 0; a wider integer assigned to int keeps the low 32 bits.
// - After the body, each output is stored to its dtype: float/double -> f16/bf16 round to nearest
//   even, double -> f32 rounds to nearest; int -> i8/u8 keeps the low 8 bits (two's complement);
//   float -> e4m3/e5m2 rounds to nearest even and saturates (beyond 448 / 57344, infinities
//   included, the largest finite value; NaN stays NaN). A double assigned to a 16- or 8-bit float
//   output rounds to float first, on assignment (C++).
// - Scalars have their own dtype (a float scalar is f32, a double f64, an int32_t i32, an int64_t
//   i64) and the same compute types.
// - Arithmetic follows C++ on the compute types: write `2.0f`, not `2.0`, to stay in single
//   precision; integer division truncates.
#pragma once

#include <tilejit/dtype.hpp>
#include <tilejit/kernel.hpp>
#include <tilejit/runtime.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit {

struct Operand {
  std::string name;
  DType dtype = DType::f32;
};

// A typed scalar value passed to the kernel at launch (changing it does not recompile).
class ScalarValue {
 public:
  ScalarValue(float v) noexcept : dtype_(DType::f32), f_(v) {}
  ScalarValue(double v) noexcept : dtype_(DType::f64), f_(v) {}
  ScalarValue(std::int32_t v) noexcept : dtype_(DType::i32), i_(v) {}
  ScalarValue(std::int64_t v) noexcept : dtype_(DType::i64), i_(v) {}
  // A value of `dtype` (f32, f64, i32 or i64) from a double; used by the CLI.
  static ScalarValue of(DType dtype, double value);
  DType dtype() const noexcept { return dtype_; }
  double as_double() const noexcept { return is_float() ? f_ : static_cast<double>(i_); }
  std::int64_t as_int() const noexcept { return is_float() ? static_cast<std::int64_t>(f_) : i_; }
  bool is_float() const noexcept { return dtype_ == DType::f32 || dtype_ == DType::f64; }

 private:
  DType dtype_;
  double f_ = 0;
  std::int64_t i_ = 0;
};

struct Scalar {
  std::string name;
  ScalarValue value;
};

inline constexpr int kMaxElementwiseInputs = 8;
inline constexpr int kMaxElementwiseOutputs = 4;
inline constexpr int kMaxElementwiseScalars = 8;

struct ElementwiseOp {
  std::string body;
  std::vector<Operand> inputs;   // 1..8
  std::vector<Operand> outputs;  // 1..4
  std::vector<Scalar> scalars;   // 0..8
  std::string name;              // optional; names the NVRTC program and the cache entry
};

// Tile configuration. Zero means "choose": 256 threads, 16-byte vectors, 4 vectors per thread.
struct ElementwiseConfig {
  int threads = 0;       // threads per block: a multiple of 32 in [32, 1024]
  int vector_width = 0;  // elements per vector access: 1, 2, 4, 8 or 16
  int tile = 0;          // elements per block tile: a multiple of threads * vector_width
};

// Checks an op without compiling it; throws InvalidArgument on the first problem.
void validate_elementwise(const ElementwiseOp& op);
// The math functions an elementwise body may call.
std::span<const std::string_view> elementwise_functions();

namespace detail {
struct ElementwisePlanState;
}

// An op bound to a runtime with its kernels resolved: run() checks the arguments, picks the
// variant for the pointers' alignment and launches. Cheap to copy; keep one for a repeated op.
// Each operand's n elements span at most 2^48 bytes (InvalidArgument beyond).
class ElementwisePlan {
 public:
  void run(DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n, CUstream stream = nullptr) const;
  // As above with new scalar values (same order and count as the op's scalars, same dtypes).
  void run(DevicePtrs inputs, DevicePtrs outputs, std::uint64_t n, std::span<const ScalarValue> scalars,
           CUstream stream = nullptr) const;
  const ElementwiseOp& op() const;
  const ElementwiseConfig& config() const;  // the configuration chosen (no zeros)
  // The kernel run() launches for operands aligned to `vector_width` elements (0: the config's
  // width, the one for aligned operands), compiled or from a cache now and loaded at first use: a
  // Kernel of the same API as users' own (its attributes, its CUfunction). Its one parameter is the
  // op's parameter block (kernels_templates/elementwise.cuh).
  Kernel kernel(int vector_width = 0) const;

 private:
  friend class Runtime;
  explicit ElementwisePlan(std::shared_ptr<detail::ElementwisePlanState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ElementwisePlanState> state_;
};

}  // namespace tilejit
