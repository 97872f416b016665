// Internal: a C plugin's tables as the core keeps them — copied once, at
// registration, reading only what each table's size and the negotiated
// version cover; what lies past them is null ("not provided").
//
// Thread-safety: immutable after construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "accel/capabilities.h"
#include "accel/device_properties.h"
#include "accel/hook_catalogue.h"
#include "accel/kit/address_map.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "accel/memory/segment_source.h"
#include "accel/plugin_abi.h"
#include "plugins/c_plugin_hooks.h"
#include "plugins/c_plugin_link.h"

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
  accel_fill_fns fill{};  // since 1.3
  accel_segment_fns device_memory{};
  void* device_memory_ctx = nullptr;
  accel_segment_fns pinned_memory{};
  void* pinned_memory_ctx = nullptr;
  // ACCEL_BACKEND_SYNCHRONOUS: the core's synchronous-device kit answers
  // the current device, streams, events, graphs and copies.
  bool synchronous = false;
  int synchronous_device_count = 0;  // asked at registration

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
  // Records each segment in `addresses` while it lives, as `kind` memory
  // (for the synchronous kit's pointer queries and copy checks). Call
  // before the first allocation.
  void recordIn(kit::AddressMap& addresses, kit::MemoryKind kind) noexcept {
    addresses_ = &addresses;
    kind_ = kind;
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
  kit::AddressMap* addresses_ = nullptr;
  kit::MemoryKind kind_ = kit::MemoryKind::Device;
};

// The core's caches over a C backend's raw memory, which both kinds of C
// backend hooks hold: built by the backend's first successful init (for the
// device count known then), published to the probes by a release store.
// Thread-safety: build() runs inside initImpl (one caller at a time); the
// rest may be called from any thread once ready().
class CoreCaches {
 public:
  explicit CoreCaches(const CPluginTables& tables)
      : tables_(tables),
        device_source_(tables, tables.device_memory, tables.device_memory_ctx),
        pinned_source_(tables, tables.pinned_memory, tables.pinned_memory_ctx) {}

  // Records the segments in `addresses` (CSegmentSource::recordIn). Call
  // from the owner's constructor.
  void recordIn(kit::AddressMap& addresses) noexcept {
    device_source_.recordIn(addresses, kit::MemoryKind::Device);
    pinned_source_.recordIn(addresses, kit::MemoryKind::Pinned);
  }
  // Builds both caches for `count` devices, unless built (a retried init).
  // Throws NotAvailable naming `backend` for no devices, and what the
  // caches' constructors throw.
  void build(std::string_view backend, int count);
  [[nodiscard]] bool ready() const noexcept {
    return ready_.load(std::memory_order_acquire);
  }
  // Once ready().
  [[nodiscard]] memory::CachingAllocator& device() const noexcept { return *device_; }
  [[nodiscard]] memory::PinnedCachingAllocator& pinned() const noexcept {
    return *pinned_;
  }
  // find_device_block: the live block holding ptr. Throws InvalidArgument
  // naming `backend` before ready() or when no live block holds it.
  [[nodiscard]] CDeviceBlock findBlock(std::string_view backend, const void* ptr) const;
  // Throws NotSupported for the capacity hooks when the plugin gives no
  // memory_info, naming its API version when memory_info came after it.
  void requireCapacity(std::string_view backend, HookId hook) const;

  // Memory of the plugin's runtime that the caches did not hand out (a
  // framework's own allocation, host memory it page-locked itself), as
  // device_memory.device_of and pinned_memory.device_of (since 1.4) answer
  // for it: asked only past the caches, one null check when the plugin
  // gives no device_of. Thread-safe; also before build() (isPinnedPtr never
  // initialises).
  //
  // The device of device memory the runtime knows; nullopt when it does not
  // know `ptr` (or gives no device_of). An answer outside the backend's
  // `count` devices is never trusted: InvalidArgument naming `backend`, the
  // plugin and the device it answered.
  [[nodiscard]] std::optional<DeviceIndex> runtimeDeviceOf(std::string_view backend,
                                                           const void* ptr,
                                                           int count) const;
  // Whether the runtime knows `ptr` as page-locked host memory. Never throws.
  [[nodiscard]] bool runtimePinned(const void* ptr) const noexcept;
  [[nodiscard]] bool asksRuntimeForDevices() const noexcept {
    return tables_.device_memory.device_of != nullptr;
  }

 private:
  const CPluginTables& tables_;
  CSegmentSource device_source_;
  CSegmentSource pinned_source_;
  std::unique_ptr<memory::CachingAllocator> device_;
  std::unique_ptr<memory::PinnedCachingAllocator> pinned_;
  std::atomic<bool> ready_{false};
};

// A probe of the plugin's (is_built, is_available, has_primary_context):
// its answer as a bool; a message it gave is dropped (a probe cannot fail).
template <typename... Args>
[[nodiscard]] bool askProbe(int32_t (*probe)(void*, Args...), void* ctx,
                            Args... args) noexcept {
  const bool answer = probe(ctx, args...) != 0;
  dropStalePluginMessage();
  return answer;
}

// What both kinds of C backend hooks answer alike from the tables.
// showConfig through a text sink; the device's properties; the refusal of
// the capacity hooks when the plugin gives no memory_info (naming its API
// version when memory_info came after it). `backend` names the device type.
// Why the plugin's backend is not available (low.unavailable_reason, since
// 1.4); empty when it has no such function or says nothing. Never throws.
[[nodiscard]] std::string unavailableReasonOf(const CPluginTables& tables) noexcept;
[[nodiscard]] std::string showConfigOf(const CPluginTables& tables,
                                       std::string_view backend);
[[nodiscard]] DeviceProperties propertiesOf(const CPluginTables& tables,
                                            std::string_view backend, DeviceIndex index);

// A Stream as the plugin ABI passes it.
[[nodiscard]] inline accel_stream toCStream(Stream stream) noexcept {
  return accel_stream{stream.id, stream.device.index()};
}

}  // namespace accel::detail
