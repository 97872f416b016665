// The low group: probes and the per-thread current device.
#include <ostream>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
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

void currentDeviceIsZeroUntilSet(AcceleratorHooks& hooks) {
  inNewThread([&] {
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
        << hookName(HookId::getCurrentDevice) << "() on a new thread";
  });
}

void currentDeviceIsPerThread(AcceleratorHooks& hooks) {
  if (hooks.deviceCount() < 2) GTEST_SKIP() << "needs two devices";
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    hooks.setCurrentDevice(last);
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << hookName(HookId::getCurrentDevice) << "() right after "
        << hookName(HookId::setCurrentDevice) << "(" << int(last) << ")";
    inNewThread([&] {
      EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
          << hookName(HookId::getCurrentDevice)
          << "() on a thread started after another thread called "
          << hookName(HookId::setCurrentDevice) << "(" << int(last)
          << "): the current device must be per thread";
      hooks.setCurrentDevice(0);
    });
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << hookName(HookId::getCurrentDevice) << "() after another thread called "
        << hookName(HookId::setCurrentDevice)
        << "(0): the "
           "current "
           "device must be per thread";
  });
}

void setCurrentDeviceRejectsOutOfRangeIndex(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.setCurrentDevice(DeviceIndex(count)); },
        {rangeMessage(hooks, count)}))
        << hookName(HookId::setCurrentDevice) << "(" << count << ")";
    EXPECT_TRUE(throwsContaining<InvalidArgument>([&] { hooks.setCurrentDevice(-1); },
                                                  {rangeMessage(hooks, -1)}))
        << hookName(HookId::setCurrentDevice) << "(-1)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << hookName(HookId::getCurrentDevice) << "() after a rejected "
        << hookName(HookId::setCurrentDevice) << " must be unchanged";
  });
}

void exchangeDeviceReturnsPreviousDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    EXPECT_EQ(int(hooks.exchangeDevice(last)), 0)
        << hookName(HookId::exchangeDevice) << "(" << int(last)
        << ") on a new thread returns the previous device";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << hookName(HookId::getCurrentDevice) << "() after "
        << hookName(HookId::exchangeDevice);
    EXPECT_EQ(int(hooks.exchangeDevice(0)), int(last))
        << hookName(HookId::exchangeDevice) << "(0)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
        << hookName(HookId::getCurrentDevice) << "() after "
        << hookName(HookId::exchangeDevice) << "(0)";
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { (void)hooks.exchangeDevice(DeviceIndex(count)); },
        {rangeMessage(hooks, count)}))
        << hookName(HookId::exchangeDevice) << "(" << count << ")";
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
        << hookName(HookId::getCurrentDevice) << "() after a rejected "
        << hookName(HookId::exchangeDevice) << " must be unchanged";
  });
}

void maybeExchangeDeviceIgnoresInvalidIndex(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_EQ(int(hooks.maybeExchangeDevice(-1)), int(last))
        << hookName(HookId::maybeExchangeDevice) << "(-1)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << hookName(HookId::maybeExchangeDevice) << "(-1) changed the device";
    EXPECT_EQ(int(hooks.maybeExchangeDevice(DeviceIndex(count))), int(last))
        << hookName(HookId::maybeExchangeDevice) << "(" << count << ")";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << hookName(HookId::maybeExchangeDevice) << "(" << count
        << ") changed the device";
    EXPECT_EQ(int(hooks.maybeExchangeDevice(0)), int(last))
        << hookName(HookId::maybeExchangeDevice) << "(0)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
        << hookName(HookId::getCurrentDevice) << "() after "
        << hookName(HookId::maybeExchangeDevice) << "(0)";
  });
}

}  // namespace

std::vector<ConformanceCase> lowCases() {
  constexpr HookGroup g = HookGroup::Low;
  return {
      {g,
       "ProbesNeverCreateDeviceContexts",
       {HookId::isBuilt, HookId::isAvailable, HookId::deviceCount,
        HookId::hasPrimaryContext},
       false,
       probesNeverCreateDeviceContexts},
      {g,
       "ProbesAreConsistentAndStable",
       {HookId::isBuilt, HookId::isAvailable, HookId::deviceCount},
       false,
       probesAreConsistentAndStable},
      {g,
       "CurrentDeviceIsZeroUntilSet",
       {HookId::getCurrentDevice},
       true,
       currentDeviceIsZeroUntilSet},
      {g,
       "CurrentDeviceIsPerThread",
       {HookId::setCurrentDevice, HookId::getCurrentDevice},
       true,
       currentDeviceIsPerThread},
      {g,
       "SetCurrentDeviceRejectsOutOfRangeIndex",
       {HookId::setCurrentDevice, HookId::getCurrentDevice},
       true,
       setCurrentDeviceRejectsOutOfRangeIndex},
      {g,
       "ExchangeDeviceReturnsPreviousDevice",
       {HookId::exchangeDevice, HookId::getCurrentDevice},
       true,
       exchangeDeviceReturnsPreviousDevice},
      {g,
       "MaybeExchangeDeviceIgnoresInvalidIndex",
       {HookId::maybeExchangeDevice, HookId::setCurrentDevice, HookId::getCurrentDevice},
       true,
       maybeExchangeDeviceIgnoresInvalidIndex},
  };
}

}  // namespace accel::conformance::detail
