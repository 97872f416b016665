// The copies group: host -> device, device -> host and device -> device on a
// stream, for sizes 0, 1, odd and large; pinned copies complete with the
// stream, pageable ones with the call; stream order; and the refusals
// (overlapping ranges, a stream of a device the copy does not involve,
// foreign and null pointers). The guarantees the core keeps for every
// backend (pinned blocks and their next owner, live ranges, another
// backend's memory) are in copy_guarantee_cases.cpp.
//
// Device memory comes from getDeviceAllocator, pinned memory from
// getPinnedMemoryAllocator, streams from the streams group: a backend that
// declares copies needs those too. Results are read back through the copies
// themselves (a device need not be host-addressable), so a round trip that
// comes back intact is what is checked.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "conformance_case.h"
#include "copies_support.h"

namespace accel::conformance::detail {
namespace copies_cases {
namespace {

// 1 byte, an odd size, one that is neither a page nor a power of two, and
// one large enough to span several pages and (on a caching allocator) a
// large-pool block.
constexpr std::size_t kSizes[] = {1, 7, 4099, (std::size_t{8} << 20) + 5};
constexpr std::size_t kSmall = 4099;

void roundTripsHostDeviceHostForEverySize(AcceleratorHooks& hooks) {
  for (int i = 0; i < hooks.deviceCount(); ++i) {
    const Stream stream = hooks.getCurrentStream(DeviceIndex(i));
    for (std::size_t bytes : kSizes) {
      const std::vector<unsigned char> source = pattern(bytes, unsigned(i));
      DataPtr device = deviceMemory(hooks, i, bytes);
      hooks.copyHostToDevice(device.get(), source.data(), bytes, stream);
      // Pageable destination: the data is there when the call returns.
      const std::vector<unsigned char> back =
          readBack(hooks, device.get(), bytes, stream);
      EXPECT_EQ(firstDifference(back.data(), source.data(), bytes), -1)
          << bytes << " bytes to device " << i << " with "
          << hookName(HookId::copyHostToDevice) << " and back with "
          << hookName(HookId::copyDeviceToHost)
          << " into pageable memory: first wrong byte at that offset (-1: none)";
    }
  }
}

void zeroByteCopiesDoNothing(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  // Nothing is copied, so no pointer is looked at, null ones included.
  hooks.copyHostToDevice(nullptr, nullptr, 0, stream);
  hooks.copyDeviceToHost(nullptr, nullptr, 0, stream);
  hooks.copyDeviceToDevice(nullptr, nullptr, 0, stream);

  DataPtr device = deviceMemory(hooks, 0, kSmall);
  const std::vector<unsigned char> source = pattern(kSmall, 1);
  hooks.copyHostToDevice(device.get(), source.data(), kSmall, stream);
  const std::vector<unsigned char> other = pattern(kSmall, 2);
  hooks.copyHostToDevice(device.get(), other.data(), 0, stream);
  std::vector<unsigned char> host = other;
  hooks.copyDeviceToHost(host.data(), device.get(), 0, stream);
  EXPECT_EQ(host, other) << hookName(HookId::copyDeviceToHost)
                         << " of 0 bytes changed its destination";
  EXPECT_EQ(readBack(hooks, device.get(), kSmall, stream), source)
      << hookName(HookId::copyHostToDevice) << " of 0 bytes changed its destination";

  // The stream is still checked.
  const Stream foreign(Device(DeviceType::CPU, 0), kDefaultStreamId);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(nullptr, nullptr, 0, foreign); },
      {hookName(HookId::copyHostToDevice)}))
      << hookName(HookId::copyHostToDevice) << " of 0 bytes on a cpu stream";
}

void deviceToDeviceCopiesWithinAndAcrossDevices(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  for (std::size_t bytes : kSizes) {
    const std::vector<unsigned char> source = pattern(bytes, 3);
    // Two halves of one allocation: adjacent ranges do not overlap.
    DataPtr both = deviceMemory(hooks, 0, 2 * bytes);
    auto* low = static_cast<unsigned char*>(both.get());
    hooks.copyHostToDevice(low, source.data(), bytes, stream);
    hooks.copyDeviceToDevice(low + bytes, low, bytes, stream);
    EXPECT_EQ(firstDifference(readBack(hooks, low + bytes, bytes, stream).data(),
                              source.data(), bytes),
              -1)
        << hookName(HookId::copyDeviceToDevice) << " of " << bytes
        << " bytes between the halves of one allocation";
    DataPtr other = deviceMemory(hooks, 0, bytes);
    hooks.copyDeviceToDevice(other.get(), low + bytes, bytes, stream);
    EXPECT_EQ(firstDifference(readBack(hooks, other.get(), bytes, stream).data(),
                              source.data(), bytes),
              -1)
        << hookName(HookId::copyDeviceToDevice) << " of " << bytes
        << " bytes between two allocations";
  }
  if (hooks.deviceCount() < 2) return;
  // Across devices, on a stream of either one.
  const std::vector<unsigned char> source = pattern(kSmall, 4);
  DataPtr on0 = deviceMemory(hooks, 0, kSmall);
  DataPtr on1 = deviceMemory(hooks, 1, kSmall);
  DataPtr back0 = deviceMemory(hooks, 0, kSmall);
  hooks.copyHostToDevice(on0.get(), source.data(), kSmall, stream);
  hooks.synchronizeStream(stream);
  const Stream stream1 = hooks.getCurrentStream(1);
  hooks.copyDeviceToDevice(on1.get(), on0.get(), kSmall, stream1);
  EXPECT_EQ(readBack(hooks, on1.get(), kSmall, stream1), source)
      << hookName(HookId::copyDeviceToDevice) << " from device 0 to 1 on " << stream1;
  hooks.copyDeviceToDevice(back0.get(), on1.get(), kSmall, stream1);
  hooks.synchronizeStream(stream1);
  EXPECT_EQ(readBack(hooks, back0.get(), kSmall, stream), source)
      << hookName(HookId::copyDeviceToDevice) << " from device 1 to 0 on " << stream1;
}

void pinnedCopiesCompleteWithTheStream(AcceleratorHooks& hooks) {
  Allocator& pinned = hooks.getPinnedMemoryAllocator();
  for (int i = 0; i < hooks.deviceCount(); ++i) {
    const Stream stream = hooks.getNewStream(DeviceIndex(i));
    for (std::size_t bytes : kSizes) {
      const std::vector<unsigned char> source = pattern(bytes, 5 + unsigned(i));
      DataPtr in = pinned.allocate(bytes);
      DataPtr out = pinned.allocate(bytes);
      std::memcpy(in.get(), source.data(), bytes);
      std::memset(out.get(), 0, bytes);
      DataPtr device = deviceMemory(hooks, i, bytes);
      hooks.copyHostToDevice(device.get(), in.get(), bytes, stream);
      hooks.copyDeviceToHost(out.get(), device.get(), bytes, stream);
      hooks.synchronizeStream(stream);
      EXPECT_EQ(firstDifference(out.get(), source.data(), bytes), -1)
          << bytes << " bytes through device " << i << " between pinned buffers, read "
          << "after " << hookName(HookId::synchronizeStream);
    }
  }
}

void copiesRunInStreamOrder(AcceleratorHooks& hooks) {
  // Rounds of pinned -> X -> Y -> pinned on one stream, X and Y shared by
  // every round: a copy that overtook another would bring back another
  // round's bytes. Nothing waits between the rounds.
  constexpr int kRounds = 16;
  constexpr std::size_t kBytes = std::size_t{256} << 10;
  Allocator& pinned = hooks.getPinnedMemoryAllocator();
  const Stream stream = hooks.getNewStream(0);
  DataPtr x = deviceMemory(hooks, 0, kBytes);
  DataPtr y = deviceMemory(hooks, 0, kBytes);
  std::vector<DataPtr> sources;
  std::vector<DataPtr> results;
  for (int round = 0; round < kRounds; ++round) {
    sources.push_back(pinned.allocate(kBytes));
    results.push_back(pinned.allocate(kBytes));
    const std::vector<unsigned char> bytes = pattern(kBytes, 100 + unsigned(round));
    std::memcpy(sources.back().get(), bytes.data(), kBytes);
    std::memset(results.back().get(), 0, kBytes);
  }
  for (int round = 0; round < kRounds; ++round) {
    hooks.copyHostToDevice(x.get(), sources[round].get(), kBytes, stream);
    hooks.copyDeviceToDevice(y.get(), x.get(), kBytes, stream);
    hooks.copyDeviceToHost(results[round].get(), y.get(), kBytes, stream);
  }
  hooks.synchronizeStream(stream);
  for (int round = 0; round < kRounds; ++round) {
    EXPECT_EQ(firstDifference(results[round].get(), sources[round].get(), kBytes), -1)
        << "round " << round << " of " << hookName(HookId::copyHostToDevice) << ", "
        << hookName(HookId::copyDeviceToDevice) << ", "
        << hookName(HookId::copyDeviceToHost) << " on one stream";
  }

  // A pageable source may be reused as soon as the call returns.
  std::vector<unsigned char> reused = pattern(kBytes, 7);
  const std::vector<unsigned char> sent = reused;
  hooks.copyHostToDevice(x.get(), reused.data(), kBytes, stream);
  std::fill(reused.begin(), reused.end(), 0);
  EXPECT_EQ(readBack(hooks, x.get(), kBytes, stream), sent)
      << hookName(HookId::copyHostToDevice)
      << " from pageable memory overwritten right after the call returned";
}

void overlappingRangesAreRefused(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  DataPtr device = deviceMemory(hooks, 0, 2 * kSmall);
  auto* base = static_cast<unsigned char*>(device.get());
  const std::vector<unsigned char> source = pattern(2 * kSmall, 8);
  hooks.copyHostToDevice(base, source.data(), 2 * kSmall, stream);
  for (std::size_t shift : {std::size_t{0}, std::size_t{1}, kSmall - 1}) {
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.copyDeviceToDevice(base + shift, base, kSmall, stream); },
        {hookName(HookId::copyDeviceToDevice), "overlap"}))
        << hookName(HookId::copyDeviceToDevice) << " of " << kSmall
        << " bytes to an address " << shift << " bytes above its source";
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.copyDeviceToDevice(base, base + shift, kSmall, stream); },
        {hookName(HookId::copyDeviceToDevice), "overlap"}))
        << hookName(HookId::copyDeviceToDevice) << " of " << kSmall
        << " bytes to an address " << shift << " bytes below its source";
  }
  EXPECT_EQ(readBack(hooks, base, 2 * kSmall, stream), source)
      << "a refused copy changed device memory";
}

void streamOfAnotherDeviceIsRefused(AcceleratorHooks& hooks) {
  DataPtr device = deviceMemory(hooks, 0, kSmall);
  std::vector<unsigned char> host = pattern(kSmall, 9);
  const std::vector<unsigned char> before = host;
  const Stream foreign(Device(DeviceType::CPU, 0), kDefaultStreamId);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(device.get(), host.data(), kSmall, foreign); },
      {hookName(HookId::copyHostToDevice)}))
      << hookName(HookId::copyHostToDevice) << " on a stream of another device type";
  if (hooks.deviceCount() < 2) {
    GTEST_SKIP() << "a stream of another device of '" << hooks.name()
                 << "' needs two devices; this backend has one";
  }
  const Stream other = hooks.getCurrentStream(1);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(device.get(), host.data(), kSmall, other); },
      {hookName(HookId::copyHostToDevice), "does not involve"}))
      << hookName(HookId::copyHostToDevice) << " to device 0 on " << other;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(host.data(), device.get(), kSmall, other); },
      {hookName(HookId::copyDeviceToHost), "does not involve"}))
      << hookName(HookId::copyDeviceToHost) << " from device 0 on " << other;
  EXPECT_EQ(host, before) << "a refused copy changed its host destination";
  DataPtr second = deviceMemory(hooks, 0, kSmall);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToDevice(second.get(), device.get(), kSmall, other); },
      {hookName(HookId::copyDeviceToDevice), "does not involve"}))
      << hookName(HookId::copyDeviceToDevice) << " within device 0 on " << other;
}

void foreignAndNullPointersAreRefused(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  DataPtr device = deviceMemory(hooks, 0, kSmall);
  DataPtr second = deviceMemory(hooks, 0, kSmall);
  DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(kSmall);
  std::vector<unsigned char> host = pattern(kSmall, 10);
  std::vector<unsigned char> other_host(kSmall, 0);
  const std::string backend = "'" + std::string(hooks.name()) + "'";

  // Host memory where device memory belongs.
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(other_host.data(), host.data(), kSmall, stream); },
      {hookName(HookId::copyHostToDevice), "dst", backend}))
      << hookName(HookId::copyHostToDevice) << " with a pageable host dst";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(host.data(), other_host.data(), kSmall, stream); },
      {hookName(HookId::copyDeviceToHost), "src", backend}))
      << hookName(HookId::copyDeviceToHost) << " with a pageable host src";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToDevice(device.get(), pinned.get(), kSmall, stream); },
      {hookName(HookId::copyDeviceToDevice), "pinned"}))
      << hookName(HookId::copyDeviceToDevice) << " with a pinned host src";
  // Device memory where host memory belongs: the backend's check.
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(device.get(), second.get(), kSmall, stream); },
      {hookName(HookId::copyHostToDevice)}))
      << hookName(HookId::copyHostToDevice) << " with device memory as src";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(second.get(), device.get(), kSmall, stream); },
      {hookName(HookId::copyDeviceToHost)}))
      << hookName(HookId::copyDeviceToHost) << " with device memory as dst";
  // Null pointers with bytes to copy.
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(device.get(), nullptr, kSmall, stream); },
      {hookName(HookId::copyHostToDevice), "null"}))
      << hookName(HookId::copyHostToDevice) << " from nullptr";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(nullptr, device.get(), kSmall, stream); },
      {hookName(HookId::copyDeviceToHost), "null"}))
      << hookName(HookId::copyDeviceToHost) << " to nullptr";
  EXPECT_TRUE(allBytesAre(other_host.data(), other_host.size(), 0))
      << "a refused copy changed host memory";
}

}  // namespace
}  // namespace copies_cases

std::vector<ConformanceCase> copiesCases() {
  using namespace copies_cases;
  using enum HookId;
  std::vector<ConformanceCase> cases = {
      deviceCase("RoundTripsHostDeviceHostForEverySize",
                 roundTripsHostDeviceHostForEverySize,
                 {copyHostToDevice, copyDeviceToHost, getDeviceAllocator}),
      deviceCase("ZeroByteCopiesDoNothing", zeroByteCopiesDoNothing,
                 {copyHostToDevice, copyDeviceToHost, copyDeviceToDevice}),
      deviceCase("DeviceToDeviceCopiesWithinAndAcrossDevices",
                 deviceToDeviceCopiesWithinAndAcrossDevices,
                 {copyDeviceToDevice, copyHostToDevice, copyDeviceToHost}),
      deviceCase("PinnedCopiesCompleteWithTheStream", pinnedCopiesCompleteWithTheStream,
                 {copyHostToDevice, copyDeviceToHost, getPinnedMemoryAllocator,
                  synchronizeStream}),
      deviceCase("CopiesRunInStreamOrder", copiesRunInStreamOrder,
                 {copyDeviceToDevice, copyHostToDevice, copyDeviceToHost, getNewStream}),
      deviceCase("OverlappingRangesAreRefused", overlappingRangesAreRefused,
                 {copyDeviceToDevice, copyHostToDevice, copyDeviceToHost}),
      deviceCase("StreamOfAnotherDeviceIsRefused", streamOfAnotherDeviceIsRefused,
                 {copyHostToDevice, copyDeviceToHost, copyDeviceToDevice}),
      deviceCase("ForeignAndNullPointersAreRefused", foreignAndNullPointersAreRefused,
                 {copyHostToDevice, copyDeviceToHost, copyDeviceToDevice}),
  };
  for (ConformanceCase& c : copyGuaranteeCases()) cases.push_back(std::move(c));
  return cases;
}

}  // namespace accel::conformance::detail
