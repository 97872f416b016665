// The copies group's guarantees, which the core keeps for every backend
// (hooks.h, copies group; docs/hooks.md): a pinned block freed right after
// an asynchronous copy goes to its next owner only once the stream has
// passed the copy; a device range must lie inside one live allocation; a
// pinned host range inside its allocation; memory of another backend, or of
// another device where the copy involves one, is refused with an error that
// says whose it is, never copied or crashed on.
//
// A backend whose device or pinned memory is not the core's caches owes the
// range checks itself; these cases hold it to them all the same.
#include <cstring>
#include <string>
#include <vector>

#include "accel/hooks_table.h"
#include "conformance_case.h"
#include "copies_support.h"

namespace accel::conformance::detail {
namespace copy_guarantee_cases {
namespace {

// An odd size, neither a page nor a power of two.
constexpr std::size_t kSmall = 4099;
// Large enough that a copy takes a while on any device, and a size class
// (6 MiB: 8 MiB pinned blocks) no other case of the group uses.
constexpr std::size_t kReuseBytes = std::size_t{6} << 20;
constexpr int kReuseRounds = 4;
// At most this many next owners of pinned memory per free: enough to come
// to the freed block through the blocks of its size the cache holds from
// before (the cache hands out the oldest first).
constexpr int kMaxNextOwners = 8;

// Work queued on `stream` ahead of the copy under test, so that the copy is
// still waiting when the call returns on a device that runs it later.
void keepStreamBusy(AcceleratorHooks& hooks, DataPtr& a, DataPtr& b, Stream stream) {
  for (int i = 0; i < 4; ++i) {
    hooks.copyDeviceToDevice(b.get(), a.get(), kReuseBytes, stream);
    hooks.copyDeviceToDevice(a.get(), b.get(), kReuseBytes, stream);
  }
}

// What the next owners of pinned memory do at once: allocate and write,
// until one of them got the block at `freed` (or kMaxNextOwners did not).
std::vector<DataPtr> overwriteAsNextOwners(Allocator& pinned, const void* freed,
                                           unsigned char value) {
  std::vector<DataPtr> owners;
  for (int i = 0; i < kMaxNextOwners; ++i) {
    owners.push_back(pinned.allocate(kReuseBytes));
    std::memset(owners.back().get(), value, kReuseBytes);
    if (owners.back().get() == freed) break;
  }
  return owners;
}

void pinnedBlockFreedAfterItsCopyWaitsForTheStream(AcceleratorHooks& hooks) {
  Allocator& pinned = hooks.getPinnedMemoryAllocator();
  const Stream stream = hooks.getNewStream(0);
  DataPtr device = deviceMemory(hooks, 0, kReuseBytes);
  DataPtr busy_a = deviceMemory(hooks, 0, kReuseBytes);
  DataPtr busy_b = deviceMemory(hooks, 0, kReuseBytes);
  const std::vector<unsigned char> busy = pattern(kReuseBytes, 60);
  hooks.copyHostToDevice(busy_a.get(), busy.data(), kReuseBytes, stream);
  for (int round = 0; round < kReuseRounds; ++round) {
    // Host -> device: the source block is freed right after the call and its
    // next owner writes it at once; the device must get the bytes sent.
    const std::vector<unsigned char> sent = pattern(kReuseBytes, 61 + unsigned(round));
    keepStreamBusy(hooks, busy_a, busy_b, stream);
    const void* freed = nullptr;
    {
      DataPtr source = pinned.allocate(kReuseBytes);
      std::memcpy(source.get(), sent.data(), kReuseBytes);
      hooks.copyHostToDevice(device.get(), source.get(), kReuseBytes, stream);
      freed = source.get();
    }
    std::vector<DataPtr> owners = overwriteAsNextOwners(pinned, freed, 0xA5);
    hooks.synchronizeStream(stream);
    EXPECT_EQ(firstDifference(readBack(hooks, device.get(), kReuseBytes, stream).data(),
                              sent.data(), kReuseBytes),
              -1)
        << "round " << round << ": " << hookName(HookId::copyHostToDevice) << " of "
        << kReuseBytes << " bytes from a pinned block freed right after the call, "
        << "then allocated and overwritten by its next owner: the device got other "
           "bytes (first wrong byte at that offset); the block was reused before the "
           "stream passed the copy";
    for (const DataPtr& owner : owners) {
      EXPECT_TRUE(allBytesAre(owner.get(), kReuseBytes, 0xA5))
          << "round " << round << ": a next owner's pinned block changed";
    }
    owners.clear();

    // Device -> host: the destination block is freed right after the call;
    // the copy must not land in its next owner's bytes.
    keepStreamBusy(hooks, busy_a, busy_b, stream);
    {
      DataPtr destination = pinned.allocate(kReuseBytes);
      hooks.copyDeviceToHost(destination.get(), device.get(), kReuseBytes, stream);
      freed = destination.get();
    }
    owners = overwriteAsNextOwners(pinned, freed, 0x5A);
    hooks.synchronizeStream(stream);
    for (const DataPtr& owner : owners) {
      EXPECT_TRUE(allBytesAre(owner.get(), kReuseBytes, 0x5A))
          << "round " << round << ": " << hookName(HookId::copyDeviceToHost) << " of "
          << kReuseBytes << " bytes into a pinned block freed right after the call "
          << "wrote into the block's next owner; the block was reused before the stream "
             "passed the copy";
    }
    EXPECT_EQ(firstDifference(readBack(hooks, device.get(), kReuseBytes, stream).data(),
                              sent.data(), kReuseBytes),
              -1)
        << "round " << round << ": the device bytes changed";
  }
}

void deviceRangePastTheEndOfItsAllocationIsRefused(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  DataPtr device = deviceMemory(hooks, 0, kSmall);
  DataPtr neighbour = deviceMemory(hooks, 0, kSmall);
  const std::vector<unsigned char> kept = pattern(kSmall, 70);
  const std::vector<unsigned char> kept_neighbour = pattern(kSmall, 71);
  hooks.copyHostToDevice(device.get(), kept.data(), kSmall, stream);
  hooks.copyHostToDevice(neighbour.get(), kept_neighbour.data(), kSmall, stream);
  // Host buffers long enough for every range tried, so that only the device
  // side is wrong.
  const std::vector<unsigned char> host = pattern(2 * kSmall, 72);
  std::vector<unsigned char> out(2 * kSmall, 0);
  auto* base = static_cast<unsigned char*>(device.get());

  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(base, host.data(), kSmall + 1, stream); },
      {hookName(HookId::copyHostToDevice), "dst"}))
      << hookName(HookId::copyHostToDevice) << " of " << kSmall + 1
      << " bytes into an allocation of " << kSmall;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(base + 1, host.data(), kSmall, stream); },
      {hookName(HookId::copyHostToDevice), "dst"}))
      << hookName(HookId::copyHostToDevice) << " of " << kSmall
      << " bytes from 1 byte into an allocation of " << kSmall;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(out.data(), base, kSmall + 1, stream); },
      {hookName(HookId::copyDeviceToHost), "src"}))
      << hookName(HookId::copyDeviceToHost) << " of " << kSmall + 1
      << " bytes out of an allocation of " << kSmall;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToDevice(base + 1, neighbour.get(), kSmall, stream); },
      {hookName(HookId::copyDeviceToDevice), "dst"}))
      << hookName(HookId::copyDeviceToDevice) << " of " << kSmall
      << " bytes to 1 byte into an allocation of " << kSmall;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToDevice(neighbour.get(), base + 1, kSmall, stream); },
      {hookName(HookId::copyDeviceToDevice), "src"}))
      << hookName(HookId::copyDeviceToDevice) << " of " << kSmall
      << " bytes from 1 byte into an allocation of " << kSmall;
  EXPECT_EQ(readBack(hooks, device.get(), kSmall, stream), kept)
      << "a refused copy changed its allocation";
  EXPECT_EQ(readBack(hooks, neighbour.get(), kSmall, stream), kept_neighbour)
      << "a refused copy changed another allocation";
  EXPECT_TRUE(allBytesAre(out.data(), out.size(), 0))
      << "a refused copy changed its host destination";
}

void freedDeviceMemoryIsRefused(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  DataPtr live = deviceMemory(hooks, 0, kSmall);
  void* freed = nullptr;
  {
    DataPtr gone = deviceMemory(hooks, 0, kSmall);
    freed = gone.get();
  }
  const std::vector<unsigned char> host = pattern(kSmall, 80);
  std::vector<unsigned char> out(kSmall, 0);
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(freed, host.data(), kSmall, stream); },
      {hookName(HookId::copyHostToDevice), "dst"}))
      << hookName(HookId::copyHostToDevice) << " into freed device memory";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(out.data(), freed, kSmall, stream); },
      {hookName(HookId::copyDeviceToHost), "src"}))
      << hookName(HookId::copyDeviceToHost) << " out of freed device memory";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToDevice(live.get(), freed, kSmall, stream); },
      {hookName(HookId::copyDeviceToDevice), "src"}))
      << hookName(HookId::copyDeviceToDevice) << " out of freed device memory";
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToDevice(freed, live.get(), kSmall, stream); },
      {hookName(HookId::copyDeviceToDevice), "dst"}))
      << hookName(HookId::copyDeviceToDevice) << " into freed device memory";
  EXPECT_TRUE(allBytesAre(out.data(), out.size(), 0))
      << "a refused copy changed its host destination";
}

void hostRangePastTheEndOfItsPinnedAllocationIsRefused(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(kSmall);
  DataPtr device = deviceMemory(hooks, 0, 2 * kSmall);
  const std::vector<unsigned char> kept = pattern(kSmall, 90);
  std::memcpy(pinned.get(), kept.data(), kSmall);
  auto* host = static_cast<unsigned char*>(pinned.get());
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(device.get(), host, kSmall + 1, stream); },
      {hookName(HookId::copyHostToDevice), "src"}))
      << hookName(HookId::copyHostToDevice) << " of " << kSmall + 1
      << " bytes from a pinned allocation of " << kSmall;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(device.get(), host + 1, kSmall, stream); },
      {hookName(HookId::copyHostToDevice), "src"}))
      << hookName(HookId::copyHostToDevice) << " of " << kSmall
      << " bytes from 1 byte into a pinned allocation of " << kSmall;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(host, device.get(), kSmall + 1, stream); },
      {hookName(HookId::copyDeviceToHost), "dst"}))
      << hookName(HookId::copyDeviceToHost) << " of " << kSmall + 1
      << " bytes into a pinned allocation of " << kSmall;
  hooks.synchronizeStream(stream);
  EXPECT_EQ(firstDifference(pinned.get(), kept.data(), kSmall), -1)
      << "a refused copy changed its pinned destination";
}

// A backend of the process's table other than `hooks` with a device, and
// memory of it that it says is its own; null when there is none.
struct ForeignMemory {
  AcceleratorHooks* backend = nullptr;
  DataPtr device;
};
ForeignMemory anotherBackendsMemory(AcceleratorHooks& hooks, std::size_t bytes) {
  for (DeviceType type : registeredHooksTypes()) {
    if (type == hooks.deviceType()) continue;
    AcceleratorHooks& other = getHooks(type);
    if (!other.isAvailable() || other.deviceCount() < 1) continue;
    try {
      DataPtr device = deviceMemory(other, 0, bytes);
      if (other.getDeviceFromPtr(device.get()).type() != type) continue;
      return {&other, std::move(device)};
    } catch (const Error&) {
      // That backend cannot hand out device memory now: try the next.
    }
  }
  return {};
}

void memoryOfAnotherBackendOrDeviceIsRefused(AcceleratorHooks& hooks) {
  const Stream stream = hooks.getCurrentStream(0);
  DataPtr mine = deviceMemory(hooks, 0, kSmall);
  const std::vector<unsigned char> kept = pattern(kSmall, 100);
  hooks.copyHostToDevice(mine.get(), kept.data(), kSmall, stream);
  std::vector<unsigned char> host(kSmall, 0);

  if (hooks.deviceCount() >= 2) {
    // A host <-> device copy involves one device: the stream's.
    DataPtr on1 = deviceMemory(hooks, 1, kSmall);
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.copyHostToDevice(on1.get(), kept.data(), kSmall, stream); },
        {hookName(HookId::copyHostToDevice), "does not involve"}))
        << hookName(HookId::copyHostToDevice) << " to device 1 on " << stream;
    EXPECT_TRUE(throwsContaining<InvalidArgument>(
        [&] { hooks.copyDeviceToHost(host.data(), on1.get(), kSmall, stream); },
        {hookName(HookId::copyDeviceToHost), "does not involve"}))
        << hookName(HookId::copyDeviceToHost) << " from device 1 on " << stream;
  }

  ForeignMemory foreign = anotherBackendsMemory(hooks, kSmall);
  if (foreign.backend == nullptr) {
    GTEST_SKIP() << "memory of another backend needs a second backend with a device "
                    "registered in this process; '"
                 << hooks.name() << "' is alone";
  }
  const std::string other = "'" + std::string(foreign.backend->name()) + "'";
  void* theirs = foreign.device.get();
  // Their device memory as the host side: read or written as if it were
  // host memory, it gives wrong bytes or a crash.
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(mine.get(), theirs, kSmall, stream); },
      {hookName(HookId::copyHostToDevice), "src", other}))
      << hookName(HookId::copyHostToDevice) << " from device memory of " << other;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(theirs, mine.get(), kSmall, stream); },
      {hookName(HookId::copyDeviceToHost), "dst", other}))
      << hookName(HookId::copyDeviceToHost) << " into device memory of " << other;
  // Their device memory as the device side.
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyHostToDevice(theirs, kept.data(), kSmall, stream); },
      {hookName(HookId::copyHostToDevice), "dst", other}))
      << hookName(HookId::copyHostToDevice) << " into device memory of " << other;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToHost(host.data(), theirs, kSmall, stream); },
      {hookName(HookId::copyDeviceToHost), "src", other}))
      << hookName(HookId::copyDeviceToHost) << " out of device memory of " << other;
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.copyDeviceToDevice(mine.get(), theirs, kSmall, stream); },
      {hookName(HookId::copyDeviceToDevice), "src", other}))
      << hookName(HookId::copyDeviceToDevice) << " out of device memory of " << other;
  EXPECT_EQ(readBack(hooks, mine.get(), kSmall, stream), kept)
      << "a refused copy changed device memory";
  EXPECT_TRUE(allBytesAre(host.data(), host.size(), 0))
      << "a refused copy changed its host destination";
}

}  // namespace
}  // namespace copy_guarantee_cases

std::vector<ConformanceCase> copyGuaranteeCases() {
  using namespace copy_guarantee_cases;
  using enum HookId;
  return {
      deviceCase("PinnedBlockFreedAfterItsCopyWaitsForTheStream",
                 pinnedBlockFreedAfterItsCopyWaitsForTheStream,
                 {copyHostToDevice, copyDeviceToHost, getPinnedMemoryAllocator,
                  synchronizeStream, getNewStream}),
      deviceCase("DeviceRangePastTheEndOfItsAllocationIsRefused",
                 deviceRangePastTheEndOfItsAllocationIsRefused,
                 {copyHostToDevice, copyDeviceToHost, copyDeviceToDevice}),
      deviceCase("FreedDeviceMemoryIsRefused", freedDeviceMemoryIsRefused,
                 {copyHostToDevice, copyDeviceToHost, copyDeviceToDevice}),
      deviceCase("HostRangePastTheEndOfItsPinnedAllocationIsRefused",
                 hostRangePastTheEndOfItsPinnedAllocationIsRefused,
                 {copyHostToDevice, copyDeviceToHost, getPinnedMemoryAllocator}),
      deviceCase("MemoryOfAnotherBackendOrDeviceIsRefused",
                 memoryOfAnotherBackendOrDeviceIsRefused,
                 {copyHostToDevice, copyDeviceToHost, copyDeviceToDevice}),
  };
}

}  // namespace accel::conformance::detail
