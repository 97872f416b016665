#include "plugins/c_table_layer.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "layers/layer_clock.h"
#include "layers/table_layer.h"

namespace accel::detail {

namespace {

struct ObserverList {
  std::vector<TableObserver*> observers;
};

struct Observers {
  std::mutex mutex;
  std::vector<TableObserver*> added;
  std::atomic<const ObserverList*> current{nullptr};
  std::vector<std::unique_ptr<const ObserverList>> published;  // never freed
};

Observers& observers() noexcept {
  static Observers* o = new Observers();  // never destroyed: calls run during exit
  return *o;
}

void publishObservers(Observers& o) {
  o.published.push_back(std::make_unique<const ObserverList>(ObserverList{o.added}));
  o.current.store(o.published.back().get(), std::memory_order_release);
}

// What a trampoline's ctx points at: the plugin's own tables, copied.
struct OriginalTables {
  CPluginTables tables;
};

// The trampoline of one function: `Table` is the table's member of
// CPluginTables, `Function` the function's member of the table, `Ctx` the
// member holding the ctx that table's functions take.
template <auto Table, auto Function, auto Ctx>
struct Trampoline;

template <typename Fns, Fns CPluginTables::*Table, typename Result, typename... Args,
          Result (*Fns::*Function)(void*, Args...), void* CPluginTables::*Ctx>
struct Trampoline<Table, Function, Ctx> {
  static std::string_view name;

  static Result call(void* ctx, Args... args) {
    const CPluginTables& original = static_cast<const OriginalTables*>(ctx)->tables;
    const auto plugin_function = (original.*Table).*Function;
    void* plugin_ctx = original.*Ctx;
    const ObserverList* list = observers().current.load(std::memory_order_acquire);
    if (list == nullptr || list->observers.empty())
      return plugin_function(plugin_ctx, args...);
    const TableCall info{original.type, name, layerNowTicks()};
    for (TableObserver* observer : list->observers) observer->before(info);
    if constexpr (std::is_void_v<Result>) {
      plugin_function(plugin_ctx, args...);
      for (TableObserver* observer : list->observers) observer->after(info, 0);
    } else {
      Result result = plugin_function(plugin_ctx, args...);
      std::int32_t status = 0;
      if constexpr (std::is_same_v<Result, std::int32_t>) status = result;
      for (TableObserver* observer : list->observers) observer->after(info, status);
      return result;
    }
  }
};

template <typename Fns, Fns CPluginTables::*Table, typename Result, typename... Args,
          Result (*Fns::*Function)(void*, Args...), void* CPluginTables::*Ctx>
std::string_view Trampoline<Table, Function, Ctx>::name;

// Points `function` at its trampoline unless the plugin left it null.
template <auto Table, auto Function, auto Ctx>
void wrap(CPluginTables& tables, std::string_view name) {
  if ((tables.*Table).*Function == nullptr) return;
  // Named once (a thread-safe static): later registrations only read it.
  static const bool named = (Trampoline<Table, Function, Ctx>::name = name, true);
  (void)named;
  (tables.*Table).*Function = &Trampoline<Table, Function, Ctx>::call;
}

}  // namespace

void addTableObserver(TableObserver& observer) {
  Observers& o = observers();
  std::lock_guard<std::mutex> lock(o.mutex);
  if (std::find(o.added.begin(), o.added.end(), &observer) != o.added.end()) return;
  o.added.push_back(&observer);
  try {
    publishObservers(o);
  } catch (...) {
    o.added.pop_back();
    throw;
  }
}

void removeTableObserver(TableObserver& observer) noexcept {
  Observers& o = observers();
  std::lock_guard<std::mutex> lock(o.mutex);
  auto found = std::find(o.added.begin(), o.added.end(), &observer);
  if (found == o.added.end()) return;
  o.added.erase(found);
  try {
    publishObservers(o);
  } catch (...) {
    if (o.added.empty()) o.current.store(nullptr, std::memory_order_release);
  }
}

bool tableObserversAdded() noexcept {
  const ObserverList* list = observers().current.load(std::memory_order_acquire);
  return list != nullptr && !list->observers.empty();
}

// One line per function of plugin_abi.h's tables: the table's member, its
// struct, the ctx member its functions take, the function.
#define ACCEL_C_TABLE_FUNCTIONS(X)                               \
  X(low, accel_low_fns, ctx, is_built)                           \
  X(low, accel_low_fns, ctx, is_available)                       \
  X(low, accel_low_fns, ctx, device_count)                       \
  X(low, accel_low_fns, ctx, get_current_device)                 \
  X(low, accel_low_fns, ctx, set_current_device)                 \
  X(low, accel_low_fns, ctx, unavailable_reason)                 \
  X(high, accel_high_fns, ctx, init)                             \
  X(high, accel_high_fns, ctx, has_primary_context)              \
  X(device, accel_device_fns, ctx, synchronize)                  \
  X(device, accel_device_fns, ctx, show_config)                  \
  X(device, accel_device_fns, ctx, properties)                   \
  X(streams, accel_stream_fns, ctx, get_current)                 \
  X(streams, accel_stream_fns, ctx, set_current)                 \
  X(streams, accel_stream_fns, ctx, get_default)                 \
  X(streams, accel_stream_fns, ctx, create)                      \
  X(streams, accel_stream_fns, ctx, query)                       \
  X(streams, accel_stream_fns, ctx, synchronize)                 \
  X(streams, accel_stream_fns, ctx, priority_range)              \
  X(events, accel_event_fns, ctx, create)                        \
  X(events, accel_event_fns, ctx, destroy)                       \
  X(events, accel_event_fns, ctx, record)                        \
  X(events, accel_event_fns, ctx, block)                         \
  X(events, accel_event_fns, ctx, query)                         \
  X(events, accel_event_fns, ctx, synchronize)                   \
  X(events, accel_event_fns, ctx, elapsed_ms)                    \
  X(graphs, accel_graph_fns, ctx, create)                        \
  X(graphs, accel_graph_fns, ctx, destroy)                       \
  X(graphs, accel_graph_fns, ctx, capture_begin)                 \
  X(graphs, accel_graph_fns, ctx, capture_end)                   \
  X(graphs, accel_graph_fns, ctx, instantiate)                   \
  X(graphs, accel_graph_fns, ctx, replay)                        \
  X(graphs, accel_graph_fns, ctx, reset)                         \
  X(graphs, accel_graph_fns, ctx, prepare_replay)                \
  X(copies, accel_copy_fns, ctx, host_to_device)                 \
  X(copies, accel_copy_fns, ctx, device_to_host)                 \
  X(copies, accel_copy_fns, ctx, device_to_device)               \
  X(fill, accel_fill_fns, ctx, fill)                             \
  ACCEL_C_SEGMENT_FUNCTIONS(X, device_memory, device_memory_ctx) \
  ACCEL_C_SEGMENT_FUNCTIONS(X, pinned_memory, pinned_memory_ctx)

#define ACCEL_C_SEGMENT_FUNCTIONS(X, table, ctx)      \
  X(table, accel_segment_fns, ctx, allocate_segment)  \
  X(table, accel_segment_fns, ctx, free_segment)      \
  X(table, accel_segment_fns, ctx, reserve_range)     \
  X(table, accel_segment_fns, ctx, release_range)     \
  X(table, accel_segment_fns, ctx, map_pages)         \
  X(table, accel_segment_fns, ctx, unmap_pages)       \
  X(table, accel_segment_fns, ctx, record_event)      \
  X(table, accel_segment_fns, ctx, event_completed)   \
  X(table, accel_segment_fns, ctx, stream_wait_event) \
  X(table, accel_segment_fns, ctx, release_event)     \
  X(table, accel_segment_fns, ctx, synchronize_event) \
  X(table, accel_segment_fns, ctx, memory_info)       \
  X(table, accel_segment_fns, ctx, check_allocation)  \
  X(table, accel_segment_fns, ctx, device_of)

void wrapTablesForObservers(CPluginTables& tables) {
  auto* original = new OriginalTables{tables};  // lives as long as the backend: for good
#define ACCEL_WRAP_C_FUNCTION_(table, fns, ctx, function)           \
  wrap<&CPluginTables::table, &fns::function, &CPluginTables::ctx>( \
      tables, #table "." #function);
  ACCEL_C_TABLE_FUNCTIONS(ACCEL_WRAP_C_FUNCTION_)
#undef ACCEL_WRAP_C_FUNCTION_
  tables.ctx = original;
  tables.device_memory_ctx = original;
  tables.pinned_memory_ctx = original;
}

#undef ACCEL_C_SEGMENT_FUNCTIONS
#undef ACCEL_C_TABLE_FUNCTIONS

}  // namespace accel::detail
