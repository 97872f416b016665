#include "cuda_backend.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <sstream>

#include "accel/adapter/failure.h"
#include "cuda_error.h"
#include "current_device.h"
#include "device_fill.h"
#include "device_memory.h"
#include "driver.h"
#include "events.h"
#include "graphs.h"
#include "streams.h"
#include "workspace_config.h"

namespace accel::cuda::detail {

void requireAvailable() {
  const Driver& d = driver();
  ACCEL_ADAPTER_CHECK(d.available(), adapter::NotAvailable,
                      "'cuda' is not available: ", d.reason);
}

bool CudaBackend::isAvailable() const { return driver().available(); }
std::string CudaBackend::unavailableReason() const {
  const Driver& d = driver();
  return d.available() ? std::string() : d.reason;
}
int CudaBackend::deviceCount() const { return driver().device_count; }

bool CudaBackend::hasPrimaryContext(std::int8_t device) const {
  return primaryContextActive(device);
}

// Asked at registration, before any probe: the memories call nothing of
// CUDA until they allocate (and the core allocates only on devices the probe
// found).
adapter::Memory& CudaBackend::deviceMemory() { return detail::deviceMemory(); }
adapter::Memory& CudaBackend::pinnedMemory() { return detail::pinnedMemory(); }

std::int8_t CudaBackend::currentDevice() const {
  requireAvailable();
  return detail::currentDevice();
}

void CudaBackend::setCurrentDevice(std::int8_t device) {
  requireAvailable();
  detail::setCurrentDevice(device);
}

std::int64_t CudaBackend::currentStream(std::int8_t device) const {
  requireAvailable();
  return detail::currentStream(device).id;
}

void CudaBackend::setCurrentStream(adapter::Stream stream) {
  requireAvailable();
  (void)nativeStream(stream);  // refuses ids the backend never handed out
  detail::setCurrentStream(stream);
}

void CudaBackend::synchronizeDevice(std::int8_t device) {
  requireAvailable();
  DeviceContext context(device);
  checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

std::string CudaBackend::showConfig() const {
  const Driver& d = driver();
  std::ostringstream out;
  out << "CUDA runtime " << CUDART_VERSION / 1000 << '.' << CUDART_VERSION % 1000 / 10
      << " (linked statically)\n";
  if (d.driver_version > 0) {
    out << "driver supports CUDA " << d.driver_version / 1000 << '.'
        << d.driver_version % 1000 / 10 << '\n';
  }
  if (d.available()) {
    out << "devices: " << d.device_count << '\n';
  } else {
    out << "not available: " << d.reason << '\n';
  }
  out << "cuBLAS workspace per (handle, stream): " << cublasWorkspaceBytes(0)
      << " bytes (CUBLAS_WORKSPACE_CONFIG; sm_90+ default " << cublasWorkspaceBytes(90)
      << ")\n";
  out << "memory: core caching allocator over cudaMalloc (ACCEL_ALLOC_CONF), pinned "
         "cache over cudaHostAlloc\n";
  if (d.available()) {
    const PageMapping& mapping = pageMapping();
    if (mapping.pageSize() > 0) {
      out << "expandable segments: available (expandable_segments:true; pages of "
          << mapping.pageSize() << " bytes)\n";
    } else {
      out << "expandable segments: unavailable: " << mapping.unavailableReason() << '\n';
    }
  }
  return out.str();
}

adapter::Properties CudaBackend::properties(std::int8_t device) const {
  requireAvailable();
  cudaDeviceProp prop{};
  checkCuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  adapter::Properties out;
  out.name = prop.name;
  out.total_memory_bytes = prop.totalGlobalMem;
  out.multiprocessor_count = prop.multiProcessorCount;
  out.compute_capability_major = prop.major;
  out.compute_capability_minor = prop.minor;
  out.warp_size = prop.warpSize;
  out.max_threads_per_multiprocessor = prop.maxThreadsPerMultiProcessor;
  out.l2_cache_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  out.is_integrated = prop.integrated != 0;
  char uuid[40];
  int at = std::snprintf(uuid, sizeof uuid, "GPU-");
  for (int i = 0; i < 16 && at < static_cast<int>(sizeof uuid) - 3; ++i) {
    at += std::snprintf(uuid + at, sizeof uuid - at, "%02x",
                        static_cast<unsigned char>(prop.uuid.bytes[i]));
  }
  out.uuid = uuid;
  return out;
}

std::int64_t CudaBackend::createStream(std::int8_t device, int priority) {
  requireAvailable();
  return newStream(device, priority).id;
}

bool CudaBackend::queryStream(adapter::Stream stream) {
  requireAvailable();
  DeviceContext context(stream.device);
  const cudaError_t status = cudaStreamQuery(nativeStream(stream));
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  checkCuda(status, "cudaStreamQuery");
  return true;
}

void CudaBackend::synchronizeStream(adapter::Stream stream) {
  requireAvailable();
  DeviceContext context(stream.device);
  checkCuda(cudaStreamSynchronize(nativeStream(stream)), "cudaStreamSynchronize");
}

std::pair<int, int> CudaBackend::priorityRange(std::int8_t device) {
  requireAvailable();
  return streamPriorityRange(device);
}

std::uint64_t CudaBackend::createEvent(std::int8_t device, std::uint32_t flags) {
  requireAvailable();
  return detail::createEvent(device, flags);
}
void CudaBackend::destroyEvent(std::uint64_t event) noexcept {
  if (driver().available()) detail::destroyEvent(event);
}
void CudaBackend::recordEvent(std::uint64_t event, adapter::Stream stream) {
  requireAvailable();
  detail::recordEvent(event, stream);
}
void CudaBackend::blockStream(std::uint64_t event, adapter::Stream stream) {
  requireAvailable();
  detail::blockStream(event, stream);
}
bool CudaBackend::queryEvent(std::uint64_t event) {
  requireAvailable();
  return detail::queryEvent(event);
}
void CudaBackend::synchronizeEvent(std::uint64_t event) {
  requireAvailable();
  detail::synchronizeEvent(event);
}
double CudaBackend::elapsedMs(std::uint64_t start, std::uint64_t end) {
  requireAvailable();
  return detail::elapsedTime(start, end);
}

std::uint64_t CudaBackend::createGraph(bool keep_graph) {
  requireAvailable();
  return graphCreate(keep_graph);
}
void CudaBackend::destroyGraph(std::uint64_t graph) {
  requireAvailable();
  graphDestroy(graph);
}
void CudaBackend::captureBegin(std::uint64_t graph, adapter::Stream stream, int mode) {
  requireAvailable();
  graphCaptureBegin(core(), driver().device_count, graph, stream, mode);
}
void CudaBackend::captureEnd(std::uint64_t graph) {
  requireAvailable();
  graphCaptureEnd(graph);
}
void CudaBackend::instantiateGraph(std::uint64_t graph) {
  requireAvailable();
  graphInstantiate(graph);
}
void CudaBackend::replayGraph(std::uint64_t graph) {
  requireAvailable();
  graphReplay(core(), graph);
}
void CudaBackend::resetGraph(std::uint64_t graph) {
  requireAvailable();
  graphReset(graph);
}

void CudaBackend::fill(adapter::Stream stream, std::int32_t kind, void* data,
                       std::uint64_t count, double a, double b,
                       accel_generator* generator) {
  requireAvailable();
  detail::fill(core(), stream, kind, data, count, a, b, generator);
}

}  // namespace accel::cuda::detail
