// Internal: a C plugin's tables as the core keeps them — copied once, at
// registration, reading only what each table's size and the negotiated
// version cover; what lies past them is null ("not provided").
//
// Thread-safety: immutable after construction.
#pragma once

#include <cstdint>
#include <string>

#include "accel/capabilities.h"
#include "accel/memory/segment_source.h"
#include "accel/plugin_abi.h"

namespace accel::detail {

struct CPluginTables {
  std::string plugin;         // the plugin's name, for messages
  std::uint32_t version = 0;  // the negotiated plugin API version
  DeviceType type{};
  Capabilities groups;
  void* ctx = nullptr;
  accel_low_fns low{};
  accel_high_fns high{};
  accel_device_fns device{};
  accel_stream_fns streams{};
  accel_event_fns events{};
  accel_graph_fns graphs{};
  accel_copy_fns copies{};
  accel_segment_fns device_memory{};
  void* device_memory_ctx = nullptr;
  accel_segment_fns pinned_memory{};
  void* pinned_memory_ctx = nullptr;
  bool has_pinned_memory = false;

  // Whether the backend keeps its current device / current streams itself.
  [[nodiscard]] bool ownsCurrentDevice() const noexcept {
    return low.get_current_device != nullptr;
  }
  [[nodiscard]] bool ownsCurrentStream() const noexcept {
    return streams.get_current != nullptr;
  }
};

// Reads `backend` (see makeCPluginHooks for what is refused). Throws
// InvalidArgument naming the table and the function.
CPluginTables readCPluginTables(const accel_core& core, const accel_backend& backend);

// The plugin's raw memory as the core caches see it.
class CSegmentSource final : public memory::SegmentSource {
 public:
  CSegmentSource(const CPluginTables& tables, const accel_segment_fns& fns, void* ctx)
      : tables_(tables), fns_(fns), ctx_(ctx) {}

  [[nodiscard]] void* allocateSegment(DeviceIndex index, std::size_t bytes) override;
  void freeSegment(DeviceIndex index, void* ptr, std::size_t bytes) noexcept override;
  [[nodiscard]] DeviceMemoryInfo memoryInfo(DeviceIndex index) const noexcept override;
  [[nodiscard]] bool knowsCapacity() const noexcept {
    return fns_.memory_info != nullptr;
  }

  [[nodiscard]] std::size_t pageSize() const noexcept override;
  [[nodiscard]] void* reserveAddressRange(DeviceIndex index, std::size_t bytes) override;
  void releaseAddressRange(DeviceIndex index, void* base,
                           std::size_t bytes) noexcept override;
  [[nodiscard]] bool mapPages(DeviceIndex index, void* address,
                              std::size_t bytes) override;
  void unmapPages(DeviceIndex index, void* address, std::size_t bytes) noexcept override;

  [[nodiscard]] bool hasEvents() const noexcept override;
  [[nodiscard]] EventId recordEvent(Stream stream) override;
  [[nodiscard]] bool eventCompleted(EventId event) noexcept override;
  void streamWaitEvent(Stream stream, EventId event) override;
  void releaseEvent(EventId event) noexcept override;
  void synchronizeEvent(EventId event) override;

 private:
  void check(accel_status status, const char* function) const;

  const CPluginTables& tables_;
  accel_segment_fns fns_;
  void* ctx_;
};

// A Stream as the plugin ABI passes it.
[[nodiscard]] inline accel_stream toCStream(Stream stream) noexcept {
  return accel_stream{stream.id, stream.device.index()};
}

}  // namespace accel::detail
