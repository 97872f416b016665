// OpenClBackend: the opencl backend as the core sees it through the plugin
// boundary (accel/plugin_adapter.h): an asynchronous backend declaring the
// device, streams, events, memory, memory_history, graphs and copies groups,
// on the OpenCL ICD loader (opened lazily, loader.h).
//
// A thin layer: the core has validated device indices, streams and groups,
// and run init, when a function here runs; each one delegates to the part
// that owns it (streams.h, events.h, graphs.h, copies.cpp). The core keeps
// the rest: the caching device allocator and the pinned cache over the
// backend's memory (svm_memory.h, pinned_memory.h, with the backend's events
// so that a block a queue may still use is not reused), the memory and
// memory_history groups, pointer queries and allocators; the Philox
// generators; the graphs' private pools. The backend keeps the current
// device and streams itself (thread_current.h): a wrapped external queue is
// a stream the core never handed out, and must be usable as the current one.
//
// Probes (isAvailable, deviceCount, hasPrimaryContext) read the discovery
// (devices.h), which creates no context. init() throws InvalidArgument for a
// malformed ACCEL_OPENCL_DEVICES; without devices the core refuses every
// hook that needs one.
//
// Graphs are declared whatever the devices (registration must not discover
// them: autoload registers the plugin without listing devices); a device
// without a cl_khr_command_buffer the backend can use refuses
// graphCaptureBegin with NotSupported naming it and what it lacks
// (command_buffers.h), and showConfig says which.
//
// Thread-safety: every function is thread-safe. Lifetime: registered once,
// never destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "accel/adapter/backend.h"
#include "types.h"

namespace accel::opencl::detail {

class OpenClBackend final : public adapter::Backend {
 public:
  [[nodiscard]] bool isAvailable() const override;
  // What the discovery found missing (devices.h).
  [[nodiscard]] std::string unavailableReason() const override;
  [[nodiscard]] int deviceCount() const override;
  void init() override;
  [[nodiscard]] bool answersPrimaryContext() const override { return true; }
  [[nodiscard]] bool hasPrimaryContext(std::int8_t device) const override;
  [[nodiscard]] adapter::Memory& deviceMemory() override;
  [[nodiscard]] adapter::Memory& pinnedMemory() override;

  [[nodiscard]] bool keepsCurrent() const override { return true; }
  [[nodiscard]] std::int8_t currentDevice() const override;
  void setCurrentDevice(std::int8_t device) override;
  [[nodiscard]] std::int64_t currentStream(std::int8_t device) const override;
  // Refuses an id that no pool or wrapped queue has.
  void setCurrentStream(Stream stream) override;

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

  // The copies group (copies.cpp).
  void copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                        Stream stream) override;
  void copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                        Stream stream) override;
  void copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                          Stream stream) override;

  // The fill group (device_fill.cpp).
  void fill(Stream stream, std::int32_t kind, void* data, std::uint64_t count, double a,
            double b, accel_generator* generator) override;
};

}  // namespace accel::opencl::detail

namespace accel::opencl::detail {

// The backend the plugin registered (plugin_entry.cpp), for the extension
// interface (extension.h), which needs its core. Throws NotAvailable before
// the registration.
[[nodiscard]] OpenClBackend& registeredBackend();
void setRegisteredBackend(OpenClBackend& backend) noexcept;

}  // namespace accel::opencl::detail
