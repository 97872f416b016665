// The copies group's wrappers (src/core/hooks/copies.cpp): what the core
// checks before a backend's copy *Impl runs, against a backend that records
// the copies it is handed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "support/error_of.h"

namespace accel {
namespace {

using testing::errorOf;

// "copyHostToDevice()": how messages name a hook.
std::string call(HookId hook) { return std::string(hookInfo(hook).name) + "()"; }
using ::testing::HasSubstr;

// Two "devices" of 4 KiB each and 4 KiB of "pinned" host memory, side by
// side in one array, so that a range can run from one into the next. Pinned
// memory resolves to device 0, as CUDA's pointer attributes do.
class RecordingCopyHooks final : public AcceleratorHooks {
 public:
  static constexpr std::size_t kArena = 4096;

  explicit RecordingCopyHooks(Capabilities capabilities)
      : AcceleratorHooks(registerDeviceType("copytestdev"), capabilities) {}

  struct Call {
    HookId hook;
    void* dst;
    const void* src;
    std::size_t bytes;
    Stream stream;
  };

  unsigned char* device(int index) { return memory_.data() + index * kArena; }
  unsigned char* pinned() { return memory_.data() + 2 * kArena; }
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  Stream stream(int index) { return Stream(Device(deviceType(), DeviceIndex(index)), 0); }

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return 2; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void setCurrentDeviceImpl(DeviceIndex) override {}
  void initImpl() override {}
  bool isPinnedPtrImpl(const void* ptr) const override {
    return offsetOf(ptr) / kArena == 2;
  }
  Device getDeviceFromPtrImpl(const void* ptr) const override {
    const std::size_t offset = offsetOf(ptr);
    ACCEL_CHECK(offset < 3 * kArena, InvalidArgument, ptr, " is not copytestdev memory");
    return Device(deviceType(), DeviceIndex(offset / kArena == 1 ? 1 : 0));
  }
  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override {
    record({HookId::copyHostToDevice, dst, src, bytes, stream});
  }
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override {
    record({HookId::copyDeviceToHost, dst, src, bytes, stream});
  }
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream stream) override {
    record({HookId::copyDeviceToDevice, dst, src, bytes, stream});
  }
  void synchronizeStreamImpl(Stream stream) const override {
    record({HookId::synchronizeStream, nullptr, nullptr, 0, stream});
  }

 private:
  std::size_t offsetOf(const void* ptr) const {
    const auto address = reinterpret_cast<std::uintptr_t>(ptr);
    const auto base = reinterpret_cast<std::uintptr_t>(memory_.data());
    return address - base;  // huge for addresses below the arena
  }
  void record(const Call& call) const {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back(call);
  }

  std::array<unsigned char, 3 * kArena> memory_{};
  mutable std::mutex mutex_;
  mutable std::vector<Call> calls_;
};

class CopiesTest : public ::testing::Test {
 protected:
  RecordingCopyHooks hooks_{Capabilities{HookGroup::Streams, HookGroup::Copies}};
  unsigned char host_[64] = {};
};

TEST_F(CopiesTest, WellFormedCopiesReachTheBackendUnchanged) {
  unsigned char* d0 = hooks_.device(0);
  unsigned char* d1 = hooks_.device(1);
  hooks_.copyHostToDevice(d0, host_, 64, hooks_.stream(0));
  hooks_.copyDeviceToHost(host_, d1 + 8, 64, hooks_.stream(1));
  hooks_.copyDeviceToDevice(d1, d0, 64,
                            hooks_.stream(0));  // across devices, either stream
  hooks_.copyDeviceToDevice(d1, d0, 64, hooks_.stream(1));
  hooks_.copyHostToDevice(d0, hooks_.pinned(), 64, hooks_.stream(0));  // pinned host side
  const auto calls = hooks_.calls();
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls[0].hook, HookId::copyHostToDevice);
  EXPECT_EQ(calls[0].dst, d0);
  EXPECT_EQ(calls[0].src, host_);
  EXPECT_EQ(calls[0].bytes, 64u);
  EXPECT_EQ(calls[1].hook, HookId::copyDeviceToHost);
  EXPECT_EQ(calls[1].src, d1 + 8);
  EXPECT_EQ(calls[1].stream, hooks_.stream(1));
  EXPECT_EQ(calls[2].hook, HookId::copyDeviceToDevice);
  EXPECT_EQ(calls[3].stream, hooks_.stream(1));
  EXPECT_EQ(calls[4].src, hooks_.pinned());
  EXPECT_EQ(calls[5].hook, HookId::synchronizeStream);  // see below
}

// Pinned memory of the backend's own allocator (no core pinned cache): the
// core cannot hold a freed block back, so the copy is waited for before the
// call returns, and the caller may free the block at once.
TEST_F(CopiesTest, PinnedMemoryTheCoreDoesNotKnowIsWaitedForBeforeTheCallReturns) {
  unsigned char* d0 = hooks_.device(0);
  hooks_.copyDeviceToHost(hooks_.pinned() + 8, d0, 64, hooks_.stream(0));
  hooks_.copyHostToDevice(d0, host_, 64, hooks_.stream(0));  // pageable: no wait
  const auto calls = hooks_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].hook, HookId::copyDeviceToHost);
  EXPECT_EQ(calls[1].hook, HookId::synchronizeStream);
  EXPECT_EQ(calls[1].stream, hooks_.stream(0));
  EXPECT_EQ(calls[2].hook, HookId::copyHostToDevice);
}

TEST_F(CopiesTest, DeviceMemoryAsTheHostSideIsRefused) {
  unsigned char* d0 = hooks_.device(0);
  unsigned char* d1 = hooks_.device(1);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyHostToDevice(d0, d1, 64, hooks_.stream(0)); }),
              HasSubstr(call(HookId::copyHostToDevice) + ": src ("));
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyDeviceToHost(d1, d0, 64, hooks_.stream(0)); }),
              HasSubstr("is device memory of copytestdev:1, not host memory; copy "
                        "between devices with " +
                        call(HookId::copyDeviceToDevice)));
  EXPECT_TRUE(hooks_.calls().empty());
}

TEST_F(CopiesTest, ZeroBytesReachNothingButTheStreamCheck) {
  hooks_.copyHostToDevice(nullptr, nullptr, 0, hooks_.stream(0));
  hooks_.copyDeviceToHost(host_, host_, 0, hooks_.stream(1));
  hooks_.copyDeviceToDevice(nullptr, host_, 0, hooks_.stream(0));
  EXPECT_TRUE(hooks_.calls().empty());
  const Stream cpu(Device(DeviceType::CPU, 0), 0);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyHostToDevice(nullptr, nullptr, 0, cpu); }),
              HasSubstr("belongs to 'cpu', not 'copytestdev'"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(nullptr, nullptr, 0, hooks_.stream(2));
              }),
              HasSubstr("device index 2 out of range [0, 2)"));
}

TEST_F(CopiesTest, NullWrappingAndOverlappingRangesAreRefusedBeforeTheBackend) {
  unsigned char* d0 = hooks_.device(0);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyHostToDevice(d0, nullptr, 4, hooks_.stream(0)); }),
              HasSubstr(call(HookId::copyHostToDevice) + ": null pointer"));
  auto* top = reinterpret_cast<void*>(UINTPTR_MAX - 3);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyDeviceToHost(top, d0, 8, hooks_.stream(0)); }),
              HasSubstr("wraps around the address space"));
  for (std::size_t shift : {0, 1, 63}) {
    EXPECT_THAT(errorOf<InvalidArgument>([&] {
                  hooks_.copyDeviceToDevice(d0 + shift, d0, 64, hooks_.stream(0));
                }),
                HasSubstr(call(HookId::copyDeviceToDevice) + ": the ranges overlap"))
        << shift;
    EXPECT_THAT(errorOf<InvalidArgument>([&] {
                  hooks_.copyDeviceToDevice(d0, d0 + shift, 64, hooks_.stream(0));
                }),
                HasSubstr("the ranges overlap"))
        << shift;
  }
  hooks_.copyDeviceToDevice(d0 + 64, d0, 64, hooks_.stream(0));  // adjacent: fine
  EXPECT_EQ(hooks_.calls().size(), 1u);
}

TEST_F(CopiesTest, DeviceSidesMustBeOneDeviceOfTheBackend) {
  unsigned char* d0 = hooks_.device(0);
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(host_, host_ + 32, 8, hooks_.stream(0));
              }),
              HasSubstr("the dst range"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(host_, host_ + 32, 8, hooks_.stream(0));
              }),
              HasSubstr("is not device memory of 'copytestdev'"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(host_, hooks_.pinned(), 8, hooks_.stream(0));
              }),
              HasSubstr("src ("));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(host_, hooks_.pinned(), 8, hooks_.stream(0));
              }),
              HasSubstr("is pinned host memory of 'copytestdev', not device memory"));
  // A range from the end of device 0 into device 1.
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(d0 + RecordingCopyHooks::kArena - 4, host_, 8,
                                        hooks_.stream(0));
              }),
              HasSubstr("ends on copytestdev:1"));
  // A range from the end of device 1 into pinned memory, which resolves to a
  // device too: the last byte's device differs.
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(host_,
                                        hooks_.device(1) + RecordingCopyHooks::kArena - 4,
                                        8, hooks_.stream(1));
              }),
              HasSubstr("a copy's range must lie inside one allocation"));
  EXPECT_TRUE(hooks_.calls().empty());
}

TEST_F(CopiesTest, TheStreamMustBeOnADeviceTheCopyInvolves) {
  unsigned char* d0 = hooks_.device(0);
  EXPECT_THAT(
      errorOf<InvalidArgument>(
          [&] { hooks_.copyHostToDevice(d0, host_, 8, hooks_.stream(1)); }),
      HasSubstr("is on a device the copy does not involve (dst on copytestdev:0)"));
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyDeviceToHost(host_, d0, 8, hooks_.stream(1)); }),
              HasSubstr("(src on copytestdev:0)"));
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { hooks_.copyDeviceToDevice(d0 + 8, d0, 8, hooks_.stream(1)); }),
              HasSubstr("(dst on copytestdev:0, src on copytestdev:0); pass a stream of "
                        "either device"));
  EXPECT_TRUE(hooks_.calls().empty());
}

TEST(CopiesGroupTest, UndeclaredGroupAndAbsentBackendRefuseWithTheirOwnErrors) {
  RecordingCopyHooks hooks{Capabilities{HookGroup::Streams}};
  unsigned char host[8] = {};
  EXPECT_THAT(
      errorOf<NotSupported>(
          [&] { hooks.copyHostToDevice(hooks.device(0), host, 8, hooks.stream(0)); }),
      HasSubstr("'copytestdev' does not support " + call(HookId::copyHostToDevice) +
                ": the backend does not declare the 'copies' group"));
  EXPECT_THAT(errorOf<NotSupported>([&] {
                hooks.copyDeviceToDevice(nullptr, nullptr, 0, hooks.stream(0));
              }),
              HasSubstr("'copies' group"));
  const DeviceType nobody = registerDeviceType("copytestabsent");
  const Stream stream(Device(nobody, 0), 0);
  EXPECT_THAT(errorOf<NotAvailable>(
                  [&] { getHooks(nobody).copyDeviceToHost(host, host, 8, stream); }),
              HasSubstr(call(HookId::copyDeviceToHost)));
}

TEST(CopiesGroupTest, ADeclaredButUnimplementedCopyNamesItsImpl) {
  class Forgetful final : public AcceleratorHooks {
   public:
    Forgetful()
        : AcceleratorHooks(registerDeviceType("copyforgetful"), {HookGroup::Copies}) {}

   protected:
    int deviceCountImpl() const override { return 1; }
    DeviceIndex getCurrentDeviceImpl() const override { return 0; }
    void initImpl() override {}
    Device getDeviceFromPtrImpl(const void*) const override {
      return Device(deviceType(), 0);
    }
    bool isPinnedPtrImpl(const void*) const override { return false; }
  } hooks;
  unsigned char bytes[16] = {};
  const Stream stream(Device(hooks.deviceType(), 0), 0);
  try {
    hooks.copyDeviceToDevice(bytes + 8, bytes, 8, stream);
    ADD_FAILURE() << "expected HookNotImplemented";
  } catch (const HookNotImplemented& e) {
    EXPECT_EQ(e.hook(), HookId::copyDeviceToDevice);
    EXPECT_THAT(e.message(), HasSubstr("must override copyDeviceToDeviceImpl"));
  }
}

}  // namespace
}  // namespace accel
