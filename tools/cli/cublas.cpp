#include "cublas.hpp"

#include <tilejit/error.hpp>

#include <tilejit/tooling.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <fmt/format.h>

#include <dlfcn.h>

#include <tuple>
#include <type_traits>
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
    case DType::e4m3: return CUDA_R_8F_E4M3;
    case DType::e5m2: return CUDA_R_8F_E5M2;
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

struct CublasLt::Api {
  void* lib = nullptr;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatrixLayout_t c = nullptr;  // C's: D's, or bf16 for an 8-bit D (cuBLASLt takes no 8-bit C)
  CUdeviceptr c_ptr = 0;               // C: D, or a bf16 buffer of its own for an 8-bit D (beta = 0: not read)
  CUdeviceptr c_buffer = 0;
  cublasLtMatmulAlgo_t algo{};
  CUdeviceptr workspace = 0;
  std::size_t workspace_bytes = 32u << 20;
  GemmProblem p;  // column-major D^T = B^T A^T
  bool swapped = false;  // p is the user problem with A and B swapped (a row-major D)
  float alpha = 1.f, beta = 0.f;
  cublasStatus_t (*create)(cublasLtHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasLtHandle_t) = nullptr;
  cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t) = nullptr;
  cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t) = nullptr;
  cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t) = nullptr;
  cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t, int64_t) = nullptr;
  cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t) = nullptr;
  cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t*) = nullptr;
  cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t) = nullptr;
  cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t) = nullptr;
  cublasStatus_t (*heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                              cublasLtMatmulHeuristicResult_t[], int*) = nullptr;
  cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t, const void*,
                           cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                           const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) = nullptr;
};

CublasLt::CublasLt(const GemmProblem& in, CUdeviceptr bias, DType bias_dtype, bool fast_accum) : api_(std::make_unique<Api>()) {
  Api& x = *api_;
  if (bias && in.d.layout != Layout::row_major) throw Error("cuBLASLt bias+GELU reference: D must be row-major (its bias runs along D^T's rows)");
  if (in.batch != 1) throw Error("cuBLASLt reference: one matrix, no batch");
  x.lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!x.lib) throw Error(fmt::format("cuBLASLt cannot be loaded: {}", dlerror()));
  auto sym = [&](auto& f, const char* name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(x.lib, name));
    if (!f) throw Error(fmt::format("cuBLASLt: symbol {} not found in libcublasLt.so.13", name));
  };
  sym(x.create, "cublasLtCreate"), sym(x.destroy, "cublasLtDestroy"), sym(x.desc_create, "cublasLtMatmulDescCreate");
  sym(x.desc_destroy, "cublasLtMatmulDescDestroy"), sym(x.desc_set, "cublasLtMatmulDescSetAttribute");
  sym(x.layout_create, "cublasLtMatrixLayoutCreate"), sym(x.layout_destroy, "cublasLtMatrixLayoutDestroy");
  sym(x.pref_create, "cublasLtMatmulPreferenceCreate"), sym(x.pref_destroy, "cublasLtMatmulPreferenceDestroy");
  sym(x.pref_set, "cublasLtMatmulPreferenceSetAttribute"), sym(x.heuristic, "cublasLtMatmulAlgoGetHeuristic");
  sym(x.matmul, "cublasLtMatmul");
  // As in Cublas::gemm: a row-major D (m x n) is the column-major D^T (n x m) = B^T A^T.
  GemmProblem& p = x.p;
  p = in;
  if (p.d.layout == Layout::row_major) {
    x.swapped = true;
    std::swap(p.m, p.n);
    std::swap(p.a, p.b);
    std::swap(p.scale_a, p.scale_b);
    auto flip = [](MatrixRef& r) { r.layout = r.layout == Layout::row_major ? Layout::col_major : Layout::row_major; };
    flip(p.a), flip(p.b), flip(p.d);
  }
  x.alpha = p.alpha;
  check(x.create(&x.handle), "cublasLtCreate");
  check(x.desc_create(&x.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = p.a.layout == Layout::col_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t tb = p.b.layout == Layout::col_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  check(x.desc_set(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute(TRANSA)");
  check(x.desc_set(x.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute(TRANSB)");
  if (bias) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    check(x.desc_set(x.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "cublasLtMatmulDescSetAttribute(EPILOGUE)");
    const void* bias_ptr = reinterpret_cast<const void*>(bias);
    check(x.desc_set(x.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof bias_ptr), "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
    if (bias_dtype != in.d.dtype) {
      const cudaDataType bt = cuda_type(bias_dtype);
      check(x.desc_set(x.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt), "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
    }
  }
  if (dtype_size(p.a.dtype) == 1) {
    // The same per-tensor scales (device pointers, f32), and the accumulation tilejit's kernels use.
    for (auto [attr, ptr, name] : {std::tuple{CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, p.scale_a, "A_SCALE_POINTER"},
                                   std::tuple{CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, p.scale_b, "B_SCALE_POINTER"}}) {
      if (!ptr) continue;
      const void* v = reinterpret_cast<const void*>(ptr);
      check(x.desc_set(x.desc, attr, &v, sizeof v), name);
    }
    const std::int8_t fast = fast_accum ? 1 : 0;
    check(x.desc_set(x.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
  }
  const auto ld = [](const MatrixRef& r, std::int64_t rows, std::int64_t cols) { return r.ld ? r.ld : (r.layout == Layout::row_major ? cols : rows); };
  // Layouts as stored (column-major descriptions: a row-major operand is the transpose's storage).
  const bool a_n = ta == CUBLAS_OP_N, b_n = tb == CUBLAS_OP_N;
  check(x.layout_create(&x.a, cuda_type(p.a.dtype), a_n ? p.m : p.k, a_n ? p.k : p.m, ld(p.a, p.m, p.k)), "cublasLtMatrixLayoutCreate(A)");
  check(x.layout_create(&x.b, cuda_type(p.b.dtype), b_n ? p.k : p.n, b_n ? p.n : p.k, ld(p.b, p.k, p.n)), "cublasLtMatrixLayoutCreate(B)");
  check(x.layout_create(&x.d, cuda_type(p.d.dtype), p.m, p.n, ld(p.d, p.m, p.n)), "cublasLtMatrixLayoutCreate(D)");
  x.c = x.d, x.c_ptr = p.d.ptr;
  if (dtype_size(p.d.dtype) == 1) {
    // An 8-bit D: the same output scale, and a bf16 C of its own.
    if (p.scale_d) {
      const void* v = reinterpret_cast<const void*>(p.scale_d);
      check(x.desc_set(x.desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &v, sizeof v), "cublasLtMatmulDescSetAttribute(D_SCALE_POINTER)");
    }
    check(x.layout_create(&x.c, CUDA_R_16BF, p.m, p.n, p.m), "cublasLtMatrixLayoutCreate(C)");
    tooling::check(tooling::driver().cuMemAlloc(&x.c_buffer, static_cast<std::size_t>(p.m * p.n * 2)), "cuMemAlloc", "cuBLASLt C");
    x.c_ptr = x.c_buffer;
  }
  tooling::check(tooling::driver().cuMemAlloc(&x.workspace, x.workspace_bytes), "cuMemAlloc", "cuBLASLt workspace");
  cublasLtMatmulPreference_t pref = nullptr;
  check(x.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  check(x.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &x.workspace_bytes, sizeof x.workspace_bytes),
        "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t results[8]{};
  int found = 0;
  const cublasStatus_t hs = x.heuristic(x.handle, x.desc, x.a, x.b, x.c, x.d, pref, 8, results, &found);
  x.pref_destroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
    throw Error(fmt::format("cuBLASLt has no {}algorithm for this problem (status {})", bias ? "bias+GELU " : "", static_cast<int>(hs)));
  // The heuristic's first pick that runs (a pick may still be refused at launch, e.g. for the
  // pointers' alignment): each is tried once here, on the legacy stream, in the heuristic's order.
  std::string refused;
  for (int i = 0; i < found; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    x.algo = results[i].algo;
    void* d = reinterpret_cast<void*>(x.p.d.ptr);
    const cublasStatus_t ms = x.matmul(x.handle, x.desc, &x.alpha, reinterpret_cast<const void*>(x.p.a.ptr), x.a,
                                       reinterpret_cast<const void*>(x.p.b.ptr), x.b, &x.beta, reinterpret_cast<void*>(x.c_ptr), x.c, d, x.d,
                                       &x.algo,
                                       reinterpret_cast<void*>(x.workspace), x.workspace_bytes, nullptr);
    if (ms == CUBLAS_STATUS_SUCCESS) {
      // Done before anything else touches D (later work may run on non-blocking streams).
      tooling::check(tooling::driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize", "cuBLASLt's trial run");
      return;
    }
    refused += fmt::format("{}algorithm {}: status {}", refused.empty() ? "" : ", ", i, static_cast<int>(ms));
  }
  throw Error(fmt::format("cublasLtMatmul refused each of the heuristic's {} algorithms ({})", found, refused));
}

CublasLt::~CublasLt() {
  Api& x = *api_;
  if (x.a) x.layout_destroy(x.a);
  if (x.b) x.layout_destroy(x.b);
  if (x.c && x.c != x.d) x.layout_destroy(x.c);
  if (x.d) x.layout_destroy(x.d);
  if (x.c_buffer) tooling::driver().cuMemFree(x.c_buffer);
  if (x.desc) x.desc_destroy(x.desc);
  if (x.handle) x.destroy(x.handle);
  if (x.workspace) tooling::driver().cuMemFree(x.workspace);
}

void CublasLt::run(CUstream stream, CUdeviceptr a, CUdeviceptr b) {
  Api& x = *api_;
  void* d = reinterpret_cast<void*>(x.p.d.ptr);
  if (x.swapped) std::swap(a, b);  // the user's A is x.p's B
  const void* pa = reinterpret_cast<const void*>(a ? a : x.p.a.ptr);
  const void* pb = reinterpret_cast<const void*>(b ? b : x.p.b.ptr);
  check(x.matmul(x.handle, x.desc, &x.alpha, pa, x.a, pb, x.b,
                 &x.beta, reinterpret_cast<void*>(x.c_ptr), x.c, d, x.d, &x.algo, reinterpret_cast<void*>(x.workspace), x.workspace_bytes,
                 reinterpret_cast<cudaStream_t>(stream)),
        "cublasLtMatmul");
}

}  // namespace tilejit::cli
