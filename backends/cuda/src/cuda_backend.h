// CudaBackend: the cuda backend as the core sees it through the plugin
// boundary (accel/plugin_adapter.h): an asynchronous backend on the CUDA
// runtime (linked statically) and the driver (opened lazily, driver.h),
// declaring the device, streams, events, memory, memory_history, graphs,
// copies and fill groups.
//
// A thin layer: the core has validated device indices, streams and groups,
// and run init, when a function here runs; each one delegates to the part
// that owns it (streams.h, events.h, graphs.h, copies.cpp, fill.cpp). The
// core keeps the rest: the caching device allocator and the pinned cache
// over the backend's memory (device_memory.h, with its stream events so that
// a block a stream may still use is not reused, and its deferrals while a
// capture is underway), the memory and memory_history groups, the Philox
// generators, the graphs' private pools (a stream forked into a capture
// joins its pool: capture_registry.h). The backend keeps the current device
// and streams itself (keepsCurrent): CUDA's current device follows the
// thread's context, and a wrapped external stream is a stream the core
// never handed out that must be usable as the current one.
//
// Probes (isAvailable, deviceCount, hasPrimaryContext) read the driver probe
// and driver queries that create no context. Without devices init succeeds
// (the hooks contract) and every function that needs one throws NotAvailable
// with the probe's reason. docs/cuda.md maps each function to the runtime
// and driver calls behind it.
//
// Thread-safety: every function is thread-safe. Lifetime: registered once,
// never destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "accel/adapter/backend.h"

namespace accel::cuda::detail {

// Hidden like its adapter base, also where the backend's sources are built
// with default visibility (the test build).
#pragma GCC visibility push(hidden)

class CudaBackend final : public adapter::Backend {
 public:
  [[nodiscard]] bool isAvailable() const override;
  // The driver probe's reason (driver.h).
  [[nodiscard]] std::string unavailableReason() const override;
  [[nodiscard]] int deviceCount() const override;
  [[nodiscard]] bool answersPrimaryContext() const override { return true; }
  [[nodiscard]] bool hasPrimaryContext(std::int8_t device) const override;
  [[nodiscard]] adapter::Memory& deviceMemory() override;
  [[nodiscard]] adapter::Memory& pinnedMemory() override;

  [[nodiscard]] bool keepsCurrent() const override { return true; }
  [[nodiscard]] std::int8_t currentDevice() const override;
  void setCurrentDevice(std::int8_t device) override;
  [[nodiscard]] std::int64_t currentStream(std::int8_t device) const override;
  // Refuses an id that no pool or wrapped stream has.
  void setCurrentStream(adapter::Stream stream) override;

  void synchronizeDevice(std::int8_t device) override;
  [[nodiscard]] std::string showConfig() const override;
  [[nodiscard]] adapter::Properties properties(std::int8_t device) const override;

  [[nodiscard]] std::int64_t createStream(std::int8_t device, int priority) override;
  [[nodiscard]] bool queryStream(adapter::Stream stream) override;
  void synchronizeStream(adapter::Stream stream) override;
  [[nodiscard]] std::pair<int, int> priorityRange(std::int8_t device) override;

  [[nodiscard]] std::uint64_t createEvent(std::int8_t device,
                                          std::uint32_t flags) override;
  void destroyEvent(std::uint64_t event) noexcept override;
  void recordEvent(std::uint64_t event, adapter::Stream stream) override;
  void blockStream(std::uint64_t event, adapter::Stream stream) override;
  [[nodiscard]] bool queryEvent(std::uint64_t event) override;
  void synchronizeEvent(std::uint64_t event) override;
  [[nodiscard]] double elapsedMs(std::uint64_t start, std::uint64_t end) override;

  [[nodiscard]] std::uint64_t createGraph(bool keep_graph) override;
  void destroyGraph(std::uint64_t graph) override;
  void captureBegin(std::uint64_t graph, adapter::Stream stream, int mode) override;
  void captureEnd(std::uint64_t graph) override;
  void instantiateGraph(std::uint64_t graph) override;
  void replayGraph(std::uint64_t graph) override;
  void resetGraph(std::uint64_t graph) override;

  // The copies group (copies.cpp).
  void copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                        adapter::Stream stream) override;
  void copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                        adapter::Stream stream) override;
  void copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                          adapter::Stream stream) override;

  // The fill group (fill.cpp).
  void fill(adapter::Stream stream, std::int32_t kind, void* data, std::uint64_t count,
            double a, double b, accel_generator* generator) override;
};

#pragma GCC visibility pop

// Throws NotAvailable naming the probe's reason unless the driver found
// devices. Every function that needs a device calls it first.
void requireAvailable();

}  // namespace accel::cuda::detail
