#include "opencl_backend.h"

#include <algorithm>
#include <atomic>
#include <sstream>

#include "command_buffers.h"
#include "devices.h"
#include "events.h"
#include "graphs.h"
#include "loader.h"
#include "opencl_error.h"
#include "pinned_memory.h"
#include "queue_tails.h"
#include "recording.h"
#include "streams.h"
#include "svm_memory.h"
#include "thread_current.h"

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
          "clEnqueueMarkerWithWaitList", HookId::queryStream, stream.device);
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
  checkCl(got, "clGetEventInfo", HookId::queryStream, stream.device);
  if (status < 0) throwCl(status, "work on the queried stream", stream.device);
  return status == CL_COMPLETE;
}

}  // namespace

bool OpenClBackend::isAvailable() const { return devices().available(); }
std::string OpenClBackend::unavailableReason() const {
  const Devices& d = devices();
  return d.available() ? std::string() : d.reason;
}
int OpenClBackend::deviceCount() const { return devices().count(); }

void OpenClBackend::init() {
  const Devices& d = devices();
  // A malformed selection is the user's to fix: say so here, where `accel
  // info` and lazy initialisation show it, rather than as "0 devices".
  ACCEL_ADAPTER_CHECK(d.selection_error.empty(), InvalidArgument, d.selection_error);
  // Every allocation asks the device memory first, which refuses what
  // clSVMAlloc can never make, saying why (svm_memory.h).
  for (int i = 0; i < d.count(); ++i)
    core().divertAllocations(static_cast<std::int8_t>(i), true);
}

bool OpenClBackend::hasPrimaryContext(std::int8_t device) const {
  return hasContext(device);
}

std::int8_t OpenClBackend::currentDevice() const { return detail::currentDevice(); }
void OpenClBackend::setCurrentDevice(std::int8_t device) {
  detail::setCurrentDevice(device);
}
std::int64_t OpenClBackend::currentStream(std::int8_t device) const {
  return detail::currentStream(device);
}
void OpenClBackend::setCurrentStream(Stream stream) {
  (void)nativeQueue(stream);  // refuses ids the backend never handed out
  detail::setCurrentStream(stream);
}

adapter::Memory& OpenClBackend::deviceMemory() { return svmMemory(); }
adapter::Memory& OpenClBackend::pinnedMemory() { return detail::pinnedMemory(); }

void OpenClBackend::synchronizeDevice(std::int8_t device) {
  detail::synchronizeDevice(device);
}

std::string OpenClBackend::showConfig() const {
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
      out << "graphs: usable (cl_khr_command_buffer " << commandBufferSupport(0).version
          << " on every device)\n";
    } else {
      out << "graphs: captures refused where a device lacks cl_khr_command_buffer "
             "0.9.0-0.9.4:";
      for (int i = 0; i < d.count(); ++i) {
        const CommandBufferSupport& s = commandBufferSupport(static_cast<DeviceIndex>(i));
        if (!s.usable) out << " opencl:" << i << ": " << s.reason << ';';
      }
      out << '\n';
    }
  }
  return out.str();
}

adapter::Properties OpenClBackend::properties(std::int8_t device) const {
  const DeviceInfo& info = deviceRecord(device).info;
  adapter::Properties out;
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

std::int64_t OpenClBackend::defaultStream(std::int8_t device) {
  (void)deviceRecord(device);
  return kDefaultStreamId;
}

std::int64_t OpenClBackend::createStream(std::int8_t device, int priority) {
  const auto [lowest, greatest] = streamPriorityRange(device);
  return newStream(device, std::clamp(priority, lowest, greatest)).id;
}

bool OpenClBackend::queryStream(Stream stream) {
  const cl_command_queue queue = nativeQueue(stream);
  // The queue's last command answers when the backend enqueued everything
  // on it (queue_tails.h); otherwise the queue is asked with a marker.
  return queueTail(queue).idle(stream.device,
                               [&] { return markerSaysIdle(queue, stream); });
}

void OpenClBackend::synchronizeStream(Stream stream) {
  checkCl(loader().clFinish(nativeQueue(stream)), "clFinish", HookId::synchronizeStream,
          stream.device);
}

std::pair<int, int> OpenClBackend::priorityRange(std::int8_t device) {
  return streamPriorityRange(device);
}

std::uint64_t OpenClBackend::createEvent(std::int8_t device, std::uint32_t flags) {
  return detail::createEvent(device, flags);
}
void OpenClBackend::destroyEvent(std::uint64_t event) noexcept {
  detail::destroyEvent(event);
}
void OpenClBackend::recordEvent(std::uint64_t event, Stream stream) {
  refuseWhileCaptured(stream, HookId::recordEvent);
  detail::recordEvent(event, stream);
}
void OpenClBackend::blockStream(std::uint64_t event, Stream stream) {
  refuseWhileCaptured(stream, HookId::blockStream);
  detail::blockStream(event, stream);
}
bool OpenClBackend::queryEvent(std::uint64_t event) { return detail::queryEvent(event); }
void OpenClBackend::synchronizeEvent(std::uint64_t event) {
  detail::synchronizeEvent(event);
}
double OpenClBackend::elapsedMs(std::uint64_t start, std::uint64_t end) {
  return detail::elapsedTime(start, end);
}

std::uint64_t OpenClBackend::createGraph(bool keep_graph) {
  return detail::graphCreate(keep_graph);
}
void OpenClBackend::destroyGraph(std::uint64_t graph) { detail::graphDestroy(graph); }
// The mode has no effect: nothing the backend does on another thread breaks
// a capture.
void OpenClBackend::captureBegin(std::uint64_t graph, Stream stream, int) {
  detail::graphCaptureBegin(core(), graph, stream);
}
void OpenClBackend::captureEnd(std::uint64_t graph) { detail::graphCaptureEnd(graph); }
void OpenClBackend::instantiateGraph(std::uint64_t graph) {
  detail::graphInstantiate(graph);
}
void OpenClBackend::replayGraph(std::uint64_t graph) { detail::graphReplay(graph); }
void OpenClBackend::resetGraph(std::uint64_t graph) { detail::graphReset(graph); }

}  // namespace accel::opencl::detail

namespace accel::opencl::detail {
namespace {
std::atomic<OpenClBackend*> g_registered{nullptr};
}  // namespace

OpenClBackend& registeredBackend() {
  OpenClBackend* backend = g_registered.load(std::memory_order_acquire);
  ACCEL_ADAPTER_CHECK(backend != nullptr, NotAvailable,
                      "the opencl plugin is not registered with the core yet; call "
                      "accel::opencl::registerBackend() (or load the plugin) first");
  return *backend;
}

void setRegisteredBackend(OpenClBackend& backend) noexcept {
  g_registered.store(&backend, std::memory_order_release);
}

}  // namespace accel::opencl::detail
