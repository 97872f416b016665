// Reading a C plugin's backend description (accel/plugin_abi.h) into the
// tables the core keeps, and the plugin's raw memory as a SegmentSource.
#include "plugins/c_plugin_tables.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <utility>

#include "accel/device_fill.h"
#include "accel/error.h"
#include "accel/memory/allocator_settings.h"
#include "hooks/host_type.h"
#include "plugins/c_plugin_link.h"

namespace accel::detail {
namespace {

// The group bits are HookGroup's order, so that they convert as they are.
static_assert(ACCEL_GROUP_LOW == 1u << static_cast<unsigned>(HookGroup::Low) &&
              ACCEL_GROUP_HIGH == 1u << static_cast<unsigned>(HookGroup::High) &&
              ACCEL_GROUP_DEVICE == 1u << static_cast<unsigned>(HookGroup::Device) &&
              ACCEL_GROUP_STREAMS == 1u << static_cast<unsigned>(HookGroup::Streams) &&
              ACCEL_GROUP_EVENTS == 1u << static_cast<unsigned>(HookGroup::Events) &&
              ACCEL_GROUP_MEMORY == 1u << static_cast<unsigned>(HookGroup::Memory) &&
              ACCEL_GROUP_MEMORY_HISTORY ==
                  1u << static_cast<unsigned>(HookGroup::MemoryHistory) &&
              ACCEL_GROUP_GRAPHS == 1u << static_cast<unsigned>(HookGroup::Graphs) &&
              ACCEL_GROUP_COPIES == 1u << static_cast<unsigned>(HookGroup::Copies) &&
              ACCEL_GROUP_FILL == 1u << static_cast<unsigned>(HookGroup::Fill));

static_assert(
    static_cast<std::int32_t>(DeviceFill::Bits32) == ACCEL_FILL_BITS32 &&
        static_cast<std::int32_t>(DeviceFill::Bits64) == ACCEL_FILL_BITS64 &&
        static_cast<std::int32_t>(DeviceFill::UniformFloat) == ACCEL_FILL_UNIFORM_FLOAT &&
        static_cast<std::int32_t>(DeviceFill::UniformDouble) ==
            ACCEL_FILL_UNIFORM_DOUBLE &&
        static_cast<std::int32_t>(DeviceFill::NormalFloat) == ACCEL_FILL_NORMAL_FLOAT &&
        static_cast<std::int32_t>(DeviceFill::NormalDouble) == ACCEL_FILL_NORMAL_DOUBLE &&
        static_cast<std::int32_t>(DeviceFill::BernoulliU8) == ACCEL_FILL_BERNOULLI_U8 &&
        static_cast<std::int32_t>(DeviceFill::BernoulliFloat) ==
            ACCEL_FILL_BERNOULLI_FLOAT,
    "DeviceFill's values are the plugin ABI's ACCEL_FILL_* kinds");

// No table of this ABI is anywhere near this size: a larger struct_size is
// not a newer plugin's longer table but a wrong pointer or an unset field.
constexpr std::uint32_t kAbsurdTableSize = 1u << 16;

// Copies `*table` up to what both sides know, rounded down to whole fields
// (every field of every table is at most 8 bytes, aligned to its size), and
// leaves the rest null. Reads nothing past table->struct_size.
template <typename Table>
void copyTable(Table& out, const Table* table, const std::string& plugin,
               const char* what) {
  out = Table{};
  if (table == nullptr) return;
  const std::uint32_t size = table->struct_size;
  ACCEL_CHECK(size >= sizeof(std::uint64_t) && size < kAbsurdTableSize, InvalidArgument,
              "the plugin '", plugin, "' registered a backend whose ", what,
              " table has struct_size ", size,
              "; set struct_size to sizeof the table from accel/plugin_abi.h");
  std::size_t bytes = std::min<std::size_t>(size, sizeof(Table));
  bytes -= bytes % alignof(Table);
  std::memcpy(static_cast<void*>(&out), static_cast<const void*>(table), bytes);
  out.struct_size = size;
}

// Refuses a table of a declared group that lacks a function the group needs.
void requireFunctions(const std::string& plugin, const char* table,
                      std::initializer_list<std::pair<const char*, bool>> functions) {
  for (const auto& [name, present] : functions) {
    ACCEL_CHECK(present, InvalidArgument, "the plugin '", plugin,
                "' registered a backend whose ", table, " table has no ", name,
                " function, which the table's group needs");
  }
}

// Refuses a set of functions that are provided together or not at all.
void requireAllOrNone(const std::string& plugin, const char* table, const char* set,
                      std::initializer_list<bool> present) {
  const auto count = std::count(present.begin(), present.end(), true);
  ACCEL_CHECK(count == 0 || count == static_cast<long>(present.size()), InvalidArgument,
              "the plugin '", plugin, "' registered a backend whose ", table,
              " table provides part of ", set, "; provide all of them or none");
}

void readSegments(accel_segment_fns& out, const accel_segment_fns* fns,
                  const CPluginTables& t, const char* what) {
  copyTable(out, fns, t.plugin, what);
  if (t.version < ACCEL_PLUGIN_ABI_VERSION(1, 1)) out.memory_info = nullptr;
  if (t.version < ACCEL_PLUGIN_ABI_VERSION(1, 2)) {
    out.check_allocation = nullptr;
    out.out_of_memory_advice = nullptr;
  }
  if (t.version < ACCEL_PLUGIN_ABI_VERSION(1, 4)) out.device_of = nullptr;
  requireFunctions(t.plugin, what,
                   {{"allocate_segment", out.allocate_segment != nullptr},
                    {"free_segment", out.free_segment != nullptr}});
  requireAllOrNone(
      t.plugin, what, "page mapping (page_size and its four functions)",
      {out.page_size > 0, out.reserve_range != nullptr, out.release_range != nullptr,
       out.map_pages != nullptr, out.unmap_pages != nullptr});
  requireAllOrNone(t.plugin, what, "the events (record_event and its four companions)",
                   {out.record_event != nullptr, out.event_completed != nullptr,
                    out.stream_wait_event != nullptr, out.release_event != nullptr,
                    out.synchronize_event != nullptr});
}

// device_of (since 1.4) of `fns`: true, with `device`, when the plugin's
// runtime knows `ptr` as memory of that kind; any answer but 1 is no. A
// probe cannot fail: a message it gave is dropped.
bool askDeviceOf(const accel_segment_fns& fns, void* ctx, const void* ptr,
                 std::int8_t& device) noexcept {
  if (fns.device_of == nullptr) return false;
  const bool known = fns.device_of(ctx, ptr, &device) == 1;
  dropStalePluginMessage();
  return known;
}

}  // namespace

CPluginTables readCPluginTables(const accel_core& core, const accel_backend& backend) {
  CPluginTables t;
  t.plugin = core.plugin;
  t.version = core.negotiated;
  accel_backend b{};
  copyTable(b, &backend, t.plugin, "accel_backend");
  ACCEL_CHECK(ACCEL_ABI_HAS_FIELD(accel_backend, b.struct_size, pinned_memory_ctx),
              InvalidArgument, "the plugin '", t.plugin,
              "' registered an accel_backend of struct_size ", b.struct_size,
              ", too short for plugin API 1.0 (", sizeof(accel_backend),
              " bytes); set struct_size to sizeof(accel_backend)");

  const int type_id = b.device_type;
  ACCEL_CHECK(type_id >= 0 && type_id < kMaxDeviceTypes &&
                  isValidDeviceType(static_cast<DeviceType>(type_id)),
              InvalidArgument, "the plugin '", t.plugin,
              "' registered a backend for device type ", type_id,
              ", which is not registered; pass the id register_device_type gave");
  t.type = static_cast<DeviceType>(type_id);
  refuseHostType(t.type, "register_backend", concat("plugin '", t.plugin, "'"));
  t.ctx = b.ctx;

  ACCEL_CHECK(b.low != nullptr && b.high != nullptr, InvalidArgument, "the plugin '",
              t.plugin, "' registered a backend without its ",
              b.low == nullptr ? "low" : "high",
              " table; every backend provides the low and high groups");
  ACCEL_CHECK(b.device_memory != nullptr && b.pinned_memory != nullptr, InvalidArgument,
              "the plugin '", t.plugin, "' registered a backend without ",
              b.device_memory == nullptr ? "device_memory" : "pinned_memory",
              "; the core's caches draw the device and pinned allocators' memory from "
              "device_memory and pinned_memory, and both are required");

  std::uint32_t groups = b.groups;
  // The fill group is 1.3's: a plugin that answered an older version, or
  // whose accel_backend has no fill member, declares nothing of it.
  if (t.version < ACCEL_PLUGIN_ABI_VERSION(1, 3) ||
      !ACCEL_ABI_HAS_FIELD(accel_backend, b.struct_size, fill)) {
    groups &= ~static_cast<std::uint32_t>(ACCEL_GROUP_FILL);
    b.fill = nullptr;
  }
  t.groups = Capabilities::fromBits(groups);

  t.synchronous = (b.flags & ACCEL_BACKEND_SYNCHRONOUS) != 0;
  copyTable(t.low, b.low, t.plugin, "low");
  if (t.version < ACCEL_PLUGIN_ABI_VERSION(1, 4)) t.low.unavailable_reason = nullptr;
  requireFunctions(t.plugin, "low",
                   {{"is_built", t.low.is_built != nullptr},
                    {"is_available", t.low.is_available != nullptr},
                    {"device_count", t.low.device_count != nullptr}});
  requireAllOrNone(
      t.plugin, "low", "get_current_device and set_current_device",
      {t.low.get_current_device != nullptr, t.low.set_current_device != nullptr});
  copyTable(t.high, b.high, t.plugin, "high");
  // The table's function is named as the hook it serves.
  requireFunctions(t.plugin, "high",
                   {{hookInfo(HookId::init).name.data(), t.high.init != nullptr}});

  // A synchronous backend's current device, streams, events, graphs and
  // copies are the core's kit: those tables are not read.
  if (t.synchronous) {
    t.low.get_current_device = nullptr;
    t.low.set_current_device = nullptr;
    const int count = t.low.device_count(t.ctx);
    t.synchronous_device_count =
        count < 0 ? 0 : std::min(count, static_cast<int>(kMaxDevicesPerType));
  }
  auto declared = [&](HookGroup group, const void* table, const char* name) {
    if (!t.groups.has(group)) return false;
    if (t.synchronous && group != HookGroup::Device) return false;
    ACCEL_CHECK(table != nullptr, InvalidArgument, "the plugin '", t.plugin,
                "' declares the ", hookGroupName(group), " group but gave no ", name,
                " table");
    return true;
  };
  if (declared(HookGroup::Device, b.device, "device")) {
    copyTable(t.device, b.device, t.plugin, "device");
    // A synchronous backend's deviceSynchronize is the kit's (nothing is
    // ever pending): its synchronize is not called, so not required.
    requireFunctions(t.plugin, "device",
                     {{"synchronize", t.synchronous || t.device.synchronize != nullptr},
                      {"show_config", t.device.show_config != nullptr},
                      {"properties", t.device.properties != nullptr}});
  }
  if (declared(HookGroup::Streams, b.streams, "streams")) {
    copyTable(t.streams, b.streams, t.plugin, "streams");
    requireFunctions(t.plugin, "streams",
                     {{"get_default", t.streams.get_default != nullptr},
                      {"create", t.streams.create != nullptr},
                      {"query", t.streams.query != nullptr},
                      {"synchronize", t.streams.synchronize != nullptr},
                      {"priority_range", t.streams.priority_range != nullptr}});
    requireAllOrNone(
        t.plugin, "streams", "get_current and set_current",
        {t.streams.get_current != nullptr, t.streams.set_current != nullptr});
  }
  if (declared(HookGroup::Events, b.events, "events")) {
    copyTable(t.events, b.events, t.plugin, "events");
    requireFunctions(t.plugin, "events",
                     {{"create", t.events.create != nullptr},
                      {"destroy", t.events.destroy != nullptr},
                      {"record", t.events.record != nullptr},
                      {"block", t.events.block != nullptr},
                      {"query", t.events.query != nullptr},
                      {"synchronize", t.events.synchronize != nullptr},
                      {"elapsed_ms", t.events.elapsed_ms != nullptr}});
  }
  if (declared(HookGroup::Graphs, b.graphs, "graphs")) {
    copyTable(t.graphs, b.graphs, t.plugin, "graphs");
    if (t.version < ACCEL_PLUGIN_ABI_VERSION(1, 1)) t.graphs.prepare_replay = nullptr;
    requireFunctions(t.plugin, "graphs",
                     {{"create", t.graphs.create != nullptr},
                      {"destroy", t.graphs.destroy != nullptr},
                      {"capture_begin", t.graphs.capture_begin != nullptr},
                      {"capture_end", t.graphs.capture_end != nullptr},
                      {"instantiate", t.graphs.instantiate != nullptr},
                      {"replay", t.graphs.replay != nullptr},
                      {"reset", t.graphs.reset != nullptr}});
  }
  if (declared(HookGroup::Copies, b.copies, "copies")) {
    copyTable(t.copies, b.copies, t.plugin, "copies");
    requireFunctions(t.plugin, "copies",
                     {{"host_to_device", t.copies.host_to_device != nullptr},
                      {"device_to_host", t.copies.device_to_host != nullptr},
                      {"device_to_device", t.copies.device_to_device != nullptr}});
  }
  if (declared(HookGroup::Fill, b.fill, "fill")) {
    copyTable(t.fill, b.fill, t.plugin, "fill");
    requireFunctions(t.plugin, "fill", {{"fill", t.fill.fill != nullptr}});
  }
  readSegments(t.device_memory, b.device_memory, t, "device_memory");
  t.device_memory_ctx = b.device_memory_ctx;
  readSegments(t.pinned_memory, b.pinned_memory, t, "pinned_memory");
  t.pinned_memory_ctx = b.pinned_memory_ctx;
  return t;
}

// ---- CSegmentSource ----

void CSegmentSource::check(accel_status status, const char* function) const {
  if (status != ACCEL_OK) [[unlikely]]
    throwPluginStatus(status, tables_.plugin, function);
  dropStalePluginMessage();
}

void* CSegmentSource::allocateSegment(DeviceIndex index, std::size_t bytes) {
  void* out = nullptr;
  const accel_status status = fns_.allocate_segment(ctx_, index, bytes, &out);
  // Out of memory is a null segment: the cache frees what it holds and retries.
  if (status == ACCEL_ERROR_OUT_OF_MEMORY) {
    clearPluginError();
    return nullptr;
  }
  check(status, "allocate_segment");
  if (out != nullptr && addresses_ != nullptr) {
    try {
      addresses_->insert(out, bytes,
                         kind_ == kit::MemoryKind::Pinned ? Device(DeviceType::CPU)
                                                          : Device(tables_.type, index),
                         kind_);
    } catch (...) {
      fns_.free_segment(ctx_, index, out, bytes);
      throw;
    }
  }
  return out;
}

void CSegmentSource::freeSegment(DeviceIndex index, void* ptr,
                                 std::size_t bytes) noexcept {
  if (addresses_ != nullptr) addresses_->erase(ptr);
  fns_.free_segment(ctx_, index, ptr, bytes);
  dropStalePluginMessage();
}

DeviceMemoryInfo CSegmentSource::memoryInfo(DeviceIndex index) const noexcept {
  if (fns_.memory_info == nullptr) return {};
  std::uint64_t total = 0;
  std::uint64_t free_bytes = 0;
  fns_.memory_info(ctx_, index, &total, &free_bytes);
  dropStalePluginMessage();
  return {total, free_bytes};
}

std::size_t CSegmentSource::pageSize() const noexcept { return fns_.page_size; }

void* CSegmentSource::reserveAddressRange(DeviceIndex index, std::size_t bytes) {
  void* out = nullptr;
  check(fns_.reserve_range(ctx_, index, bytes, &out), "reserve_range");
  return out;
}

void CSegmentSource::releaseAddressRange(DeviceIndex index, void* base,
                                         std::size_t bytes) noexcept {
  fns_.release_range(ctx_, index, base, bytes);
  dropStalePluginMessage();
}

bool CSegmentSource::mapPages(DeviceIndex index, void* address, std::size_t bytes) {
  std::int32_t mapped = 0;
  check(fns_.map_pages(ctx_, index, address, bytes, &mapped), "map_pages");
  return mapped != 0;
}

void CSegmentSource::unmapPages(DeviceIndex index, void* address,
                                std::size_t bytes) noexcept {
  fns_.unmap_pages(ctx_, index, address, bytes);
  dropStalePluginMessage();
}

bool CSegmentSource::hasEvents() const noexcept { return fns_.record_event != nullptr; }

EventId CSegmentSource::recordEvent(Stream stream) {
  if (!hasEvents()) return SegmentSource::recordEvent(stream);
  std::uint64_t event = 0;
  check(fns_.record_event(ctx_, toCStream(stream), &event), "record_event");
  return event;
}

bool CSegmentSource::eventCompleted(EventId event) noexcept {
  if (!hasEvents()) return SegmentSource::eventCompleted(event);
  const bool completed = fns_.event_completed(ctx_, event) != 0;
  dropStalePluginMessage();
  return completed;
}

void CSegmentSource::streamWaitEvent(Stream stream, EventId event) {
  if (!hasEvents()) return SegmentSource::streamWaitEvent(stream, event);
  check(fns_.stream_wait_event(ctx_, toCStream(stream), event), "stream_wait_event");
}

void CSegmentSource::releaseEvent(EventId event) noexcept {
  if (!hasEvents()) return SegmentSource::releaseEvent(event);
  fns_.release_event(ctx_, event);
  dropStalePluginMessage();
}

void CSegmentSource::synchronizeEvent(EventId event) {
  if (!hasEvents()) return SegmentSource::synchronizeEvent(event);
  check(fns_.synchronize_event(ctx_, event), "synchronize_event");
}

// ---- answered alike by both kinds of hooks ----

namespace {

// A sink appending to `text`.
accel_text_sink sinkInto(std::string& text) noexcept {
  return {&text, [](void* out, const char* piece, size_t length) {
            if (piece == nullptr) return;
            try {
              static_cast<std::string*>(out)->append(piece, length);
            } catch (...) {
              // A shorter text: the sink has no way to fail.
            }
          }};
}

}  // namespace

std::string unavailableReasonOf(const CPluginTables& tables) noexcept {
  if (tables.low.unavailable_reason == nullptr) return {};
  try {
    std::string text;
    const accel_text_sink sink = sinkInto(text);
    tables.low.unavailable_reason(tables.ctx, &sink);
    dropStalePluginMessage();
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  } catch (...) {
    return {};
  }
}

std::string showConfigOf(const CPluginTables& tables, std::string_view backend) {
  std::string text;
  const accel_text_sink sink = sinkInto(text);
  const accel_status status = tables.device.show_config(tables.ctx, &sink);
  if (status != ACCEL_OK) throwPluginStatus(status, backend, "device.show_config");
  dropStalePluginMessage();
  return text;
}

DeviceProperties propertiesOf(const CPluginTables& tables, std::string_view backend,
                              DeviceIndex index) {
  accel_device_properties p{};
  p.struct_size = sizeof(p);
  const accel_status status = tables.device.properties(tables.ctx, index, &p);
  if (status != ACCEL_OK) throwPluginStatus(status, backend, "device.properties");
  dropStalePluginMessage();
  p.name[sizeof(p.name) - 1] = '\0';
  p.uuid[sizeof(p.uuid) - 1] = '\0';
  DeviceProperties out;
  out.name = p.name;
  out.total_memory_bytes = p.total_memory_bytes;
  out.multiprocessor_count = p.multiprocessor_count;
  out.compute_capability_major = p.compute_capability_major;
  out.compute_capability_minor = p.compute_capability_minor;
  out.warp_size = p.warp_size;
  out.max_threads_per_multiprocessor = p.max_threads_per_multiprocessor;
  out.l2_cache_bytes = p.l2_cache_bytes;
  out.is_integrated = p.is_integrated != 0;
  out.uuid = p.uuid;
  return out;
}

void CoreCaches::build(std::string_view backend, int count) {
  if (ready()) return;
  // Without devices a backend still initialises (the hooks contract), and
  // its caches still serve the memory hooks that take no index (emptyCache,
  // history, snapshots, the pinned cache): one device that no index check
  // lets anyone allocate on.
  device_ = std::make_unique<memory::CachingAllocator>(
      tables_.type, std::max(count, 1), device_source_,
      memory::allocatorSettingsFromEnvironment());
  pinned_ = std::make_unique<memory::PinnedCachingAllocator>(pinned_source_);
  ready_.store(true, std::memory_order_release);
}

CDeviceBlock CoreCaches::findBlock(std::string_view backend, const void* ptr) const {
  ACCEL_CHECK(ready(), InvalidArgument, "find_device_block: '", backend,
              "' is not initialised yet");
  if (std::optional<DeviceIndex> device = device_->deviceOf(ptr)) {
    if (std::optional<memory::BlockInfo> block = device_->findBlock(*device, ptr)) {
      if (!block->freed) return CDeviceBlock{*device, block->base, block->requested};
    }
  }
  throw InvalidArgument(
      concat("find_device_block: ", ptr, " is in no live block of '", backend, "'"));
}

void CoreCaches::requireCapacity(std::string_view backend, HookId hook) const {
  const CPluginTables& tables = tables_;
  if (device_source_.knowsCapacity()) return;
  if (tables.version < ACCEL_PLUGIN_ABI_VERSION(1, 1)) {
    throw NotSupported(concat("'", backend, "' cannot report its device capacity (",
                              hookInfo(hook).name, "): its plugin '", tables.plugin,
                              "' speaks plugin API ", abiVersionText(tables.version),
                              ", and device_memory.memory_info came in plugin API 1.1"));
  }
  throw NotSupported(concat("'", backend, "' cannot report its device capacity (",
                            hookInfo(hook).name, "): its plugin '", tables.plugin,
                            "' gives no device_memory.memory_info"));
}

std::optional<DeviceIndex> CoreCaches::runtimeDeviceOf(std::string_view backend,
                                                       const void* ptr, int count) const {
  std::int8_t device = -1;
  if (!askDeviceOf(tables_.device_memory, tables_.device_memory_ctx, ptr, device))
    return std::nullopt;
  // The index goes into Device values and per-device tables: a plugin's
  // answer is checked like a caller's.
  ACCEL_CHECK(
      device >= 0 && device < count, InvalidArgument, ptr, " is not device memory of '",
      backend, "' that the core can place: its plugin '", tables_.plugin,
      "' answered device ", int(device), " from device_memory.device_of, and '", backend,
      "' has ", count, " devices; the answer is ignored (a bug in the plugin)");
  return device;
}

bool CoreCaches::runtimePinned(const void* ptr) const noexcept {
  std::int8_t device = -1;  // a pinned answer's device is not read
  return askDeviceOf(tables_.pinned_memory, tables_.pinned_memory_ctx, ptr, device);
}

}  // namespace accel::detail
