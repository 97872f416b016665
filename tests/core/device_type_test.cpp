#include "accel/device_type.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "support/error_of.h"

namespace accel {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The message of the InvalidArgument that deviceTypeFromName(name) throws.
std::string fromNameError(const std::string& name) {
  return testing::errorOf<InvalidArgument>([&] { (void)deviceTypeFromName(name); });
}

TEST(DeviceTypeTest, BuiltinTypesHaveFixedIdsAndNames) {
  const std::vector<std::pair<DeviceType, std::string_view>> builtins = {
      {DeviceType::CPU, "cpu"}, {DeviceType::CUDA, "cuda"}, {DeviceType::HIP, "hip"},
      {DeviceType::MPS, "mps"}, {DeviceType::XPU, "xpu"},   {DeviceType::MTIA, "mtia"},
      {DeviceType::HPU, "hpu"}};
  ASSERT_EQ(builtins.size(), static_cast<std::size_t>(kNumBuiltinDeviceTypes));
  for (auto [type, name] : builtins) {
    EXPECT_EQ(deviceTypeName(type), name);
    EXPECT_EQ(findDeviceType(name), type);
    EXPECT_EQ(deviceTypeFromName(name), type);
    EXPECT_TRUE(isValidDeviceType(type));
  }
  std::vector<DeviceType> all = allDeviceTypes();
  ASSERT_GE(all.size(), builtins.size());
  for (std::size_t i = 0; i < builtins.size(); ++i) EXPECT_EQ(all[i], builtins[i].first);
}

TEST(DeviceTypeTest, RegisteringABuiltinNameReturnsTheBuiltin) {
  EXPECT_EQ(registerDeviceType("cuda"), DeviceType::CUDA);
  EXPECT_EQ(registerDeviceType("cpu"), DeviceType::CPU);
}

TEST(DeviceTypeTest, RunTimeRegistrationIsIdempotent) {
  DeviceType first = registerDeviceType("dt_idempotent");
  DeviceType second = registerDeviceType("dt_idempotent");
  EXPECT_EQ(first, second);
  EXPECT_GE(toIndex(first), kNumBuiltinDeviceTypes);
  EXPECT_EQ(deviceTypeName(first), "dt_idempotent");
  EXPECT_EQ(findDeviceType("dt_idempotent"), first);
  EXPECT_TRUE(isValidDeviceType(first));
}

TEST(DeviceTypeTest, RunTimeTypesAreListedInRegistrationOrder) {
  DeviceType a = registerDeviceType("dt_order_a");
  DeviceType b = registerDeviceType("dt_order_b");
  std::vector<DeviceType> all = allDeviceTypes();
  auto pos_a = std::find(all.begin(), all.end(), a);
  auto pos_b = std::find(all.begin(), all.end(), b);
  ASSERT_NE(pos_a, all.end());
  ASSERT_NE(pos_b, all.end());
  EXPECT_LT(pos_a, pos_b);
}

TEST(DeviceTypeTest, ConcurrentRegistrationOfOneNameYieldsOneType) {
  constexpr int kThreads = 8;
  std::vector<DeviceType> seen(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&seen, i] {
      seen[i] = registerDeviceType("dt_concurrent");
      // Lookups of other names while registering must stay correct too.
      EXPECT_EQ(findDeviceType("cuda"), DeviceType::CUDA);
    });
  }
  for (std::thread& t : threads) t.join();
  for (DeviceType t : seen) EXPECT_EQ(t, seen[0]);
  std::vector<DeviceType> all = allDeviceTypes();
  EXPECT_EQ(std::count(all.begin(), all.end(), seen[0]), 1);
}

TEST(DeviceTypeTest, UnknownTypeHasNoName) {
  EXPECT_EQ(findDeviceType("dt_never_registered"), std::nullopt);
  EXPECT_EQ(deviceTypeName(static_cast<DeviceType>(200)), "unknown");
  EXPECT_EQ(deviceTypeName(static_cast<DeviceType>(kMaxDeviceTypes - 1)), "unknown");
  EXPECT_FALSE(isValidDeviceType(static_cast<DeviceType>(200)));
  EXPECT_FALSE(isValidDeviceType(static_cast<DeviceType>(kMaxDeviceTypes - 1)));
}

TEST(DeviceTypeTest, FromNameOfUnknownTypeListsKnownTypes) {
  EXPECT_THAT(fromNameError("nosuch"),
              AllOf(HasSubstr("unknown device type 'nosuch'"),
                    HasSubstr("cpu, cuda, hip"), HasSubstr("load its plugin")));
}

TEST(DeviceTypeTest, FromNameOfUpperCaseNameSuggestsLowerCase) {
  EXPECT_THAT(fromNameError("CUDA"), HasSubstr("did you mean 'cuda'"));
}

TEST(DeviceTypeTest, BadNamesAreRejectedWithTheReason) {
  const std::string too_long(kMaxDeviceTypeNameLength + 1, 'a');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "must not be empty"},
      {too_long, "the limit is 31"},
      {"Openreg", "must start with a lower-case letter"},
      {"9dev", "must start with a lower-case letter"},
      {"_dev", "must start with a lower-case letter"},
      {"open-reg", "contains '-'"},
      {"open reg", "contains ' '"},
      {"open:reg", "contains ':'"},
      {"devÄ", "only lower-case letters, digits and '_'"},
      {std::string("de\0v", 4), "only lower-case letters"},
  };
  for (const auto& [name, reason] : cases) {
    SCOPED_TRACE(name);
    EXPECT_THAT(explainBadDeviceTypeName(name), HasSubstr(reason));
    EXPECT_THAT(
        testing::errorOf<InvalidArgument>([&] { (void)registerDeviceType(name); }),
        HasSubstr(reason));
    EXPECT_EQ(findDeviceType(name), std::nullopt);
  }
}

TEST(DeviceTypeTest, LongestAllowedNameIsAccepted) {
  const std::string longest = "l" + std::string(kMaxDeviceTypeNameLength - 1, '9');
  EXPECT_EQ(explainBadDeviceTypeName(longest), "");
  EXPECT_EQ(deviceTypeName(registerDeviceType(longest)), longest);
}

TEST(DeviceTypeTest, PrintsItsName) {
  std::ostringstream out;
  out << DeviceType::MTIA << ' ' << registerDeviceType("dt_print");
  EXPECT_EQ(out.str(), "mtia dt_print");
}

// Filling every slot is irreversible, so it runs in a child process.
TEST(DeviceTypeTest, RegistrationBeyondTheMaximumFailsClearly) {
  pid_t pid = ::fork();
  ASSERT_NE(pid, -1);
  if (pid == 0) {
    int registered = static_cast<int>(allDeviceTypes().size());
    for (int i = 0; registered < kMaxDeviceTypes; ++i) {
      registerDeviceType("dt_fill_" + std::to_string(i));
      ++registered;
    }
    if (static_cast<int>(allDeviceTypes().size()) != kMaxDeviceTypes) ::_exit(10);
    try {
      registerDeviceType("dt_one_too_many");
      ::_exit(11);
    } catch (const InvalidArgument& e) {
      std::string message = e.message();
      if (message.find("all 64 device type slots are taken") == std::string::npos)
        ::_exit(12);
      if (message.find("dt_one_too_many") == std::string::npos) ::_exit(13);
    }
    // Names that exist still resolve, and re-registering them still works.
    if (registerDeviceType("dt_fill_0") != *findDeviceType("dt_fill_0")) ::_exit(14);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child failed at check " << WEXITSTATUS(status);
}

}  // namespace
}  // namespace accel
