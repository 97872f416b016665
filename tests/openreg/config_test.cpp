// openreg configuration: parsing the environment, and the error init gives
// for a malformed value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"
#include "support/error_of.h"

namespace {

using ::testing::HasSubstr;

accel::openreg::Config parse(const std::map<std::string, std::string>& env) {
  return accel::openreg::parseConfig([&env](const char* name) -> const char* {
    auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  });
}

// The message of the InvalidArgument that parsing `env` throws.
std::string errorFor(const std::map<std::string, std::string>& env) {
  return accel::testing::errorOf<accel::InvalidArgument>([&] { (void)parse(env); });
}

TEST(OpenRegConfigTest, DefaultsAreTwoDevicesOf512MiB) {
  const accel::openreg::Config config = parse({});
  EXPECT_EQ(config.device_count, 2);
  EXPECT_EQ(config.memory_bytes, std::uint64_t{512} << 20);
  EXPECT_EQ(config.execution_units, 4);
  EXPECT_EQ(config.fail_allocation, 0u);
  EXPECT_TRUE(config.lose_device.empty());
  EXPECT_EQ(config.stream_latency.count(), 0);
}

TEST(OpenRegConfigTest, VariablesOverrideTheDefaults) {
  const accel::openreg::Config config = parse({{"ACCEL_OPENREG_DEVICES", "5"},
                                               {"ACCEL_OPENREG_MEMORY", "1GiB"},
                                               {"ACCEL_OPENREG_EXECUTION_UNITS", "1"}});
  EXPECT_EQ(config.device_count, 5);
  EXPECT_EQ(config.memory_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(config.execution_units, 1);
  EXPECT_EQ(parse({{"ACCEL_OPENREG_DEVICES", "0"}}).device_count, 0);
  EXPECT_EQ(parse({{"ACCEL_OPENREG_DEVICES", "128"}}).device_count, 128);
}

TEST(OpenRegConfigTest, SizesTakeBinaryAndDecimalUnits) {
  EXPECT_EQ(accel::openreg::parseByteSize("4096"), 4096u);
  EXPECT_EQ(accel::openreg::parseByteSize("7B"), 7u);
  EXPECT_EQ(accel::openreg::parseByteSize("2KiB"), 2048u);
  EXPECT_EQ(accel::openreg::parseByteSize("512MiB"), std::uint64_t{512} << 20);
  EXPECT_EQ(accel::openreg::parseByteSize("512mib"), std::uint64_t{512} << 20);
  EXPECT_EQ(accel::openreg::parseByteSize("3GiB"), std::uint64_t{3} << 30);
  EXPECT_EQ(accel::openreg::parseByteSize("1TiB"), std::uint64_t{1} << 40);
  EXPECT_EQ(accel::openreg::parseByteSize("1kB"), 1000u);
  EXPECT_EQ(accel::openreg::parseByteSize("2MB"), 2000000u);
  EXPECT_EQ(accel::openreg::parseByteSize("1GB"), 1000000000u);
  for (const char* bad : {"", "MiB", "-1MiB", "1.5GiB", " 1MiB", "1 MiB", "1XB",
                          "99999999999999999999", "20000000000TiB"}) {
    EXPECT_THROW((void)accel::openreg::parseByteSize(bad), accel::InvalidArgument) << bad;
  }
}

TEST(OpenRegConfigTest, SizesAreFormattedForMessages) {
  EXPECT_EQ(accel::openreg::formatByteSize(100), "100 B");
  EXPECT_EQ(accel::openreg::formatByteSize(std::uint64_t{512} << 20), "512 MiB");
  EXPECT_EQ(accel::openreg::formatByteSize(std::uint64_t{3} << 29), "1.5 GiB");
}

TEST(OpenRegConfigTest, MalformedValuesNameTheVariableAndTheAcceptedForm) {
  struct Malformed {
    const char* variable;
    const char* value;
    const char* message_part;
  };
  for (const Malformed& bad : {
           Malformed{"ACCEL_OPENREG_DEVICES", "two", "ACCEL_OPENREG_DEVICES='two'"},
           Malformed{"ACCEL_OPENREG_DEVICES", "129", "from 0 to 128"},
           Malformed{"ACCEL_OPENREG_DEVICES", "-1", "ACCEL_OPENREG_DEVICES"},
           Malformed{"ACCEL_OPENREG_MEMORY", "lots", "ACCEL_OPENREG_MEMORY='lots'"},
           Malformed{"ACCEL_OPENREG_MEMORY", "1KiB", "from 1 MiB"},
           Malformed{"ACCEL_OPENREG_MEMORY", "2TiB", "ACCEL_OPENREG_MEMORY"},
           Malformed{"ACCEL_OPENREG_EXECUTION_UNITS", "0",
                     "ACCEL_OPENREG_EXECUTION_UNITS"},
       }) {
    EXPECT_THAT(errorFor({{bad.variable, bad.value}}), HasSubstr(bad.message_part))
        << bad.variable << "=" << bad.value;
  }
}

// The only test here that initialises the backend: a malformed variable
// makes init fail with a message naming it (the probes answer 0 devices), and
// a corrected environment lets the next init succeed.
TEST(OpenRegConfigTest, InitReportsAMalformedVariableAndCanBeRetried) {
  if (accel::globalContext().isInitialized(accel::openreg::deviceType())) {
    GTEST_SKIP()
        << "needs a process where openreg was never initialised (--gtest_repeat)";
  }
  ::setenv("ACCEL_OPENREG_DEVICES", "lots", 1);
  ::setenv("ACCEL_OPENREG_MEMORY", "8MiB", 1);
  accel::AcceleratorHooks& hooks = accel::openreg::registerBackend();
  EXPECT_EQ(hooks.deviceCount(), 0);
  EXPECT_FALSE(hooks.isAvailable());
  try {
    accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
    FAIL() << "init accepted ACCEL_OPENREG_DEVICES=lots";
  } catch (const accel::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("ACCEL_OPENREG_DEVICES='lots'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)accel::openreg::allocate(16, 0), accel::InvalidArgument);
  ::setenv("ACCEL_OPENREG_DEVICES", "3", 1);
  accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
  EXPECT_EQ(hooks.deviceCount(), 3);
  EXPECT_EQ(accel::openreg::activeConfig().memory_bytes, std::uint64_t{8} << 20);
}

}  // namespace
