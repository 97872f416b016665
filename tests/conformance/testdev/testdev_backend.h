// TestdevBackend: a simulated asynchronous device on the plugin adapter
// (accel::adapter::Backend), declaring every group, for `accel check` and
// for the tests of the adapter's asynchronous half. Compiled into the
// testdev plugins (testdev_plugin.cpp, broken_plugin.cpp): C++17, nothing
// of libaccel.so.
//
// Its memory is host memory; its work is not done when a call returns:
// every stream is a queue run by a worker thread (StreamEngine), so
// - copies with pinned memory and between devices are enqueued and run
//   later; a pageable source is staged before the call returns and a
//   pageable destination is waited for, as a CUDA device does;
// - events are marks in a stream's work; a stream blocked on an event
//   runs nothing after the wait until the event's mark is passed;
// - the core's caching allocator records stream events (Memory::streamEvents)
//   on both memories: a block freed while a stream may still use it comes
//   back only once that stream passed the event;
// - a graph records the copies enqueued on its capturing stream instead of
//   running them, and each replay enqueues them again on that stream.
// A Defect breaks one contract on purpose (broken_plugin.cpp), so that
// `accel check` can be shown to fail and to name the broken hook.
//
// Thread-safety: every member is thread-safe. Lifetime: registered, it
// lives for the process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "accel/plugin_adapter.h"
#include "stream_engine.h"

namespace testdev {

// The contract a TestdevBackend breaks on purpose (None: it keeps them all).
enum class Defect {
  None,
  // setCurrentDevice does nothing (the backend keeps the current device).
  SetCurrentDeviceIgnored,
  // copyDeviceToDevice writes its first byte wrong.
  DeviceToDeviceWritesWrongBytes,
  // Discovery (isAvailable, deviceCount) kills the process with SIGSEGV, as
  // a driver that crashes while listing devices: `accel info` and `accel
  // check` must survive it (docs/lifecycle.md, "Discovery").
  DiscoveryCrashes,
  // Discovery blocks for good, as a driver that hangs while loading.
  DiscoveryHangs,
  // Discovery answers, then init blocks for good.
  InitHangs,
  // The streams group is declared, but defaultStream and createStream are
  // left unwritten (the adapter's NotImplemented): `accel check` must blame
  // getDefaultStream and getNewStream, not the hook a case is about.
  StreamsWithoutDefaultOrNewStream,
};

// Every group a backend can declare.
constexpr std::uint32_t kAllGroups =
    ACCEL_GROUP_DEVICE | ACCEL_GROUP_STREAMS | ACCEL_GROUP_EVENTS | ACCEL_GROUP_MEMORY |
    ACCEL_GROUP_MEMORY_HISTORY | ACCEL_GROUP_GRAPHS | ACCEL_GROUP_COPIES;

struct Options {
  int devices = 2;
  // The backend keeps the current device and streams (keepsCurrent()).
  bool keeps_current = false;
  Defect defect = Defect::None;
};

class DeviceMemory;
class PinnedMemory;
class EngineEvents;

class TestdevBackend final : public accel::adapter::Backend {
 public:
  static constexpr std::uint64_t kMemoryBytes = std::uint64_t{1} << 30;  // per device

  // Throws InvalidArgument for a device count outside [0, 8].
  explicit TestdevBackend(Options options);
  ~TestdevBackend() override;

  // The engine, for the plugin's test controls (holding a stream).
  [[nodiscard]] StreamEngine& engine() noexcept { return *engine_; }
  // The calling thread's current device and stream as this backend keeps
  // them (keeps_current), for the plugin's test controls.
  [[nodiscard]] std::int8_t keptDevice() const noexcept;
  [[nodiscard]] std::int64_t keptStream(std::int8_t device) const noexcept;
  // The next synchronizeDevice calls `raise` (which throws) instead of
  // synchronising: a failure of the device's, for the plugin's test controls.
  void failNextSynchronize(std::function<void()> raise);

  // ---- probes and description ----
  [[nodiscard]] bool isAvailable() const override;
  [[nodiscard]] int deviceCount() const override;
  void init() override;
  [[nodiscard]] accel::adapter::Memory& deviceMemory() override;
  [[nodiscard]] accel::adapter::Memory& pinnedMemory() override;
  [[nodiscard]] std::string showConfig() const override;
  [[nodiscard]] accel::adapter::Properties properties(std::int8_t device) const override;

  // ---- current device and streams (only with keeps_current) ----
  [[nodiscard]] bool keepsCurrent() const override { return options_.keeps_current; }
  [[nodiscard]] std::int8_t currentDevice() const override;
  void setCurrentDevice(std::int8_t device) override;
  [[nodiscard]] std::int64_t currentStream(std::int8_t device) const override;
  void setCurrentStream(Stream stream) override;

  // ---- device and streams ----
  void synchronizeDevice(std::int8_t device) override;
  [[nodiscard]] std::int64_t defaultStream(std::int8_t device) override;
  [[nodiscard]] std::int64_t createStream(std::int8_t device, int priority) override;
  [[nodiscard]] bool queryStream(Stream stream) override;
  void synchronizeStream(Stream stream) override;
  [[nodiscard]] std::pair<int, int> priorityRange(std::int8_t device) override;

  // ---- events ----
  [[nodiscard]] std::uint64_t createEvent(std::int8_t device,
                                          std::uint32_t flags) override;
  void destroyEvent(std::uint64_t event) noexcept override;
  void recordEvent(std::uint64_t event, Stream stream) override;
  void blockStream(std::uint64_t event, Stream stream) override;
  [[nodiscard]] bool queryEvent(std::uint64_t event) override;
  void synchronizeEvent(std::uint64_t event) override;
  [[nodiscard]] double elapsedMs(std::uint64_t start, std::uint64_t end) override;

  // ---- graphs ----
  [[nodiscard]] std::uint64_t createGraph(bool keep_graph) override;
  void destroyGraph(std::uint64_t graph) override;
  void captureBegin(std::uint64_t graph, Stream stream, int mode) override;
  void captureEnd(std::uint64_t graph) override;
  void instantiateGraph(std::uint64_t graph) override;
  void replayGraph(std::uint64_t graph) override;
  void resetGraph(std::uint64_t graph) override;

  // ---- copies ----
  void copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                        Stream stream) override;
  void copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                        Stream stream) override;
  void copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                          Stream stream) override;

 private:
  struct Event {
    std::int8_t device = 0;
    std::uint32_t flags = 0;
    std::shared_ptr<Mark> mark;  // the last record's; null until recorded
  };
  // Ended: instantiated by captureEnd (no keep_graph); replay only.
  enum class Phase { Empty, Capturing, Captured, Instantiated, Ended };
  struct Copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  struct Graph {
    bool keep_graph = false;
    Phase phase = Phase::Empty;
    Stream stream{};
    std::vector<Copy> copies;
  };

  // The mark of recorded event `event` (null if never recorded); throws
  // InvalidArgument for an unknown id.
  [[nodiscard]] std::shared_ptr<Mark> markOf(std::uint64_t event);
  // Graph `id` in one of `phases`, graph_mutex_ held; InvalidArgument for an
  // unknown id, DeviceError for a wrong phase.
  Graph& graph(std::uint64_t id, const char* what, std::initializer_list<Phase> phases);
  // Records the copy into the graph capturing `stream` and returns true, or
  // returns false when no graph captures it. A pageable host side cannot be
  // captured (DeviceError), as on CUDA.
  bool captured(Stream stream, const Copy& copy, bool host_side_pageable);
  // The device check of a copy's stream, then the copy enqueued on it.
  void enqueueCopy(Stream stream, const Copy& copy);

  const Options options_;
  std::unique_ptr<StreamEngine> engine_;
  std::unique_ptr<EngineEvents> stream_events_;
  std::unique_ptr<DeviceMemory> device_memory_;
  std::unique_ptr<PinnedMemory> pinned_memory_;

  std::mutex event_mutex_;  // guards the two below
  std::map<std::uint64_t, Event> events_;
  std::uint64_t next_event_ = 1;

  std::mutex failure_mutex_;  // guards failure_
  std::function<void()> failure_;

  std::mutex graph_mutex_;  // guards the three below
  std::map<std::uint64_t, Graph> graphs_;
  std::map<std::pair<std::int8_t, std::int64_t>, std::uint64_t> capturing_;  // stream
  std::uint64_t next_graph_ = 1;
};

}  // namespace testdev
