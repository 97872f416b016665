#include "layers/trace/trace_layer.h"

#include <chrono>
#include <cstdio>

#include "accel/error.h"

namespace accel::trace::detail {
namespace {

using accel::detail::HookCall;

// Hooks whose work runs on a stream, drawn on the stream's track.
bool isStreamWork(HookId hook) noexcept {
  switch (hook) {
    case HookId::copyHostToDevice:
    case HookId::copyDeviceToHost:
    case HookId::copyDeviceToDevice:
    case HookId::fillRandom:
    case HookId::graphReplay:
      return true;
    default:
      return false;
  }
}

// Hooks that name no stream but act on the current one.
bool actsOnCurrentStream(HookId hook) noexcept {
  return hook == HookId::graphReplay || hook == HookId::graphCaptureBegin;
}

// What before() hands to after() of the same call on this thread: hooks may
// nest (a backend calling a layered hook of another backend), so a small
// stack keyed by the call's address.
struct InFlight {
  const HookCall* call = nullptr;
  Stream stream;
  DeviceTiming::Started started;
};
constexpr int kMaxNesting = 8;
thread_local InFlight t_in_flight[kMaxNesting];
thread_local int t_depth = 0;

// The stream a call names, or for a capture or replay the current one.
bool streamOf(const HookCall& call, Stream& stream) noexcept {
  if (call.stream >= 0 && call.device >= 0) {
    stream =
        Stream(Device(call.type, static_cast<DeviceIndex>(call.device)), call.stream);
    return true;
  }
  if (!actsOnCurrentStream(call.hook)) return false;
  try {
    stream = call.inner->getCurrentStream(kCurrentDevice);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

TraceLayer& TraceLayer::instance() {
  static TraceLayer* const layer = [] {
    auto* made = new TraceLayer(TraceRecorder::instance());
    TraceRecorder::instance().setSources(made);
    return made;
  }();
  return *layer;
}

void TraceLayer::before(const HookCall& call) {
  const bool streamed = isStreamWork(call.hook) || call.hook == HookId::graphCaptureBegin;
  if (!streamed || !recorder_.recording() || t_depth >= kMaxNesting) return;
  InFlight& slot = t_in_flight[t_depth];
  slot = InFlight{&call, Stream(), {}};
  if (!streamOf(call, slot.stream)) return;
  ++t_depth;
  if (isStreamWork(call.hook) && !capturing(slot.stream))
    slot.started = timing_.begin(*call.inner, slot.stream);
}

void TraceLayer::after(const HookCall& call, bool failed) noexcept {
  const std::int64_t end = accel::detail::layerNowTicks();
  InFlight in_flight;
  if (t_depth > 0 && t_in_flight[t_depth - 1].call == &call)
    in_flight = t_in_flight[--t_depth];
  TraceEvent event;
  event.kind = TraceEventKind::Hook;
  event.hook = call.hook;
  event.failed = failed;
  event.type = call.type;
  event.device = static_cast<std::int8_t>(call.device);
  event.stream = call.stream;
  event.object = call.object != 0 ? call.object : call.result;
  event.bytes = call.bytes;
  event.ptr = reinterpret_cast<std::uintptr_t>(call.ptr);
  event.ptr2 = reinterpret_cast<std::uintptr_t>(call.ptr2);
  event.begin = call.begin_ticks;
  event.end = end;
  if (in_flight.call != nullptr) {
    event.device = static_cast<std::int8_t>(in_flight.stream.device.index());
    event.stream = in_flight.stream.id;
  }
  recorder_.record(event);
  history_.note(*call.inner);

  if (call.hook == HookId::graphCaptureBegin && in_flight.call != nullptr && !failed)
    captureBegan(call.object, in_flight.stream);
  if (call.hook == HookId::graphCaptureEnd && !failed)
    captureEnded(call.type, call.object);
  if (isStreamWork(call.hook) && in_flight.call != nullptr &&
      (call.hook == HookId::graphReplay || !capturing(in_flight.stream))) {
    if (failed) {
      timing_.abandon(*call.inner, in_flight.stream, in_flight.started);
      return;
    }
    TraceEvent work = event;
    work.kind = TraceEventKind::DeviceWork;
    work.ptr = work.ptr2 = 0;
    timing_.end(*call.inner, in_flight.stream, in_flight.started, work,
                [this](const TraceEvent& done) { recorder_.pushFinished(done); });
  } else if (call.hook == HookId::synchronizeStream && call.stream >= 0 && !failed) {
    // The host's wait, drawn on the stream it waited for.
    TraceEvent wait = event;
    wait.kind = TraceEventKind::DeviceWork;
    wait.timing = WorkTiming::HostSide;
    wait.ptr = wait.ptr2 = 0;
    recorder_.pushFinished(wait);
  }
}

bool TraceLayer::capturing(const Stream& stream) const noexcept {
  if (captures_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard lock(captures_mutex_);
  for (const auto& [key, captured] : capture_streams_)
    if (captured == stream) return true;
  return false;
}

void TraceLayer::captureBegan(std::uint64_t graph, const Stream& stream) noexcept {
  try {
    std::lock_guard lock(captures_mutex_);
    if (capture_streams_.insert_or_assign({stream.device.type(), graph}, stream).second)
      captures_.fetch_add(1, std::memory_order_release);
  } catch (...) {
    // Without memory to note it, the capture's work is drawn as device work.
  }
}

void TraceLayer::captureEnded(DeviceType type, std::uint64_t graph) noexcept {
  std::lock_guard lock(captures_mutex_);
  if (capture_streams_.erase({type, graph}) != 0)
    captures_.fetch_sub(1, std::memory_order_release);
}

void TraceLayer::allocated(DeviceType type, Device device, const void* ptr,
                           std::size_t bytes, bool pinned) noexcept {
  recordMemoryEvent(TraceEventKind::Allocation, type, device, ptr, bytes, pinned);
}

void TraceLayer::freed(DeviceType type, Device device, const void* ptr, std::size_t bytes,
                       bool pinned) noexcept {
  recordMemoryEvent(TraceEventKind::Free, type, device, ptr, bytes, pinned);
}

void TraceLayer::recordMemoryEvent(TraceEventKind kind, DeviceType type, Device device,
                                   const void* ptr, std::size_t bytes,
                                   bool pinned) noexcept {
  if (!recorder_.recording()) return;
  TraceEvent event;
  event.kind = kind;
  event.type = type;
  event.failed = pinned;
  event.device = pinned ? std::int8_t{-1} : static_cast<std::int8_t>(device.index());
  event.ptr = reinterpret_cast<std::uintptr_t>(ptr);
  event.bytes = bytes;
  event.begin = event.end = accel::detail::layerNowTicks();
  recorder_.record(event);
}

void TraceLayer::before(const accel::detail::TableCall&) noexcept {}

void TraceLayer::after(const accel::detail::TableCall& call,
                       std::int32_t status) noexcept {
  if (!recorder_.recording()) return;
  TraceEvent event;
  event.kind = TraceEventKind::PluginCall;
  event.type = call.type;
  event.ptr = reinterpret_cast<std::uintptr_t>(call.function.data());
  event.bytes = call.function.size();
  event.object = static_cast<std::uint32_t>(status);
  event.begin = call.begin_ticks;
  event.end = accel::detail::layerNowTicks();
  recorder_.record(event);
}

void TraceLayer::started() {
  origin_ns_ = traceNowNs();
  history_.clear();
  accel::detail::addHookLayer(*this);
  try {
    accel::detail::addTableObserver(*this);
  } catch (...) {
    accel::detail::removeHookLayer(*this);
    throw;
  }
}

void TraceLayer::stopped() noexcept {
  accel::detail::removeTableObserver(*this);
  accel::detail::removeHookLayer(*this);
  // The work still in flight is waited for: a profiler's stop is a
  // synchronisation point, and its spans belong to this trace.
  timing_.resolve(true, true,
                  [this](const TraceEvent& done) { recorder_.pushFinished(done); });
  timing_.release();
  history_.stop(origin_ns_);
}

void TraceLayer::complete(TraceContents& contents) noexcept {
  std::vector<TraceEvent> late;
  timing_.resolve(false, false, [&](const TraceEvent& done) {
    try {
      late.push_back(done);
    } catch (...) {
    }
  });
  for (TraceEvent& event : late) recorder_.pushFinished(event);
  try {
    contents.events.insert(contents.events.end(), late.begin(), late.end());
  } catch (...) {
  }
  timing_.appendPendingHostTimed(contents.events);
  history_.collect(origin_ns_, contents.memory);
}

void startTraceFromEnvironment(const std::string& value) noexcept {
  if (value.empty()) return;
  for (const char* flag : {"1", "0", "on", "off", "true", "false", "yes", "no"}) {
    if (value == flag) {
      std::fprintf(
          stderr,
          "accel: ACCEL_TRACE='%s' is not a file path; it takes the path of the "
          "trace to write (ACCEL_TRACE=trace.json) or nothing; tracing stays off\n",
          value.c_str());
      return;
    }
  }
  try {
    (void)TraceLayer::instance();
    TraceOptions options;
    options.path = value;
    trace::start(options);
  } catch (const Error& e) {
    std::fprintf(stderr, "accel: ACCEL_TRACE='%s': %s; tracing stays off\n",
                 value.c_str(), e.message().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accel: ACCEL_TRACE='%s': %s; tracing stays off\n",
                 value.c_str(), e.what());
  }
}

}  // namespace accel::trace::detail
