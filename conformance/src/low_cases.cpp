// The low group: probes and the per-thread current device.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace low_cases {
namespace {

struct Probes {
  bool built;
  bool available;
  int count;
  friend bool operator==(const Probes&, const Probes&) = default;
  friend std::ostream& operator<<(std::ostream& out, const Probes& p) {
    return out << "{" << hookName(HookId::isBuilt) << " " << p.built << ", "
               << hookName(HookId::isAvailable) << " " << p.available << ", "
               << hookName(HookId::deviceCount) << " " << p.count << "}";
  }
};

Probes probe(const AcceleratorHooks& hooks) {
  static_assert(noexcept(hooks.isBuilt())&& noexcept(hooks.isAvailable())&& noexcept(
      hooks.deviceCount()));
  return {hooks.isBuilt(), hooks.isAvailable(), hooks.deviceCount()};
}

// Runs first of all cases: no other case has touched a device yet, so a
// device without a primary context shows whether probing creates one.
void probesNeverCreateDeviceContexts(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  std::vector<bool> before;
  for (int i = 0; i < count; ++i)
    before.push_back(hooks.hasPrimaryContext(DeviceIndex(i)));
  (void)probe(hooks);
  (void)probe(hooks);
  for (int i = 0; i < count; ++i) {
    if (before[i]) continue;
    EXPECT_FALSE(hooks.hasPrimaryContext(DeviceIndex(i)))
        << hookName(HookId::isBuilt) << "()/" << hookName(HookId::isAvailable) << "()/"
        << hookName(HookId::deviceCount) << "()/" << hookName(HookId::hasPrimaryContext)
        << "() created a context "
           "on "
           "device "
        << i << "; probes must never initialise a device";
  }
}

void probesAreConsistentAndStable(AcceleratorHooks& hooks) {
  Probes first = probe(hooks);
  if (first.available) {
    EXPECT_TRUE(first.built) << hookName(HookId::isAvailable) << "() is true but "
                             << hookName(HookId::isBuilt) << "() is false";
    EXPECT_GT(first.count, 0) << hookName(HookId::isAvailable) << "() is true but "
                              << hookName(HookId::deviceCount) << "() is 0";
  }
  EXPECT_GE(first.count, 0) << hookName(HookId::deviceCount) << "()";
  EXPECT_LE(first.count, kMaxDevicesPerType) << hookName(HookId::deviceCount) << "()";
  EXPECT_EQ(probe(hooks), first)
      << hookName(HookId::isBuilt) << "()/" << hookName(HookId::isAvailable) << "()/"
      << hookName(HookId::deviceCount) << "() changed between calls";
  Probes other{};
  inNewThread([&] { other = probe(hooks); });
  EXPECT_EQ(other, first) << hookName(HookId::isBuilt) << "()/"
                          << hookName(HookId::isAvailable) << "()/"
                          << hookName(HookId::deviceCount)
                          << "() answer differently on another thread";
}

// Checks that the calling thread's current device is `expected` `when`
// ("on a new thread").
void expectCurrentDevice(AcceleratorHooks& hooks, DeviceIndex expected,
                         const std::string& when) {
  EXPECT_EQ(int(hooks.getCurrentDevice()), int(expected))
      << hookName(HookId::getCurrentDevice) << "() " << when;
}

// "setCurrentDevice(1)": a call, for failure messages.
std::string callText(HookId hook, int argument) {
  return std::string(hookName(hook)) + "(" + std::to_string(argument) + ")";
}

// Checks that `hook` refuses `index` (expectIndexRejected) and leaves the
// current device `current`.
template <typename Call>
void expectRejectedKeepsDevice(AcceleratorHooks& hooks, HookId hook, int index,
                               DeviceIndex current, Call&& call) {
  expectIndexRejected(hooks, hook, index, std::forward<Call>(call));
  expectCurrentDevice(
      hooks, current,
      "after the rejected " + callText(hook, index) + " must be unchanged");
}

// Calls `exchange` (exchangeDevice or maybeExchangeDevice) with `to` and
// checks that it returns `previous` and leaves `current` the current device.
void expectExchange(AcceleratorHooks& hooks, HookId exchange, int to,
                    DeviceIndex previous, DeviceIndex current) {
  const auto index = DeviceIndex(to);
  const DeviceIndex returned = exchange == HookId::exchangeDevice
                                   ? hooks.exchangeDevice(index)
                                   : hooks.maybeExchangeDevice(index);
  const std::string call = callText(exchange, to);
  EXPECT_EQ(int(returned), int(previous))
      << call << " must return the device that was current before it";
  expectCurrentDevice(hooks, current, "after " + call);
}

void currentDeviceIsZeroUntilSet(AcceleratorHooks& hooks) {
  inNewThread([&] { expectCurrentDevice(hooks, 0, "on a new thread"); });
}

void currentDeviceIsPerThread(AcceleratorHooks& hooks) {
  if (hooks.deviceCount() < 2) GTEST_SKIP() << "needs two devices";
  const DeviceIndex last = lastDevice(hooks);
  const std::string setLast = callText(HookId::setCurrentDevice, last);
  inNewThread([&] {
    hooks.setCurrentDevice(last);
    expectCurrentDevice(hooks, last, "right after " + setLast);
    inNewThread([&] {
      expectCurrentDevice(hooks, 0,
                          "on a thread started after another thread called " + setLast +
                              ": the current device must be per thread");
      hooks.setCurrentDevice(0);
    });
    expectCurrentDevice(hooks, last,
                        "after another thread called " +
                            callText(HookId::setCurrentDevice, 0) +
                            ": the current device must be per thread");
  });
}

void setCurrentDeviceRejectsOutOfRangeIndex(AcceleratorHooks& hooks) {
  const int count = hooks.deviceCount();
  const DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    for (int index : {count, -1}) {
      expectRejectedKeepsDevice(hooks, HookId::setCurrentDevice, index, last,
                                [&](DeviceIndex i) { hooks.setCurrentDevice(i); });
    }
  });
}

void exchangeDeviceReturnsPreviousDevice(AcceleratorHooks& hooks) {
  const int count = hooks.deviceCount();
  const DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    // A new thread starts on device 0.
    expectExchange(hooks, HookId::exchangeDevice, last, /*previous=*/0, /*current=*/last);
    expectExchange(hooks, HookId::exchangeDevice, 0, /*previous=*/last, /*current=*/0);
    expectRejectedKeepsDevice(hooks, HookId::exchangeDevice, count, 0,
                              [&](DeviceIndex i) { return hooks.exchangeDevice(i); });
  });
}

void maybeExchangeDeviceIgnoresInvalidIndex(AcceleratorHooks& hooks) {
  const int count = hooks.deviceCount();
  const DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    for (int invalid : {-1, count}) {
      expectExchange(hooks, HookId::maybeExchangeDevice, invalid, /*previous=*/last,
                     /*current=*/last);
    }
    expectExchange(hooks, HookId::maybeExchangeDevice, 0, /*previous=*/last,
                   /*current=*/0);
  });
}

}  // namespace
}  // namespace low_cases

std::vector<ConformanceCase> lowCases() {
  using namespace low_cases;
  using enum HookId;
  return {
      noDeviceCase("ProbesNeverCreateDeviceContexts", probesNeverCreateDeviceContexts,
                   {isBuilt, isAvailable, deviceCount, hasPrimaryContext}),
      noDeviceCase("ProbesAreConsistentAndStable", probesAreConsistentAndStable,
                   {isBuilt, isAvailable, deviceCount}),
      deviceCase("CurrentDeviceIsZeroUntilSet", currentDeviceIsZeroUntilSet,
                 {getCurrentDevice}),
      deviceCase("CurrentDeviceIsPerThread", currentDeviceIsPerThread,
                 {setCurrentDevice, getCurrentDevice}),
      deviceCase("SetCurrentDeviceRejectsOutOfRangeIndex",
                 setCurrentDeviceRejectsOutOfRangeIndex,
                 {setCurrentDevice, getCurrentDevice}),
      deviceCase("ExchangeDeviceReturnsPreviousDevice",
                 exchangeDeviceReturnsPreviousDevice, {exchangeDevice, getCurrentDevice}),
      deviceCase("MaybeExchangeDeviceIgnoresInvalidIndex",
                 maybeExchangeDeviceIgnoresInvalidIndex,
                 {maybeExchangeDevice, setCurrentDevice, getCurrentDevice})};
}

}  // namespace accel::conformance::detail
