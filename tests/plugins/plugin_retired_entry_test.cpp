// A library built for the retired C++ plugin entry (it exports
// accel_plugin_entry_v1 or accel_plugin_entry_v2, and not the C boundary's
// accel_plugin_negotiate) is refused, and the message tells its author to
// rebuild against the C plugin ABI (docs/plugin-abi.md). The loader never
// calls into it: the test plugin's register function aborts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "accel/plugin_abi.h"
#include "plugin_test_support.h"

namespace accel {
namespace {

using plugtest::testPluginPath;
using ::testing::HasSubstr;

PluginRecord loadTestPluginRefused(const std::string& file) {
  const std::string path = testPluginPath(file);
  try {
    PluginRecord unexpected = loadBackend(path);
    ADD_FAILURE() << path << " loaded: " << describePluginRecord(unexpected);
    return unexpected;
  } catch (const PluginLoadError& e) {
    EXPECT_THAT(e.message(), HasSubstr(path));
    return e.record();
  }
}

bool hasBackend(const char* name) {
  std::optional<DeviceType> type = findDeviceType(name);
  return type && isHooksRegistered(*type);
}

// What a refusal of a retired entry says: the symbol it found, that the
// plugin must be rebuilt, the entry it needs, and where the rules are.
void expectToldToRebuildAgainstTheCAbi(const PluginRecord& r, const char* symbol) {
  EXPECT_EQ(r.status, PluginStatus::VersionMismatch) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr(symbol));
  EXPECT_THAT(r.detail, HasSubstr("rebuild"));
  EXPECT_THAT(r.detail, HasSubstr(ACCEL_PLUGIN_ENTRY_NAME));
  EXPECT_THAT(r.detail, HasSubstr("docs/plugin-abi.md"));
}

TEST(PluginRetiredEntry, ApiOneEntryIsRefusedTellingToRebuild) {
  PluginRecord r = loadTestPluginRefused("libaccel_plugtest_v1.so");
  expectToldToRebuildAgainstTheCAbi(r, "accel_plugin_entry_v1");
  EXPECT_THAT(r.detail, HasSubstr("rebuild the plugin"));
  EXPECT_TRUE(r.registered.empty());
  EXPECT_FALSE(hasBackend("plugtest_v1"));
  // Tried again, refused again: nothing of the first attempt stayed.
  EXPECT_EQ(loadTestPluginRefused("libaccel_plugtest_v1.so").detail, r.detail);
}

TEST(PluginRetiredEntry, CxxEntryIsRefusedTellingToRebuildAgainstTheCAbi) {
  PluginRecord r = loadTestPluginRefused("libaccel_plugtest_cxx_entry.so");
  expectToldToRebuildAgainstTheCAbi(r, "accel_plugin_entry_v2");
  EXPECT_TRUE(r.registered.empty());
  EXPECT_FALSE(hasBackend("plugtest_cxx_entry"));
}

}  // namespace
}  // namespace accel
