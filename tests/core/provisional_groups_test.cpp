// Groups a backend declares provisionally and settles on first question
// (AcceleratorHooks' three-argument constructor): the OpenCL backend's
// graphs, which depend on the devices it finds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks.h"
#include "support/error_of.h"

namespace accel {
namespace {

using testing::errorOf;
using ::testing::HasSubstr;

// Declares streams for good and graphs provisionally; keeps graphs or not
// as told, and counts how often it was asked.
class ProvisionalHooks final : public AcceleratorHooks {
 public:
  ProvisionalHooks(DeviceType type, bool keep_graphs)
      : AcceleratorHooks(type, Capabilities{HookGroup::Streams},
                         Capabilities{HookGroup::Graphs}),
        keep_graphs_(keep_graphs) {}

  mutable std::atomic<int> settled{0};

 protected:
  Capabilities settleCapabilitiesImpl() const override {
    ++settled;
    return keep_graphs_ ? Capabilities{HookGroup::Graphs} : Capabilities{};
  }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void initImpl() override {}
  GraphId graphCreateImpl(bool) override { return 7; }

 private:
  bool keep_graphs_;
};

TEST(ProvisionalGroupsTest, SettledOnTheFirstQuestionNotAtConstruction) {
  ProvisionalHooks hooks(registerDeviceType("provisionaldev1"), /*keep_graphs=*/true);
  EXPECT_EQ(hooks.settled.load(), 0) << "construction must not settle (no driver yet)";
  (void)hooks.isAvailable();
  EXPECT_EQ(hooks.settled.load(), 0) << "a probe of another kind does not settle";
  EXPECT_TRUE(hooks.supports(HookGroup::Graphs));
  EXPECT_TRUE(hooks.supports(HookGroup::Streams));
  EXPECT_EQ(hooks.settled.load(), 1);
  EXPECT_EQ(hooks.graphCreate(), GraphId{7});
  EXPECT_EQ(hooks.capabilities().str(), "low, high, streams, graphs");
  EXPECT_EQ(hooks.settled.load(), 1) << "settled once";
}

TEST(ProvisionalGroupsTest, AGroupNotKeptIsUndeclaredAndRefusedWithNotSupported) {
  ProvisionalHooks hooks(registerDeviceType("provisionaldev2"), /*keep_graphs=*/false);
  // The first question is a call into the group itself.
  const std::string message = errorOf<NotSupported>([&] { (void)hooks.graphCreate(); });
  EXPECT_THAT(message, HasSubstr("'provisionaldev2' does not support " +
                                 std::string(hookInfo(HookId::graphCreate).name) + "()"));
  EXPECT_THAT(message, HasSubstr("does not declare the 'graphs' group"));
  EXPECT_THAT(message, HasSubstr("it declares: low, high, streams)"));
  EXPECT_FALSE(hooks.supports(HookGroup::Graphs));
  EXPECT_EQ(hooks.settled.load(), 1);
}

TEST(ProvisionalGroupsTest, ThreadsAskingAtOnceSeeOneAnswerSettledOnce) {
  ProvisionalHooks hooks(registerDeviceType("provisionaldev3"), /*keep_graphs=*/true);
  std::atomic<int> saw_graphs{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (hooks.supports(HookGroup::Graphs)) ++saw_graphs;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(saw_graphs.load(), 4);
  EXPECT_EQ(hooks.settled.load(), 1);
}

// Answers what it is told to: a set, or an exception.
class SettlingHooks final : public AcceleratorHooks {
 public:
  SettlingHooks(DeviceType type, Capabilities provisional, Capabilities answer,
                bool throws)
      : AcceleratorHooks(type, Capabilities{HookGroup::Streams}, provisional),
        answer_(answer),
        throws_(throws) {}

  mutable std::atomic<int> settled{0};

 protected:
  Capabilities settleCapabilitiesImpl() const override {
    ++settled;
    if (throws_) throw DeviceError("the probe failed");
    return answer_;
  }

 private:
  Capabilities answer_;
  bool throws_;
};

TEST(ProvisionalGroupsTest, AProbeThatThrowsKeepsNoProvisionalGroup) {
  SettlingHooks hooks(registerDeviceType("provisionaldev4"),
                      Capabilities{HookGroup::Graphs, HookGroup::Events},
                      Capabilities{HookGroup::Graphs, HookGroup::Events},
                      /*throws=*/true);
  EXPECT_FALSE(hooks.supports(HookGroup::Graphs));
  EXPECT_FALSE(hooks.supports(HookGroup::Events));
  EXPECT_TRUE(hooks.supports(HookGroup::Streams)) << "declared for good";
  EXPECT_EQ(hooks.capabilities().str(), "low, high, streams");
  EXPECT_EQ(hooks.settled.load(), 1) << "not asked again after throwing";
}

TEST(ProvisionalGroupsTest, OnlyProvisionalGroupsCanBeKept) {
  // The probe answers Events too, which was not provisional: it stays out.
  SettlingHooks hooks(
      registerDeviceType("provisionaldev5"), Capabilities{HookGroup::Graphs},
      Capabilities{HookGroup::Graphs, HookGroup::Events}, /*throws=*/false);
  EXPECT_TRUE(hooks.supports(HookGroup::Graphs));
  EXPECT_FALSE(hooks.supports(HookGroup::Events));
  EXPECT_EQ(hooks.capabilities().str(), "low, high, streams, graphs");
}

TEST(ProvisionalGroupsTest, WithoutProvisionalGroupsNothingIsSettled) {
  SettlingHooks hooks(registerDeviceType("provisionaldev6"), Capabilities{},
                      Capabilities{HookGroup::Graphs}, /*throws=*/false);
  EXPECT_TRUE(hooks.supports(HookGroup::Streams));
  EXPECT_FALSE(hooks.supports(HookGroup::Graphs));
  EXPECT_EQ(hooks.settled.load(), 0) << "no provisional group: the probe is never asked";
}

TEST(ProvisionalGroupsTest, FromBitsKeepsLowAndHighAndDropsUnknownBits) {
  EXPECT_EQ(Capabilities::fromBits(Capabilities{HookGroup::Graphs}.bits()),
            Capabilities{HookGroup::Graphs});
  EXPECT_EQ(Capabilities::fromBits(0), Capabilities{})
      << "low and high are always present";
  EXPECT_EQ(Capabilities::fromBits(~0u).bits(), (1u << kNumHookGroups) - 1);
}

}  // namespace
}  // namespace accel
