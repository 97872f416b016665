// SynchronousDeviceHooks' copies group: memcpy for host-addressable device
// memory, with the kit's own checks (host side, allocation bounds).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <numeric>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/kit/synchronous_device.h"
#include "support/error_of.h"

namespace accel::kit {
namespace {

using accel::testing::errorOf;
using ::testing::HasSubstr;

class CopyingKitHooks final : public SynchronousDeviceHooks {
 public:
  CopyingKitHooks(DeviceType type, Capabilities groups)
      : SynchronousDeviceHooks(type, groups, 2) {}
  using SynchronousDeviceHooks::addresses;
  using SynchronousDeviceHooks::setTracing;
  mutable std::vector<HookId> traced;  // single-threaded tests only

 protected:
  void onHookCall(HookId hook) const override { traced.push_back(hook); }
};

class SynchronousDeviceCopiesTest : public ::testing::Test {
 protected:
  SynchronousDeviceCopiesTest() {
    // Two allocations side by side on device 0, so that a range can run from
    // one into the next without leaving the device.
    hooks_.addresses().insert(device0_.data(), 32, Device(type_, 0), MemoryKind::Device);
    hooks_.addresses().insert(device0_.data() + 32, 32, Device(type_, 0),
                              MemoryKind::Device);
    hooks_.addresses().insert(device1_.data(), device1_.size(), Device(type_, 1),
                              MemoryKind::Device);
    hooks_.addresses().insert(pinned_.data(), pinned_.size(), Device(DeviceType::CPU),
                              MemoryKind::Pinned);
    std::iota(host_.begin(), host_.end(), 1);
  }
  ~SynchronousDeviceCopiesTest() override {
    hooks_.addresses().erase(device0_.data());
    hooks_.addresses().erase(device0_.data() + 32);
    hooks_.addresses().erase(device1_.data());
    hooks_.addresses().erase(pinned_.data());
  }
  Stream stream(int index) const { return Stream(Device(type_, DeviceIndex(index)), 0); }

  DeviceType type_ = registerDeviceType("kit_copies");
  CopyingKitHooks hooks_{type_, Capabilities{HookGroup::Copies}};
  std::array<unsigned char, 64> device0_{};
  std::array<unsigned char, 64> device1_{};
  std::array<unsigned char, 64> pinned_{};
  std::array<unsigned char, 64> host_{};
};

TEST_F(SynchronousDeviceCopiesTest, CopiesAreDoneWhenTheCallReturns) {
  hooks_.copyHostToDevice(device0_.data(), host_.data(), 32, stream(0));
  hooks_.copyHostToDevice(device0_.data() + 32, host_.data() + 32, 32, stream(0));
  EXPECT_EQ(device0_, host_);
  hooks_.copyDeviceToDevice(device1_.data() + 1, device0_.data() + 32, 32, stream(1));
  EXPECT_EQ(device1_[1], 33);
  EXPECT_EQ(device1_[32], 64);
  hooks_.copyDeviceToHost(pinned_.data(), device1_.data() + 1, 63, stream(1));
  EXPECT_EQ(pinned_[31], 64);
  EXPECT_TRUE(hooks_.hasPrimaryContext(1)) << "a copy uses its stream's device";
}

TEST_F(SynchronousDeviceCopiesTest, EachCopyIsTracedAsItsHook) {
  hooks_.setTracing(true);
  hooks_.copyHostToDevice(device0_.data(), host_.data(), 4, stream(0));
  hooks_.copyDeviceToHost(host_.data(), device0_.data(), 4, stream(0));
  hooks_.copyDeviceToDevice(device1_.data(), device0_.data(), 4, stream(0));
  hooks_.setTracing(false);
  // The core's checks call the pointer hooks too; only the copies matter here.
  std::erase_if(hooks_.traced,
                [](HookId hook) { return hookInfo(hook).group != HookGroup::Copies; });
  EXPECT_EQ(hooks_.traced,
            (std::vector<HookId>{HookId::copyHostToDevice, HookId::copyDeviceToHost,
                                 HookId::copyDeviceToDevice}));
}

TEST_F(SynchronousDeviceCopiesTest, DeviceMemoryAsTheHostSideIsRefused) {
  EXPECT_THAT(
      errorOf<InvalidArgument>([&] {
        hooks_.copyHostToDevice(device0_.data(), device1_.data(), 8, stream(0));
      }),
      HasSubstr(std::string(hookInfo(HookId::copyHostToDevice).name) + "(): src"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyDeviceToHost(device1_.data(), device0_.data(), 8, stream(0));
              }),
              HasSubstr("is device memory of kit_copies:1, not host memory"));
  EXPECT_EQ(device0_, decltype(device0_){});
}

TEST_F(SynchronousDeviceCopiesTest, ARangePastItsAllocationIsRefused) {
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(device0_.data() + 28, host_.data(), 4, stream(0));
                hooks_.copyHostToDevice(device0_.data() + 28, host_.data(), 5, stream(0));
              }),
              HasSubstr("runs past the end of its allocation on kit_copies:0 (4 bytes "
                        "left"));
  EXPECT_EQ(device0_[32], 0) << "the refused copy wrote into the next allocation";
}

TEST_F(SynchronousDeviceCopiesTest, UnknownStreamIdsAreRefused) {
  EXPECT_THAT(errorOf<InvalidArgument>([&] {
                hooks_.copyHostToDevice(device0_.data(), host_.data(), 4,
                                        Stream(Device(type_, 0), 99));
              }),
              HasSubstr("was not created by 'kit_copies'"));
}

TEST(SynchronousDeviceCopiesGroupTest, TheGroupIsTheSubclassesToDeclare) {
  CopyingKitHooks hooks(registerDeviceType("kit_copies_undeclared"), {});
  EXPECT_FALSE(hooks.supports(HookGroup::Copies));
  unsigned char byte = 0;
  EXPECT_THAT(errorOf<NotSupported>([&] {
                hooks.copyHostToDevice(&byte, &byte, 1,
                                       Stream(Device(hooks.deviceType(), 0), 0));
              }),
              HasSubstr("does not declare the 'copies' group"));
}

}  // namespace
}  // namespace accel::kit
