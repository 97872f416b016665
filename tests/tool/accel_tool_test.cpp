// The `accel` tool as a user runs it: a subprocess, its exit status and output.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "accel/conformance.h"
#include "accel/hook_catalogue.h"
#include "accel/plugin_abi.h"
#include "accel/version.h"
#include "tool_run.h"

namespace {

using accel::tooltest::contains;
using accel::tooltest::lastLine;
using accel::tooltest::runTool;
using accel::tooltest::Stderr;
using accel::tooltest::ToolRun;

// "broken hook getNewStream": the summary line `accel check` prints per hook.
std::string brokenHook(accel::HookId hook) {
  return "broken hook " + std::string(accel::hookInfo(hook).name);
}

// Runs `accel check` with `args` on a backend that breaks the contract: the
// check fails, blames each hook of `broken` and none of `innocent`.
ToolRun checkBlaming(const std::string& args, std::initializer_list<accel::HookId> broken,
                     std::initializer_list<accel::HookId> innocent) {
  ToolRun run = runTool("check " + args);
  EXPECT_EQ(run.status, 1) << run.output;
  for (accel::HookId hook : broken) {
    EXPECT_TRUE(contains(run.output, brokenHook(hook))) << run.output;
  }
  for (accel::HookId hook : innocent) {
    EXPECT_FALSE(contains(run.output, brokenHook(hook))) << run.output;
  }
  return run;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

const nlohmann::json* findBackend(const nlohmann::json& info, const std::string& name) {
  for (const nlohmann::json& backend : info["backends"]) {
    if (backend["name"] == name) return &backend;
  }
  return nullptr;
}

// The tool's headers' plugin API, and the range the loaded core speaks
// (accel_core_plugin_abi_range), each written out here independently of the
// tool's formatting.
TEST(AccelTool, VersionPrintsLibraryAndPluginApiVersions) {
  const auto text = [](std::uint32_t version) {
    return std::to_string(version >> 16) + "." + std::to_string(version & 0xffffu);
  };
  std::uint32_t oldest = 0;
  std::uint32_t newest = 0;
  accel_core_plugin_abi_range(&oldest, &newest);
  ToolRun run = runTool("version");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(contains(
      run.output, "(built with plugin API " + text(ACCEL_PLUGIN_ABI_CURRENT) + ")\n"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "libaccel " + std::string(accel::libraryVersion()) +
                                       " (plugin API " + text(oldest) + "\u2013" +
                                       text(newest) + ")"))
      << run.output;
}

TEST(AccelTool, InfoJsonParsesAndListsOpenregFoundNextToTheTool) {
  ToolRun run = runTool("info --json", "", Stderr::Discard);
  ASSERT_EQ(run.status, 0) << run.output;
  nlohmann::json info =
      nlohmann::json::parse(run.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(info.is_discarded()) << "not JSON:\n" << run.output;
  ASSERT_TRUE(info["backends"].is_array()) << run.output;
  EXPECT_EQ(info["version"]["library"], accel::libraryVersion());
  EXPECT_FALSE(info["autoload"]["default_directories"].empty())
      << "with ACCEL_PLUGIN_PATH unset, the tool searches the directories next to it";
#ifdef ACCEL_TOOL_TEST_HAVE_OPENREG
  const nlohmann::json* openreg = findBackend(info, "openreg");
  ASSERT_NE(openreg, nullptr) << "openreg is built but `accel info` did not find it:\n"
                              << run.output;
  EXPECT_TRUE((*openreg)["available"].get<bool>());
  EXPECT_GT((*openreg)["device_count"].get<int>(), 0);
  EXPECT_TRUE(contains((*openreg)["plugin"].get<std::string>(), "libaccel_openreg.so"));
  ASSERT_FALSE((*openreg)["devices"].empty());
  EXPECT_FALSE((*openreg)["devices"][0]["properties"]["name"].get<std::string>().empty());
  EXPECT_TRUE((*openreg)["devices"][0].contains("memory"));
#endif
}

TEST(AccelTool, InfoSearchesNothingWhenAutoloadIsDisabled) {
  ToolRun run = runTool("info --json", "ACCEL_AUTOLOAD=0", Stderr::Discard);
  ASSERT_EQ(run.status, 0) << run.output;
  nlohmann::json info = nlohmann::json::parse(run.output);
  EXPECT_TRUE(info["autoload"]["default_directories"].empty());
  EXPECT_EQ(findBackend(info, "openreg"), nullptr) << run.output;
}

TEST(AccelTool, InfoExplainsAPluginThatDoesNotLoad) {
  ToolRun run = runTool("info --plugin /nonexistent/libaccel_missing.so");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "/nonexistent/libaccel_missing.so")) << run.output;
  EXPECT_TRUE(contains(run.output, "not found")) << run.output;
}

#ifdef ACCEL_TOOL_TEST_HAVE_OPENREG
// A sharded test runner's GoogleTest settings reach the processes it
// starts; the check runs every case all the same (it ran one shard's).
TEST(AccelTool, CheckRunsEveryCaseInsideAShardedTestRunner) {
  const ToolRun plain = runTool("check --backend openreg");
  ASSERT_EQ(plain.status, 0) << plain.output;
  const ToolRun sharded =
      runTool("check --backend openreg",
              "GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 GTEST_FILTER=nothing");
  EXPECT_EQ(sharded.status, 0) << sharded.output;
  const auto summary = [](const std::string& output) {
    const std::size_t at = output.find("\nopenreg: ");
    return at == std::string::npos
               ? std::string("(no summary)")
               : output.substr(at + 1, output.find('\n', at + 1) - at - 1);
  };
  EXPECT_EQ(summary(sharded.output), summary(plain.output)) << sharded.output;
  EXPECT_NE(summary(plain.output), "(no summary)") << plain.output;
}

TEST(AccelTool, CheckPassesOnOpenreg) {
  ToolRun run = runTool("check --backend openreg");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "openreg: ")) << run.output;
  EXPECT_TRUE(contains(run.output, " 0 failed")) << run.output;
  EXPECT_EQ(lastLine(run.output), "accel check: passed: 'openreg'; exit status 0")
      << run.output;
}
#endif

#ifdef ACCEL_TESTDEV_PLUGIN_PATH
TEST(AccelTool, CheckPassesOnTheTestBackendPlugin) {
  ToolRun run = runTool("check --plugin " ACCEL_TESTDEV_PLUGIN_PATH);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "testdev: ")) << run.output;
  EXPECT_TRUE(contains(run.output, " 0 failed")) << run.output;
  EXPECT_FALSE(contains(run.output, "openreg"))
      << "--plugin checks only what it loaded:\n"
      << run.output;
}

// --validate: the suite runs with the validation layer on in throw mode, and
// the backend still passes; the summary says the layer was on.
TEST(AccelTool, CheckValidatePassesOnTheTestBackendPluginWithTheLayerOn) {
  ToolRun run = runTool("check --validate --plugin " ACCEL_TESTDEV_PLUGIN_PATH);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(contains(run.output, " 0 failed")) << run.output;
  EXPECT_TRUE(contains(run.output,
                       "accel check: validation layer on (throw mode): 0 violation(s)"))
      << run.output;
  EXPECT_EQ(lastLine(run.output), "accel check: passed: 'testdev'; exit status 0")
      << run.output;
}

#ifdef ACCEL_NODEVICE_PLUGIN_PATH
TEST(AccelTool, CheckLastLineNamesWhatPassedAndWhatHadNoDeviceWithStatusThree) {
  // A built plugin whose driver finds no device (CUDA on a machine without
  // a GPU): its device cases cannot run, which is neither passed nor failed.
  ToolRun run = runTool("check --plugin " ACCEL_TESTDEV_PLUGIN_PATH
                        " --plugin " ACCEL_NODEVICE_PLUGIN_PATH);
  EXPECT_EQ(run.status, 3) << run.output;
  EXPECT_TRUE(contains(run.output, " 0 failed")) << run.output;
  EXPECT_EQ(lastLine(run.output),
            "accel check: passed: 'testdev'; NOT CHECKED on a device: 'nodevice' (no "
            "device here: only the cases that need none ran, and passed); exit status 3")
      << run.output;
}
#endif

TEST(AccelTool, CheckWritesAJUnitReport) {
  std::string report = ::testing::TempDir() + "accel_tool_test_junit.xml";
  std::remove(report.c_str());
  ToolRun run = runTool("check --plugin " ACCEL_TESTDEV_PLUGIN_PATH " --junit " + report);
  EXPECT_EQ(run.status, 0) << run.output;
  std::string xml = readFile(report);
  EXPECT_TRUE(contains(xml, "<testsuites")) << xml;
  EXPECT_TRUE(contains(xml, "name=\"conformance/testdev/low\"")) << xml;
  EXPECT_TRUE(contains(xml, "name=\"hooks\"")) << xml;
  EXPECT_FALSE(contains(xml, "<failure")) << xml;
  std::remove(report.c_str());
}
#endif

#ifdef ACCEL_BROKEN_DEVICE_PLUGIN_PATH
TEST(AccelTool, CheckFailsAndNamesABrokenSetCurrentDevice) {
  std::string report = ::testing::TempDir() + "accel_tool_test_broken_junit.xml";
  ToolRun run = checkBlaming(
      "--plugin " ACCEL_BROKEN_DEVICE_PLUGIN_PATH " --junit " + report,
      {accel::HookId::setCurrentDevice}, {accel::HookId::getDefaultGenerator});
  EXPECT_TRUE(contains(run.output, "FAILED: 'brokendevice'")) << run.output;
  EXPECT_TRUE(contains(readFile(report), "<failure"));
  std::remove(report.c_str());
}
#endif

#ifdef ACCEL_BROKEN_COPY_PLUGIN_PATH
// A C plugin's device-to-device copy writes a wrong byte: the copies that
// go through it fail and blame it, not the host copies the cases read back
// with.
TEST(AccelTool, CheckFailsAndNamesABrokenCopyDeviceToDevice) {
  ToolRun run = checkBlaming(
      "--plugin " ACCEL_BROKEN_COPY_PLUGIN_PATH, {accel::HookId::copyDeviceToDevice},
      {accel::HookId::copyHostToDevice, accel::HookId::copyDeviceToHost});
  EXPECT_TRUE(contains(run.output, "DeviceToDeviceCopiesWithinAndAcrossDevices"))
      << run.output;
  // Failures and the trace naming the case point at files a vendor has: the
  // cases as installed under share/doc/accelhooks, never the source tree.
  const std::string installed = "share/doc/accelhooks/conformance/src/";
  EXPECT_TRUE(contains(run.output, "        " + installed + "copies_cases.cpp:"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "        " + installed + "conformance_suite.cpp:"))
      << run.output;
  EXPECT_FALSE(contains(run.output, " conformance/src/")) << run.output;
}
#endif

#ifdef ACCEL_TOOL_TEST_HAVE_OPENREG
TEST(AccelTool, CheckFailsOnABackendThatCannotInitialise) {
  ToolRun run = runTool("check --backend openreg", "ACCEL_OPENREG_MEMORY=garbage");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "'openreg' is registered but failed to initialise"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "ACCEL_OPENREG_MEMORY")) << run.output;
  EXPECT_FALSE(contains(run.output, "accel check: passed")) << run.output;
}

TEST(AccelTool, InfoShowsTheInitErrorOfABackendThatCannotInitialise) {
  ToolRun run = runTool("info --json", "ACCEL_OPENREG_DEVICES=abc", Stderr::Discard);
  ASSERT_EQ(run.status, 0) << run.output;
  nlohmann::json info = nlohmann::json::parse(run.output);
  const nlohmann::json* openreg = findBackend(info, "openreg");
  ASSERT_NE(openreg, nullptr) << run.output;
  ASSERT_TRUE(openreg->contains("init_error")) << run.output;
  EXPECT_TRUE(
      contains((*openreg)["init_error"].get<std::string>(), "ACCEL_OPENREG_DEVICES"))
      << run.output;
  ToolRun text = runTool("info", "ACCEL_OPENREG_DEVICES=abc");
  EXPECT_TRUE(contains(text.output, "init failed:")) << text.output;
  EXPECT_TRUE(contains(text.output, "ACCEL_OPENREG_DEVICES='abc'")) << text.output;
}
#endif

TEST(AccelTool, TruncatedPluginIsReportedNotACrash) {
  // Cut after its headers, a plugin killed info and check with SIGBUS in dlopen.
  std::string cut = ::testing::TempDir() + "libaccel_tooltest_cut.so";
  {
    std::ifstream in(ACCEL_TOOL_PATH, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(cut, std::ios::binary).write(head.data(), in.gcount());
  }
  ToolRun info = runTool("info --plugin " + cut);
  EXPECT_EQ(info.status, 1) << info.output;
  EXPECT_TRUE(contains(info.output, "truncated or damaged")) << info.output;
  ToolRun check = runTool("check --plugin " + cut);
  EXPECT_EQ(check.status, 2) << check.output;
  EXPECT_TRUE(contains(check.output, "truncated or damaged")) << check.output;
  std::remove(cut.c_str());
}

TEST(AccelTool, CheckRefusesAFifoNamedLikeAPluginWithoutHanging) {
  std::string fifo = ::testing::TempDir() + "libaccel_tooltest_fifo.so";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ToolRun run = runTool("check --plugin " + fifo);
  std::remove(fifo.c_str());
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "FIFO")) << run.output;
  EXPECT_TRUE(contains(run.output, "not a regular file")) << run.output;
}

#ifdef ACCEL_BROKEN_STREAMS_PLUGIN_PATH
// The backend declares device and streams but lacks getDefaultStreamImpl and
// getNewStreamImpl. Cases about deviceSynchronize, exchangeStream and
// synchronizeStream use those two; they must blame the missing *Impls.
TEST(AccelTool, CheckBlamesMissingImplementationsNotTheHookUnderTest) {
  using accel::HookId;
  using accel::hookInfo;
  ToolRun run = checkBlaming(
      "--plugin " ACCEL_BROKEN_STREAMS_PLUGIN_PATH,
      {HookId::getDefaultStream, HookId::getNewStream},
      {HookId::deviceSynchronize, HookId::exchangeStream, HookId::synchronizeStream,
       HookId::getCurrentStream, HookId::setCurrentStream, HookId::queryStream});
  for (HookId missing : {HookId::getDefaultStream, HookId::getNewStream}) {
    EXPECT_TRUE(contains(run.output, brokenHook(missing) + ": fix or override " +
                                         std::string(hookInfo(missing).impl)))
        << run.output;
    EXPECT_TRUE(contains(run.output, "it is not implemented: override " +
                                         std::string(hookInfo(missing).impl)))
        << run.output;
  }
  // Each failure names its case, also when it happened on a thread the case started.
  EXPECT_TRUE(
      contains(run.output, "conformance case streams.QueryIsTrueAfterSynchronize"))
      << run.output;
  // The hooks threw from the core (src/core/hooks/hooks.cpp); a vendor has no
  // such file, so the report gives the error's message without its location.
  EXPECT_TRUE(contains(run.output, "This is a bug in the backend")) << run.output;
  EXPECT_FALSE(contains(run.output, "[src/")) << run.output;
  EXPECT_FALSE(contains(run.output, "[backends/")) << run.output;
}
#endif

TEST(AccelTool, CheckListPrintsEveryGroupHookAndCaseAndLoadsNothing) {
  ToolRun run = runTool("check --list", "ACCEL_PLUGINS=/nonexistent/libaccel_x.so");
  EXPECT_EQ(run.status, 0) << run.output;
  for (const accel::HookInfo& hook : accel::kHookCatalogue) {
    EXPECT_TRUE(contains(run.output, " " + std::string(hook.name))) << hook.name;
  }
  for (const accel::conformance::CaseInfo& c : accel::conformance::conformanceCases()) {
    std::string label = std::string(accel::hookGroupName(c.group)) + "." + c.name;
    EXPECT_TRUE(contains(run.output, label)) << label << "\n" << run.output;
  }
  EXPECT_FALSE(contains(run.output, "libaccel_x")) << "--list must not load plugins";
}

TEST(AccelTool, CheckRejectsAnUnknownBackend) {
  ToolRun run = runTool("check --backend nosuchdevice");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "no backend 'nosuchdevice' is registered"))
      << run.output;
}

TEST(AccelTool, CheckRejectsAPluginThatDoesNotLoad) {
  ToolRun run = runTool("check --plugin /nonexistent/libaccel_missing.so");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "not found")) << run.output;
}

}  // namespace
