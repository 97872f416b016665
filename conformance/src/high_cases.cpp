// The high group: init, primary contexts, generators, pointers and pinned memory.
#include <cstring>
#include <memory>
#include <vector>

#include "accel/context.h"
#include "conformance_case.h"

namespace accel::conformance::detail {
namespace high_cases {
namespace {

constexpr std::size_t kProbeBytes = 4096;

// Runs whether or not the backend has devices: a registered backend that
// cannot initialise (a malformed setting, a broken driver) must fail the
// check, not pass it with every device case skipped. Without devices, init
// succeeds and deviceCount() is 0.
void registeredBackendInitialises(AcceleratorHooks& hooks) {
  try {
    hooks.init();
  } catch (const HookNotImplemented&) {
    throw;  // the suite blames the missing initImpl
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << hookName(HookId::init)
                  << "() of the registered backend '" << hooks.name()
                  << "' to succeed (without devices it succeeds and reports "
                  << hookName(HookId::deviceCount)
                  << "() == 0); it threw: " << thrownText(e)
                  << ". Every case that needs a device is skipped until this is fixed";
    return;
  }
  EXPECT_TRUE(hooks.isInitialized())
      << "isInitialized() after " << hookName(HookId::init) << "() returned";
}

void initIsIdempotent(AcceleratorHooks& hooks) {
  EXPECT_TRUE(globalContext().isInitialized(hooks.deviceType()))
      << "Context::isInitialized after lazyInitDevice";
  EXPECT_TRUE(hooks.isInitialized()) << "isInitialized() after lazyInitDevice";
  EXPECT_NO_THROW(hooks.init()) << hookName(HookId::init) << "() a second time";
  EXPECT_NO_THROW(hooks.init()) << hookName(HookId::init) << "() a third time";
  EXPECT_EQ(hooks.deviceCount() > 0, hooks.isAvailable())
      << hookName(HookId::deviceCount) << "() after " << hookName(HookId::init) << "()";
}

void hasPrimaryContextAfterAllocation(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    DataPtr data = hooks.getDeviceAllocator(DeviceIndex(i)).allocate(kProbeBytes);
    EXPECT_TRUE(hooks.hasPrimaryContext(DeviceIndex(i)))
        << hookName(HookId::hasPrimaryContext) << "(" << i
        << ") after allocating memory on the device";
  }
  EXPECT_FALSE(hooks.hasPrimaryContext(DeviceIndex(count)))
      << hookName(HookId::hasPrimaryContext) << "(" << count
      << "), an index out of range";
  EXPECT_FALSE(hooks.hasPrimaryContext(kCurrentDevice))
      << hookName(HookId::hasPrimaryContext) << "(-1)";
}

void defaultGeneratorIsOnePerDevice(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  std::vector<Generator> generators;
  for (int i = 0; i < count; ++i) {
    Generator first = hooks.getDefaultGenerator(DeviceIndex(i));
    Generator second = hooks.getDefaultGenerator(DeviceIndex(i));
    ASSERT_TRUE(first.defined())
        << hookName(HookId::getDefaultGenerator) << "(" << i << ") is undefined";
    EXPECT_TRUE(first == second) << hookName(HookId::getDefaultGenerator) << "(" << i
                                 << ") returned a different generator on the second call";
    EXPECT_EQ(first.device(), deviceOf(hooks, i))
        << hookName(HookId::getDefaultGenerator) << "(" << i << ").device()";
    Generator fromOtherThread;
    inNewThread([&] { fromOtherThread = hooks.getDefaultGenerator(DeviceIndex(i)); });
    EXPECT_TRUE(first == fromOtherThread)
        << hookName(HookId::getDefaultGenerator) << "(" << i
        << ") returned another generator on another thread";
    for (int j = 0; j < i; ++j) {
      EXPECT_FALSE(first == generators[j])
          << hookName(HookId::getDefaultGenerator) << "(" << i << ") and "
          << hookName(HookId::getDefaultGenerator) << "(" << j
          << ") are the same generator";
    }
    generators.push_back(first);
  }
  expectIndexRejected(hooks, HookId::getDefaultGenerator, count,
                      [&](DeviceIndex i) { return hooks.getDefaultGenerator(i); });
}

void defaultGeneratorOfCurrentDevice(AcceleratorHooks& hooks) {
  inNewThread([&] {
    EXPECT_TRUE(hooks.getDefaultGenerator() == hooks.getDefaultGenerator(0))
        << hookName(HookId::getDefaultGenerator)
        << "(-1) on a new thread is not device 0's";
  });
  // Compared by identity: the implementation each handle shares.
  expectCurrentDeviceResolved(hooks, HookId::getDefaultGenerator, [&](DeviceIndex i) {
    return &hooks.getDefaultGenerator(i).impl();
  });
}

void newGeneratorHasIndependentState(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    Generator fresh = hooks.getNewGenerator(index);
    Generator other = hooks.getNewGenerator(index);
    Generator shared = hooks.getDefaultGenerator(index);
    ASSERT_TRUE(fresh.defined() && other.defined())
        << hookName(HookId::getNewGenerator) << "(" << i << ")";
    EXPECT_EQ(fresh.device(), deviceOf(hooks, i))
        << hookName(HookId::getNewGenerator) << "(" << i << ").device()";
    EXPECT_FALSE(fresh == other) << "two " << hookName(HookId::getNewGenerator) << "("
                                 << i << ") calls share state";
    EXPECT_FALSE(fresh == shared)
        << hookName(HookId::getNewGenerator) << "(" << i << ") is the default generator";

    // Seeding the new generator must leave the others alone. The default
    // generator's state is restored: other code in the process may rely on it.
    std::vector<std::uint8_t> sharedState = shared.getState();
    std::uint64_t otherSeed = other.currentSeed();
    std::uint64_t otherOffset = other.offset();
    fresh.manualSeed(otherSeed + 1);
    fresh.setOffset(otherOffset + 8);
    EXPECT_EQ(other.currentSeed(), otherSeed)
        << "seeding one " << hookName(HookId::getNewGenerator) << "(" << i
        << ") result changed another";
    EXPECT_EQ(other.offset(), otherOffset)
        << "advancing one " << hookName(HookId::getNewGenerator) << "(" << i
        << ") result moved another";
    EXPECT_EQ(shared.getState(), sharedState)
        << "seeding a " << hookName(HookId::getNewGenerator) << "(" << i
        << ") result changed the default generator";
    shared.setState(sharedState);
  }
  expectCurrentDeviceResolved(hooks, HookId::getNewGenerator, [&](DeviceIndex i) {
    return hooks.getNewGenerator(i).device();
  });
}

void deviceFromPtrResolvesInteriorPointers(AcceleratorHooks& hooks) {
  int count = hooks.deviceCount();
  for (int i = 0; i < count; ++i) {
    auto index = DeviceIndex(i);
    Device expected = deviceOf(hooks, i);
    Allocator& allocator = hooks.getDeviceAllocator(index);
    EXPECT_EQ(&allocator, &hooks.getDeviceAllocator(index))
        << hookName(HookId::getDeviceAllocator) << "(" << i
        << ") returned another allocator on the second call";
    EXPECT_EQ(allocator.device(), expected)
        << hookName(HookId::getDeviceAllocator) << "(" << i << ").device()";
    DataPtr data = allocator.allocate(kProbeBytes);
    ASSERT_TRUE(data) << hookName(HookId::getDeviceAllocator) << "(" << i << ").allocate("
                      << kProbeBytes << ") returned null";
    EXPECT_EQ(data.device(), expected) << "DataPtr::device() of memory on device " << i;
    const auto* base = static_cast<const char*>(data.get());
    EXPECT_EQ(hooks.getDeviceFromPtr(base), expected)
        << hookName(HookId::getDeviceFromPtr) << "(start)";
    EXPECT_EQ(hooks.getDeviceFromPtr(base + 1), expected)
        << hookName(HookId::getDeviceFromPtr) << "(start + 1)";
    EXPECT_EQ(hooks.getDeviceFromPtr(base + kProbeBytes - 1), expected)
        << hookName(HookId::getDeviceFromPtr) << "(start + size - 1), the last byte";
  }
  expectCurrentDeviceResolved(hooks, HookId::getDeviceAllocator, [&](DeviceIndex i) {
    return &hooks.getDeviceAllocator(i);
  });
}

void deviceFromPtrRejectsForeignPointers(AcceleratorHooks& hooks) {
  std::string name(hooks.name());
  int onStack = 0;
  auto onHeap = std::make_unique<int[]>(64);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDeviceFromPtr(&onStack); }, {name}))
      << hookName(HookId::getDeviceFromPtr)
      << "(a stack address) must be an InvalidArgument naming the "
         "backend";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDeviceFromPtr(onHeap.get() + 3); }, {name}))
      << hookName(HookId::getDeviceFromPtr)
      << "(a heap address) must be an InvalidArgument naming the backend";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { (void)hooks.getDeviceFromPtr(nullptr); }, {name}))
      << hookName(HookId::getDeviceFromPtr) << "(nullptr)";
}

void pinnedMemoryIsRecognised(AcceleratorHooks& hooks) {
  Allocator& pinned = hooks.getPinnedMemoryAllocator();
  EXPECT_EQ(&pinned, &hooks.getPinnedMemoryAllocator())
      << hookName(HookId::getPinnedMemoryAllocator)
      << "() returned another allocator on the second call";
  Allocator* fromOtherThread = nullptr;
  inNewThread([&] { fromOtherThread = &hooks.getPinnedMemoryAllocator(); });
  EXPECT_EQ(&pinned, fromOtherThread)
      << hookName(HookId::getPinnedMemoryAllocator)
      << "() returned another allocator on another thread";
  EXPECT_TRUE(pinned.device().isCpu())
      << hookName(HookId::getPinnedMemoryAllocator) << "().device() is "
      << pinned.device() << ", not cpu";

  DataPtr data = pinned.allocate(kProbeBytes);
  ASSERT_TRUE(data) << hookName(HookId::getPinnedMemoryAllocator) << "().allocate("
                    << kProbeBytes << ") returned null";
  auto* base = static_cast<char*>(data.get());
  std::memset(base, 0x5a, kProbeBytes);  // host memory: must be writable from the CPU
  EXPECT_TRUE(hooks.isPinnedPtr(base))
      << hookName(HookId::isPinnedPtr) << "(start of pinned memory)";
  EXPECT_TRUE(hooks.isPinnedPtr(base + kProbeBytes / 2))
      << hookName(HookId::isPinnedPtr) << "(interior pointer)";
  EXPECT_TRUE(hooks.isPinnedPtr(base + kProbeBytes - 1))
      << hookName(HookId::isPinnedPtr) << "(last byte)";

  int onStack = 0;
  auto onHeap = std::make_unique<int[]>(64);
  EXPECT_FALSE(hooks.isPinnedPtr(&onStack))
      << hookName(HookId::isPinnedPtr) << "(a stack address)";
  EXPECT_FALSE(hooks.isPinnedPtr(onHeap.get()))
      << hookName(HookId::isPinnedPtr) << "(a heap address)";
  EXPECT_FALSE(hooks.isPinnedPtr(nullptr))
      << hookName(HookId::isPinnedPtr) << "(nullptr)";
  DataPtr onDevice = hooks.getDeviceAllocator(0).allocate(kProbeBytes);
  EXPECT_FALSE(hooks.isPinnedPtr(onDevice.get()))
      << hookName(HookId::isPinnedPtr) << "(device memory)";
}

}  // namespace
}  // namespace high_cases

std::vector<ConformanceCase> highCases() {
  using namespace high_cases;
  using enum HookId;
  return {
      noDeviceCase("RegisteredBackendInitialises", registeredBackendInitialises, {init}),
      deviceCase("InitIsIdempotent", initIsIdempotent, {init}),
      deviceCase("HasPrimaryContextAfterAllocation", hasPrimaryContextAfterAllocation,
                 {hasPrimaryContext, getDeviceAllocator}),
      deviceCase("DefaultGeneratorIsOnePerDevice", defaultGeneratorIsOnePerDevice,
                 {getDefaultGenerator}),
      deviceCase("DefaultGeneratorOfCurrentDevice", defaultGeneratorOfCurrentDevice,
                 {getDefaultGenerator, setCurrentDevice}),
      deviceCase("NewGeneratorHasIndependentState", newGeneratorHasIndependentState,
                 {getNewGenerator, getDefaultGenerator}),
      deviceCase("DeviceFromPtrResolvesInteriorPointers",
                 deviceFromPtrResolvesInteriorPointers,
                 {getDeviceFromPtr, getDeviceAllocator}),
      deviceCase("DeviceFromPtrRejectsForeignPointers",
                 deviceFromPtrRejectsForeignPointers, {getDeviceFromPtr}),
      deviceCase("PinnedMemoryIsRecognised", pinnedMemoryIsRecognised,
                 {getPinnedMemoryAllocator, isPinnedPtr})};
}

}  // namespace accel::conformance::detail
