// The high group: init, primary contexts, generators, pointers and pinned memory.
#include <cstring>
#include <memory>
#include <vector>

#include "accel/context.h"
#include "conformance_case.h"

namespace accel::conformance::detail {
namespace {

constexpr std::size_t kProbeBytes = 4096;

void initIsIdempotent(AcceleratorHooks& hooks) {
  EXPECT_TRUE(globalContext().isInitialized(hooks.deviceType()))
      << "Context::isInitialized after lazyInitDevice";
  EXPECT_NO_THROW(hooks.init()) << "init() a second time";
  EXPECT_NO_THROW(hooks.init()) << "init() a third time";
  EXPECT_EQ(hooks.deviceCount() > 0, hooks.isAvailable()) << "deviceCount() after init()";
}

void hasPrimaryContextAfterAllocation(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    DataPtr data = hooks.getDeviceAllocator(DeviceIndex(i)).allocate(kProbeBytes);
    EXPECT_TRUE(hooks.hasPrimaryContext(DeviceIndex(i)))
        << "hasPrimaryContext(" << i << ") after allocating memory on the device";
  }
  EXPECT_FALSE(hooks.hasPrimaryContext(DeviceIndex(count)))
      << "hasPrimaryContext(" << count << "), an index out of range";
  EXPECT_FALSE(hooks.hasPrimaryContext(kCurrentDevice)) << "hasPrimaryContext(-1)";
}

void defaultGeneratorIsOnePerDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  std::vector<Generator> generators;
  for (int i = 0; i < count; ++i) {
    Generator first = hooks.getDefaultGenerator(DeviceIndex(i));
    Generator second = hooks.getDefaultGenerator(DeviceIndex(i));
    ASSERT_TRUE(first.defined()) << "getDefaultGenerator(" << i << ") is undefined";
    EXPECT_TRUE(first == second) << "getDefaultGenerator(" << i
                                 << ") returned a different generator on the second call";
    EXPECT_EQ(first.device(), deviceOf(hooks, i))
        << "getDefaultGenerator(" << i << ").device()";
    Generator fromOtherThread;
    inNewThread([&] { fromOtherThread = hooks.getDefaultGenerator(DeviceIndex(i)); });
    EXPECT_TRUE(first == fromOtherThread)
        << "getDefaultGenerator(" << i
        << ") returned another generator on another thread";
    for (int j = 0; j < i; ++j) {
      EXPECT_FALSE(first == generators[j])
          << "getDefaultGenerator(" << i << ") and getDefaultGenerator(" << j
          << ") are the same generator";
    }
    generators.push_back(first);
  }
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDefaultGenerator(DeviceIndex(count)); },
      {rangeMessage(hooks, count)}))
      << "getDefaultGenerator(" << count << ")";
}

void defaultGeneratorOfCurrentDevice(AcceleratorHooks& hooks) {
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    EXPECT_TRUE(hooks.getDefaultGenerator() == hooks.getDefaultGenerator(0))
        << "getDefaultGenerator(-1) on a new thread is not device 0's";
    if (!makeCurrent(hooks, last)) return;
    EXPECT_TRUE(hooks.getDefaultGenerator(kCurrentDevice) ==
                hooks.getDefaultGenerator(last))
        << "getDefaultGenerator(-1) after setCurrentDevice(" << int(last) << ")";
  });
}

void newGeneratorHasIndependentState(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    Generator fresh = hooks.getNewGenerator(index);
    Generator other = hooks.getNewGenerator(index);
    Generator shared = hooks.getDefaultGenerator(index);
    ASSERT_TRUE(fresh.defined() && other.defined()) << "getNewGenerator(" << i << ")";
    EXPECT_EQ(fresh.device(), deviceOf(hooks, i))
        << "getNewGenerator(" << i << ").device()";
    EXPECT_FALSE(fresh == other) << "two getNewGenerator(" << i << ") calls share state";
    EXPECT_FALSE(fresh == shared)
        << "getNewGenerator(" << i << ") is the default generator";

    // Seeding the new generator must leave the others alone. The default
    // generator's state is restored: other code in the process may rely on it.
    std::vector<std::uint8_t> sharedState = shared.getState();
    std::uint64_t otherSeed = other.currentSeed();
    std::uint64_t otherOffset = other.offset();
    fresh.manualSeed(otherSeed + 1);
    fresh.setOffset(otherOffset + 8);
    EXPECT_EQ(other.currentSeed(), otherSeed)
        << "seeding one getNewGenerator(" << i << ") result changed another";
    EXPECT_EQ(other.offset(), otherOffset)
        << "advancing one getNewGenerator(" << i << ") result moved another";
    EXPECT_EQ(shared.getState(), sharedState)
        << "seeding a getNewGenerator(" << i << ") result changed the default generator";
    shared.setState(sharedState);
  }
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_EQ(hooks.getNewGenerator().device(), deviceOf(hooks, last))
        << "getNewGenerator(-1) after setCurrentDevice(" << int(last) << ")";
  });
}

void deviceFromPtrResolvesInteriorPointers(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    Device expected = deviceOf(hooks, i);
    Allocator& allocator = hooks.getDeviceAllocator(index);
    EXPECT_EQ(&allocator, &hooks.getDeviceAllocator(index))
        << "getDeviceAllocator(" << i
        << ") returned another allocator on the second call";
    EXPECT_EQ(allocator.device(), expected) << "getDeviceAllocator(" << i << ").device()";
    DataPtr data = allocator.allocate(kProbeBytes);
    ASSERT_TRUE(data) << "getDeviceAllocator(" << i << ").allocate(" << kProbeBytes
                      << ") returned null";
    EXPECT_EQ(data.device(), expected) << "DataPtr::device() of memory on device " << i;
    const auto* base = static_cast<const char*>(data.get());
    EXPECT_EQ(hooks.getDeviceFromPtr(base), expected) << "getDeviceFromPtr(start)";
    EXPECT_EQ(hooks.getDeviceFromPtr(base + 1), expected)
        << "getDeviceFromPtr(start + 1)";
    EXPECT_EQ(hooks.getDeviceFromPtr(base + kProbeBytes - 1), expected)
        << "getDeviceFromPtr(start + size - 1), the last byte";
  }
  DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_EQ(&hooks.getDeviceAllocator(), &hooks.getDeviceAllocator(last))
        << "getDeviceAllocator(-1) after setCurrentDevice(" << int(last) << ")";
  });
}

void deviceFromPtrRejectsForeignPointers(AcceleratorHooks& hooks) {
  std::string name(hooks.name());
  int onStack = 0;
  auto onHeap = std::make_unique<int[]>(64);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDeviceFromPtr(&onStack); }, {name}))
      << "getDeviceFromPtr(a stack address) must be an InvalidArgument naming the "
         "backend";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDeviceFromPtr(onHeap.get() + 3); }, {name}))
      << "getDeviceFromPtr(a heap address) must be an InvalidArgument naming the backend";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDeviceFromPtr(nullptr); }, {name}))
      << "getDeviceFromPtr(nullptr)";
}

void pinnedMemoryIsRecognised(AcceleratorHooks& hooks) {
  Allocator& pinned = hooks.getPinnedMemoryAllocator();
  EXPECT_EQ(&pinned, &hooks.getPinnedMemoryAllocator())
      << "getPinnedMemoryAllocator() returned another allocator on the second call";
  Allocator* fromOtherThread = nullptr;
  inNewThread([&] { fromOtherThread = &hooks.getPinnedMemoryAllocator(); });
  EXPECT_EQ(&pinned, fromOtherThread)
      << "getPinnedMemoryAllocator() returned another allocator on another thread";
  EXPECT_TRUE(pinned.device().isCpu())
      << "getPinnedMemoryAllocator().device() is " << pinned.device() << ", not cpu";

  DataPtr data = pinned.allocate(kProbeBytes);
  ASSERT_TRUE(data) << "getPinnedMemoryAllocator().allocate(" << kProbeBytes
                    << ") returned null";
  auto* base = static_cast<char*>(data.get());
  std::memset(base, 0x5a, kProbeBytes);  // host memory: must be writable from the CPU
  EXPECT_TRUE(hooks.isPinnedPtr(base)) << "isPinnedPtr(start of pinned memory)";
  EXPECT_TRUE(hooks.isPinnedPtr(base + kProbeBytes / 2))
      << "isPinnedPtr(interior pointer)";
  EXPECT_TRUE(hooks.isPinnedPtr(base + kProbeBytes - 1)) << "isPinnedPtr(last byte)";

  int onStack = 0;
  auto onHeap = std::make_unique<int[]>(64);
  EXPECT_FALSE(hooks.isPinnedPtr(&onStack)) << "isPinnedPtr(a stack address)";
  EXPECT_FALSE(hooks.isPinnedPtr(onHeap.get())) << "isPinnedPtr(a heap address)";
  EXPECT_FALSE(hooks.isPinnedPtr(nullptr)) << "isPinnedPtr(nullptr)";
  DataPtr onDevice = hooks.getDeviceAllocator(0).allocate(kProbeBytes);
  EXPECT_FALSE(hooks.isPinnedPtr(onDevice.get())) << "isPinnedPtr(device memory)";
}

}  // namespace

std::vector<ConformanceCase> highCases() {
  constexpr HookGroup g = HookGroup::High;
  return {
      {g, "InitIsIdempotent", {"init"}, true, initIsIdempotent},
      {g,
       "HasPrimaryContextAfterAllocation",
       {"hasPrimaryContext", "getDeviceAllocator"},
       true,
       hasPrimaryContextAfterAllocation},
      {g,
       "DefaultGeneratorIsOnePerDevice",
       {"getDefaultGenerator"},
       true,
       defaultGeneratorIsOnePerDevice},
      {g,
       "DefaultGeneratorOfCurrentDevice",
       {"getDefaultGenerator", "setCurrentDevice"},
       true,
       defaultGeneratorOfCurrentDevice},
      {g,
       "NewGeneratorHasIndependentState",
       {"getNewGenerator", "getDefaultGenerator"},
       true,
       newGeneratorHasIndependentState},
      {g,
       "DeviceFromPtrResolvesInteriorPointers",
       {"getDeviceFromPtr", "getDeviceAllocator"},
       true,
       deviceFromPtrResolvesInteriorPointers},
      {g,
       "DeviceFromPtrRejectsForeignPointers",
       {"getDeviceFromPtr"},
       true,
       deviceFromPtrRejectsForeignPointers},
      {g,
       "PinnedMemoryIsRecognised",
       {"getPinnedMemoryAllocator", "isPinnedPtr"},
       true,
       pinnedMemoryIsRecognised},
  };
}

}  // namespace accel::conformance::detail
