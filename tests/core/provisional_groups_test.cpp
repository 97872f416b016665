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

TEST(ProvisionalGroupsTest, WithoutProvisionalGroupsNothingIsSettled) {
  EXPECT_EQ(Capabilities::fromBits(Capabilities{HookGroup::Graphs}.bits()),
            Capabilities{HookGroup::Graphs});
  EXPECT_EQ(Capabilities{HookGroup::Graphs}.without(HookGroup::Graphs), Capabilities{});
  EXPECT_EQ(Capabilities{}.without(HookGroup::Low), Capabilities{})
      << "low and high are always present";
}

}  // namespace
}  // namespace accel
