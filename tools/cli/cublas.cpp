#include "cublas.hpp"

#include <tilejit/error.hpp>

#include <tilejit/tooling.hpp>

#include <cublas_v2.h>
#include <fmt/format.h>

#include <dlfcn.h>

#include <utility>

namespace tilejit::cli {

struct Cublas::Api {
  void* lib = nullptr;
  cublasHandle_t handle = nullptr;
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*set_workspace)(cublasHandle_t, void*, size_t) = nullptr;
  CUdeviceptr workspace = 0;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                            cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
                            cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*gemm_strided)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                                 cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*,
                                 cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

namespace {
template <class F> void resolve(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) throw Error(fmt::format("cuBLAS: symbol {} not found in libcublas.so.13", name));
}
void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(fmt::format("{} failed with cublasStatus_t {}", call, static_cast<int>(s)));
}
cudaDataType cuda_type(DType t) {
  switch (t) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}
}  // namespace

Cublas::Cublas() : api_(std::make_unique<Api>()) {
  api_->lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!api_->lib) throw Error(fmt::format("cuBLAS (the benchmark reference) cannot be loaded: {}", dlerror()));
  resolve(api_->lib, api_->create, "cublasCreate_v2");
  resolve(api_->lib, api_->destroy, "cublasDestroy_v2");
  resolve(api_->lib, api_->set_stream, "cublasSetStream_v2");
  resolve(api_->lib, api_->gemm_ex, "cublasGemmEx");
  resolve(api_->lib, api_->gemm_strided, "cublasGemmStridedBatchedEx");
  resolve(api_->lib, api_->set_workspace, "cublasSetWorkspace_v2");
  check(api_->create(&api_->handle), "cublasCreate");
  // A workspace of its own, as cuBLAS asks of callers that capture its calls into CUDA graphs (32 MiB,
  // its recommendation for Hopper).
  constexpr std::size_t kWorkspace = 32u << 20;
  tooling::check(tooling::driver().cuMemAlloc(&api_->workspace, kWorkspace), "cuMemAlloc", "cuBLAS workspace");
  check(api_->set_workspace(api_->handle, reinterpret_cast<void*>(api_->workspace), kWorkspace), "cublasSetWorkspace");
}

Cublas::~Cublas() {
  if (api_->handle) api_->destroy(api_->handle);
  if (api_->workspace) tooling::driver().cuMemFree(api_->workspace);
  // libcublas stays loaded: unloading it at exit races with its own atexit handlers.
}

void Cublas::gemm(const GemmProblem& in, CUstream stream) {
  // cuBLAS is column-major. A column-major D is its own problem: D = op(A) op(B), with a row-major
  // operand read as its transpose. A row-major D (m x n) is the column-major D^T (n x m) = B^T A^T:
  // swapped here, so that the code below always computes a column-major D.
  GemmProblem p = in;
  if (p.d.layout == Layout::row_major) {
    std::swap(p.m, p.n);
    std::swap(p.a, p.b);
    auto flip = [](MatrixRef& r) { r.layout = r.layout == Layout::row_major ? Layout::col_major : Layout::row_major; };
    flip(p.a), flip(p.b), flip(p.c), flip(p.d);
  }
  check(api_->set_stream(api_->handle, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  // p is now column-major D (m x n) = op(A) op(B): a column-major operand is op N, a row-major one is
  // its transpose, op T.
  const cublasOperation_t ta = p.a.layout == Layout::col_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t tb = p.b.layout == Layout::col_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasComputeType_t compute =
      p.a.dtype == DType::f32 ? (p.math == MathMode::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) : CUBLAS_COMPUTE_32F;
  const float alpha = p.alpha, beta = p.beta;
  const auto ld = [](const MatrixRef& r, std::int64_t rows, std::int64_t cols) {
    return r.ld ? r.ld : (r.layout == Layout::row_major ? cols : rows);
  };
  const int lda = static_cast<int>(ld(p.a, p.m, p.k)), ldb = static_cast<int>(ld(p.b, p.k, p.n)), ldd = static_cast<int>(ld(p.d, p.m, p.n));
  const CUdeviceptr c = p.beta != 0.f && p.c.ptr ? p.c.ptr : p.d.ptr;
  if (c != p.d.ptr) throw InvalidArgument("the cuBLAS reference needs C == D");
  if (p.batch == 1) {
    check(api_->gemm_ex(api_->handle, ta, tb, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), &alpha,
                        reinterpret_cast<const void*>(p.a.ptr), cuda_type(p.a.dtype), lda, reinterpret_cast<const void*>(p.b.ptr),
                        cuda_type(p.b.dtype), ldb, &beta, reinterpret_cast<void*>(p.d.ptr), cuda_type(p.d.dtype), ldd, compute,
                        CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  } else {
    check(api_->gemm_strided(api_->handle, ta, tb, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), &alpha,
                             reinterpret_cast<const void*>(p.a.ptr), cuda_type(p.a.dtype), lda, p.a.batch_stride,
                             reinterpret_cast<const void*>(p.b.ptr), cuda_type(p.b.dtype), ldb, p.b.batch_stride, &beta,
                             reinterpret_cast<void*>(p.d.ptr), cuda_type(p.d.dtype), ldd, p.d.batch_stride, static_cast<int>(p.batch),
                             compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  }
}

}  // namespace tilejit::cli
