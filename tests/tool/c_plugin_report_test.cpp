// What `accel info` and `accel check` say of a plugin's API: for a plugin of
// the C boundary (accel/plugin_abi.h, here tests/tool/c_plugin) the range it
// speaks and the version it and the core agreed on, for the core the range it
// speaks, and for a plugin the core refused, the reason naming both ranges.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "accel/plugin_abi.h"
#include "tool_run.h"

namespace {

using accel::tooltest::contains;
using accel::tooltest::lastLine;
using accel::tooltest::runTool;
using accel::tooltest::Stderr;
using accel::tooltest::ToolRun;

// The header's versions, written out independently of the tool's formatting.
std::string text(std::uint32_t version) {
  return std::to_string(version >> 16) + "." + std::to_string(version & 0xffffu);
}
const std::string kCurrent = text(ACCEL_PLUGIN_ABI_CURRENT);
const std::string kFuture = text(ACCEL_PLUGIN_ABI_CURRENT + 1);
const std::string kDash = "\u2013";

// The report's record of the plugin at `path`.
nlohmann::json pluginRecord(const nlohmann::json& info, const std::string& path) {
  for (const nlohmann::json& plugin : info["plugins"]) {
    if (plugin["path"] == path) return plugin;
  }
  ADD_FAILURE() << "no record of " << path << " in\n" << info.dump(2);
  return nlohmann::json::object();
}

nlohmann::json infoJson(const std::string& args, int expected_status) {
  ToolRun run = runTool("info --json " + args, "ACCEL_AUTOLOAD=0", Stderr::Discard);
  EXPECT_EQ(run.status, expected_status) << run.output;
  nlohmann::json info =
      nlohmann::json::parse(run.output, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(info.is_discarded()) << "not JSON:\n" << run.output;
  return info;
}

TEST(AccelToolCPlugin, InfoHeaderAndJsonNameTheCPluginApiRangeOfTheCore) {
  nlohmann::json info = infoJson("", 0);
  EXPECT_EQ(info["version"]["c_plugin_api"],
            (nlohmann::json{{"oldest", "1.0"}, {"newest", kCurrent}}))
      << info["version"].dump();
  // The retired C++ plugin API has no number left to show.
  EXPECT_FALSE(info["version"].contains("plugin_api")) << info["version"].dump();
  EXPECT_FALSE(info["version"].contains("oldest_plugin_api")) << info["version"].dump();
  ToolRun run = runTool("info", "ACCEL_AUTOLOAD=0");
  EXPECT_TRUE(contains(run.output, " (plugin API 1.0" + kDash + kCurrent + ")\n"))
      << run.output;
}

TEST(AccelToolCPlugin, InfoShowsTheRangeACPluginSpeaksAndTheVersionAgreed) {
  nlohmann::json record =
      pluginRecord(infoJson("--plugin " MINIMAL_C_PLUGIN_PATH, 0), MINIMAL_C_PLUGIN_PATH);
  EXPECT_EQ(record["status"], "loaded") << record.dump(2);
  EXPECT_FALSE(record.contains("api_version")) << record.dump(2);
  EXPECT_EQ(
      record["abi"],
      (nlohmann::json{{"newest", kCurrent}, {"oldest", "1.0"}, {"negotiated", kCurrent}}))
      << record.dump(2);
  ToolRun run = runTool("info --plugin " MINIMAL_C_PLUGIN_PATH, "ACCEL_AUTOLOAD=0");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(contains(run.output, ": minimalc 0.1.0, plugin API " + kCurrent +
                                       " (speaks 1.0" + kDash + kCurrent +
                                       "), registered minimalc\n"))
      << run.output;
}

// The core's newest is newer than the plugin's: they agree on the plugin's.
TEST(AccelToolCPlugin, InfoShowsAnOlderCPluginNegotiatedDownToItsNewest) {
  nlohmann::json record = pluginRecord(infoJson("--plugin " MINIMAL_C10_PLUGIN_PATH, 0),
                                       MINIMAL_C10_PLUGIN_PATH);
  EXPECT_EQ(record["abi"],
            (nlohmann::json{{"newest", "1.0"}, {"oldest", "1.0"}, {"negotiated", "1.0"}}))
      << record.dump(2);
  ToolRun run = runTool("info --plugin " MINIMAL_C10_PLUGIN_PATH, "ACCEL_AUTOLOAD=0");
  EXPECT_TRUE(contains(run.output,
                       "minimalc10 0.1.0, plugin API 1.0 (speaks 1.0" + kDash + "1.0)"))
      << run.output;
}

TEST(AccelToolCPlugin, InfoListsARefusedCPluginWithTheReasonNamingBothRanges) {
  nlohmann::json record = pluginRecord(
      infoJson("--plugin " MINIMAL_CFUTURE_PLUGIN_PATH, 1), MINIMAL_CFUTURE_PLUGIN_PATH);
  EXPECT_EQ(record["status"], "version mismatch") << record.dump(2);
  EXPECT_EQ(record["registered"], nlohmann::json::array()) << record.dump(2);
  EXPECT_EQ(
      record["abi"],
      (nlohmann::json{{"newest", kFuture}, {"oldest", kFuture}, {"negotiated", nullptr}}))
      << record.dump(2);
  const std::string detail = record["detail"].get<std::string>();
  EXPECT_TRUE(contains(detail, "speaks plugin API " + kFuture + " to " + kFuture))
      << detail;
  EXPECT_TRUE(contains(detail, "speaks plugin API 1.0 to " + kCurrent)) << detail;
  ToolRun run = runTool("info --plugin " MINIMAL_CFUTURE_PLUGIN_PATH, "ACCEL_AUTOLOAD=0");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "  version mismatch " MINIMAL_CFUTURE_PLUGIN_PATH))
      << run.output;
  EXPECT_TRUE(contains(run.output, "minimalcfuture 0.1.0, no plugin API agreed (speaks " +
                                       kFuture + kDash + kFuture + ")"))
      << run.output;
}

// A library built for the retired C++ entry of plugin API 1 (tests/plugins)
// is listed as refused, with the reason telling to rebuild it.
TEST(AccelToolCPlugin, InfoListsALibraryOfARetiredEntryAsRefusedWithTheReason) {
  nlohmann::json record = pluginRecord(infoJson("--plugin " RETIRED_ENTRY_PLUGIN_PATH, 1),
                                       RETIRED_ENTRY_PLUGIN_PATH);
  EXPECT_EQ(record["status"], "version mismatch") << record.dump(2);
  EXPECT_EQ(record["registered"], nlohmann::json::array()) << record.dump(2);
  EXPECT_TRUE(record["abi"].is_null()) << record.dump(2);
  const std::string detail = record["detail"].get<std::string>();
  EXPECT_TRUE(contains(detail, "accel_plugin_entry_v1")) << detail;
  EXPECT_TRUE(contains(detail, "rebuild the plugin")) << detail;
  ToolRun run = runTool("info --plugin " RETIRED_ENTRY_PLUGIN_PATH, "ACCEL_AUTOLOAD=0");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "  version mismatch " RETIRED_ENTRY_PLUGIN_PATH))
      << run.output;
}

TEST(AccelToolCPlugin, CheckNamesTheCPluginAndTheApiAgreedAndPassesIt) {
  ToolRun run = runTool("check --plugin " MINIMAL_C_PLUGIN_PATH, "ACCEL_AUTOLOAD=0");
  EXPECT_TRUE(contains(run.output,
                       "minimalc (declares: low, high) from minimalc 0.1.0, "
                       "plugin API " +
                           kCurrent + " (speaks 1.0" + kDash + kCurrent + ")\n"))
      << run.output;
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(lastLine(run.output), "accel check: passed: 'minimalc'; exit status 0")
      << run.output;
}

TEST(AccelToolCPlugin, CheckNamesTheApiAnOlderCPluginAgreedOn) {
  ToolRun run = runTool("check --plugin " MINIMAL_C10_PLUGIN_PATH, "ACCEL_AUTOLOAD=0");
  EXPECT_TRUE(contains(run.output,
                       "minimalc10 (declares: low, high) from minimalc10 "
                       "0.1.0, plugin API 1.0 (speaks 1.0" +
                           kDash + "1.0)\n"))
      << run.output;
  EXPECT_EQ(run.status, 0) << run.output;
}

TEST(AccelToolCPlugin, CheckRefusesACPluginTheCoreRefusedWithTheReason) {
  ToolRun run =
      runTool("check --plugin " MINIMAL_CFUTURE_PLUGIN_PATH, "ACCEL_AUTOLOAD=0");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "speaks plugin API " + kFuture + " to " + kFuture))
      << run.output;
  EXPECT_TRUE(contains(run.output, "speaks plugin API 1.0 to " + kCurrent)) << run.output;
}

}  // namespace
