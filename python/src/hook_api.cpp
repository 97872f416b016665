// accel._C._hook_catalogue() and accel._C._python_api_of_hooks(): how the
// Python API reaches each hook of the catalogue, a fact no signature holds
// (the stubs are generated from the bindings: python/tools/generate_stubs.py).
//
// The table below is keyed by HookId enumerators, so it never writes a hook's
// name as text (tests/core/hook_name_literals_test.cpp); the names come from
// kHookCatalogue at run time. tests/python/test_hook_api.py checks that every
// catalogue hook has exactly one row (a new hook fails that test until
// someone decides how Python exposes it) and that every Python name a row
// gives exists, a backend.X name in every backend's API.
//
// Names are space-separated and qualified by where they live:
//   _C.X        accel._C (declared in _C.pyi)
//   backend.X   every backend module, accel.cuda, accel.openreg ...
//               (a member of accel._backend.Backend, the API every backend has)
//   accel.X     the package's own Python (typed inline, checked by mypy)
// A hook Python does not reach has no names and a one-word reason.
//
// Thread-safety: both functions read constants; they take the GIL as any
// pybind11 call does. Neither throws.
#include <pybind11/stl.h>

#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "accel/hook_catalogue.h"
#include "bindings.h"

namespace accel::python {
namespace {

struct PythonApiOfHook {
  HookId hook;
  std::string_view names;        // space-separated; empty when not exposed
  std::string_view not_exposed;  // one word, when `names` is empty
};

// Reasons a hook is not reached by name:
//   lifetime  called when a Python object is collected (Event, Graph)
//   internal  the binding layer uses it for its own work, users never need it
constexpr PythonApiOfHook kPythonApiOfHooks[] = {
    {HookId::isBuilt, "_C.Hooks.is_built backend.is_built", {}},
    {HookId::isAvailable,
     "_C.Hooks.is_available backend.is_available accel.is_available",
     {}},
    {HookId::deviceCount,
     "_C.Hooks.device_count backend.device_count accel.device_count",
     {}},
    {HookId::getCurrentDevice,
     "_C.Hooks.current_device backend.current_device accel.current_device_index",
     {}},
    {HookId::setCurrentDevice,
     "_C.Hooks.set_device backend.set_device accel.set_device_index",
     {}},
    {HookId::exchangeDevice,
     "_C.Hooks.exchange_device _C.Stream.__enter__ backend.device accel.device_index",
     {}},
    {HookId::maybeExchangeDevice, "_C.Hooks.maybe_exchange_device", {}},
    {HookId::init, "_C.Hooks.lazy_init _C._lazy_init backend.init", {}},
    {HookId::hasPrimaryContext, "_C.Hooks.has_primary_context", {}},
    {HookId::getDefaultGenerator,
     "_C.Hooks.default_generator _C._get_default_generator backend.default_generator",
     {}},
    {HookId::getNewGenerator, "_C.Hooks.new_generator _C.Generator accel.Generator", {}},
    {HookId::getDeviceFromPtr, "_C.Hooks.device_from_ptr", {}},
    {HookId::getPinnedMemoryAllocator, "_C._empty accel.empty", {}},
    {HookId::isPinnedPtr, "_C.Hooks.is_pinned_ptr", {}},
    {HookId::getDeviceAllocator, "_C._empty accel.empty", {}},
    {HookId::deviceSynchronize,
     "_C.Hooks.synchronize backend.synchronize accel.synchronize",
     {}},
    {HookId::showConfig, "_C.Hooks.show_config", {}},
    {HookId::getDeviceProperties,
     "_C.Hooks.device_properties backend.get_device_properties backend.get_device_name",
     {}},
    {HookId::getCurrentStream,
     "_C._current_stream _C._accelerator_current_stream backend.current_stream "
     "accel.current_stream",
     {}},
    {HookId::getDefaultStream, "_C._default_stream backend.default_stream", {}},
    {HookId::getNewStream, "_C.Stream backend.Stream accel.Stream", {}},
    {HookId::setCurrentStream, "_C._set_stream backend.set_stream accel.set_stream", {}},
    {HookId::exchangeStream, "_C.Stream.__enter__ backend.stream", {}},
    {HookId::queryStream, "_C.Stream.query", {}},
    {HookId::synchronizeStream, "_C.Stream.synchronize", {}},
    {HookId::streamPriorityRange,
     "_C.Hooks.stream_priority_range _C.Stream.priority_range",
     {}},
    {HookId::createEvent, "_C.Event backend.Event accel.Event", {}},
    {HookId::destroyEvent, {}, "lifetime"},
    {HookId::recordEvent, "_C.Event.record _C.Stream.record_event", {}},
    {HookId::blockStream, "_C.Event.wait _C.Stream.wait_event _C.Stream.wait_stream", {}},
    {HookId::queryEvent, "_C.Event.query", {}},
    {HookId::synchronizeEvent, "_C.Event.synchronize", {}},
    {HookId::elapsedTime, "_C.Event.elapsed_time", {}},
    {HookId::memoryStats,
     "_C.Hooks.memory_stats backend.memory_stats accel.memory.memory_stats",
     {}},
    {HookId::resetPeakMemoryStats,
     "_C.Hooks.reset_peak_memory_stats backend.reset_peak_memory_stats "
     "accel.memory.reset_peak_memory_stats",
     {}},
    {HookId::emptyCache,
     "_C.Hooks.empty_cache backend.empty_cache accel.memory.empty_cache",
     {}},
    {HookId::getMemoryInfo,
     "_C.Hooks.memory_info backend.get_memory_info backend.mem_get_info "
     "accel.memory.get_memory_info",
     {}},
    {HookId::resetAccumulatedMemoryStats,
     "_C.Hooks.reset_accumulated_memory_stats backend.reset_accumulated_memory_stats "
     "accel.memory.reset_accumulated_memory_stats",
     {}},
    {HookId::setMemoryFraction,
     "_C.Hooks.set_memory_fraction backend.set_per_process_memory_fraction "
     "accel.memory.set_per_process_memory_fraction",
     {}},
    {HookId::hostMemoryStats,
     "_C.Hooks.host_memory_stats backend.host_memory_stats "
     "accel.memory.host_memory_stats",
     {}},
    {HookId::recordMemoryHistory,
     "_C.Hooks.record_memory_history backend._record_memory_history",
     {}},
    {HookId::memorySnapshot,
     "_C.Hooks.memory_snapshot backend.memory_snapshot backend._snapshot "
     "accel.memory.memory_snapshot",
     {}},
    {HookId::attachOutOfMemoryObserver, {}, "internal"},
    {HookId::graphCreate, "_C.Graph backend.Graph", {}},
    {HookId::graphDestroy, {}, "lifetime"},
    {HookId::graphCaptureBegin, "_C.Graph.capture_begin backend.graph", {}},
    {HookId::graphCaptureEnd, "_C.Graph.capture_end backend.graph", {}},
    {HookId::graphInstantiate, "_C.Graph.instantiate", {}},
    {HookId::graphReplay, "_C.Graph.replay", {}},
    {HookId::graphReset, "_C.Graph.reset", {}},
    {HookId::graphPool, "_C.Graph.pool", {}},
    {HookId::copyHostToDevice, "_C.Buffer.copy_", {}},
    {HookId::copyDeviceToHost, "_C.Buffer.copy_to _C.Buffer.tobytes", {}},
    {HookId::copyDeviceToDevice, "_C.Buffer.copy_ _C.Buffer.to", {}},
    {HookId::fillRandom,
     "_C.fill_uniform _C.fill_normal _C.fill_bernoulli _C.fill_bits",
     {}},
};

std::vector<std::string> splitNames(std::string_view names) {
  std::vector<std::string> out;
  while (!names.empty()) {
    const std::size_t space = names.find(' ');
    if (space != 0) out.emplace_back(names.substr(0, space));
    if (space == std::string_view::npos) break;
    names.remove_prefix(space + 1);
  }
  return out;
}

}  // namespace

void bindHookApi(py::module_& m) {
  m.def(
      "_hook_catalogue",
      [] {
        std::vector<std::tuple<std::string, std::string, bool>> out;
        for (const HookInfo& hook : kHookCatalogue) {
          out.emplace_back(std::string(hook.name), std::string(hookGroupName(hook.group)),
                           hook.probe);
        }
        return out;
      },
      "Every hook of the C++ catalogue, in order: (name, group, is_probe).");
  m.def(
      "_python_api_of_hooks",
      [] {
        // A list, not a dict, so that a duplicated row stays visible to the test.
        std::vector<std::tuple<std::string, std::vector<std::string>, std::string>> out;
        for (const PythonApiOfHook& row : kPythonApiOfHooks) {
          out.emplace_back(std::string(hookInfo(row.hook).name), splitNames(row.names),
                           std::string(row.not_exposed));
        }
        return out;
      },
      "How Python reaches each hook: (hook name, qualified Python names, reason "
      "when not exposed).");
}

}  // namespace accel::python
