// OpenRegBackend: openreg's backend as the core sees it through the plugin
// boundary (accel/plugin_adapter.h): an asynchronous backend declaring the
// device, streams, events, memory, memory_history, graphs and copies groups.
//
// A thin layer: the core has already validated device indices, streams and
// capability groups, and has run init once (which initialises openreg's
// runtime), when a function here runs; each one delegates to the runtime.
// The core keeps the rest: the caching device allocator and the pinned cache
// over openreg's raw memory (DeviceSegments, PinnedPages), with the memory
// and memory_history groups, pointer queries and allocators; the Philox
// generators; the graphs' private pools; the current device and streams.
// The probes (isAvailable, deviceCount, hasPrimaryContext) never initialise
// anything: they read the configuration, or state that exists only once the
// runtime does.
//
// Thread-safety: every function is thread-safe. Lifetime: registered once
// and never destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "accel/adapter/backend.h"
#include "types.h"

namespace accel::openreg::detail {

class Runtime;

class OpenRegBackend final : public adapter::Backend {
 public:
  OpenRegBackend();

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

 private:
  // A host -> device or device -> host copy through the runtime: refuses a
  // host side in openreg's device range, and waits unless it is pinned.
  void copyWithHost(HookId hook, void* dst, const void* src, std::size_t bytes,
                    Stream stream, const void* host, const char* host_name);
  // The runtime, initialised by init (the core runs it before any function
  // that needs it). Throws DeviceError in a fork child, naming `hook`.
  [[nodiscard]] Runtime& runtime(HookId hook) const;
};

}  // namespace accel::openreg::detail
