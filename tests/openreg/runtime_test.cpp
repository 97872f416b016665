// openreg's own API registers the plugin this program links through its entry
// (accel_core_load_entry), never through plugin autoload, and uses the core's
// allocator. This program never calls registerBackend() itself; ctest runs
// each test in a fresh process.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"

namespace {

TEST(OpenRegRuntimeTest, DirectApiRegistersTheLinkedPluginWithoutAutoload) {
  const accel::DeviceType openreg = accel::openreg::deviceType();
  if (accel::isHooksRegistered(openreg) ||
      accel::autoloadState() != accel::AutoloadState::NotRun) {
    GTEST_SKIP() << "needs a fresh process (run through ctest)";
  }
  // Were autoload to run, it would try (and report failing) to load this.
  ::setenv("ACCEL_PLUGINS", "/nonexistent/libaccel_should_not_load.so", 1);
  accel::DataPtr buffer = accel::openreg::allocate(64, 0);
  ASSERT_TRUE(buffer);
  EXPECT_EQ(buffer.device(), accel::Device(openreg, 0));
  const std::string host = "payload";
  accel::openreg::copy(buffer.get(), host.c_str(), host.size() + 1);
  accel::openreg::failNthAllocation(1);
  EXPECT_THROW((void)accel::openreg::allocate(64, 0), accel::OutOfMemory);

  EXPECT_EQ(accel::autoloadState(), accel::AutoloadState::NotRun);
  EXPECT_TRUE(accel::isHooksRegistered(openreg));
  bool through_entry = false;
  for (const accel::PluginRecord& record : accel::pluginReport()) {
    through_entry |= record.source == "accel_core_load_entry" &&
                     record.status == accel::PluginStatus::Loaded;
  }
  EXPECT_TRUE(through_entry) << "registered through the plugin's entry";
  ::unsetenv("ACCEL_PLUGINS");
}

// A second copy of the plugin, loaded from another file, has a runtime of
// its own that this program's API would not drive: registerBackend() says so
// instead of failing later in a way that blames registration.
TEST(OpenRegRuntimeTest, ASecondCopyOfThePluginLoadedFromAnotherFileIsRefusedByName) {
  if (accel::autoloadState() != accel::AutoloadState::NotRun ||
      accel::isHooksRegistered(accel::openreg::deviceType())) {
    GTEST_SKIP() << "needs a fresh process (run through ctest)";
  }
  const std::string linked = accel::openreg::pluginPath();
  ASSERT_FALSE(linked.empty());
  const std::filesystem::path copy =
      std::filesystem::temp_directory_path() /
      ("libaccel_openreg_copy_" + std::to_string(::getpid()) + ".so");
  std::filesystem::copy_file(linked, copy,
                             std::filesystem::copy_options::overwrite_existing);
  (void)accel::loadBackend(copy.string());
  try {
    (void)accel::openreg::registerBackend();
    ADD_FAILURE() << "registerBackend() accepted openreg loaded from " << copy;
  } catch (const accel::NotAvailable& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("two copies of libaccel_openreg.so"), std::string::npos)
        << message;
    EXPECT_NE(message.find(copy.string()), std::string::npos) << message;
  }
  std::filesystem::remove(copy);
}

// openreg has one init path, the core's (AcceleratorHooks::init, which runs
// the plugin's init): the first call of openreg's own API, with no hook call
// before it, initialises openreg through it, so the core knows openreg as
// initialised (for fork poisoning, manualSeed, isInitialized) from then on.
TEST(OpenRegRuntimeTest, DirectApiInitialisesOpenRegThroughTheCoresInit) {
  const accel::DeviceType openreg = accel::openreg::deviceType();
  if (accel::isHooksRegistered(openreg) ||
      accel::autoloadState() != accel::AutoloadState::NotRun) {
    GTEST_SKIP() << "needs a fresh process (run through ctest)";
  }
  accel::openreg::setExecutionUnits(0, 2);
  EXPECT_EQ(accel::openreg::executionUnitsState(0).units, 2);
  EXPECT_TRUE(accel::getHooks(openreg).isInitialized());
  EXPECT_TRUE(accel::globalContext().isInitialized(openreg));
  EXPECT_EQ(accel::autoloadState(), accel::AutoloadState::NotRun);
}

TEST(OpenRegRuntimeTest, DirectApiReportsAMalformedVariableByName) {
  if (accel::autoloadState() != accel::AutoloadState::NotRun) {
    GTEST_SKIP() << "needs a fresh process (run through ctest)";
  }
  ::setenv("ACCEL_OPENREG_DEVICES", "abc", 1);
  try {
    (void)accel::openreg::allocate(16, 0);
    ADD_FAILURE() << "allocate accepted ACCEL_OPENREG_DEVICES=abc";
  } catch (const accel::InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("ACCEL_OPENREG_DEVICES='abc' is not a device count"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("use an integer from 0 to 128"), std::string::npos) << message;
  }
  ::unsetenv("ACCEL_OPENREG_DEVICES");
  EXPECT_NO_THROW((void)accel::openreg::allocate(16, 0));  // the next init succeeds
}

}  // namespace
