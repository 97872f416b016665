// A backend whose driver crashes or hangs while it is discovered never takes
// `accel info` or `accel check` down (docs/lifecycle.md, "Discovery"): each
// backend is discovered in a separate process first, and one that crashed,
// hung or gave up there is reported as not available (info) or as failed to
// start (check), with the reason, while the other backends are still shown.
// A --plugin path is loaded in a separate process first too (an explicit load
// asks its backends for their devices).
//
// The broken backends are plugins (tests/conformance/minimal_backend.h),
// autoloaded through ACCEL_PLUGINS (which registers without discovery) unless
// a test says --plugin: discoverycrash raises SIGSEGV in
// isAvailable/deviceCount, discoveryhang blocks there for good, inithang
// discovers two devices and then blocks in its initialisation.
// ACCEL_DISCOVERY_TIMEOUT=1 keeps the hanging ones short; ACCEL_PLUGIN_PATH=
// keeps the build's own plugins out.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tool_run.h"

namespace {

using accel::tooltest::contains;
using accel::tooltest::lastLine;
using accel::tooltest::runTool;
using accel::tooltest::Stderr;
using accel::tooltest::ToolRun;

// In a sanitizer build the sanitizer would catch the crashing plugin's
// SIGSEGV and exit with a status of its own: handle_segv=0 lets the child
// die of the signal, as it does in a plain build, so that the report names it.
#define CRASHES_AS_SIGNALS                        \
  "ASAN_OPTIONS=\"$ASAN_OPTIONS:handle_segv=0\" " \
  "TSAN_OPTIONS=\"$TSAN_OPTIONS:handle_segv=0\" "

// The environment that autoloads `plugin` and the sound test backend.
std::string autoloading(const std::string& plugin) {
  return CRASHES_AS_SIGNALS
         "ACCEL_DISCOVERY_TIMEOUT=1 ACCEL_PLUGIN_PATH= ACCEL_PLUGINS=" +
         plugin + ":" ACCEL_TESTDEV_PLUGIN_PATH;
}

const nlohmann::json* findBackend(const nlohmann::json& info, const std::string& name) {
  for (const nlohmann::json& backend : info["backends"]) {
    if (backend["name"] == name) return &backend;
  }
  return nullptr;
}

// `accel info --json` with `plugin` autoloaded: exits 0, reports `name` as not
// available with a discovery problem containing `reason`, and the test
// backend as available (the other backends are still discovered).
void expectInfoJsonReports(const std::string& plugin, const std::string& name,
                           const std::string& reason) {
  ToolRun run = runTool("info --json", autoloading(plugin), Stderr::Discard);
  ASSERT_EQ(run.status, 0) << run.output;
  nlohmann::json info = nlohmann::json::parse(run.output);
  EXPECT_EQ(info["discovery_isolated"], true) << run.output;
  const nlohmann::json* broken = findBackend(info, name);
  ASSERT_NE(broken, nullptr) << run.output;
  EXPECT_EQ((*broken)["available"], false) << run.output;
  EXPECT_EQ((*broken)["device_count"], 0) << run.output;
  ASSERT_TRUE(broken->contains("discovery_problem")) << run.output;
  EXPECT_TRUE(contains((*broken)["discovery_problem"].get<std::string>(), reason))
      << run.output;
  EXPECT_TRUE(info["current_accelerator"].is_null()) << run.output;
  EXPECT_TRUE(info.contains("current_accelerator_problem")) << run.output;
  const nlohmann::json* testdev = findBackend(info, "testdev");
  ASSERT_NE(testdev, nullptr) << run.output;
  EXPECT_EQ((*testdev)["available"], true) << run.output;
}

// The text report says the same on the broken backend's discovery line.
void expectInfoTextReports(const std::string& plugin, const std::string& reason) {
  ToolRun run = runTool("info", autoloading(plugin));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "    discovery:    ")) << run.output;
  EXPECT_TRUE(contains(run.output, reason)) << run.output;
  EXPECT_TRUE(contains(run.output, "testdev: built, available")) << run.output;
}

// `accel check --backend name`: it failed to start, with the reason, and
// nothing is reported as passed.
void expectCheckFailsToStart(const std::string& plugin, const std::string& name,
                             const std::string& reason) {
  ToolRun run = runTool("check --backend " + name, autoloading(plugin));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "'" + name + "' failed to start")) << run.output;
  EXPECT_TRUE(contains(run.output, reason)) << run.output;
  EXPECT_TRUE(contains(lastLine(run.output), "FAILED: '" + name + "'")) << run.output;
  EXPECT_FALSE(contains(run.output, "passed")) << run.output;
}

TEST(AccelToolDiscovery, InfoReportsABackendWhoseDiscoveryCrashesAndGoesOn) {
  const std::string reason = "discovery of 'discoverycrash' crashed (SIGSEGV)";
  expectInfoJsonReports(ACCEL_DISCOVERY_CRASH_PLUGIN_PATH, "discoverycrash", reason);
  expectInfoTextReports(ACCEL_DISCOVERY_CRASH_PLUGIN_PATH, reason);
}

TEST(AccelToolDiscovery, CheckReportsABackendWhoseDiscoveryCrashesAsFailedToStart) {
  expectCheckFailsToStart(ACCEL_DISCOVERY_CRASH_PLUGIN_PATH, "discoverycrash",
                          "crashed (SIGSEGV) in a separate process");
}

// The suite's cases ask the other registered backends too (copies between
// backends), so beside a backend whose discovery crashes the others are not
// checked either: the check fails and says why, and nothing passes.
TEST(AccelToolDiscovery, CheckOfOthersBesideACrashingBackendFailsAndSaysWhy) {
  ToolRun all = runTool("check", autoloading(ACCEL_DISCOVERY_CRASH_PLUGIN_PATH));
  EXPECT_EQ(all.status, 1) << all.output;
  EXPECT_TRUE(contains(all.output, "'discoverycrash' failed to start")) << all.output;
  EXPECT_EQ(
      lastLine(all.output),
      "accel check: FAILED: 'discoverycrash'; NOT CHECKED: 'testdev'; exit status 1")
      << all.output;
  ToolRun other =
      runTool("check --backend testdev", autoloading(ACCEL_DISCOVERY_CRASH_PLUGIN_PATH));
  EXPECT_EQ(other.status, 1) << other.output;
  EXPECT_TRUE(contains(other.output, "Leave its plugin out")) << other.output;
  EXPECT_EQ(lastLine(other.output), "accel check: NOT CHECKED: 'testdev'; exit status 1")
      << other.output;
}

TEST(AccelToolDiscovery, InfoReportsABackendWhoseDiscoveryHangs) {
  expectInfoJsonReports(ACCEL_DISCOVERY_HANG_PLUGIN_PATH, "discoveryhang",
                        "ACCEL_DISCOVERY_TIMEOUT");
  expectInfoTextReports(ACCEL_DISCOVERY_HANG_PLUGIN_PATH,
                        "the first discovery of 'discoveryhang' devices did not finish");
}

TEST(AccelToolDiscovery, CheckReportsABackendWhoseDiscoveryHangsAsFailedToStart) {
  expectCheckFailsToStart(ACCEL_DISCOVERY_HANG_PLUGIN_PATH, "discoveryhang",
                          "ACCEL_DISCOVERY_TIMEOUT");
}

// No bound of the library covers initialisation: the separate process is
// killed once the discovery bound and its grace have passed.
TEST(AccelToolDiscovery, InfoReportsABackendWhoseInitialisationHangs) {
  expectInfoJsonReports(
      ACCEL_INIT_HANG_PLUGIN_PATH, "inithang",
      "discovery of 'inithang' did not finish within 6 s in a separate process");
}

TEST(AccelToolDiscovery, CheckReportsABackendWhoseInitialisationHangsAsFailedToStart) {
  expectCheckFailsToStart(ACCEL_INIT_HANG_PLUGIN_PATH, "inithang", "which was killed");
}

// An explicit --plugin load asks the plugin's backends for their devices:
// it runs in a separate process first, and a crash there leaves the plugin
// unloaded (info: exit status 1, as for any --plugin that did not load).
TEST(AccelToolDiscovery, InfoReportsAPluginPathWhoseLoadCrashes) {
  ToolRun run = runTool("info --json --plugin " ACCEL_DISCOVERY_CRASH_PLUGIN_PATH
                        " --plugin " ACCEL_TESTDEV_PLUGIN_PATH,
                        CRASHES_AS_SIGNALS "ACCEL_PLUGIN_PATH=", Stderr::Discard);
  ASSERT_EQ(run.status, 1) << run.output;
  nlohmann::json info = nlohmann::json::parse(run.output);
  ASSERT_EQ(info["plugin_errors"].size(), 1u) << run.output;
  EXPECT_TRUE(contains(info["plugin_errors"][0].get<std::string>(),
                       "crashed (SIGSEGV) in a separate process"))
      << run.output;
  EXPECT_EQ(findBackend(info, "discoverycrash"), nullptr) << run.output;
  const nlohmann::json* testdev = findBackend(info, "testdev");
  ASSERT_NE(testdev, nullptr) << run.output;
  EXPECT_EQ((*testdev)["available"], true) << run.output;
}

TEST(AccelToolDiscovery, CheckReportsAPluginPathWhoseLoadCrashesAsFailedToStart) {
  ToolRun run = runTool("check --plugin " ACCEL_DISCOVERY_CRASH_PLUGIN_PATH
                        " --plugin " ACCEL_TESTDEV_PLUGIN_PATH,
                        CRASHES_AS_SIGNALS "ACCEL_PLUGIN_PATH=");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "libaccel_discovery_crash_plugin.so failed to start"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "crashed (SIGSEGV) in a separate process"))
      << run.output;
  // The plugin was not loaded here, so the other backend is checked.
  EXPECT_TRUE(
      contains(lastLine(run.output), "FAILED: '" ACCEL_DISCOVERY_CRASH_PLUGIN_PATH))
      << run.output;
  EXPECT_TRUE(contains(lastLine(run.output), "passed: 'testdev'")) << run.output;
}

// The opt-out discovers in the tool's own process: a sound backend is
// reported as before, and the report says discovery was not isolated.
TEST(AccelToolDiscovery, InProcessDiscoversInTheToolsOwnProcess) {
  ToolRun run = runTool("info --json --in-process --plugin " ACCEL_TESTDEV_PLUGIN_PATH,
                        "ACCEL_PLUGIN_PATH=", Stderr::Discard);
  ASSERT_EQ(run.status, 0) << run.output;
  nlohmann::json info = nlohmann::json::parse(run.output);
  EXPECT_EQ(info["discovery_isolated"], false) << run.output;
  const nlohmann::json* testdev = findBackend(info, "testdev");
  ASSERT_NE(testdev, nullptr) << run.output;
  EXPECT_EQ((*testdev)["available"], true) << run.output;
  EXPECT_FALSE(testdev->contains("discovery_problem")) << run.output;
}

}  // namespace
