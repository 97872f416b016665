// The CUDA libraries' entry points the backend (and its tests) call, on the
// double: cuBLAS handles with their stream and workspace and a host SGEMM,
// cuBLASLt and cuSOLVER handles. Handle creation initialises the device like
// the libraries do (through the runtime) and is refused during a capture
// that forbids unsafe calls (it allocates).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#include "cuda_double.h"
#include "double_runtime.h"

struct cublasContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};
struct cublasLtContext {
  int device = 0;
};
struct cusolverDnContext {
  int device = 0;
  cudaStream_t stream = nullptr;
};

using namespace cuda_double;

namespace {

std::set<const void*>& handles() {  // State's lock guards it
  static auto* const live = new std::set<const void*>();
  return *live;
}

template <typename Context>
bool createHandle(Context** handle) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (s.unsafeCall("a library handle's creation") != cudaSuccess) return false;
  auto* made = new Context();
  made->device = runtimeContext(s)->device;
  handles().insert(made);
  *handle = made;
  return true;
}

template <typename Context>
bool destroyHandle(Context* handle) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (handles().erase(handle) == 0) return false;
  delete handle;
  return true;
}

bool live(const void* handle) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  return handles().count(handle) != 0;
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return createHandle(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  return destroyHandle(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!live(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  // cuBLAS: "cublasSetStream()": setting the stream resets the user
  // workspace to cuBLAS's own default workspace pool.
  handle->workspace = nullptr;
  handle->workspace_bytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) {
  if (!live(handle) || stream == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void* workspace, size_t bytes) {
  if (!live(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  // cuBLAS: "cublasSetWorkspace()": the workspace must be 256-byte aligned.
  if (reinterpret_cast<std::uintptr_t>(workspace) % 256 != 0) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS"
                                         : "CUBLAS_STATUS_ERROR";
}

// Column-major C = alpha * op(A) op(B) + beta * C on the handle's stream
// (no transposes), with the workspace counted as memory the work touches.
cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k, const float* alpha,
                           const float* a, int lda, const float* b, int ldb,
                           const float* beta, float* c, int ldc) {
  if (!live(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (ta != CUBLAS_OP_N || tb != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* stream = nullptr;
  if (resolveStream(s, handle->stream, &stream) != cudaSuccess) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const float al = *alpha;
  const float be = *beta;
  Work work;
  work.device = stream->device;
  const auto bytes = [](int ld, int cols) {
    return static_cast<std::size_t>(ld) * static_cast<std::size_t>(cols) * sizeof(float);
  };
  work.memory = deviceRanges(s, {{reinterpret_cast<std::uintptr_t>(a), bytes(lda, k)},
                                 {reinterpret_cast<std::uintptr_t>(b), bytes(ldb, n)},
                                 {reinterpret_cast<std::uintptr_t>(c), bytes(ldc, n)},
                                 {reinterpret_cast<std::uintptr_t>(handle->workspace),
                                  handle->workspace_bytes}});
  work.run = [=] {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double sum = 0;
        for (int p = 0; p < k; ++p) sum += double(a[i + p * lda]) * b[p + j * ldb];
        c[i + j * ldc] =
            static_cast<float>(al * sum + (be != 0 ? be * c[i + j * ldc] : 0));
      }
    }
  };
  return s.submit(stream, std::move(work)) == cudaSuccess
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return createHandle(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  return destroyHandle(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle) {
  if (handle == nullptr) return CUSOLVER_STATUS_INVALID_VALUE;
  return createHandle(handle) ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
  return destroyHandle(handle) ? CUSOLVER_STATUS_SUCCESS
                               : CUSOLVER_STATUS_NOT_INITIALIZED;
}

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream) {
  if (!live(handle)) return CUSOLVER_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUSOLVER_STATUS_SUCCESS;
}

int cuda_double_cublas_workspace(const void* handle, void** workspace,
                                 std::size_t* bytes) {
  if (!live(handle)) return -1;
  const auto* context = static_cast<const cublasContext*>(handle);
  *workspace = context->workspace;
  *bytes = context->workspace_bytes;
  return 0;
}

}  // extern "C"
