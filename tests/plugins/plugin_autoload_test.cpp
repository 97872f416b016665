// The environment-driven autoload. It runs once per process, so every
// scenario runs this binary again as a child (AutoloadChild.Run, which does
// nothing unless ACCEL_TEST_AUTOLOAD_CHILD is set) with its own environment,
// and checks what the child printed: one line per record, the autoload state,
// and the stderr warnings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "plugin_test_support.h"

namespace accel {
namespace {

using plugtest::ChildResult;
using plugtest::countOccurrences;
using plugtest::runChild;
using plugtest::ScratchDir;
using plugtest::testPluginPath;
using ::testing::HasSubstr;
using ::testing::Not;

std::string baseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The child: autoloads twice and prints what happened.
TEST(AutoloadChild, Run) {
  if (std::getenv("ACCEL_TEST_AUTOLOAD_CHILD") == nullptr) {
    GTEST_SKIP() << "runs only as a child of the autoload tests";
  }
  EXPECT_EQ(autoloadState(), AutoloadState::NotRun);
  std::vector<PluginRecord> first = autoloadPlugins();
  std::vector<PluginRecord> second = autoloadPlugins();
  std::cout << "STATE " << autoloadStateName(autoloadState()) << "\n";
  for (const PluginRecord& r : first) {
    std::cout << "RECORD " << r.source << "|" << pluginStatusName(r.status) << "|"
              << baseName(r.path) << "|";
    for (DeviceType t : r.registered) std::cout << deviceTypeName(t) << ",";
    std::cout << "\n";
  }
  std::cout << "SECOND " << second.size() << "\n";
  std::cout << "REPORT " << pluginReport().size() << "\n";
  if (const char* name = std::getenv("ACCEL_TEST_ABSENT_TYPE")) {
    try {
      getHooks(registerDeviceType(name)).init();
    } catch (const Error& e) {
      std::cout << "ABSENT " << e.message() << "\n";
    }
  }
  std::cout.flush();
}

ChildResult autoloadChild(std::map<std::string, std::string> env) {
  env["ACCEL_TEST_AUTOLOAD_CHILD"] = "1";
  ChildResult result = runChild("AutoloadChild.Run", env);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  return result;
}

TEST(Autoload, PluginsVariableLoadsListedFilesInOrderOncePerProcess) {
  ChildResult child =
      autoloadChild({{"ACCEL_PLUGINS", testPluginPath("libaccel_plugtest_good.so") + ":" +
                                           testPluginPath("libaccel_plugtest_zero.so")}});
  EXPECT_THAT(child.out, HasSubstr("STATE ran\n"));
  EXPECT_THAT(
      child.out,
      HasSubstr("RECORD ACCEL_PLUGINS|loaded|libaccel_plugtest_good.so|plugtest_good,\n"
                // Autoload registers without asking for devices (a discovery:
                // import accel touches no device), so a zero-device plugin loads.
                "RECORD ACCEL_PLUGINS|loaded|libaccel_plugtest_zero.so|plugtest_zero,\n"
                "SECOND 0\nREPORT 2\n"));
  EXPECT_THAT(child.err, Not(HasSubstr("accelhooks:")));  // success is quiet
}

TEST(Autoload, EmptyListItemsAreSkipped) {
  ChildResult child = autoloadChild(
      {{"ACCEL_PLUGINS", "::" + testPluginPath("libaccel_plugtest_good.so") + ":"}});
  EXPECT_THAT(child.out,
              HasSubstr("RECORD ACCEL_PLUGINS|loaded|libaccel_plugtest_good.so|"));
  EXPECT_THAT(child.out, HasSubstr("REPORT 1\n"));
}

TEST(Autoload, PluginPathScansDirectoriesForLibaccelFilesInNameOrder) {
  ScratchDir dir;
  dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_b_good.so");
  dir.copyPlugin("libaccel_fake.so", "libaccel_a_fake.so");
  dir.copyPlugin("libaccel_plugtest_late.so", "not_a_candidate.so");      // wrong prefix
  dir.copyPlugin("libaccel_plugtest_twice.so", "libaccel_c_twice.so.1");  // wrong suffix
  ChildResult child = autoloadChild({{"ACCEL_PLUGIN_PATH", dir.path()}});
  EXPECT_THAT(
      child.out,
      HasSubstr("RECORD ACCEL_PLUGIN_PATH|open failed|libaccel_a_fake.so|\n"
                "RECORD ACCEL_PLUGIN_PATH|loaded|libaccel_b_good.so|plugtest_good,\n"
                "SECOND 0\nREPORT 2\n"));
  // A failure is explained on stderr, once.
  EXPECT_EQ(countOccurrences(child.err, "libaccel_a_fake.so: open failed: dlopen failed"),
            1)
      << child.err;
}

TEST(Autoload, TruncatedCandidateIsSkippedWithADiagnosticAndTheNextOneLoads) {
  // Cut after its headers, a plugin crashed dlopen with SIGBUS, killing the
  // process that merely scanned the directory (`accel info`, `import accel`).
  ScratchDir dir;
  std::string cut = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_a_cut.so");
  std::filesystem::resize_file(cut, 4096);
  dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_b_good.so");
  ChildResult child = autoloadChild({{"ACCEL_PLUGIN_PATH", dir.path()}});
  EXPECT_THAT(
      child.out,
      HasSubstr("RECORD ACCEL_PLUGIN_PATH|open failed|libaccel_a_cut.so|\n"
                "RECORD ACCEL_PLUGIN_PATH|loaded|libaccel_b_good.so|plugtest_good,\n"));
  EXPECT_EQ(countOccurrences(child.err,
                             "libaccel_a_cut.so: open failed: the file is "
                             "truncated or damaged"),
            1)
      << child.err;
}

TEST(Autoload, BothVariablesTogetherListFilesFirstThenDirectories) {
  ScratchDir dir;
  dir.copyPlugin("libaccel_plugtest_late.so", "libaccel_late.so");
  ChildResult child =
      autoloadChild({{"ACCEL_PLUGIN_PATH", dir.path()},
                     {"ACCEL_PLUGINS", testPluginPath("libaccel_plugtest_good.so")}});
  EXPECT_THAT(
      child.out,
      HasSubstr("RECORD ACCEL_PLUGINS|loaded|libaccel_plugtest_good.so|plugtest_good,\n"
                "RECORD ACCEL_PLUGIN_PATH|loaded|libaccel_late.so|plugtest_late,\n"));
}

TEST(Autoload, AutoloadZeroDisablesBothVariables) {
  ChildResult child =
      autoloadChild({{"ACCEL_AUTOLOAD", "0"},
                     {"ACCEL_PLUGINS", testPluginPath("libaccel_plugtest_good.so")},
                     {"ACCEL_PLUGIN_PATH", ACCEL_TEST_PLUGIN_DIR},
                     {"ACCEL_TEST_ABSENT_TYPE", "plugtest_good"}});
  EXPECT_THAT(child.out, HasSubstr("STATE disabled by ACCEL_AUTOLOAD=0\n"));
  EXPECT_THAT(child.out, Not(HasSubstr("RECORD")));
  EXPECT_THAT(child.out, HasSubstr("REPORT 0\n"));
  // The absent-backend error says why nothing was loaded.
  EXPECT_THAT(child.out, HasSubstr("Plugin autoload: disabled by ACCEL_AUTOLOAD=0"));
}

TEST(Autoload, OtherAutoloadValuesLeaveItOn) {
  ChildResult child =
      autoloadChild({{"ACCEL_AUTOLOAD", "1"},
                     {"ACCEL_PLUGINS", testPluginPath("libaccel_plugtest_good.so")}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGINS|loaded|"));
}

TEST(Autoload, RelativePathsAreRefusedWithOneWarningEach) {
  ChildResult child =
      autoloadChild({{"ACCEL_PLUGINS", "rel/libaccel_x.so:rel/libaccel_x.so:./y.so"},
                     {"ACCEL_PLUGIN_PATH", "plugins:plugins"}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGINS|refused|libaccel_x.so|\n"
                                   "RECORD ACCEL_PLUGINS|refused|libaccel_x.so|\n"
                                   "RECORD ACCEL_PLUGINS|refused|y.so|\n"
                                   "RECORD ACCEL_PLUGIN_PATH|refused|plugins|\n"
                                   "RECORD ACCEL_PLUGIN_PATH|refused|plugins|\n"));
  EXPECT_EQ(countOccurrences(child.err, "refused 'rel/libaccel_x.so': relative path"), 1)
      << child.err;
  EXPECT_EQ(countOccurrences(child.err, "refused './y.so': relative path"), 1)
      << child.err;
  EXPECT_EQ(countOccurrences(child.err,
                             "ACCEL_PLUGIN_PATH: refused 'plugins': relative directory"),
            1)
      << child.err;
}

TEST(Autoload, WorldWritableDirectoryIsNotScanned) {
  ScratchDir dir;
  dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_good.so");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  ChildResult child = autoloadChild({{"ACCEL_PLUGIN_PATH", dir.path()}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGIN_PATH|refused|" +
                                   baseName(dir.path()) + "|\nSECOND"));
  EXPECT_EQ(countOccurrences(child.err, "is world-writable"), 1) << child.err;
}

TEST(Autoload, ListedFileInWorldWritableDirectoryIsRefused) {
  ScratchDir dir;
  std::string plugin = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_good.so");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777),
            0);  // not sticky: anyone may replace the file
  ChildResult child = autoloadChild({{"ACCEL_PLUGINS", plugin}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGINS|refused|libaccel_good.so|\n"));
  EXPECT_THAT(child.err, HasSubstr("is world-writable"));
}

TEST(Autoload, WorldWritableFileIsRefused) {
  ScratchDir dir;
  std::string listed = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_good.so");
  std::string scanned = dir.copyPlugin("libaccel_plugtest_late.so", "libaccel_late.so");
  ASSERT_EQ(::chmod(listed.c_str(), 0666), 0);
  ASSERT_EQ(::chmod(scanned.c_str(), 0666), 0);
  ChildResult child =
      autoloadChild({{"ACCEL_PLUGINS", listed}, {"ACCEL_PLUGIN_PATH", dir.path()}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGINS|refused|libaccel_good.so|\n"));
  EXPECT_THAT(child.out,
              HasSubstr("RECORD ACCEL_PLUGIN_PATH|refused|libaccel_good.so|\n"
                        "RECORD ACCEL_PLUGIN_PATH|refused|libaccel_late.so|\n"));
  // One warning per item: the file listed and found by the scan is one item per source.
  EXPECT_EQ(
      countOccurrences(child.err, "is world-writable; anyone could replace the code"), 3)
      << child.err;
}

TEST(Autoload, GroupWritableFileAndDirectoryAreRefused) {
  ScratchDir dir;
  std::string listed = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_good.so");
  ASSERT_EQ(::chmod(listed.c_str(), 0775), 0);
  ScratchDir scanned;
  scanned.copyPlugin("libaccel_plugtest_late.so", "libaccel_late.so");
  ASSERT_EQ(::chmod(scanned.path().c_str(), 0770), 0);
  ChildResult child =
      autoloadChild({{"ACCEL_PLUGINS", listed}, {"ACCEL_PLUGIN_PATH", scanned.path()}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGINS|refused|libaccel_good.so|\n"
                                   "RECORD ACCEL_PLUGIN_PATH|refused|" +
                                   baseName(scanned.path()) + "|\nSECOND"));
  EXPECT_EQ(countOccurrences(child.err, "the file " + listed + " is group-writable"), 1)
      << child.err;
  EXPECT_EQ(countOccurrences(child.err,
                             "the directory " + scanned.path() + " is group-writable"),
            1)
      << child.err;
}

TEST(Autoload, FileOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file to another user";
  ScratchDir dir;
  std::string listed = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_good.so");
  std::string scanned = dir.copyPlugin("libaccel_plugtest_late.so", "libaccel_late.so");
  ASSERT_EQ(::chown(listed.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chown(scanned.c_str(), 65534, 65534), 0);
  ChildResult child =
      autoloadChild({{"ACCEL_PLUGINS", listed}, {"ACCEL_PLUGIN_PATH", dir.path()}});
  EXPECT_THAT(child.out,
              HasSubstr("RECORD ACCEL_PLUGINS|refused|libaccel_good.so|\n"
                        "RECORD ACCEL_PLUGIN_PATH|refused|libaccel_good.so|\n"
                        "RECORD ACCEL_PLUGIN_PATH|refused|libaccel_late.so|\n"));
  EXPECT_EQ(countOccurrences(child.err, "is owned by uid 65534, neither this user"), 3)
      << child.err;
}

TEST(Autoload, SymlinkIsCheckedAndLoadedAtItsTarget) {
  ScratchDir unsafe;
  std::string target =
      unsafe.copyPlugin("libaccel_plugtest_good.so", "libaccel_target.so");
  ASSERT_EQ(::chmod(unsafe.path().c_str(), 0777),
            0);  // not sticky: anyone may replace it
  ScratchDir safe;
  std::string link = safe.path() + "/libaccel_link.so";
  std::filesystem::create_symlink(target, link);
  ChildResult child = autoloadChild({{"ACCEL_PLUGINS", link}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGINS|refused|libaccel_link.so|\n"));
  EXPECT_THAT(child.err,
              HasSubstr("its directory " + unsafe.path() + " is world-writable"));

  // A link to a trusted file loads, and the record names the file it loaded.
  ASSERT_EQ(::chmod(unsafe.path().c_str(), 0700), 0);
  child = autoloadChild({{"ACCEL_PLUGINS", link}});
  EXPECT_THAT(
      child.out,
      HasSubstr("RECORD ACCEL_PLUGINS|loaded|libaccel_target.so|plugtest_good,\n"));
}

TEST(Autoload, MissingFilesAndDirectoriesAreReportedNotFound) {
  ChildResult child = autoloadChild({{"ACCEL_PLUGINS", "/nonexistent/libaccel_x.so"},
                                     {"ACCEL_PLUGIN_PATH", "/nonexistent/plugins"}});
  EXPECT_THAT(child.out, HasSubstr("RECORD ACCEL_PLUGINS|not found|libaccel_x.so|\n"
                                   "RECORD ACCEL_PLUGIN_PATH|not found|plugins|\n"));
  EXPECT_THAT(child.err,
              HasSubstr("ACCEL_PLUGINS: /nonexistent/libaccel_x.so: not found"));
  EXPECT_THAT(child.err, HasSubstr("ACCEL_PLUGIN_PATH: /nonexistent/plugins: not found"));
}

TEST(Autoload, AbsentBackendErrorQuotesTheAutoloadFailure) {
  ChildResult child =
      autoloadChild({{"ACCEL_PLUGINS", testPluginPath("libaccel_plugtest_throws.so")},
                     {"ACCEL_TEST_ABSENT_TYPE", "plugtest_throws"}});
  EXPECT_THAT(
      child.out,
      HasSubstr("RECORD ACCEL_PLUGINS|init failed|libaccel_plugtest_throws.so|\n"));
  EXPECT_THAT(child.out, HasSubstr("ABSENT " + std::string(hookInfo(HookId::init).name) +
                                   "(): no backend is registered for device type "
                                   "'plugtest_throws'"));
  EXPECT_THAT(child.out, HasSubstr("simulated driver failure (plugtest)"));
  EXPECT_THAT(child.err, HasSubstr("ACCEL_PLUGINS: "));
  EXPECT_THAT(child.err, HasSubstr("init failed: its register_backends failed"));
}

TEST(Autoload, NothingHappensWithoutTheVariables) {
  ChildResult child = autoloadChild({});
  EXPECT_THAT(child.out, HasSubstr("STATE ran\nSECOND 0\nREPORT 0\n"));
  EXPECT_TRUE(child.err.empty()) << child.err;
}

}  // namespace
}  // namespace accel
