// The conformance suite's own API: case table, registration, descriptions.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "accel/conformance.h"
#include "accel/error.h"

namespace accel::conformance {
namespace {

TEST(ConformanceSuite, CasesCoverEveryHookGroup) {
  std::set<HookGroup> groups;
  for (const CaseInfo& c : conformanceCases()) groups.insert(c.group);
  for (int g = 0; g < kNumHookGroups; ++g) {
    EXPECT_TRUE(groups.count(static_cast<HookGroup>(g)))
        << "no case for group " << hookGroupName(static_cast<HookGroup>(g));
  }
}

TEST(ConformanceSuite, CaseNamesAreUniqueAndNameTheirHooks) {
  std::set<std::string> names;
  for (const CaseInfo& c : conformanceCases()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name " << c.name;
    EXPECT_FALSE(c.hooks.empty()) << c.name << " names no hook";
  }
}

TEST(ConformanceSuite, DescribeTestIdentifiesRegisteredConformanceTests) {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  int described = 0;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    if (std::string(suite.name()).rfind("TestBackend/testdev/", 0) != 0) continue;
    for (int j = 0; j < suite.total_test_count(); ++j) {
      std::optional<TestDescription> description = describeTest(*suite.GetTestInfo(j));
      ASSERT_TRUE(description.has_value())
          << suite.name() << "." << suite.GetTestInfo(j)->name();
      EXPECT_EQ(deviceTypeName(description->type), "testdev");
      EXPECT_EQ(description->testCase.name, suite.GetTestInfo(j)->name());
      ++described;
    }
  }
  EXPECT_EQ(described, static_cast<int>(conformanceCases().size()));
  EXPECT_FALSE(describeTest(*unit.current_test_info()).has_value())
      << "a test that is not a conformance test was described";
}

TEST(ConformanceSuite, TestFilterSelectsOneBackend) {
  DeviceType type = registerDeviceType("testdev");
  EXPECT_EQ(testFilterFor(type, "Prefix"), "Prefix/testdev/*");
  EXPECT_EQ(testFilterFor(type), "Conformance/testdev/*");
}

TEST(ConformanceSuite, RegistrationRejectsEmptyPrefixAndUnknownType) {
  SuiteOptions noPrefix;
  noPrefix.prefix = "";
  EXPECT_THROW(
      registerConformanceTests(std::vector<DeviceType>{DeviceType::CPU}, noPrefix),
      InvalidArgument);
  auto neverRegistered = static_cast<DeviceType>(kMaxDeviceTypes + 10);
  EXPECT_THROW(registerConformanceTests(std::vector<DeviceType>{neverRegistered}),
               InvalidArgument);
}

}  // namespace
}  // namespace accel::conformance
