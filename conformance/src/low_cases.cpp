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
    return out << "{isBuilt " << p.built << ", isAvailable " << p.available
               << ", deviceCount " << p.count << "}";
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
        << "isBuilt()/isAvailable()/deviceCount()/hasPrimaryContext() created a context "
           "on "
           "device "
        << i << "; probes must never initialise a device";
  }
}

void probesAreConsistentAndStable(AcceleratorHooks& hooks) {
  Probes first = probe(hooks);
  if (first.available) {
    EXPECT_TRUE(first.built) << "isAvailable() is true but isBuilt() is false";
    EXPECT_GT(first.count, 0) << "isAvailable() is true but deviceCount() is 0";
  }
  EXPECT_GE(first.count, 0) << "deviceCount()";
  EXPECT_LE(first.count, kMaxDevicesPerType) << "deviceCount()";
  EXPECT_EQ(probe(hooks), first)
      << "isBuilt()/isAvailable()/deviceCount() changed between calls";
  Probes other{};
  inNewThread([&] { other = probe(hooks); });
  EXPECT_EQ(other, first)
      << "isBuilt()/isAvailable()/deviceCount() answer differently on another thread";
}

void currentDeviceIsZeroUntilSet(AcceleratorHooks& hooks) {
  inNewThread([&] {
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0) << "getCurrentDevice() on a new thread";
  });
}

void currentDeviceIsPerThread(AcceleratorHooks& hooks) {
  if (hooks.deviceCount() < 2) GTEST_SKIP() << "needs two devices";
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    hooks.setCurrentDevice(last);
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << "getCurrentDevice() right after setCurrentDevice(" << int(last) << ")";
    inNewThread([&] {
      EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
          << "getCurrentDevice() on a thread started after another thread called "
             "setCurrentDevice("
          << int(last) << "): the current device must be per thread";
      hooks.setCurrentDevice(0);
    });
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << "getCurrentDevice() after another thread called setCurrentDevice(0): the "
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
        << "setCurrentDevice(" << count << ")";
    EXPECT_TRUE(throwsContaining<InvalidArgument>([&] { hooks.setCurrentDevice(-1); },
                                                  {rangeMessage(hooks, -1)}))
        << "setCurrentDevice(-1)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << "getCurrentDevice() after a rejected setCurrentDevice must be unchanged";
  });
}

void exchangeDeviceReturnsPreviousDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    EXPECT_EQ(int(hooks.exchangeDevice(last)), 0)
        << "exchangeDevice(" << int(last)
        << ") on a new thread returns the previous device";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << "getCurrentDevice() after exchangeDevice";
    EXPECT_EQ(int(hooks.exchangeDevice(0)), int(last)) << "exchangeDevice(0)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
        << "getCurrentDevice() after exchangeDevice(0)";
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { (void)hooks.exchangeDevice(DeviceIndex(count)); },
        {rangeMessage(hooks, count)}))
        << "exchangeDevice(" << count << ")";
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
        << "getCurrentDevice() after a rejected exchangeDevice must be unchanged";
  });
}

void maybeExchangeDeviceIgnoresInvalidIndex(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_EQ(int(hooks.maybeExchangeDevice(-1)), int(last)) << "maybeExchangeDevice(-1)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << "maybeExchangeDevice(-1) changed the device";
    EXPECT_EQ(int(hooks.maybeExchangeDevice(DeviceIndex(count))), int(last))
        << "maybeExchangeDevice(" << count << ")";
    EXPECT_EQ(int(hooks.getCurrentDevice()), int(last))
        << "maybeExchangeDevice(" << count << ") changed the device";
    EXPECT_EQ(int(hooks.maybeExchangeDevice(0)), int(last)) << "maybeExchangeDevice(0)";
    EXPECT_EQ(int(hooks.getCurrentDevice()), 0)
        << "getCurrentDevice() after maybeExchangeDevice(0)";
  });
}

}  // namespace

std::vector<ConformanceCase> lowCases() {
  constexpr HookGroup g = HookGroup::Low;
  return {
      {g,
       "ProbesNeverCreateDeviceContexts",
       {"isBuilt", "isAvailable", "deviceCount", "hasPrimaryContext"},
       false,
       probesNeverCreateDeviceContexts},
      {g,
       "ProbesAreConsistentAndStable",
       {"isBuilt", "isAvailable", "deviceCount"},
       false,
       probesAreConsistentAndStable},
      {g,
       "CurrentDeviceIsZeroUntilSet",
       {"getCurrentDevice"},
       true,
       currentDeviceIsZeroUntilSet},
      {g,
       "CurrentDeviceIsPerThread",
       {"setCurrentDevice", "getCurrentDevice"},
       true,
       currentDeviceIsPerThread},
      {g,
       "SetCurrentDeviceRejectsOutOfRangeIndex",
       {"setCurrentDevice", "getCurrentDevice"},
       true,
       setCurrentDeviceRejectsOutOfRangeIndex},
      {g,
       "ExchangeDeviceReturnsPreviousDevice",
       {"exchangeDevice", "getCurrentDevice"},
       true,
       exchangeDeviceReturnsPreviousDevice},
      {g,
       "MaybeExchangeDeviceIgnoresInvalidIndex",
       {"maybeExchangeDevice", "setCurrentDevice", "getCurrentDevice"},
       true,
       maybeExchangeDeviceIgnoresInvalidIndex},
  };
}

}  // namespace accel::conformance::detail
