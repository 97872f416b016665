// TraceLayer: the hook layer (layers/hook_layer.h) that records a trace:
// every hook call as a span of its thread, the work copies, fills and graph
// replays enqueue on a stream (timed by DeviceTiming), synchronisations on
// their stream, graph captures, allocations and frees through the hooks'
// allocators, and (AllocatorHistory) the caching allocator's own events.
// Added to the hook layers when a trace starts, removed when it stops.
//
// A C plugin registered while a trace is on (from ACCEL_TRACE, which starts
// before the first registration) also has its table functions traced, each
// a span nested in the hook that called it (or on its own, for the calls
// the core makes without a hook: its caches' segments, free events).
//
// Cost while tracing: per hook call one ring push and two steady-clock
// reads (the decorator's and the end's); work hooks also record two events
// on their stream. Off, the layer is not in the call path at all.
//
// Thread-safety: the callbacks run on any thread, concurrently.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "layers/hook_layer.h"
#include "layers/table_layer.h"
#include "layers/trace/allocator_history.h"
#include "layers/trace/device_timing.h"
#include "layers/trace/trace_recorder.h"

namespace accel::trace::detail {

class TraceLayer final : public accel::detail::HookLayer,
                         public accel::detail::TableObserver,
                         public TraceSources {
 public:
  // The process's layer, attached to TraceRecorder::instance(); never destroyed.
  static TraceLayer& instance();

  void before(const accel::detail::HookCall& call) override;
  void after(const accel::detail::HookCall& call, bool failed) noexcept override;
  void allocated(DeviceType type, Device device, const void* ptr, std::size_t bytes,
                 bool pinned) noexcept override;
  void freed(DeviceType type, Device device, const void* ptr, std::size_t bytes,
             bool pinned) noexcept override;

  // A C plugin's own functions (tables copied with trampolines when the
  // plugin registered while a trace was on: ACCEL_TRACE).
  void before(const accel::detail::TableCall& call) noexcept override;
  void after(const accel::detail::TableCall& call, std::int32_t status) noexcept override;

  void started() override;
  void stopped() noexcept override;
  void complete(TraceContents& contents) noexcept override;

 private:
  explicit TraceLayer(TraceRecorder& recorder) : recorder_(recorder) {}

  // Streams being captured (graphCaptureBegin .. graphCaptureEnd): work
  // enqueued there is recorded into the graph, not run, so it is no device
  // work of its own (the replay is).
  [[nodiscard]] bool capturing(const Stream& stream) const noexcept;
  void captureBegan(std::uint64_t graph, const Stream& stream) noexcept;
  void captureEnded(DeviceType type, std::uint64_t graph) noexcept;
  // An allocation or free through the hooks' allocators (pinned: host memory).
  void recordMemoryEvent(TraceEventKind kind, DeviceType type, Device device,
                         const void* ptr, std::size_t bytes, bool pinned) noexcept;

  TraceRecorder& recorder_;
  std::atomic<int> captures_{0};  // how many are in progress: the fast check
  mutable std::mutex captures_mutex_;
  std::map<std::pair<DeviceType, std::uint64_t>, Stream> capture_streams_;
  DeviceTiming timing_;
  AllocatorHistory history_;
  std::int64_t origin_ns_ = 0;
};

// Starts the trace ACCEL_TRACE names (layers/layer_settings.h), at the first
// backend's registration. A value that is no usable path leaves tracing off
// with one line on stderr naming the variable, its value and why. Never throws.
void startTraceFromEnvironment(const std::string& value) noexcept;

}  // namespace accel::trace::detail
