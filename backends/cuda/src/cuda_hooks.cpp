#include "cuda_hooks.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "accel/adapter/failure.h"
#include "accel/philox_generator.h"
#include "cuda_error.h"
#include "cuda_memory.h"
#include "current_device.h"
#include "cxx_boundary.h"
#include "device_fill.h"
#include "driver.h"
#include "events.h"
#include "graphs.h"
#include "streams.h"
#include "workspace_config.h"

namespace accel::cuda::detail {

void requireAvailable() {
  const Driver& d = driver();
  ACCEL_ADAPTER_CHECK(d.available(), adapter::NotAvailable,
                      "the cuda backend is not available: ", d.reason);
}

CudaHooks::CudaHooks()
    : CachingAllocatorHooks(
          DeviceType::CUDA,
          Capabilities{HookGroup::Device, HookGroup::Streams, HookGroup::Events,
                       HookGroup::Memory, HookGroup::MemoryHistory, HookGroup::Graphs,
                       HookGroup::Copies, HookGroup::Fill}) {}

memory::CachingAllocator& CudaHooks::cachingAllocator() const {
  return asLibraryErrors([&]() -> memory::CachingAllocator& {
    requireAvailable();
    return deviceCachingAllocator();
  });
}

memory::PinnedCachingAllocator* CudaHooks::pinnedCachingAllocator() const {
  return asLibraryErrors([&]() -> memory::PinnedCachingAllocator* {
    requireAvailable();
    return &pinnedAllocator();
  });
}

DeviceMemoryInfo CudaHooks::getMemoryInfoImpl(DeviceIndex index) const {
  return asLibraryErrors([&]() -> DeviceMemoryInfo {
    requireAvailable();
    // cudaMemGetInfo answers for the current device: make `index` current.
    DeviceContext context(index);
    std::size_t free = 0;
    std::size_t total = 0;
    checkCuda(cudaMemGetInfo(&free, &total),
              adapter::concat("cudaMemGetInfo (", hookInfo(HookId::getMemoryInfo).name,
                              " on cuda:", int(index), ")"));
    return {total, free};
  });
}

CudaHooks::~CudaHooks() = default;

void CudaHooks::failBadDeviceIndex(DeviceIndex index, int count, HookId hook) const {
  if (count == 0) {
    asLibraryErrors([] { requireAvailable(); });  // throws NotAvailable with the reason
  }
  AcceleratorHooks::failBadDeviceIndex(index, count, hook);
}

bool CudaHooks::isBuiltImpl() const { return true; }
bool CudaHooks::isAvailableImpl() const { return driver().available(); }
int CudaHooks::deviceCountImpl() const { return driver().device_count; }

DeviceIndex CudaHooks::getCurrentDeviceImpl() const {
  return asLibraryErrors([&]() -> DeviceIndex {
    requireAvailable();
    return currentDevice();
  });
}

void CudaHooks::setCurrentDeviceImpl(DeviceIndex index) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::setCurrentDevice(index);
  });
}

void CudaHooks::initImpl() {
  return asLibraryErrors([&]() -> void {
    // Without devices init succeeds (the hooks contract: deviceCount() then
    // says 0); every hook that needs a device says why with NotAvailable.
    // CUDA_MODULE_LOADING=LAZY is set by the driver probe, before cuInit reads
    // it (driver.cpp).
  });
}

bool CudaHooks::hasPrimaryContextImpl(DeviceIndex index) const {
  return asLibraryErrors([&]() -> bool { return primaryContextActive(index); });
}

DefaultGenerators& CudaHooks::defaultGenerators() {
  std::call_once(defaults_once_, [this] {
    defaults_ = std::make_unique<DefaultGenerators>(
        DeviceType::CUDA, driver().device_count, [this] { return getCurrentDevice(); });
  });
  return *defaults_;
}

const Generator& CudaHooks::getDefaultGeneratorImpl(DeviceIndex index) {
  return asLibraryErrors([&]() -> const Generator& {
    requireAvailable();
    return defaultGenerators().get(index);
  });
}

Generator CudaHooks::getNewGeneratorImpl(DeviceIndex index) {
  return asLibraryErrors([&]() -> Generator {
    requireAvailable();
    return makePhiloxGenerator(Device(DeviceType::CUDA, index));
  });
}

namespace {

// The memory type of `ptr` per the driver (0 when CUDA does not know it).
// Creates no context; never throws.
unsigned int memoryType(const Driver& d, const void* ptr) noexcept {
  unsigned int type = 0;
  if (d.pointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                            reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) {
    return 0;
  }
  return type;
}

}  // namespace

Device CudaHooks::getDeviceFromPtrImpl(const void* ptr) const {
  return asLibraryErrors([&]() -> Device {
    requireAvailable();
    const Driver& d = driver();
    const unsigned int type = memoryType(d, ptr);
    int ordinal = -1;
    if (type != 0 &&
        d.pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                              reinterpret_cast<CUdeviceptr>(ptr)) == CUDA_SUCCESS &&
        ordinal >= 0 && ordinal < d.device_count) {
      return Device(DeviceType::CUDA, static_cast<DeviceIndex>(ordinal));
    }
    throw adapter::InvalidArgument(adapter::concat(
        hookInfo(HookId::getDeviceFromPtr).name, "(): ", ptr, " is not memory '", name(),
        "' knows (not allocated or registered with the CUDA runtime or driver); pass a "
        "pointer into a CUDA allocation"));
  });
}

bool CudaHooks::isPinnedPtrImpl(const void* ptr) const {
  return asLibraryErrors([&]() -> bool {
    const Driver& d = driver();
    return d.available() && memoryType(d, ptr) == CU_MEMORYTYPE_HOST;
  });
}

Allocator& CudaHooks::getPinnedMemoryAllocatorImpl() {
  return asLibraryErrors([&]() -> Allocator& {
    requireAvailable();
    return pinnedAllocator();
  });
}

Allocator& CudaHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  return asLibraryErrors([&]() -> Allocator& {
    requireAvailable();
    return deviceAllocator(index);
  });
}

void CudaHooks::deviceSynchronizeImpl(DeviceIndex index) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    DeviceContext context(index);
    checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  });
}

std::string CudaHooks::showConfigImpl() const {
  return asLibraryErrors([&]() -> std::string {
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
        out << "expandable segments: unavailable: " << mapping.unavailableReason()
            << '\n';
      }
    }
    return out.str();
  });
}

DeviceProperties CudaHooks::getDevicePropertiesImpl(DeviceIndex index) const {
  return asLibraryErrors([&]() -> DeviceProperties {
    requireAvailable();
    cudaDeviceProp prop{};
    checkCuda(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
    DeviceProperties out;
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
  });
}

Stream CudaHooks::getCurrentStreamImpl(DeviceIndex index) const {
  return asLibraryErrors([&]() -> Stream {
    requireAvailable();
    return toLibrary(detail::currentStream(index));
  });
}

Stream CudaHooks::getDefaultStreamImpl(DeviceIndex index) const {
  return asLibraryErrors([&]() -> Stream {
    requireAvailable();
    return Stream(Device(DeviceType::CUDA, index), kDefaultStreamId);
  });
}

Stream CudaHooks::getNewStreamImpl(DeviceIndex index, int priority) {
  return asLibraryErrors([&]() -> Stream {
    requireAvailable();
    return toLibrary(detail::newStream(index, priority));
  });
}

void CudaHooks::setCurrentStreamImpl(Stream stream) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    (void)nativeStream(toAdapter(stream));  // refuses ids the backend never handed out
    detail::setCurrentStream(toAdapter(stream));
  });
}

bool CudaHooks::queryStreamImpl(Stream stream) const {
  return asLibraryErrors([&]() -> bool {
    requireAvailable();
    DeviceContext context(stream.device.index());
    const cudaError_t status = cudaStreamQuery(nativeStream(toAdapter(stream)));
    if (status == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    checkCuda(status, "cudaStreamQuery");
    return true;
  });
}

void CudaHooks::synchronizeStreamImpl(Stream stream) const {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    DeviceContext context(stream.device.index());
    checkCuda(cudaStreamSynchronize(nativeStream(toAdapter(stream))),
              "cudaStreamSynchronize");
  });
}

std::pair<int, int> CudaHooks::streamPriorityRangeImpl() const {
  return asLibraryErrors([&]() -> std::pair<int, int> {
    requireAvailable();
    return detail::streamPriorityRange();
  });
}
std::pair<int, int> CudaHooks::newStreamPriorityRangeImpl(DeviceIndex index) const {
  return asLibraryErrors([&]() -> std::pair<int, int> {
    requireAvailable();
    return detail::streamPriorityRange(index);
  });
}

EventId CudaHooks::createEventImpl(DeviceIndex index, EventFlags flags) {
  return asLibraryErrors([&]() -> EventId {
    requireAvailable();
    return detail::createEvent(index, flags);
  });
}
void CudaHooks::destroyEventImpl(EventId event) noexcept {
  if (driver().available()) detail::destroyEvent(event);
}
void CudaHooks::recordEventImpl(EventId event, Stream stream) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::recordEvent(event, toAdapter(stream));
  });
}
void CudaHooks::blockStreamImpl(EventId event, Stream stream) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::blockStream(event, toAdapter(stream));
  });
}
bool CudaHooks::queryEventImpl(EventId event) const {
  return asLibraryErrors([&]() -> bool {
    requireAvailable();
    return detail::queryEvent(event);
  });
}
void CudaHooks::synchronizeEventImpl(EventId event) const {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::synchronizeEvent(event);
  });
}
double CudaHooks::elapsedTimeImpl(EventId start, EventId end) const {
  return asLibraryErrors([&]() -> double {
    requireAvailable();
    return detail::elapsedTime(start, end);
  });
}

GraphId CudaHooks::graphCreateImpl(bool keep_graph) {
  return asLibraryErrors([&]() -> GraphId {
    requireAvailable();
    return detail::graphCreate(keep_graph);
  });
}
void CudaHooks::graphDestroyImpl(GraphId graph) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::graphDestroy(graph);
  });
}
void CudaHooks::graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::graphCaptureBegin(graph, pool, mode);
  });
}
void CudaHooks::graphCaptureEndImpl(GraphId graph) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::graphCaptureEnd(graph);
  });
}
void CudaHooks::graphInstantiateImpl(GraphId graph) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::graphInstantiate(graph);
  });
}
void CudaHooks::graphReplayImpl(GraphId graph) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::graphReplay(graph);
  });
}
void CudaHooks::graphResetImpl(GraphId graph) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::graphReset(graph);
  });
}
MempoolId CudaHooks::graphPoolImpl(GraphId graph) const {
  return asLibraryErrors([&]() -> MempoolId {
    requireAvailable();
    return detail::graphPool(graph);
  });
}

void CudaHooks::fillRandomImpl(Stream stream, DeviceFill kind, void* data,
                               std::size_t count, double a, double b,
                               const Generator& generator) {
  return asLibraryErrors([&]() -> void {
    requireAvailable();
    detail::fill(toAdapter(stream), static_cast<std::int32_t>(kind), data, count, a, b,
                 generator);
  });
}

}  // namespace accel::cuda::detail
