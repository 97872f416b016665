// A call with placeholder arguments for every hook of the catalogue, in
// catalogue order (checked at compile time). The undeclared-group check calls
// hooks through this table: the public functions refuse an undeclared group
// before they look at any argument, so placeholders are enough. Names and
// groups come from the catalogue.
#include <array>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace hook_calls {
namespace {

struct HookCall {
  HookId hook;
  void (*call)(AcceleratorHooks& hooks);
};

Stream placeholderStream(const AcceleratorHooks& hooks) {
  return Stream(Device(hooks.deviceType(), 0), kDefaultStreamId);
}

constexpr EventId kPlaceholderEvent = 1;
constexpr GraphId kPlaceholderGraph = 1;

// clang-format off
constexpr std::array kHookCalls = {
  HookCall{HookId::isBuilt, [](AcceleratorHooks& h) { (void)h.isBuilt(); }},
  HookCall{HookId::isAvailable, [](AcceleratorHooks& h) { (void)h.isAvailable(); }},
  HookCall{HookId::deviceCount, [](AcceleratorHooks& h) { (void)h.deviceCount(); }},
  HookCall{HookId::getCurrentDevice, [](AcceleratorHooks& h) { (void)h.getCurrentDevice(); }},
  HookCall{HookId::setCurrentDevice, [](AcceleratorHooks& h) { h.setCurrentDevice(0); }},
  HookCall{HookId::exchangeDevice, [](AcceleratorHooks& h) { (void)h.exchangeDevice(0); }},
  HookCall{HookId::maybeExchangeDevice, [](AcceleratorHooks& h) { (void)h.maybeExchangeDevice(0); }},

  HookCall{HookId::init, [](AcceleratorHooks& h) { h.init(); }},
  HookCall{HookId::hasPrimaryContext, [](AcceleratorHooks& h) { (void)h.hasPrimaryContext(0); }},
  HookCall{HookId::getDefaultGenerator, [](AcceleratorHooks& h) { (void)h.getDefaultGenerator(0); }},
  HookCall{HookId::getNewGenerator, [](AcceleratorHooks& h) { (void)h.getNewGenerator(0); }},
  HookCall{HookId::getDeviceFromPtr, [](AcceleratorHooks& h) { int x = 0; (void)h.getDeviceFromPtr(&x); }},
  HookCall{HookId::getPinnedMemoryAllocator, [](AcceleratorHooks& h) { (void)h.getPinnedMemoryAllocator(); }},
  HookCall{HookId::isPinnedPtr, [](AcceleratorHooks& h) { int x = 0; (void)h.isPinnedPtr(&x); }},
  HookCall{HookId::getDeviceAllocator, [](AcceleratorHooks& h) { (void)h.getDeviceAllocator(0); }},

  HookCall{HookId::deviceSynchronize, [](AcceleratorHooks& h) { h.deviceSynchronize(0); }},
  HookCall{HookId::showConfig, [](AcceleratorHooks& h) { (void)h.showConfig(); }},
  HookCall{HookId::getDeviceProperties, [](AcceleratorHooks& h) { (void)h.getDeviceProperties(0); }},

  HookCall{HookId::getCurrentStream, [](AcceleratorHooks& h) { (void)h.getCurrentStream(0); }},
  HookCall{HookId::getDefaultStream, [](AcceleratorHooks& h) { (void)h.getDefaultStream(0); }},
  HookCall{HookId::getNewStream, [](AcceleratorHooks& h) { (void)h.getNewStream(0); }},
  HookCall{HookId::setCurrentStream, [](AcceleratorHooks& h) { h.setCurrentStream(placeholderStream(h)); }},
  HookCall{HookId::exchangeStream, [](AcceleratorHooks& h) { (void)h.exchangeStream(placeholderStream(h)); }},
  HookCall{HookId::queryStream, [](AcceleratorHooks& h) { (void)h.queryStream(placeholderStream(h)); }},
  HookCall{HookId::synchronizeStream, [](AcceleratorHooks& h) { h.synchronizeStream(placeholderStream(h)); }},
  HookCall{HookId::streamPriorityRange, [](AcceleratorHooks& h) { (void)h.streamPriorityRange(); }},

  HookCall{HookId::createEvent, [](AcceleratorHooks& h) { (void)h.createEvent(0); }},
  // destroyEvent is noexcept and ignores ids of an undeclared group by contract.
  HookCall{HookId::destroyEvent, nullptr},
  HookCall{HookId::recordEvent, [](AcceleratorHooks& h) { h.recordEvent(kPlaceholderEvent, placeholderStream(h)); }},
  HookCall{HookId::blockStream, [](AcceleratorHooks& h) { h.blockStream(kPlaceholderEvent, placeholderStream(h)); }},
  HookCall{HookId::queryEvent, [](AcceleratorHooks& h) { (void)h.queryEvent(kPlaceholderEvent); }},
  HookCall{HookId::synchronizeEvent, [](AcceleratorHooks& h) { h.synchronizeEvent(kPlaceholderEvent); }},
  HookCall{HookId::elapsedTime, [](AcceleratorHooks& h) { (void)h.elapsedTime(kPlaceholderEvent, kPlaceholderEvent); }},

  HookCall{HookId::memoryStats, [](AcceleratorHooks& h) { (void)h.memoryStats(0); }},
  HookCall{HookId::resetPeakMemoryStats, [](AcceleratorHooks& h) { h.resetPeakMemoryStats(0); }},
  HookCall{HookId::emptyCache, [](AcceleratorHooks& h) { h.emptyCache(); }},
  HookCall{HookId::getMemoryInfo, [](AcceleratorHooks& h) { (void)h.getMemoryInfo(0); }},
  HookCall{HookId::resetAccumulatedMemoryStats, [](AcceleratorHooks& h) { h.resetAccumulatedMemoryStats(0); }},
  HookCall{HookId::setMemoryFraction, [](AcceleratorHooks& h) { h.setMemoryFraction(1.0, 0); }},
  HookCall{HookId::hostMemoryStats, [](AcceleratorHooks& h) { (void)h.hostMemoryStats(); }},

  HookCall{HookId::recordMemoryHistory, [](AcceleratorHooks& h) { h.recordMemoryHistory({}); }},
  HookCall{HookId::memorySnapshot, [](AcceleratorHooks& h) { (void)h.memorySnapshot(); }},
  HookCall{HookId::attachOutOfMemoryObserver, [](AcceleratorHooks& h) { h.attachOutOfMemoryObserver([](const OutOfMemoryEvent&) {}); }},

  HookCall{HookId::graphCreate, [](AcceleratorHooks& h) { (void)h.graphCreate(); }},
  HookCall{HookId::graphDestroy, [](AcceleratorHooks& h) { h.graphDestroy(kPlaceholderGraph); }},
  HookCall{HookId::graphCaptureBegin, [](AcceleratorHooks& h) { h.graphCaptureBegin(kPlaceholderGraph); }},
  HookCall{HookId::graphCaptureEnd, [](AcceleratorHooks& h) { h.graphCaptureEnd(kPlaceholderGraph); }},
  HookCall{HookId::graphInstantiate, [](AcceleratorHooks& h) { h.graphInstantiate(kPlaceholderGraph); }},
  HookCall{HookId::graphReplay, [](AcceleratorHooks& h) { h.graphReplay(kPlaceholderGraph); }},
  HookCall{HookId::graphReset, [](AcceleratorHooks& h) { h.graphReset(kPlaceholderGraph); }},
  HookCall{HookId::graphPool, [](AcceleratorHooks& h) { (void)h.graphPool(kPlaceholderGraph); }},

  HookCall{HookId::copyHostToDevice, [](AcceleratorHooks& h) { int x = 0; h.copyHostToDevice(&x, &x, 0, placeholderStream(h)); }},
  HookCall{HookId::copyDeviceToHost, [](AcceleratorHooks& h) { int x = 0; h.copyDeviceToHost(&x, &x, 0, placeholderStream(h)); }},
  HookCall{HookId::copyDeviceToDevice, [](AcceleratorHooks& h) { int x = 0; h.copyDeviceToDevice(&x, &x, 0, placeholderStream(h)); }},
  HookCall{HookId::fillRandom, [](AcceleratorHooks& h) { h.fillRandom(placeholderStream(h), DeviceFill::Bits32, nullptr, 0, 0, 0); }},
};
// clang-format on

constexpr bool coversTheCatalogueInOrder() {
  if (kHookCalls.size() != kNumHooks) return false;
  for (std::size_t i = 0; i < kNumHooks; ++i) {
    if (kHookCalls[i].hook != kHookCatalogue[i].id) return false;
  }
  return true;
}
static_assert(coversTheCatalogueInOrder(),
              "kHookCalls needs one entry per hook, in hook_catalogue.h's order");

}  // namespace
}  // namespace hook_calls

bool callHookWithPlaceholders(AcceleratorHooks& hooks, HookId hook) {
  using namespace hook_calls;
  const HookCall& call = kHookCalls[static_cast<std::size_t>(hook)];
  if (call.call == nullptr) return false;
  call.call(hooks);
  return true;
}

}  // namespace accel::conformance::detail
