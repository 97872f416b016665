// The copies group's guarantees for a backend on the core's caches
// (src/core/hooks/copies.cpp reading coreDeviceCache and corePinnedCache):
// a device range inside one live block, a pinned host range inside its
// allocation, device memory (this backend's or another's) refused as the
// host side, and a pinned block given to a copy held back from its next
// owner until the events recorded on the copy's stream at free completed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/memory/memory_hooks.h"
#include "support/error_of.h"
#include "support/failing_allocation.h"

namespace accel {
namespace {

using testing::errorOf;
using ::testing::HasSubstr;

std::string call(HookId hook) { return std::string(hookInfo(hook).name) + "()"; }

constexpr std::align_val_t kAlignment{512};

// Host memory standing in for device or pinned memory. Pinned blocks freed
// after a copy wait for events this source completes when the test says.
class HostSource final : public memory::SegmentSource {
 public:
  explicit HostSource(bool has_events) : has_events_(has_events) {}

  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    return ::operator new(bytes, kAlignment);
  }
  void freeSegment(DeviceIndex, void* ptr, std::size_t) noexcept override {
    ::operator delete(ptr, kAlignment);
  }
  bool hasEvents() const noexcept override { return has_events_; }
  EventId recordEvent(Stream stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    recorded_.push_back(stream);
    return recorded_.size();
  }
  bool eventCompleted(EventId) noexcept override { return completed_.load(); }
  void releaseEvent(EventId) noexcept override {}
  void synchronizeEvent(EventId) override {}

  // Whether the events recorded so far (and later ones) have completed.
  void setEventsCompleted(bool completed) noexcept { completed_.store(completed); }
  std::vector<Stream> recorded() {
    std::lock_guard<std::mutex> lock(mutex_);
    return recorded_;
  }

 private:
  const bool has_events_;
  std::atomic<bool> completed_{false};
  std::mutex mutex_;
  std::vector<Stream> recorded_;
};

// Two devices of host memory from a core CachingAllocator, pinned memory
// from a core PinnedCachingAllocator; copies are memcpy.
class CachedCopyHooks final : public memory::CachingAllocatorHooks<AcceleratorHooks> {
 public:
  explicit CachedCopyHooks(std::string_view name)
      : CachingAllocatorHooks(registerDeviceType(name),
                              Capabilities{HookGroup::Streams, HookGroup::Copies}),
        cache_(deviceType(), 2, device_source_),
        pinned_(pinned_source_) {}

  Stream stream(int index) { return Stream(Device(deviceType(), DeviceIndex(index)), 0); }
  DataPtr device(int index, std::size_t bytes) {
    return cache_.allocate(DeviceIndex(index), bytes, stream(index));
  }
  DataPtr pinned(std::size_t bytes) { return pinned_.allocate(bytes); }
  HostSource& pinnedSource() { return pinned_source_; }
  int copies() const { return copies_.load(); }
  int synchronizations() const { return synchronizations_.load(); }
  // The next allocation after a copy was made fails (once).
  void failTheAllocationAfterTheNextCopy() { fail_after_copy_ = true; }

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return 2; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void setCurrentDeviceImpl(DeviceIndex) override {}
  void initImpl() override {}
  bool isPinnedPtrImpl(const void* ptr) const override {
    return pinned_.isPinnedPtr(ptr);
  }
  Device getDeviceFromPtrImpl(const void* ptr) const override {
    const std::optional<DeviceIndex> index = cache_.deviceOf(ptr);
    ACCEL_CHECK(index, InvalidArgument, ptr, " is not ", name(), " memory");
    return Device(deviceType(), *index);
  }
  void synchronizeStreamImpl(Stream) const override { ++synchronizations_; }
  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream) override {
    copy(dst, src, bytes);
  }
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream) override {
    copy(dst, src, bytes);
  }
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream) override {
    copy(dst, src, bytes);
  }
  memory::CachingAllocator& cachingAllocator() const override { return cache_; }
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override {
    return &pinned_;
  }

 private:
  void copy(void* dst, const void* src, std::size_t bytes) {
    std::memcpy(dst, src, bytes);
    ++copies_;
    if (fail_after_copy_.exchange(false)) accel::testing::failNextAllocation();
  }

  HostSource device_source_{/*has_events=*/false};
  HostSource pinned_source_{/*has_events=*/true};
  mutable memory::CachingAllocator cache_;
  mutable memory::PinnedCachingAllocator pinned_;
  std::atomic<int> copies_{0};
  mutable std::atomic<int> synchronizations_{0};
  std::atomic<bool> fail_after_copy_{false};
};

class CopyGuaranteesTest : public ::testing::Test {
 protected:
  CachedCopyHooks hooks_{"cachedcopydev"};
  unsigned char host_[8192] = {};
};

TEST_F(CopyGuaranteesTest, DeviceRangeMustLieInsideOneLiveAllocation) {
  DataPtr device = hooks_.device(0, 4096);
  DataPtr neighbour = hooks_.device(0, 4096);  // live memory right after it
  auto* base = static_cast<unsigned char*>(device.get());
  hooks_.copyHostToDevice(base, host_, 4096, hooks_.stream(0));  // all of it: fine
  hooks_.copyHostToDevice(base + 96, host_, 4000, hooks_.stream(0));
  EXPECT_EQ(hooks_.copies(), 2);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyHostToDevice(base, host_, 4097, hooks_.stream(0)); }),
              HasSubstr(call(HookId::copyHostToDevice) + ": the dst range ["));
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyHostToDevice(base, host_, 4097, hooks_.stream(0)); }),
              HasSubstr(", +4097) runs past the end of its allocation on cachedcopydev:0 "
                        "(4096 bytes from "));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(host_, base + 100, 4000, hooks_.stream(0));
              }),
              HasSubstr("3996 left from"));
  DataPtr on1 = hooks_.device(1, 8192);
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToDevice(on1.get(), base + 1, 4096, hooks_.stream(0));
              }),
              HasSubstr(call(HookId::copyDeviceToDevice) + ": the src range"));
  void* freed = nullptr;
  {
    DataPtr gone = hooks_.device(1, 4096);
    freed = gone.get();
  }
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyHostToDevice(freed, host_, 8, hooks_.stream(1)); }),
              HasSubstr("is in freed memory of cachedcopydev:1 (its block was freed, or "
                        "never handed out); pass memory whose DataPtr from " +
                        call(HookId::getDeviceAllocator) + " is still alive"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(host_, host_ + 64, 8, hooks_.stream(0));
              }),
              HasSubstr("is not device memory of 'cachedcopydev': no allocation of its "
                        "holds it"));
  EXPECT_EQ(hooks_.copies(), 2);
}

TEST_F(CopyGuaranteesTest, HostRangeMustLieInsideItsPinnedAllocation) {
  DataPtr device = hooks_.device(0, 4096);
  DataPtr pinned = hooks_.pinned(1000);  // a 1024-byte block
  auto* host = static_cast<unsigned char*>(pinned.get());
  hooks_.copyHostToDevice(device.get(), host, 1000, hooks_.stream(0));
  EXPECT_EQ(hooks_.copies(), 1);
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(device.get(), host, 1001, hooks_.stream(0));
              }),
              HasSubstr(call(HookId::copyHostToDevice) + ": the src range ["));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(host + 10, device.get(), 991, hooks_.stream(0));
              }),
              HasSubstr(", +991) runs past the end of its pinned allocation of "
                        "'cachedcopydev' (1000 bytes from "));
  void* freed = nullptr;
  {
    DataPtr gone = hooks_.pinned(2000);
    freed = gone.get();
  }
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(freed, device.get(), 8, hooks_.stream(0));
              }),
              HasSubstr(call(HookId::copyDeviceToHost) + ": dst ("));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(freed, device.get(), 8, hooks_.stream(0));
              }),
              HasSubstr(") is in a freed pinned block of 'cachedcopydev'; pass pinned "
                        "memory whose DataPtr from " +
                        call(HookId::getPinnedMemoryAllocator) + " is still alive"));
  EXPECT_EQ(hooks_.copies(), 1);
}

TEST_F(CopyGuaranteesTest, ItsOwnDeviceMemoryAsTheHostSideIsRefused) {
  DataPtr a = hooks_.device(0, 4096);
  DataPtr b = hooks_.device(1, 4096);
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(a.get(), b.get(), 64, hooks_.stream(0));
              }),
              HasSubstr(call(HookId::copyHostToDevice) + ": src ("));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(b.get(), a.get(), 64, hooks_.stream(0));
              }),
              HasSubstr(") is device memory of cachedcopydev:1, not host memory; copy "
                        "between devices with " +
                        call(HookId::copyDeviceToDevice)));
  EXPECT_EQ(hooks_.copies(), 0);
}

// The guarantee behind asynchronous copies: freed right after the call, a
// pinned block goes to its next owner only once the copy's stream has
// passed the copy (here: once the events recorded at free complete).
TEST_F(CopyGuaranteesTest, PinnedBlockFreedAfterItsCopyWaitsForTheCopysStream) {
  DataPtr device = hooks_.device(0, 4096);
  for (HookId hook : {HookId::copyHostToDevice, HookId::copyDeviceToHost}) {
    SCOPED_TRACE(call(hook));
    HostSource& events = hooks_.pinnedSource();
    events.setEventsCompleted(false);
    const std::size_t recorded_before = events.recorded().size();
    void* freed = nullptr;
    {
      DataPtr pinned = hooks_.pinned(4096);
      freed = pinned.get();
      if (hook == HookId::copyHostToDevice) {
        hooks_.copyHostToDevice(device.get(), pinned.get(), 4096, hooks_.stream(0));
      } else {
        hooks_.copyDeviceToHost(pinned.get(), device.get(), 4096, hooks_.stream(0));
      }
    }
    const std::vector<Stream> recorded = events.recorded();
    ASSERT_EQ(recorded.size(), recorded_before + 1);
    EXPECT_EQ(recorded.back(), hooks_.stream(0));
    DataPtr next = hooks_.pinned(4096);
    EXPECT_NE(next.get(), freed) << "the block went to its next owner before the "
                                    "event on the copy's stream completed";
    events.setEventsCompleted(true);
    DataPtr after = hooks_.pinned(4096);
    EXPECT_EQ(after.get(), freed) << "the block did not come back once the event did";
  }
}

// A copy already enqueued whose stream cannot be recorded on its pinned block
// (no memory for the record) waits for the stream rather than failing: the
// caller, told the copy failed, would free the block while the copy is in
// flight.
TEST_F(CopyGuaranteesTest, ACopyWhoseStreamCannotBeRecordedWaitsForTheStream) {
  DataPtr device = hooks_.device(0, 4096);
  DataPtr pinned = hooks_.pinned(4096);
  std::memset(pinned.get(), 7, 4096);
  hooks_.failTheAllocationAfterTheNextCopy();
  ASSERT_NO_THROW(
      hooks_.copyHostToDevice(device.get(), pinned.get(), 4096, hooks_.stream(0)));
  EXPECT_EQ(hooks_.copies(), 1);
  EXPECT_EQ(hooks_.synchronizations(), 1);
  EXPECT_EQ(static_cast<unsigned char*>(device.get())[4095], 7);
  // Nothing recorded: the block is free for its next owner at once.
  HostSource& events = hooks_.pinnedSource();
  const std::size_t recorded_before = events.recorded().size();
  pinned.reset();
  EXPECT_EQ(events.recorded().size(), recorded_before);
  // With memory, the stream is recorded again and nothing waits.
  DataPtr again = hooks_.pinned(4096);
  hooks_.copyHostToDevice(device.get(), again.get(), 4096, hooks_.stream(0));
  EXPECT_EQ(hooks_.synchronizations(), 1);
}

TEST_F(CopyGuaranteesTest, AnotherBackendsMemoryIsRefusedNamingThatBackend) {
  auto owned = std::make_unique<CachedCopyHooks>("othercopydev");
  CachedCopyHooks& other = *owned;
  (void)registerHooks(std::move(owned), "copy_guarantees_test");
  other.init();
  DataPtr theirs = other.device(0, 4096);
  DataPtr their_pinned = other.pinned(4096);
  DataPtr mine = hooks_.device(0, 4096);
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(mine.get(), theirs.get(), 64, hooks_.stream(0));
              }),
              HasSubstr(") is device memory of 'othercopydev' (othercopydev:0), not host "
                        "memory; copy it to the host with that backend's " +
                        call(HookId::copyDeviceToHost) + " first"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(theirs.get(), host_, 64, hooks_.stream(0));
              }),
              HasSubstr("is not device memory of 'cachedcopydev': it is device memory of "
                        "'othercopydev' (othercopydev:0)"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(host_, their_pinned.get(), 64, hooks_.stream(0));
              }),
              HasSubstr("it is pinned host memory of 'othercopydev'"));
  EXPECT_EQ(hooks_.copies(), 0);
  // Their pinned memory is host memory here, copied as pageable.
  std::memset(their_pinned.get(), 7, 64);
  hooks_.copyHostToDevice(mine.get(), their_pinned.get(), 64, hooks_.stream(0));
  EXPECT_EQ(hooks_.copies(), 1);
  EXPECT_EQ(static_cast<unsigned char*>(mine.get())[63], 7);
}

}  // namespace
}  // namespace accel
