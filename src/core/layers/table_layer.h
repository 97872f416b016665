// Table observers: the second point where layers sit (hook_layer.h is the
// first): what a C plugin itself is asked through its tables
// (accel/plugin_abi.h) and what it answers, including the calls the core
// makes on its own (its caches' segments, stream events for frees), which
// never pass through a hook.
//
// When an observer is added at the moment a C backend registers (the tracing
// layer adds its own from ACCEL_TRACE before the first registration), the
// core copies that backend's tables with each function replaced by a
// trampoline that calls every observer's before() and after() around the
// plugin's function (plugins/c_table_layer.h). The decision is made once
// per backend, at registration: tables are copied once. A backend
// registered while no observer is added never pays for them.
//
//   class PluginTimes final : public accel::detail::TableObserver {
//     void before(const TableCall& call) noexcept override { ... }
//     void after(const TableCall& call, std::int32_t status) noexcept override { ... }
//   };
//
// Thread-safety: add and remove are thread-safe and may race with calls: a
// call in flight may or may not reach an observer added or removed
// meanwhile. Observers are called concurrently from many threads.
// Lifetime: an observer must outlive its registration and calls in flight.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/device_type.h"
#include "accel/export.h"

namespace accel::detail {

struct TableCall {
  DeviceType type;  // the backend's device type
  std::string_view
      function;  // "streams.query": table.function as plugin_abi.h names them
  std::int64_t begin_ticks = 0;  // when the call began (layer_clock.h's ticks)
};

class TableObserver {
 public:
  virtual ~TableObserver() = default;
  virtual void before(const TableCall& call) noexcept = 0;
  // `status`: what the function returned when it returns an accel_status or
  // an int32_t answer, else 0.
  virtual void after(const TableCall& call, std::int32_t status) noexcept = 0;
};

// Adding twice adds once; removing one not added does nothing. Throws
// std::bad_alloc only.
ACCEL_API void addTableObserver(TableObserver& observer);
ACCEL_API void removeTableObserver(TableObserver& observer) noexcept;

// True while an observer is added (the core then wraps the tables of a C
// backend registering now). One acquire load; never throws.
[[nodiscard]] bool tableObserversAdded() noexcept;

}  // namespace accel::detail
