// The hook catalogue: the one table of every hook of AcceleratorHooks.
//
// Each hook has an id (HookId::getNewStream), its public name
// ("getNewStream"), its group (HookGroup::Streams), whether it is a probe
// (noexcept, answers a benign default instead of throwing, never initialises
// the backend) and the protected virtual a backend overrides to provide it
// ("getNewStreamImpl"). The NVI wrappers and their errors (hooks.cpp), the
// conformance suite's call table and failure reports, `accel check --list`,
// the test backend and the docs' table all read this table, so a hook's name
// is written exactly once, here. Code that needs a hook's name writes
// `hookInfo(HookId::getNewStream).name`, which a typo cannot compile; a test
// (tests/core/hook_name_literals_test.cpp) fails on any hook name written as
// a string literal elsewhere in the tree.
//
//   for (const accel::HookInfo& hook : accel::kHookCatalogue)
//     std::cout << hook.name << " (" << accel::hookGroupName(hook.group) << ")\n";
//
//   if (std::optional<accel::HookId> id = accel::findHook(user_text)) ...
//
// ACCEL_HOOK_LIST(X) is the list as an X-macro, for the few places where the
// language needs one name per hook as an identifier (the HookId enumerators
// and the table below); everything else reads kHookCatalogue.
//
// Thread-safety: constants; everything here is constexpr or a pure function.
// Lifetime: static storage; the string_views point at string literals.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "accel/capabilities.h"

// X(hook, Group, probe, implementation): one line per hook, in the order
// hooks.h declares them. `Group` is a HookGroup enumerator; `probe` is true
// for the noexcept probes; `implementation` is the virtual that serves the
// hook (maybeExchangeDevice reuses exchangeDeviceImpl).
#define ACCEL_HOOK_LIST(X)                                                          \
  X(isBuilt, Low, true, isBuiltImpl)                                                \
  X(isAvailable, Low, true, isAvailableImpl)                                        \
  X(deviceCount, Low, true, deviceCountImpl)                                        \
  X(getCurrentDevice, Low, false, getCurrentDeviceImpl)                             \
  X(setCurrentDevice, Low, false, setCurrentDeviceImpl)                             \
  X(exchangeDevice, Low, false, exchangeDeviceImpl)                                 \
  X(maybeExchangeDevice, Low, false, exchangeDeviceImpl)                            \
  X(init, High, false, initImpl)                                                    \
  X(hasPrimaryContext, High, true, hasPrimaryContextImpl)                           \
  X(getDefaultGenerator, High, false, getDefaultGeneratorImpl)                      \
  X(getNewGenerator, High, false, getNewGeneratorImpl)                              \
  X(getDeviceFromPtr, High, false, getDeviceFromPtrImpl)                            \
  X(getPinnedMemoryAllocator, High, false, getPinnedMemoryAllocatorImpl)            \
  X(isPinnedPtr, High, true, isPinnedPtrImpl)                                       \
  X(getDeviceAllocator, High, false, getDeviceAllocatorImpl)                        \
  X(deviceSynchronize, Device, false, deviceSynchronizeImpl)                        \
  X(showConfig, Device, false, showConfigImpl)                                      \
  X(getDeviceProperties, Device, false, getDevicePropertiesImpl)                    \
  X(getCurrentStream, Streams, false, getCurrentStreamImpl)                         \
  X(getDefaultStream, Streams, false, getDefaultStreamImpl)                         \
  X(getNewStream, Streams, false, getNewStreamImpl)                                 \
  X(setCurrentStream, Streams, false, setCurrentStreamImpl)                         \
  X(exchangeStream, Streams, false, exchangeStreamImpl)                             \
  X(queryStream, Streams, false, queryStreamImpl)                                   \
  X(synchronizeStream, Streams, false, synchronizeStreamImpl)                       \
  X(streamPriorityRange, Streams, false, streamPriorityRangeImpl)                   \
  X(createEvent, Events, false, createEventImpl)                                    \
  X(destroyEvent, Events, false, destroyEventImpl)                                  \
  X(recordEvent, Events, false, recordEventImpl)                                    \
  X(blockStream, Events, false, blockStreamImpl)                                    \
  X(queryEvent, Events, false, queryEventImpl)                                      \
  X(synchronizeEvent, Events, false, synchronizeEventImpl)                          \
  X(elapsedTime, Events, false, elapsedTimeImpl)                                    \
  X(memoryStats, Memory, false, memoryStatsImpl)                                    \
  X(resetPeakMemoryStats, Memory, false, resetPeakMemoryStatsImpl)                  \
  X(emptyCache, Memory, false, emptyCacheImpl)                                      \
  X(getMemoryInfo, Memory, false, getMemoryInfoImpl)                                \
  X(resetAccumulatedMemoryStats, Memory, false, resetAccumulatedMemoryStatsImpl)    \
  X(setMemoryFraction, Memory, false, setMemoryFractionImpl)                        \
  X(hostMemoryStats, Memory, false, hostMemoryStatsImpl)                            \
  X(recordMemoryHistory, MemoryHistory, false, recordMemoryHistoryImpl)             \
  X(memorySnapshot, MemoryHistory, false, memorySnapshotImpl)                       \
  X(attachOutOfMemoryObserver, MemoryHistory, false, attachOutOfMemoryObserverImpl) \
  X(graphCreate, Graphs, false, graphCreateImpl)                                    \
  X(graphDestroy, Graphs, false, graphDestroyImpl)                                  \
  X(graphCaptureBegin, Graphs, false, graphCaptureBeginImpl)                        \
  X(graphCaptureEnd, Graphs, false, graphCaptureEndImpl)                            \
  X(graphInstantiate, Graphs, false, graphInstantiateImpl)                          \
  X(graphReplay, Graphs, false, graphReplayImpl)                                    \
  X(graphReset, Graphs, false, graphResetImpl)                                      \
  X(graphPool, Graphs, false, graphPoolImpl)                                        \
  X(copyHostToDevice, Copies, false, copyHostToDeviceImpl)                          \
  X(copyDeviceToHost, Copies, false, copyDeviceToHostImpl)                          \
  X(copyDeviceToDevice, Copies, false, copyDeviceToDeviceImpl)                      \
  X(fillRandom, Fill, false, fillRandomImpl)

namespace accel {

// One enumerator per hook, spelled exactly as the hook.
enum class HookId : std::uint8_t {
#define ACCEL_HOOK_ID_(hook, group, probe, impl) hook,
  ACCEL_HOOK_LIST(ACCEL_HOOK_ID_)
#undef ACCEL_HOOK_ID_
};

struct HookInfo {
  HookId id;
  std::string_view name;  // "getNewStream"
  HookGroup group;        // HookGroup::Streams
  bool probe;             // noexcept, benign default on error, never initialises
  std::string_view impl;  // "getNewStreamImpl": what a backend overrides
};

// Every hook, in declaration order: kHookCatalogue[i].id == HookId(i).
inline constexpr std::array kHookCatalogue = {
#define ACCEL_HOOK_INFO_(hook, group, probe, impl) \
  HookInfo{HookId::hook, #hook, HookGroup::group, probe, #impl},
    ACCEL_HOOK_LIST(ACCEL_HOOK_INFO_)
#undef ACCEL_HOOK_INFO_
};

inline constexpr std::size_t kNumHooks = kHookCatalogue.size();

// The catalogue entry of `id`. Constant-folded when `id` is a constant.
[[nodiscard]] constexpr const HookInfo& hookInfo(HookId id) noexcept {
  return kHookCatalogue[static_cast<std::size_t>(id)];
}

// The hook named `name` (its public name, "getNewStream"), nullopt for any
// other text. Linear: for tools and tests, not hot paths.
[[nodiscard]] constexpr std::optional<HookId> findHook(std::string_view name) noexcept {
  for (const HookInfo& info : kHookCatalogue) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

// Whether calling the hook initialises the backend first (hooks.h): every
// hook that is not a probe, outside the low group. init itself counts.
[[nodiscard]] constexpr bool initialisesOnFirstUse(const HookInfo& info) noexcept {
  return !info.probe && info.group != HookGroup::Low;
}

namespace detail {
constexpr bool catalogueIsInDeclarationOrder() noexcept {
  for (std::size_t i = 0; i < kHookCatalogue.size(); ++i) {
    if (static_cast<std::size_t>(kHookCatalogue[i].id) != i) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::catalogueIsInDeclarationOrder(),
              "hookInfo(id) indexes kHookCatalogue by id");

}  // namespace accel
