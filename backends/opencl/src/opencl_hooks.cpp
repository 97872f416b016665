#include "opencl_hooks.h"

#include <optional>
#include <sstream>

#include "accel/error.h"
#include "accel/opencl/opencl.h"
#include "accel/philox_generator.h"
#include "command_buffers.h"
#include "devices.h"
#include "events.h"
#include "graphs.h"
#include "loader.h"
#include "opencl_error.h"
#include "opencl_memory.h"
#include "queue_tails.h"
#include "recording.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

// A command buffer records no events (cl_khr_command_buffer 0.9): a marker
// or barrier for a stream being captured would act on the queue now, not in
// the replays, so it is refused.
void refuseWhileCaptured(Stream stream, HookId hook) {
  refuseWhileRecording(stream, hook,
                       "records no events; record or wait for events before or after "
                       "the capture");
}

// requireAvailable() for the hooks that need no initialisation (the
// current device), without waiting for a first discovery that hangs: the
// devices are listed by the core's bounded first discovery (deviceCount), and
// if that has not finished they are reported not available, with its reason.
void requireAvailableWithinBound(const AcceleratorHooks& hooks, HookId hook) {
  if (devicesIfListed() == nullptr) (void)hooks.deviceCount();
  if (devicesIfListed() == nullptr) {
    const std::string problem = hooks.discoveryProblem();
    throw NotAvailable(::accel::detail::concat(
        hookInfo(hook).name, "(): the opencl backend is not available: ",
        problem.empty() ? std::string("its devices are still being listed") : problem));
  }
  requireAvailable();
}

}  // namespace

OpenClHooks::OpenClHooks(DeviceType type)
    : CachingAllocatorHooks(
          type,
          Capabilities{HookGroup::Device, HookGroup::Streams, HookGroup::Events,
                       HookGroup::Memory, HookGroup::MemoryHistory, HookGroup::Copies},
          Capabilities{HookGroup::Graphs}) {}

OpenClHooks::~OpenClHooks() = default;

memory::CachingAllocator& OpenClHooks::cachingAllocator() const {
  requireAvailable();
  return deviceCachingAllocator();
}

memory::PinnedCachingAllocator* OpenClHooks::pinnedCachingAllocator() const {
  requireAvailable();
  return &pinnedAllocator();
}

void OpenClHooks::failBadDeviceIndex(DeviceIndex index, int count, HookId hook) const {
  // Throws NotAvailable with the reason.
  if (count == 0) requireAvailableWithinBound(*this, hook);
  AcceleratorHooks::failBadDeviceIndex(index, count, hook);
}

bool OpenClHooks::isBuiltImpl() const { return true; }
bool OpenClHooks::isAvailableImpl() const { return devices().available(); }
int OpenClHooks::deviceCountImpl() const { return devices().count(); }

DeviceIndex OpenClHooks::getCurrentDeviceImpl() const {
  requireAvailableWithinBound(*this, HookId::getCurrentDevice);
  return current_.device();
}

void OpenClHooks::setCurrentDeviceImpl(DeviceIndex index) {
  requireAvailableWithinBound(*this, HookId::setCurrentDevice);
  current_.setDevice(index);
}

void OpenClHooks::initImpl() {
  const Devices& d = devices();
  // A malformed selection is the user's to fix: say so here, where `accel
  // info` and lazy initialisation show it, rather than as "0 devices".
  ACCEL_CHECK(d.selection_error.empty(), InvalidArgument, d.selection_error);
}

bool OpenClHooks::hasPrimaryContextImpl(DeviceIndex index) const {
  return hasContext(index);
}

DefaultGenerators& OpenClHooks::defaultGenerators() {
  std::call_once(defaults_once_, [this] {
    defaults_ = std::make_unique<DefaultGenerators>(
        deviceType(), devices().count(), [this] { return getCurrentDevice(); });
  });
  return *defaults_;
}

const Generator& OpenClHooks::getDefaultGeneratorImpl(DeviceIndex index) {
  requireAvailable();
  return defaultGenerators().get(index);
}

Generator OpenClHooks::getNewGeneratorImpl(DeviceIndex index) {
  requireAvailable();
  return makePhiloxGenerator(Device(deviceType(), index));
}

Device OpenClHooks::getDeviceFromPtrImpl(const void* ptr) const {
  requireAvailable();
  // The core's segment map: device memory the allocator holds, in use or
  // cached.
  if (const std::optional<DeviceIndex> index = deviceCachingAllocator().deviceOf(ptr)) {
    return Device(deviceType(), *index);
  }
  // Pinned host memory, a segment already returned, or a foreign pointer:
  // the kit's map (segments and pinned blocks) says which.
  return addresses().deviceOf(ptr);
}

bool OpenClHooks::isPinnedPtrImpl(const void* ptr) const {
  return devices().available() && addresses().isPinned(ptr);
}

Allocator& OpenClHooks::getPinnedMemoryAllocatorImpl() {
  requireAvailable();
  return pinnedAllocator();
}

Allocator& OpenClHooks::getDeviceAllocatorImpl(DeviceIndex index) {
  requireAvailable();
  return deviceAllocator(index);
}

void OpenClHooks::deviceSynchronizeImpl(DeviceIndex index) {
  requireAvailable();
  synchronizeDevice(index);
}

std::string OpenClHooks::showConfigImpl() const {
  const Devices& d = devices();
  const Loader& l = loader();
  std::ostringstream out;
  out << "OpenCL loader: " << (l.loaded ? l.library + " (opened at run time)" : l.reason)
      << '\n';
  if (d.available()) {
    out << "devices: " << d.count() << '\n';
    for (int i = 0; i < d.count(); ++i) {
      const DeviceInfo& info = d.used[i]->info;
      out << "  opencl:" << i << " = " << info.platform_index << ':' << info.device_index
          << ' ' << info.name << " (" << info.type << ", " << info.version << ", "
          << info.platform_name << ")\n";
    }
  } else {
    out << "not available: " << d.reason << '\n';
  }
  if (!d.skipped.empty()) out << "not used:\n" << d.skipped;
  out << "selection: ACCEL_OPENCL_DEVICES (gpu, accelerator, cpu, all or "
         "platform:device; "
         "default: GPUs and accelerators, else CPUs)\n";
  out << "memory: core caching allocator over clSVMAlloc (ACCEL_ALLOC_CONF), pinned "
         "cache over CL_MEM_ALLOC_HOST_PTR buffers; no expandable segments\n";
  if (d.available()) {
    if (everyDeviceHasCommandBuffers()) {
      out << "graphs: declared (cl_khr_command_buffer " << commandBufferSupport(0).version
          << " on every device)\n";
    } else {
      out << "graphs: not declared (they need cl_khr_command_buffer 0.9.0-0.9.4 on "
             "every device):";
      for (int i = 0; i < d.count(); ++i) {
        const CommandBufferSupport& s = commandBufferSupport(static_cast<DeviceIndex>(i));
        if (!s.usable) out << " opencl:" << i << ": " << s.reason << ';';
      }
      out << '\n';
    }
  }
  return out.str();
}

DeviceProperties OpenClHooks::getDevicePropertiesImpl(DeviceIndex index) const {
  const DeviceInfo& info = deviceRecord(index).info;
  DeviceProperties out;
  out.name = info.name;
  out.total_memory_bytes = info.global_memory_bytes;
  out.multiprocessor_count = info.compute_units;
  out.compute_capability_major = info.version_major;
  out.compute_capability_minor = info.version_minor;
  out.l2_cache_bytes = info.global_cache_bytes;
  // A CPU device shares the host's memory; other types report their own.
  out.is_integrated = info.type == "cpu";
  return out;
}

Stream OpenClHooks::getCurrentStreamImpl(DeviceIndex index) const {
  requireAvailable();
  return currentStream(index);  // the base checked the index
}

Stream OpenClHooks::getDefaultStreamImpl(DeviceIndex index) const {
  requireAvailable();
  return Stream(Device(deviceType(), index), kDefaultStreamId);
}

Stream OpenClHooks::getNewStreamImpl(DeviceIndex index, int priority) {
  requireAvailable();
  return newStream(index, priority);
}

void OpenClHooks::setCurrentStreamImpl(Stream stream) {
  requireAvailable();
  (void)nativeQueue(stream);  // refuses ids the backend never handed out
  current_.setStream(stream.device.index(), stream.id);
}

namespace {

// queryStream's answer from a marker enqueued on `queue` (work the backend
// did not enqueue itself may be on it).
bool markerSaysIdle(cl_command_queue queue, Stream stream) {
  // OpenCL cannot ask a queue whether it is idle. A marker completes once
  // everything enqueued before it has; while earlier work is pending the
  // runtime keeps it CL_QUEUED, and once that work is done it submits it,
  // after which it completes with nothing left to wait for. So: queued =
  // busy; submitted or running = idle, and the wait for the marker itself
  // is the runtime's own latency (pocl runs markers on its worker threads).
  const Loader& l = loader();
  cl_event marker = nullptr;
  checkCl(l.clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker),
          "clEnqueueMarkerWithWaitList", HookId::queryStream, stream.device.index());
  (void)l.clFlush(queue);
  cl_int status = CL_QUEUED;
  const cl_int got = l.clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                      sizeof status, &status, nullptr);
  // (Statuses count down: CL_QUEUED 3, CL_SUBMITTED 2, CL_RUNNING 1,
  // CL_COMPLETE 0; negative is an error.)
  if (got == CL_SUCCESS && (status == CL_SUBMITTED || status == CL_RUNNING)) {
    // Submitted or running: nothing before it is left; let it finish.
    (void)l.clWaitForEvents(1, &marker);
    status = CL_COMPLETE;
    (void)l.clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                           &status, nullptr);
  }
  (void)l.clReleaseEvent(marker);
  checkCl(got, "clGetEventInfo", HookId::queryStream, stream.device.index());
  if (status < 0) throwCl(status, "work on the queried stream", stream.device.index());
  return status == CL_COMPLETE;
}

}  // namespace

bool OpenClHooks::queryStreamImpl(Stream stream) const {
  requireAvailable();
  const cl_command_queue queue = nativeQueue(stream);
  // The queue's last command answers when the backend enqueued everything
  // on it (queue_tails.h); otherwise the queue is asked with a marker.
  return queueTail(queue).idle(stream.device.index(),
                               [&] { return markerSaysIdle(queue, stream); });
}

void OpenClHooks::synchronizeStreamImpl(Stream stream) const {
  requireAvailable();
  checkCl(loader().clFinish(nativeQueue(stream)), "clFinish", HookId::synchronizeStream,
          stream.device.index());
}

std::pair<int, int> OpenClHooks::streamPriorityRangeImpl() const {
  requireAvailable();
  // Per device in OpenCL; the hooks have one range: the current device's.
  return detail::streamPriorityRange(current_.device());
}

EventId OpenClHooks::createEventImpl(DeviceIndex index, EventFlags flags) {
  requireAvailable();
  return detail::createEvent(index, flags);
}
void OpenClHooks::destroyEventImpl(EventId event) noexcept {
  if (devices().available()) detail::destroyEvent(event);
}
void OpenClHooks::recordEventImpl(EventId event, Stream stream) {
  requireAvailable();
  refuseWhileCaptured(stream, HookId::recordEvent);
  detail::recordEvent(event, stream);
}
void OpenClHooks::blockStreamImpl(EventId event, Stream stream) {
  requireAvailable();
  refuseWhileCaptured(stream, HookId::blockStream);
  detail::blockStream(event, stream);
}
bool OpenClHooks::queryEventImpl(EventId event) const {
  requireAvailable();
  return detail::queryEvent(event);
}
void OpenClHooks::synchronizeEventImpl(EventId event) const {
  requireAvailable();
  detail::synchronizeEvent(event);
}
double OpenClHooks::elapsedTimeImpl(EventId start, EventId end) const {
  requireAvailable();
  return detail::elapsedTime(start, end);
}

Capabilities OpenClHooks::settleCapabilitiesImpl() const {
  return everyDeviceHasCommandBuffers() ? Capabilities{HookGroup::Graphs}
                                        : Capabilities{};
}

GraphId OpenClHooks::graphCreateImpl(bool keep_graph) {
  requireAvailable();
  return detail::graphCreate(keep_graph);
}
void OpenClHooks::graphDestroyImpl(GraphId graph) {
  requireAvailable();
  detail::graphDestroy(graph);
}
void OpenClHooks::graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode) {
  requireAvailable();
  detail::graphCaptureBegin(graph, pool, current_);
}
void OpenClHooks::graphCaptureEndImpl(GraphId graph) {
  requireAvailable();
  detail::graphCaptureEnd(graph);
}
void OpenClHooks::graphInstantiateImpl(GraphId graph) {
  requireAvailable();
  detail::graphInstantiate(graph);
}
void OpenClHooks::graphReplayImpl(GraphId graph) {
  requireAvailable();
  detail::graphReplay(graph, current_);
}
void OpenClHooks::graphResetImpl(GraphId graph) {
  requireAvailable();
  detail::graphReset(graph);
}
MempoolId OpenClHooks::graphPoolImpl(GraphId graph) const {
  requireAvailable();
  return detail::graphPool(graph);
}

}  // namespace accel::opencl::detail
