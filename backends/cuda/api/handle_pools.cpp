// The CUDA libraries' handle pools (accel/cuda/handles.h): one traits type
// per library for the core's DeviceThreadHandlePool, and the getters. Part
// of the program's side (the accel_cuda library): the handles belong to the
// program's threads; the plugin makes the device's context current for their
// creation and names the native stream to bind them to.
#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>

#include "accel/adapter/failure.h"
#include "accel/cuda/cuda.h"
#include "accel/cuda/handles.h"
#include "accel/error.h"
#include "accel/handle_pool.h"
#include "accel/hooks_table.h"
#include "accel/kit/config.h"
#include "plugin_calls.h"
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
// workspace size: asked of the hooks once per device (a cuBLAS handle is
// bound on every getter call, and a device's properties are a driver query).
int computeCapability(DeviceIndex device) {
  static std::array<std::atomic<int>, 128> known{};  // 0: not asked yet
  std::atomic<int>& slot = known[static_cast<std::uint8_t>(device) % known.size()];
  int capability = slot.load(std::memory_order_relaxed);
  if (capability == 0) {
    const DeviceProperties properties =
        getHooks(DeviceType::CUDA).getDeviceProperties(device);
    capability =
        properties.compute_capability_major * 10 + properties.compute_capability_minor;
    slot.store(capability, std::memory_order_relaxed);
  }
  return capability;
}

// The CUDA stream of this thread's current stream of `device`.
cudaStream_t currentNativeStream(DeviceIndex device) {
  return nativeStream(getHooks(DeviceType::CUDA).getCurrentStream(device));
}

// Runs `create` with `device`'s context current (the plugin's DeviceContext:
// the first work on the device makes its context real), passing on what it
// throws.
template <typename Create>
void onDevice(DeviceIndex device, Create&& create) {
  struct Call {
    Create* create;
    std::exception_ptr thrown;
  } call{&create, nullptr};
  api::check(extension::onDevice(
                 device,
                 [](void* arg) noexcept {
                   auto* c = static_cast<Call*>(arg);
                   try {
                     (*c->create)();
                   } catch (...) {
                     c->thrown = std::current_exception();
                   }
                 },
                 &call),
             "onDevice");
  if (call.thrown) std::rethrow_exception(call.thrown);
}

// A malformed CUBLAS_WORKSPACE_CONFIG is the library's InvalidArgument here,
// in the program (workspace_config.cpp throws the adapter's, as the plugin's
// code does).
std::size_t cublasWorkspaceBytesFor(DeviceIndex device) {
  const int capability = computeCapability(device);
  try {
    return cublasWorkspaceBytes(capability);
  } catch (const adapter::Failure& e) {
    throwPluginFailure(e.status(), "cuda", "CUBLAS_WORKSPACE_CONFIG", e.what());
  }
}

// CUBLASLT_WORKSPACE_SIZE, in KiB (PyTorch's variable); 1 MiB without it.
std::size_t cublasLtWorkspaceBytes() {
  constexpr std::uint64_t kMaxKiB = std::uint64_t{1} << 30;  // 1 TiB: surely a typo
  return static_cast<std::size_t>(kit::ConfigReader().count(
             "CUBLASLT_WORKSPACE_SIZE", 1024, 1, kMaxKiB, "a workspace size in KiB")) *
         1024;
}

// Binds a handle of library `Library` to this thread's current stream of
// `device` with `bind(stream)`, on every call: a per-thread record of the
// last stream bound would miss a caller who re-pointed the handle
// (cublasSetStream on it), and cublasSetStream also drops the workspace.
// PyTorch binds on every call too; it is a few stores in the library.
template <typename Library, typename Bind>
void bindToCurrentStream(DeviceIndex device, Bind&& bind) {
  bind(currentNativeStream(device));
}

// The pool traits (accel/handle_pool.h) of a library described by `Library`:
// Handle, kName, create(Handle*), destroy(Handle), check(status, call) and,
// for libraries with stream state, bindStream(Handle, stream, device).
template <typename Library>
struct LibraryPool {
  using Handle = typename Library::Handle;
  static constexpr DeviceType kDeviceType = DeviceType::CUDA;
  static constexpr std::string_view kName = Library::kName;

  // Runs with `device` current (the pool's DeviceGuard); the context is
  // made real here, the first work on the device.
  static Handle create(DeviceIndex device) {
    Handle handle{};
    onDevice(device, [&] { Library::check(Library::create(&handle), Library::kCreate); });
    return handle;
  }
  static void destroy(Handle handle) noexcept { (void)Library::destroy(handle); }
};

template <typename Library>
struct StreamBoundPool : LibraryPool<Library> {
  static void bind(typename Library::Handle handle, DeviceIndex device) {
    bindToCurrentStream<Library>(device, [&](cudaStream_t stream) {
      Library::bindStream(handle, stream, device);
    });
  }
};

struct Cublas {
  using Handle = cublasHandle_t;
  static constexpr std::string_view kName = "cublas";
  static constexpr const char* kCreate = "cublasCreate";
  static constexpr auto create = cublasCreate;
  static constexpr auto destroy = cublasDestroy;
  static constexpr auto check = checkCublas;
  static void bindStream(Handle handle, cudaStream_t stream, DeviceIndex device) {
    checkCublas(cublasSetStream(handle, stream), "cublasSetStream");
    // cublasSetStream resets the workspace to cuBLAS's own: set ours after it.
    const WorkspaceBuffer workspace =
        workspaceFor(handle, stream, device, cublasWorkspaceBytesFor(device));
    checkCublas(cublasSetWorkspace(handle, workspace.data, workspace.bytes),
                "cublasSetWorkspace");
  }
};

// cuBLASLt keeps no stream: its workspace is passed per call.
struct CublasLt {
  using Handle = cublasLtHandle_t;
  static constexpr std::string_view kName = "cublasLt";
  static constexpr const char* kCreate = "cublasLtCreate";
  static constexpr auto create = cublasLtCreate;
  static constexpr auto destroy = cublasLtDestroy;
  static constexpr auto check = checkCublas;
};

struct CusolverDn {
  using Handle = cusolverDnHandle_t;
  static constexpr std::string_view kName = "cusolverDn";
  static constexpr const char* kCreate = "cusolverDnCreate";
  static constexpr auto create = cusolverDnCreate;
  static constexpr auto destroy = cusolverDnDestroy;
  static constexpr auto check = checkCusolver;
  static void bindStream(Handle handle, cudaStream_t stream, DeviceIndex) {
    checkCusolver(cusolverDnSetStream(handle, stream), "cusolverDnSetStream");
  }
};

using CublasPool = StreamBoundPool<Cublas>;
using CublasLtPool = LibraryPool<CublasLt>;
using CusolverDnPool = StreamBoundPool<CusolverDn>;

#if defined(ACCEL_CUDA_HAVE_CUDNN)
void checkCudnn(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS)
    libraryFailed(call, status, cudnnGetErrorString(status));
}

struct Cudnn {
  using Handle = cudnnHandle_t;
  static constexpr std::string_view kName = "cudnn";
  static constexpr const char* kCreate = "cudnnCreate";
  static constexpr auto create = cudnnCreate;
  static constexpr auto destroy = cudnnDestroy;
  static constexpr auto check = checkCudnn;
  static void bindStream(Handle handle, cudaStream_t stream, DeviceIndex) {
    checkCudnn(cudnnSetStream(handle, stream), "cudnnSetStream");
  }
};
using CudnnPool = StreamBoundPool<Cudnn>;
#endif

#if defined(ACCEL_CUDA_HAVE_CUDSS)
void checkCudss(cudssStatus_t status, const char* call) {
  if (status != CUDSS_STATUS_SUCCESS) libraryFailed(call, status, nullptr);
}

struct Cudss {
  using Handle = cudssHandle_t;
  static constexpr std::string_view kName = "cudss";
  static constexpr const char* kCreate = "cudssCreate";
  static constexpr auto create = cudssCreate;
  static constexpr auto destroy = cudssDestroy;
  static constexpr auto check = checkCudss;
  static void bindStream(Handle handle, cudaStream_t stream, DeviceIndex) {
    checkCudss(cudssSetStream(handle, stream), "cudssSetStream");
  }
};
using CudssPool = StreamBoundPool<Cudss>;
#endif

DeviceIndex resolve(DeviceIndex index) {
  // Without devices: NotAvailable with the probe's reason.
  const Availability found = availability();
  ACCEL_CHECK(found.device_count > 0, NotAvailable,
              "'cuda' is not available: ", found.reason);
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
  const cudaStream_t stream = detail::currentNativeStream(device);
  const detail::WorkspaceBuffer workspace =
      detail::workspaceFor(handle, stream, device, detail::cublasLtWorkspaceBytes());
  return {workspace.data, workspace.bytes};
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
