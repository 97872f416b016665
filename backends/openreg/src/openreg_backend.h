// OpenRegBackend: openreg's backend as the core sees it through the plugin
// boundary (accel/plugin_adapter.h): an asynchronous backend declaring the
// device, streams, events, memory, memory_history, graphs and copies groups.
//
// A thin layer: the core has already validated device indices, streams and
// capability groups, and has run init once (which opens the device table),
// when a function here runs; each one delegates to the part that does the
// work. The core keeps the rest: the caching device allocator and the pinned
// cache over openreg's raw memory (DeviceSegments, PinnedPages), with the
// memory and memory_history groups, pointer queries and allocators; the
// Philox generators; the graphs' private pools; the current device and
// streams. The probes (isAvailable, deviceCount, hasPrimaryContext) never
// initialise anything: they read the configuration, or state that exists
// only once init has run.
//
// How it is put together: the plugin entry (plugin_entry.cpp) creates the
// backend with the environment its configuration is read from, and the
// adapter's Registrar attaches the core (BackendBase::core()) before the
// core sees it. The backend owns its parts by value and hands each, at
// construction, only what it uses:
//
//   ForkState       nothing (the after-fork handler marks it)
//   DeviceTable     the core's services, the ForkState
//   Events          the DeviceTable
//   Graphs          the DeviceTable, the core's services
//   Copies          the DeviceTable
//   DeviceSegments  the DeviceTable, the page size
//   PinnedPages     the Events
//
// The core, held by the base class, is the one the Registrar attaches; the
// parts keep a reference to it, so they see it linked from registration on.
// init() is the one way the devices come up: the core runs it (through the
// hooks, or Context::lazyInitDevice) before any hook that needs them, and
// openreg's own API asks the core to run it before calling the extension
// interface (extension.h), which refuses an uninitialised backend.
//
// Thread-safety: every function is thread-safe. Lifetime: registered once
// and never destroyed (the adapter keeps a registered backend for the rest
// of the process); one the core refuses is destroyed before init could run.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "accel/adapter/backend.h"
#include "accel/openreg/config.h"
#include "copies.h"
#include "device_memory.h"
#include "device_table.h"
#include "events.h"
#include "fork_state.h"
#include "graphs.h"
#include "pinned_memory.h"
#include "types.h"

namespace accel::openreg::detail {

class OpenRegBackend final : public adapter::Backend {
 public:
  // `environment` is where openreg's configuration (ACCEL_OPENREG_*) is
  // read: once by the probes, and again by each init attempt, so that an
  // init that failed on a malformed variable succeeds once it is fixed.
  explicit OpenRegBackend(EnvironmentLookup environment);
  OpenRegBackend(const OpenRegBackend&) = delete;
  OpenRegBackend& operator=(const OpenRegBackend&) = delete;

  [[nodiscard]] bool isAvailable() const override;
  [[nodiscard]] int deviceCount() const override;
  void init() override;
  [[nodiscard]] bool answersPrimaryContext() const override { return true; }
  [[nodiscard]] bool hasPrimaryContext(std::int8_t device) const override;
  [[nodiscard]] adapter::Memory& deviceMemory() override;
  [[nodiscard]] adapter::Memory& pinnedMemory() override;

  void synchronizeDevice(std::int8_t device) override;
  [[nodiscard]] std::string showConfig() const override;
  [[nodiscard]] adapter::Properties properties(std::int8_t device) const override;

  [[nodiscard]] std::int64_t defaultStream(std::int8_t device) override;
  [[nodiscard]] std::int64_t createStream(std::int8_t device, int priority) override;
  [[nodiscard]] bool queryStream(Stream stream) override;
  void synchronizeStream(Stream stream) override;
  [[nodiscard]] std::pair<int, int> priorityRange(std::int8_t device) override;

  [[nodiscard]] std::uint64_t createEvent(std::int8_t device,
                                          std::uint32_t flags) override;
  void destroyEvent(std::uint64_t event) noexcept override;
  void recordEvent(std::uint64_t event, Stream stream) override;
  void blockStream(std::uint64_t event, Stream stream) override;
  [[nodiscard]] bool queryEvent(std::uint64_t event) override;
  void synchronizeEvent(std::uint64_t event) override;
  [[nodiscard]] double elapsedMs(std::uint64_t start, std::uint64_t end) override;

  [[nodiscard]] std::uint64_t createGraph(bool keep_graph) override;
  void destroyGraph(std::uint64_t graph) override;
  void captureBegin(std::uint64_t graph, Stream stream, int mode) override;
  void captureEnd(std::uint64_t graph) override;
  void instantiateGraph(std::uint64_t graph) override;
  void replayGraph(std::uint64_t graph) override;
  void resetGraph(std::uint64_t graph) override;

  void copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                        Stream stream) override;
  void copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                        Stream stream) override;
  void copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                          Stream stream) override;

  // The fill group: the core's reference fill run as a kernel on the
  // stream's worker (device_fill.cpp).
  void fill(Stream stream, std::int32_t kind, void* data, std::uint64_t count, double a,
            double b, accel_generator* generator) override;

  // ---- for openreg's extension interface (extension.cpp), which reaches
  // the registered backend through registered_backend.h, and the after-fork
  // handler there (forkState) ----

  // True once init() succeeded. Never throws.
  [[nodiscard]] bool initialized() const noexcept {
    return initialized_.load(std::memory_order_acquire);
  }
  // The configuration init read. Only after initialized().
  [[nodiscard]] const Config& config() const noexcept { return config_; }
  [[nodiscard]] ForkState& forkState() noexcept { return fork_; }
  [[nodiscard]] DeviceTable& devices() noexcept { return devices_; }
  [[nodiscard]] const DeviceTable& devices() const noexcept { return devices_; }
  [[nodiscard]] Copies& copies() noexcept { return copies_; }

 private:
  // Device count from the configuration, without initialising; 0 when the
  // environment is malformed (init reports it). Never throws.
  [[nodiscard]] int probeDeviceCount() const noexcept;
  // A host -> device or device -> host copy: refuses a host side in
  // openreg's device range, and waits unless it is pinned.
  void copyWithHost(HookId hook, void* dst, const void* src, std::size_t bytes,
                    Stream stream, const void* host, const char* host_name);
  // Throws DeviceError in a fork child, naming `hook`: the core ran init
  // before any function that calls this, so only the fork is left to check.
  void checkNotForkedChild(HookId hook) const { fork_.check(name(hook)); }

  const EnvironmentLookup environment_;
  ForkState fork_;
  std::mutex init_mutex_;
  std::atomic<bool> initialized_{false};
  mutable std::once_flag probe_once_;
  mutable int probe_device_count_ = 0;
  Config config_;  // written by init before initialized_
  DeviceTable devices_;
  Events events_;
  Graphs graphs_;
  Copies copies_;
  DeviceSegments segments_;
  PinnedPages pinned_;
};

}  // namespace accel::openreg::detail
