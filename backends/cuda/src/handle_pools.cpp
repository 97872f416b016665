// The CUDA libraries' handle pools (accel/cuda/handles.h): one traits type
// per library for the core's DeviceThreadHandlePool, and the getters.
#include <cstdint>
#include <string>

#include "accel/cuda/handles.h"
#include "accel/error.h"
#include "accel/handle_pool.h"
#include "accel/hooks_table.h"
#include "accel/kit/config.h"
#include "cuda_error.h"
#include "cuda_hooks.h"
#include "current_device.h"
#include "streams.h"
#include "workspace_config.h"
#include "workspaces.h"

namespace accel::cuda {
namespace detail {
namespace {

[[noreturn]] void libraryFailed(const char* call, int status, const char* name) {
  throw DeviceError(std::string(call) +
                    " failed: " + (name != nullptr ? name : "status ") +
                    (name != nullptr ? "" : std::to_string(status)));
}

void checkCublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) [[likely]] {
    return;
  }
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    throw OutOfMemory(std::string(call) + " failed: CUBLAS_STATUS_ALLOC_FAILED");
  }
  libraryFailed(call, status, cublasGetStatusString(status));
}

void checkCusolver(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS) libraryFailed(call, status, nullptr);
}

// The compute capability (major * 10 + minor) of `device`, for the default
// workspace size. Once per device.
int computeCapability(DeviceIndex device) {
  int major = 0;
  int minor = 0;
  checkCuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
            "cudaDeviceGetAttribute");
  checkCuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
            "cudaDeviceGetAttribute");
  return major * 10 + minor;
}

std::size_t cublasWorkspaceBytesFor(DeviceIndex device) {
  return cublasWorkspaceBytes(computeCapability(device));
}

// CUBLASLT_WORKSPACE_SIZE, in KiB (PyTorch's variable); 1 MiB without it.
std::size_t cublasLtWorkspaceBytes() {
  constexpr std::uint64_t kMaxKiB = std::uint64_t{1} << 30;  // 1 TiB: surely a typo
  return static_cast<std::size_t>(kit::ConfigReader().count(
             "CUBLASLT_WORKSPACE_SIZE", 1024, 1, kMaxKiB, "a workspace size in KiB")) *
         1024;
}

// Binds a handle of library `Pool` to this thread's current stream of
// `device` with `bind(stream)`, unless it is still bound to it: the thread
// records the last stream per library and device (the handle of a (thread,
// device) never changes while the thread lives), so the steady state costs
// one comparison.
template <typename Pool, typename Bind>
void bindToCurrentStream(DeviceIndex device, Bind&& bind) {
  static thread_local cudaStream_t lastStream[kMaxDevicesPerType] = {};
  static thread_local bool bound[kMaxDevicesPerType] = {};
  const cudaStream_t stream = nativeStream(currentStream(device));
  if (bound[device] && lastStream[device] == stream) return;
  bind(stream);
  lastStream[device] = stream;
  bound[device] = true;
}

struct CublasPool {
  using Handle = cublasHandle_t;
  static constexpr DeviceType kDeviceType = DeviceType::CUDA;
  static constexpr std::string_view kName = "cublas";
  static Handle create(DeviceIndex device) {
    DeviceContext context(device);
    Handle handle = nullptr;
    checkCublas(cublasCreate(&handle), "cublasCreate");
    return handle;
  }
  static void destroy(Handle handle) noexcept { (void)cublasDestroy(handle); }
  static void bind(Handle handle, DeviceIndex device) {
    bindToCurrentStream<CublasPool>(device, [&](cudaStream_t stream) {
      checkCublas(cublasSetStream(handle, stream), "cublasSetStream");
      // cublasSetStream resets the workspace to cuBLAS's own: set ours after it.
      const std::size_t bytes = cublasWorkspaceBytesFor(device);
      checkCublas(
          cublasSetWorkspace(handle, workspaceFor(handle, stream, device, bytes), bytes),
          "cublasSetWorkspace");
    });
  }
};

struct CublasLtPool {
  using Handle = cublasLtHandle_t;
  static constexpr DeviceType kDeviceType = DeviceType::CUDA;
  static constexpr std::string_view kName = "cublasLt";
  static Handle create(DeviceIndex device) {
    DeviceContext context(device);
    Handle handle = nullptr;
    checkCublas(cublasLtCreate(&handle), "cublasLtCreate");
    return handle;
  }
  static void destroy(Handle handle) noexcept { (void)cublasLtDestroy(handle); }
};

struct CusolverDnPool {
  using Handle = cusolverDnHandle_t;
  static constexpr DeviceType kDeviceType = DeviceType::CUDA;
  static constexpr std::string_view kName = "cusolverDn";
  static Handle create(DeviceIndex device) {
    DeviceContext context(device);
    Handle handle = nullptr;
    checkCusolver(cusolverDnCreate(&handle), "cusolverDnCreate");
    return handle;
  }
  static void destroy(Handle handle) noexcept { (void)cusolverDnDestroy(handle); }
  static void bind(Handle handle, DeviceIndex device) {
    bindToCurrentStream<CusolverDnPool>(device, [&](cudaStream_t stream) {
      checkCusolver(cusolverDnSetStream(handle, stream), "cusolverDnSetStream");
    });
  }
};

#if defined(ACCEL_CUDA_HAVE_CUDNN)
void checkCudnn(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS)
    libraryFailed(call, status, cudnnGetErrorString(status));
}

struct CudnnPool {
  using Handle = cudnnHandle_t;
  static constexpr DeviceType kDeviceType = DeviceType::CUDA;
  static constexpr std::string_view kName = "cudnn";
  static Handle create(DeviceIndex device) {
    DeviceContext context(device);
    Handle handle = nullptr;
    checkCudnn(cudnnCreate(&handle), "cudnnCreate");
    return handle;
  }
  static void destroy(Handle handle) noexcept { (void)cudnnDestroy(handle); }
  static void bind(Handle handle, DeviceIndex device) {
    bindToCurrentStream<CudnnPool>(device, [&](cudaStream_t stream) {
      checkCudnn(cudnnSetStream(handle, stream), "cudnnSetStream");
    });
  }
};
#endif

#if defined(ACCEL_CUDA_HAVE_CUDSS)
void checkCudss(cudssStatus_t status, const char* call) {
  if (status != CUDSS_STATUS_SUCCESS) libraryFailed(call, status, nullptr);
}

struct CudssPool {
  using Handle = cudssHandle_t;
  static constexpr DeviceType kDeviceType = DeviceType::CUDA;
  static constexpr std::string_view kName = "cudss";
  static Handle create(DeviceIndex device) {
    DeviceContext context(device);
    Handle handle = nullptr;
    checkCudss(cudssCreate(&handle), "cudssCreate");
    return handle;
  }
  static void destroy(Handle handle) noexcept { (void)cudssDestroy(handle); }
  static void bind(Handle handle, DeviceIndex device) {
    bindToCurrentStream<CudssPool>(device, [&](cudaStream_t stream) {
      checkCudss(cudssSetStream(handle, stream), "cudssSetStream");
    });
  }
};
#endif

DeviceIndex resolve(DeviceIndex index) {
  requireAvailable();
  return getHooks(DeviceType::CUDA).resolveDeviceIndex(index);
}

}  // namespace
}  // namespace detail

cublasHandle_t getCurrentCublasHandle(DeviceIndex index) {
  return reserveHandle<detail::CublasPool>(detail::resolve(index));
}

cublasLtHandle_t getCurrentCublasLtHandle(DeviceIndex index) {
  return reserveHandle<detail::CublasLtPool>(detail::resolve(index));
}

Workspace getCurrentCublasLtWorkspace(DeviceIndex index) {
  const DeviceIndex device = detail::resolve(index);
  const cublasLtHandle_t handle = reserveHandle<detail::CublasLtPool>(device);
  const cudaStream_t stream = detail::nativeStream(detail::currentStream(device));
  const std::size_t bytes = detail::cublasLtWorkspaceBytes();
  return {detail::workspaceFor(handle, stream, device, bytes), bytes};
}

cusolverDnHandle_t getCurrentCusolverDnHandle(DeviceIndex index) {
  return reserveHandle<detail::CusolverDnPool>(detail::resolve(index));
}

#if defined(ACCEL_CUDA_HAVE_CUDNN)
cudnnHandle_t getCurrentCudnnHandle(DeviceIndex index) {
  return reserveHandle<detail::CudnnPool>(detail::resolve(index));
}
#endif

#if defined(ACCEL_CUDA_HAVE_CUDSS)
cudssHandle_t getCurrentCudssHandle(DeviceIndex index) {
  return reserveHandle<detail::CudssPool>(detail::resolve(index));
}
#endif

}  // namespace accel::cuda
