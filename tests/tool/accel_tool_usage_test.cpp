// The tool's command-line conventions: --version, one exit status (2) for
// every usage error with a message that names the command, and help footers
// that speak of the command they close.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "accel/plugin_abi.h"
#include "tool_run.h"

namespace {

using accel::tooltest::contains;
using accel::tooltest::runTool;
using accel::tooltest::Stderr;
using accel::tooltest::ToolRun;

TEST(AccelToolUsage, VersionFlagsPrintWhatTheVersionCommandPrints) {
  ToolRun command = runTool("version");
  ASSERT_EQ(command.status, 0) << command.output;
  for (const char* flag : {"--version", "-V"}) {
    ToolRun run = runTool(flag);
    EXPECT_EQ(run.status, 0) << flag << ": " << run.output;
    EXPECT_EQ(run.output, command.output) << flag;
  }
}

TEST(AccelToolUsage, UnknownCommandIsNamedWithTheCommandsAndExitsTwo) {
  ToolRun run = runTool("frobnicate --json", "", Stderr::Only);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "unknown command 'frobnicate'")) << run.output;
  for (const char* command : {"info", "check", "version", "memviz", "memreplay"}) {
    EXPECT_TRUE(contains(run.output, command)) << run.output;
  }
}

TEST(AccelToolUsage, EveryUsageErrorExitsTwoNamingTheCommand) {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c :
       {Case{"", "accel: "}, Case{"--no-such-flag", "unknown option '--no-such-flag'"},
        Case{"info --no-such-flag", "accel info: "},
        Case{"check --backend", "accel check: "}, Case{"memviz", "accel memviz: "},
        Case{"memreplay trace.json --device abc", "accel memreplay: "},
        Case{"version extra", "accel version: "},
        Case{"check --list --plugin x.so", "accel check: --plugin excludes --list"},
        Case{"check --backend openreg --list",
             "accel check: --backend excludes --list"}}) {
    ToolRun run = runTool(c.args, "", Stderr::Only);
    EXPECT_EQ(run.status, 2) << "accel " << c.args << ": " << run.output;
    EXPECT_TRUE(contains(run.output, c.says)) << "accel " << c.args << ": " << run.output;
    EXPECT_TRUE(contains(run.output, "--help"))
        << "accel " << c.args << ": " << run.output;
  }
}

TEST(AccelToolUsage, ErrorsACommandFindsNameTheCommandLikeUsageErrors) {
  ToolRun size = runTool("memviz snapshot.json --max-input-size 12Q", "", Stderr::Only);
  EXPECT_EQ(size.status, 2) << size.output;
  EXPECT_EQ(size.output.rfind("accel memviz: --max-input-size '12Q'", 0), 0)
      << size.output;
  ToolRun directory = runTool("memreplay " + ::testing::TempDir(), "", Stderr::Only);
  EXPECT_EQ(directory.status, 2) << directory.output;
  EXPECT_EQ(directory.output.rfind("accel memreplay: '", 0), 0) << directory.output;
  EXPECT_TRUE(contains(directory.output, "is a directory")) << directory.output;
}

TEST(AccelToolUsage, UnwritableJunitFileIsAUsageErrorBeforeAnyCaseRuns) {
  // GoogleTest opens the report only after every case ran, and aborted the
  // tool (SIGABRT) when it could not.
  std::string blocker = ::testing::TempDir() + "accel_usage_junit_blocker";
  std::ofstream(blocker) << "a file where the report's directory should be";
  std::string report = blocker + "/report.xml";
  ToolRun run = runTool("check --junit " + report);
  std::remove(blocker.c_str());
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "accel check: --junit " + report + ": cannot create"))
      << run.output;
  EXPECT_FALSE(contains(run.output, "  pass  ")) << "cases ran:\n" << run.output;
}

TEST(AccelToolUsage, HelpFootersFitTheirCommand) {
  // Plugin sources are told where plugins are loaded, exit statuses where
  // they are more than 0 and 2.
  for (const char* command : {"info", "check"}) {
    ToolRun run = runTool(std::string(command) + " --help");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_TRUE(contains(run.output, "ACCEL_PLUGIN_PATH")) << command << run.output;
  }
  ToolRun check = runTool("check --help");
  EXPECT_TRUE(contains(check.output, "3 nothing failed but a backend has no device"))
      << check.output;
  for (const char* command : {"info", "check", "version", "memviz", "memreplay"}) {
    ToolRun run = runTool(std::string(command) + " --help");
    EXPECT_TRUE(contains(run.output, "Exit status: 0")) << command << run.output;
  }
  // Plugins are found next to libaccel.so, not next to the executable.
  EXPECT_TRUE(contains(check.output, "directory holding libaccel.so")) << check.output;
  for (const char* command : {"version", "memviz", "memreplay"}) {
    ToolRun run = runTool(std::string(command) + " --help");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_FALSE(contains(run.output, "ACCEL_PLUGIN_PATH")) << command << run.output;
    EXPECT_FALSE(contains(run.output, "--plugin PATH")) << command << run.output;
    EXPECT_TRUE(contains(run.output, "Loads no plugin")) << command << run.output;
  }
  ToolRun top = runTool("--help");
  EXPECT_TRUE(contains(top.output, "accel COMMAND --help")) << top.output;
  EXPECT_TRUE(contains(top.output, "--version")) << top.output;
}

TEST(AccelToolUsage, DocsShowWhatVersionPrintsInThisBuild) {
  // docs/accel-tool.md's example shows the current plugin API version.
  std::ifstream in(ACCEL_SOURCE_DIR "/docs/accel-tool.md");
  std::string docs((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  ASSERT_FALSE(docs.empty()) << "cannot read docs/accel-tool.md";
  ToolRun run = runTool("version");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(contains(docs, "$ accel version\n" + run.output))
      << "docs/accel-tool.md's `accel version` example differs from the output:\n"
      << run.output;
}

TEST(AccelToolUsage, DocsShowNoPluginApiButTheCurrentOne) {
  // Every example on the page (info's text and JSON, version) shows the plugin
  // API range of this build ("1.0–1.3"), not one it had when the example was
  // written, and none shows a number of the retired C++ plugin API (a plain
  // integer: "plugin API 4").
  std::ifstream in(ACCEL_SOURCE_DIR "/docs/accel-tool.md");
  const std::string docs((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  ASSERT_FALSE(docs.empty()) << "cannot read docs/accel-tool.md";
  const std::string newest = std::to_string(ACCEL_PLUGIN_ABI_MAJOR) + "." +
                             std::to_string(ACCEL_PLUGIN_ABI_MINOR);
  const std::regex range(
      R"re((plugin API (\d+\.\d+))re"
      "\u2013"
      R"re((\d+\.\d+))|("c_plugin_api": \{"oldest": "([^"]*)", "newest": "([^"]*)"))re");
  int ranges = 0;
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), range);
       it != std::sregex_iterator(); ++it, ++ranges) {
    const bool text = (*it)[1].matched;
    EXPECT_EQ((*it)[text ? 2 : 5].str(), "1.0")
        << "docs/accel-tool.md shows \"" << it->str() << "\"";
    EXPECT_EQ((*it)[text ? 3 : 6].str(), newest)
        << "docs/accel-tool.md shows \"" << it->str() << "\"";
  }
  EXPECT_GE(ranges, 3) << "the page's examples no longer show the plugin API range";
  const std::regex retired(R"((plugin API|for API) (\d+)(?![.\d]))");
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), retired);
       it != std::sregex_iterator(); ++it) {
    ADD_FAILURE() << "docs/accel-tool.md shows \"" << it->str()
                  << "\", a number of the retired C++ plugin API";
  }
}

}  // namespace
