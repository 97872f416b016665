// Every hook by name, with its group and a call with placeholder arguments.
// The undeclared-group check calls hooks through this table: the public
// functions refuse an undeclared group before they look at any argument, so
// placeholders are enough.
#include <array>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace {

struct HookCall {
  std::string_view name;
  HookGroup group;
  void (*call)(AcceleratorHooks& hooks);
};

Stream placeholderStream(const AcceleratorHooks& hooks) {
  return Stream(Device(hooks.deviceType(), 0), kDefaultStreamId);
}

constexpr EventId kPlaceholderEvent = 1;
constexpr GraphId kPlaceholderGraph = 1;

// clang-format off
const std::array kHookCalls = {
  HookCall{"isBuilt", HookGroup::Low, [](AcceleratorHooks& h) { (void)h.isBuilt(); }},
  HookCall{"isAvailable", HookGroup::Low, [](AcceleratorHooks& h) { (void)h.isAvailable(); }},
  HookCall{"deviceCount", HookGroup::Low, [](AcceleratorHooks& h) { (void)h.deviceCount(); }},
  HookCall{"getCurrentDevice", HookGroup::Low, [](AcceleratorHooks& h) { (void)h.getCurrentDevice(); }},
  HookCall{"setCurrentDevice", HookGroup::Low, [](AcceleratorHooks& h) { h.setCurrentDevice(0); }},
  HookCall{"exchangeDevice", HookGroup::Low, [](AcceleratorHooks& h) { (void)h.exchangeDevice(0); }},
  HookCall{"maybeExchangeDevice", HookGroup::Low, [](AcceleratorHooks& h) { (void)h.maybeExchangeDevice(0); }},
  HookCall{"init", HookGroup::High, [](AcceleratorHooks& h) { h.init(); }},
  HookCall{"hasPrimaryContext", HookGroup::High, [](AcceleratorHooks& h) { (void)h.hasPrimaryContext(0); }},
  HookCall{"getDefaultGenerator", HookGroup::High, [](AcceleratorHooks& h) { (void)h.getDefaultGenerator(0); }},
  HookCall{"getNewGenerator", HookGroup::High, [](AcceleratorHooks& h) { (void)h.getNewGenerator(0); }},
  HookCall{"getDeviceFromPtr", HookGroup::High, [](AcceleratorHooks& h) { int x = 0; (void)h.getDeviceFromPtr(&x); }},
  HookCall{"getPinnedMemoryAllocator", HookGroup::High, [](AcceleratorHooks& h) { (void)h.getPinnedMemoryAllocator(); }},
  HookCall{"isPinnedPtr", HookGroup::High, [](AcceleratorHooks& h) { int x = 0; (void)h.isPinnedPtr(&x); }},
  HookCall{"getDeviceAllocator", HookGroup::High, [](AcceleratorHooks& h) { (void)h.getDeviceAllocator(0); }},

  HookCall{"deviceSynchronize", HookGroup::Device, [](AcceleratorHooks& h) { h.deviceSynchronize(0); }},
  HookCall{"showConfig", HookGroup::Device, [](AcceleratorHooks& h) { (void)h.showConfig(); }},
  HookCall{"getDeviceProperties", HookGroup::Device, [](AcceleratorHooks& h) { (void)h.getDeviceProperties(0); }},

  HookCall{"getCurrentStream", HookGroup::Streams, [](AcceleratorHooks& h) { (void)h.getCurrentStream(0); }},
  HookCall{"getDefaultStream", HookGroup::Streams, [](AcceleratorHooks& h) { (void)h.getDefaultStream(0); }},
  HookCall{"getNewStream", HookGroup::Streams, [](AcceleratorHooks& h) { (void)h.getNewStream(0); }},
  HookCall{"setCurrentStream", HookGroup::Streams, [](AcceleratorHooks& h) { h.setCurrentStream(placeholderStream(h)); }},
  HookCall{"exchangeStream", HookGroup::Streams, [](AcceleratorHooks& h) { (void)h.exchangeStream(placeholderStream(h)); }},
  HookCall{"queryStream", HookGroup::Streams, [](AcceleratorHooks& h) { (void)h.queryStream(placeholderStream(h)); }},
  HookCall{"synchronizeStream", HookGroup::Streams, [](AcceleratorHooks& h) { h.synchronizeStream(placeholderStream(h)); }},
  HookCall{"streamPriorityRange", HookGroup::Streams, [](AcceleratorHooks& h) { (void)h.streamPriorityRange(); }},

  HookCall{"createEvent", HookGroup::Events, [](AcceleratorHooks& h) { (void)h.createEvent(0); }},
  HookCall{"recordEvent", HookGroup::Events, [](AcceleratorHooks& h) { h.recordEvent(kPlaceholderEvent, placeholderStream(h)); }},
  HookCall{"blockStream", HookGroup::Events, [](AcceleratorHooks& h) { h.blockStream(kPlaceholderEvent, placeholderStream(h)); }},
  HookCall{"queryEvent", HookGroup::Events, [](AcceleratorHooks& h) { (void)h.queryEvent(kPlaceholderEvent); }},
  HookCall{"synchronizeEvent", HookGroup::Events, [](AcceleratorHooks& h) { h.synchronizeEvent(kPlaceholderEvent); }},
  HookCall{"elapsedTime", HookGroup::Events, [](AcceleratorHooks& h) { (void)h.elapsedTime(kPlaceholderEvent, kPlaceholderEvent); }},
  // destroyEvent is noexcept and ignores ids of an undeclared group by contract.
  HookCall{"destroyEvent", HookGroup::Events, nullptr},

  HookCall{"memoryStats", HookGroup::Memory, [](AcceleratorHooks& h) { (void)h.memoryStats(0); }},
  HookCall{"resetPeakMemoryStats", HookGroup::Memory, [](AcceleratorHooks& h) { h.resetPeakMemoryStats(0); }},
  HookCall{"emptyCache", HookGroup::Memory, [](AcceleratorHooks& h) { h.emptyCache(); }},

  HookCall{"recordMemoryHistory", HookGroup::MemoryHistory, [](AcceleratorHooks& h) { h.recordMemoryHistory({}); }},
  HookCall{"memorySnapshot", HookGroup::MemoryHistory, [](AcceleratorHooks& h) { (void)h.memorySnapshot(); }},
  HookCall{"attachOutOfMemoryObserver", HookGroup::MemoryHistory, [](AcceleratorHooks& h) { h.attachOutOfMemoryObserver([](const OutOfMemoryEvent&) {}); }},

  HookCall{"graphCreate", HookGroup::Graphs, [](AcceleratorHooks& h) { (void)h.graphCreate(); }},
  HookCall{"graphDestroy", HookGroup::Graphs, [](AcceleratorHooks& h) { h.graphDestroy(kPlaceholderGraph); }},
  HookCall{"graphCaptureBegin", HookGroup::Graphs, [](AcceleratorHooks& h) { h.graphCaptureBegin(kPlaceholderGraph); }},
  HookCall{"graphCaptureEnd", HookGroup::Graphs, [](AcceleratorHooks& h) { h.graphCaptureEnd(kPlaceholderGraph); }},
  HookCall{"graphInstantiate", HookGroup::Graphs, [](AcceleratorHooks& h) { h.graphInstantiate(kPlaceholderGraph); }},
  HookCall{"graphReplay", HookGroup::Graphs, [](AcceleratorHooks& h) { h.graphReplay(kPlaceholderGraph); }},
  HookCall{"graphReset", HookGroup::Graphs, [](AcceleratorHooks& h) { h.graphReset(kPlaceholderGraph); }},
  HookCall{"graphPool", HookGroup::Graphs, [](AcceleratorHooks& h) { (void)h.graphPool(kPlaceholderGraph); }},
};
// clang-format on

const HookCall* find(std::string_view hook) {
  for (const HookCall& call : kHookCalls) {
    if (call.name == hook) return &call;
  }
  return nullptr;
}

}  // namespace

std::optional<HookGroup> hookGroupOf(std::string_view hook) {
  const HookCall* call = find(hook);
  if (call == nullptr) return std::nullopt;
  return call->group;
}

bool callHookWithPlaceholders(AcceleratorHooks& hooks, std::string_view hook) {
  const HookCall* call = find(hook);
  if (call == nullptr || call->call == nullptr) return false;
  call->call(hooks);
  return true;
}

}  // namespace accel::conformance::detail
