// loadBackend and the plugin report, one purpose-built plugin per outcome
// (test_plugins/, plugins of the C plugin ABI). Each test loads plugins no
// other test loads (a file loads once per process), so the tests pass in any
// order, in one process or one each. The C boundary's own rules (tables,
// versions, statuses) are tested with old binaries in tests/abi.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "accel/plugin_abi.h"
#include "plugin_test_support.h"
#include "simple_hooks.h"

namespace accel {
namespace {

using plugtest::testPluginPath;
using ::testing::HasSubstr;
using ::testing::Not;

// Loads `file`, expecting loadBackend to throw a PluginLoadError whose record
// has `status` and a detail holding each of `detail_parts`; returns the record.
PluginRecord loadExpectingFailure(const std::string& file, PluginStatus status,
                                  std::initializer_list<std::string> detail_parts = {}) {
  std::string path = testPluginPath(file);
  try {
    PluginRecord unexpected = loadBackend(path);
    ADD_FAILURE() << "loadBackend(" << path
                  << ") succeeded: " << describePluginRecord(unexpected);
    return unexpected;
  } catch (const PluginLoadError& e) {
    const PluginRecord& record = e.record();
    EXPECT_THAT(e.message(), HasSubstr(path));
    EXPECT_THAT(e.message(), HasSubstr(std::string(pluginStatusName(record.status))));
    EXPECT_EQ(record.path, path);
    EXPECT_EQ(record.status, status) << "expected " << pluginStatusName(status) << "; "
                                     << describePluginRecord(record);
    for (const std::string& part : detail_parts) {
      EXPECT_THAT(record.detail, HasSubstr(part));
    }
    return record;
  }
}

// A plugin API version as the core's messages write it ("1.2"), written out
// here independently of the core's formatting.
std::string abiVersionText(std::uint32_t version) {
  return std::to_string(ACCEL_PLUGIN_ABI_MAJOR_OF(version)) + "." +
         std::to_string(ACCEL_PLUGIN_ABI_MINOR_OF(version));
}

// The types of `names` that have a backend now.
std::vector<std::string> registeredAmong(std::initializer_list<const char*> names) {
  std::vector<std::string> out;
  for (const char* name : names) {
    std::optional<DeviceType> type = findDeviceType(name);
    if (type && isHooksRegistered(*type)) out.emplace_back(name);
  }
  return out;
}

bool reportHas(const std::string& path, PluginStatus status) {
  std::vector<PluginRecord> report = pluginReport();
  return std::any_of(report.begin(), report.end(), [&](const PluginRecord& r) {
    return r.path == path && r.status == status;
  });
}

// The process still works after a failed load: registration and lookups.
void expectProcessStillWorks() {
  DeviceType type = registerDeviceType("plugtest_after_failure");
  EXPECT_EQ(&getHooks(type), &absentHooks(type));
  EXPECT_EQ(getHooks(type).deviceCount(), 0);
  EXPECT_FALSE(pluginReport().empty());
}

TEST(PluginLoader, GoodPluginLoadsAndRegistersItsDeviceType) {
  std::string path = testPluginPath("libaccel_plugtest_good.so");
  PluginRecord r = loadBackend(path);
  EXPECT_EQ(r.status, PluginStatus::Loaded) << describePluginRecord(r);
  EXPECT_EQ(r.source, "loadBackend");
  EXPECT_EQ(r.plugin_name, "plugtest_good");
  EXPECT_EQ(r.plugin_version, "1.2.3");
  EXPECT_EQ(r.abi_negotiated, ACCEL_PLUGIN_ABI_CURRENT);
  EXPECT_EQ(r.abi_newest, ACCEL_PLUGIN_ABI_CURRENT);
  EXPECT_EQ(r.abi_oldest, ACCEL_PLUGIN_ABI_VERSION(1, 0));
  EXPECT_TRUE(r.detail.empty()) << r.detail;
  DeviceType type = deviceTypeFromName("plugtest_good");
  ASSERT_EQ(r.registered, std::vector<DeviceType>{type});
  EXPECT_TRUE(getHooks(type).isAvailable());
  EXPECT_EQ(getHooks(type).deviceCount(), 2);
  std::optional<PluginRecord> owner = pluginForDeviceType(type);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->path, path);
  EXPECT_TRUE(reportHas(path, PluginStatus::Loaded));
}

TEST(PluginLoader, LookupBeforeLoadSeesBackendAfterLoad) {
  DeviceType type = registerDeviceType("plugtest_late");
  AcceleratorHooks& before = getHooks(type);
  EXPECT_EQ(&before, &absentHooks(type));
  EXPECT_FALSE(before.isAvailable());
  EXPECT_THROW((void)before.getCurrentDevice(), NotAvailable);

  // A reader spinning on the lookup while the plugin loads must see the
  // backend appear (and, under TSan, see it published safely).
  std::atomic<bool> reader_saw_backend{false};
  std::thread reader([&] {
    while (!getHooks(type).isAvailable()) std::this_thread::yield();
    reader_saw_backend = getHooks(type).deviceCount() == 2;
  });
  PluginRecord r = loadBackend(testPluginPath("libaccel_plugtest_late.so"));
  reader.join();
  EXPECT_EQ(r.status, PluginStatus::Loaded) << describePluginRecord(r);
  EXPECT_TRUE(reader_saw_backend);
  EXPECT_NE(&getHooks(type), &absentHooks(type));
  EXPECT_EQ(getHooks(type).getCurrentDevice(), 0);
}

TEST(PluginLoader, SameFileLoadedTwiceByAnyPathIsAlreadyLoaded) {
  std::string path = testPluginPath("libaccel_plugtest_twice.so");
  PluginRecord first = loadBackend(path);
  ASSERT_EQ(first.status, PluginStatus::Loaded) << describePluginRecord(first);

  PluginRecord again = loadBackend(path);
  EXPECT_EQ(again.status, PluginStatus::AlreadyLoaded);
  EXPECT_EQ(again.registered, first.registered);
  EXPECT_THAT(again.detail, HasSubstr(path));

  plugtest::ScratchDir dir;
  std::string link = dir.path() + "/libaccel_other_name.so";
  std::filesystem::create_symlink(path, link);
  EXPECT_EQ(loadBackend(link).status, PluginStatus::AlreadyLoaded);
}

// Opens a plugin and loads it through its entry, the way a program that links
// the library and registers its backend itself does (accel_core_load_entry).
void openAndRegisterLikeALinkedProgram(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  auto entry = reinterpret_cast<accel_plugin_negotiate_fn>(
      ::dlsym(handle, ACCEL_PLUGIN_ENTRY_NAME));
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(accel_core_load_entry(entry, "the program"), ACCEL_OK);
}

TEST(PluginLoader, LibraryAlreadyInTheProcessWithItsBackendIsAlreadyLoaded) {
  // A backend whose register_backends does nothing the second time (openreg's kind).
  std::string path = testPluginPath("libaccel_plugtest_resident.so");
  openAndRegisterLikeALinkedProgram(path);
  PluginRecord r = loadBackend(path);
  EXPECT_EQ(r.status, PluginStatus::AlreadyLoaded) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("already part of the process"));
  EXPECT_EQ(r.registered,
            std::vector<DeviceType>{deviceTypeFromName("plugtest_resident")});
}

TEST(PluginLoader, LibraryAlreadyInTheProcessRefusedAsItsOwnDuplicateIsAlreadyLoaded) {
  // A backend whose second registration the core refuses as a duplicate.
  std::string path = testPluginPath("libaccel_plugtest_resident_strict.so");
  openAndRegisterLikeALinkedProgram(path);
  PluginRecord r = loadBackend(path);
  EXPECT_EQ(r.status, PluginStatus::AlreadyLoaded) << describePluginRecord(r);
  EXPECT_EQ(getHooks(deviceTypeFromName("plugtest_resident_strict")).deviceCount(), 2);
}

TEST(PluginLoader, RelativePathIsResolvedAgainstCurrentDirectory) {
  std::string cwd = std::filesystem::current_path().string();
  ASSERT_EQ(::chdir(ACCEL_TEST_PLUGIN_DIR), 0);
  PluginRecord r;
  try {
    r = loadBackend("libaccel_fake.so");
  } catch (const PluginLoadError& e) {
    r = e.record();
  }
  ASSERT_EQ(::chdir(cwd.c_str()), 0);
  EXPECT_EQ(r.path, testPluginPath("libaccel_fake.so"));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed);
}

TEST(PluginLoader, MissingFileIsNotFound) {
  loadExpectingFailure("libaccel_plugtest_does_not_exist.so", PluginStatus::NotFound,
                       {"no such file"});
}

TEST(PluginLoader, EmptyPathIsNotFound) {
  try {
    (void)loadBackend("");
    ADD_FAILURE() << "an empty path loaded";
  } catch (const PluginLoadError& e) {
    EXPECT_EQ(e.record().status, PluginStatus::NotFound);
  }
}

TEST(PluginLoader, TextFileNamedLikeAPluginFailsToOpenWithTheDlopenMessage) {
  // The dynamic linker's own words name the file.
  loadExpectingFailure("libaccel_fake.so", PluginStatus::OpenFailed,
                       {"dlopen failed: ", "libaccel_fake.so:"});
  expectProcessStillWorks();
}

TEST(PluginLoader, UnresolvedSymbolFailsToOpenNamingTheSymbol) {
  loadExpectingFailure("libaccel_plugtest_missing_symbol.so", PluginStatus::OpenFailed,
                       {"plugtest_symbol_that_does_not_exist"});
  expectProcessStillWorks();
}

TEST(PluginLoader, SharedLibraryWithoutEntryIsNotAPlugin) {
  loadExpectingFailure("libaccel_plugtest_plain.so", PluginStatus::NotAPlugin,
                       {ACCEL_PLUGIN_ENTRY_NAME, "docs/plugin-abi.md"});
}

TEST(PluginLoader, PluginNeedingNewerCoreIsVersionMismatchAndDoesNotRegister) {
  const std::string needed = abiVersionText(ACCEL_PLUGIN_ABI_CURRENT + 1);
  PluginRecord r = loadExpectingFailure(
      "libaccel_plugtest_too_new.so", PluginStatus::VersionMismatch,
      {"'plugtest_too_new' speaks plugin API " + needed + " to " + needed,
       "speaks plugin API 1.0 to " + abiVersionText(ACCEL_PLUGIN_ABI_CURRENT),
       "rebuild the plugin"});
  EXPECT_EQ(r.plugin_name, "plugtest_too_new");
  EXPECT_EQ(r.abi_oldest, ACCEL_PLUGIN_ABI_CURRENT + 1);
  EXPECT_EQ(r.abi_negotiated, 0u);
  EXPECT_TRUE(r.registered.empty());
  EXPECT_THAT(registeredAmong({"plugtest_too_new"}), ::testing::IsEmpty());
  expectProcessStillWorks();
}

TEST(PluginLoader, PluginSpeakingOnlyARetiredApiIsVersionMismatch) {
  loadExpectingFailure(
      "libaccel_plugtest_retired.so", PluginStatus::VersionMismatch,
      {"answered plugin API 0.1",
       "speaks plugin API 1.0 to " + abiVersionText(ACCEL_PLUGIN_ABI_CURRENT)});
  EXPECT_THAT(registeredAmong({"plugtest_retired"}), ::testing::IsEmpty());
}

TEST(PluginLoader, NewerPluginThatAcceptsThisCoreLoads) {
  PluginRecord r = loadBackend(testPluginPath("libaccel_plugtest_forward.so"));
  EXPECT_EQ(r.status, PluginStatus::Loaded) << describePluginRecord(r);
  EXPECT_EQ(r.abi_newest, ACCEL_PLUGIN_ABI_CURRENT + 1);
  EXPECT_EQ(r.abi_negotiated, ACCEL_PLUGIN_ABI_CURRENT);
  EXPECT_TRUE(getHooks(deviceTypeFromName("plugtest_forward")).isAvailable());
}

TEST(PluginLoader, FailingRegisterFunctionIsInitFailedAndProcessKeepsWorking) {
  loadExpectingFailure("libaccel_plugtest_throws.so", PluginStatus::InitFailed,
                       {"its register_backends failed with ACCEL_ERROR_NOT_AVAILABLE: ",
                        "simulated driver failure (plugtest)"});
  expectProcessStillWorks();
  // A failed plugin is tried again (the driver may be up now), and fails the same way.
  loadExpectingFailure("libaccel_plugtest_throws.so", PluginStatus::InitFailed);
}

TEST(PluginLoader, AbsentBackendErrorSaysWhyItsPluginDidNotLoad) {
  // Tried twice: explained once.
  loadExpectingFailure("libaccel_plugtest_throws.so", PluginStatus::InitFailed);
  loadExpectingFailure("libaccel_plugtest_throws.so", PluginStatus::InitFailed);
  DeviceType type = registerDeviceType("plugtest_throws");
  try {
    (void)getHooks(type).getCurrentDevice();
    ADD_FAILURE() << "the absent backend did not throw";
  } catch (const NotAvailable& e) {
    EXPECT_EQ(plugtest::countOccurrences(e.message(), "did not load"), 1) << e.message();
    EXPECT_THAT(e.message(), HasSubstr("libaccel_plugtest_throws.so"));
    EXPECT_THAT(e.message(), HasSubstr("simulated driver failure (plugtest)"));
  }
}

TEST(PluginLoader, AbsentBackendErrorDoesNotBlameUnrelatedPluginsByName) {
  loadExpectingFailure("libaccel_fake.so", PluginStatus::OpenFailed);
  DeviceType type = registerDeviceType("plugtest_unrelated");
  try {
    getHooks(type).init();
    ADD_FAILURE() << "the absent backend did not throw";
  } catch (const NotAvailable& e) {
    EXPECT_THAT(e.message(), Not(HasSubstr("libaccel_fake.so")));
    EXPECT_THAT(e.message(), HasSubstr("other plugin load(s) failed"));
  }
}

TEST(PluginLoader, SecondBackendForATypeIsDuplicate) {
  DeviceType type = registerDeviceType("plugtest_dup");
  if (!isHooksRegistered(type)) {
    registerHooks(std::make_unique<plugtest::SimpleHooks>(type, 1), "the test program");
  }
  loadExpectingFailure("libaccel_plugtest_dup.so", PluginStatus::Duplicate,
                       {"already registered", "the test program"});
  EXPECT_EQ(getHooks(type).deviceCount(), 1);  // the first backend stays
  // Trying again is still a duplicate (the loader opened the file, not the program).
  loadExpectingFailure("libaccel_plugtest_dup.so", PluginStatus::Duplicate);
}

TEST(PluginLoader, ZeroDevicePluginIsNoDevicesWithoutThrowing) {
  PluginRecord r = loadBackend(testPluginPath("libaccel_plugtest_zero.so"));
  EXPECT_EQ(r.status, PluginStatus::NoDevices);
  EXPECT_THAT(r.detail, HasSubstr("plugtest_zero reports 0 devices"));
  DeviceType type = deviceTypeFromName("plugtest_zero");
  EXPECT_EQ(r.registered, std::vector<DeviceType>{type});
  EXPECT_TRUE(getHooks(type).isBuilt());
  EXPECT_EQ(getHooks(type).deviceCount(), 0);
}

TEST(PluginLoader, RegistrationByAnotherThreadDuringALoadIsNotThePlugins) {
  // The plugin registers plugtest_window (whose name the core reserves at
  // once), then waits inside its register_backends until this bystander
  // thread has registered plugtest_bystander and released it.
  std::string path = testPluginPath("libaccel_plugtest_window.so");
  std::thread bystander([&] {
    while (!findDeviceType("plugtest_window")) std::this_thread::yield();
    DeviceType type = registerDeviceType("plugtest_bystander");
    registerHooks(std::make_unique<plugtest::SimpleHooks>(type, 1));
    // The plugin is open (its load is under way): this finds it.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    auto release = reinterpret_cast<void (*)()>(::dlsym(handle, "plugtest_release"));
    ASSERT_NE(release, nullptr);
    release();
    ::dlclose(handle);
  });
  PluginRecord r = loadBackend(path);
  bystander.join();
  EXPECT_EQ(r.status, PluginStatus::Loaded) << describePluginRecord(r);
  EXPECT_EQ(r.registered, std::vector<DeviceType>{deviceTypeFromName("plugtest_window")});
  EXPECT_TRUE(isHooksRegistered(deviceTypeFromName("plugtest_bystander")));
  EXPECT_FALSE(pluginForDeviceType(deviceTypeFromName("plugtest_bystander")).has_value());
}

TEST(PluginLoader, PluginThatRegistersNothingIsInitFailed) {
  loadExpectingFailure("libaccel_plugtest_empty.so", PluginStatus::InitFailed,
                       {"returned without registering a backend"});
  loadExpectingFailure("libaccel_plugtest_empty.so", PluginStatus::InitFailed);
}

TEST(PluginLoader, LoadingFromARegisterFunctionIsRefusedWithoutDeadlock) {
  // The plugin's register function autoloads (nothing), loads an entry through
  // accel_core_load_entry (refused) and loads a file (refused, failing it).
  loadExpectingFailure("libaccel_plugtest_nested.so", PluginStatus::InitFailed,
                       {"is being loaded", "libaccel_plugtest_nested.so"});
  std::vector<PluginRecord> report = pluginReport();
  auto nested = std::find_if(report.begin(), report.end(), [](const PluginRecord& r) {
    return r.path == "plugtest nested entry";
  });
  ASSERT_NE(nested, report.end());
  EXPECT_EQ(nested->status, PluginStatus::InitFailed);
  EXPECT_THAT(nested->detail, HasSubstr("while a plugin is being loaded"));
  EXPECT_THAT(registeredAmong({"plugtest_nested"}), ::testing::IsEmpty());
}

TEST(PluginLoader, PluginRegisteringOneTypeTwiceIsDuplicateAndRegistersNothing) {
  // It registers plugtest_type_twice, plugtest_type_twice_second, then the
  // first again: the load fails after registering, and nothing of it stays.
  PluginRecord r = loadExpectingFailure(
      "libaccel_plugtest_type_twice.so", PluginStatus::Duplicate,
      {"registers 'plugtest_type_twice' twice", "libaccel_plugtest_type_twice.so"});
  EXPECT_TRUE(r.registered.empty());
  EXPECT_THAT(registeredAmong({"plugtest_type_twice", "plugtest_type_twice_second"}),
              ::testing::IsEmpty());
  DeviceType type = deviceTypeFromName("plugtest_type_twice");
  EXPECT_EQ(&getHooks(type), &absentHooks(type));
}

TEST(PluginLoader, EveryBackendOfOnePluginIsItsAndComesFromItsFile) {
  PluginRecord r = loadBackend(testPluginPath("libaccel_plugtest_two_types.so"));
  EXPECT_EQ(r.status, PluginStatus::Loaded) << describePluginRecord(r);
  std::vector<DeviceType> expected = {deviceTypeFromName("plugtest_two_types"),
                                      deviceTypeFromName("plugtest_two_types_second")};
  EXPECT_EQ(r.registered, expected);
  for (DeviceType t : expected) {
    EXPECT_EQ(getHooks(t).deviceCount(), 2);
    EXPECT_EQ(hooksOrigin(t), "plugin " + r.path);
    ASSERT_TRUE(pluginForDeviceType(t).has_value());
    EXPECT_EQ(pluginForDeviceType(t)->path, r.path);
  }
}

TEST(PluginLoader, FifoNamedLikeAPluginIsRefusedWithoutOpeningIt) {
  plugtest::ScratchDir dir;
  std::string fifo = dir.path() + "/libaccel_plugtest_fifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    (void)loadBackend(fifo);  // would block in dlopen if it got there
    ADD_FAILURE() << "a FIFO loaded";
  } catch (const PluginLoadError& e) {
    EXPECT_EQ(e.record().status, PluginStatus::OpenFailed);
    EXPECT_THAT(e.record().detail, HasSubstr("FIFO"));
    EXPECT_THAT(e.record().detail, HasSubstr("not a regular file"));
  }
  // Found by the ACCEL_PLUGIN_PATH scan, it is refused the same way.
  AutoloadConfig config;
  config.plugin_path = dir.path();
  ::testing::internal::CaptureStderr();
  std::vector<PluginRecord> records = autoloadPlugins(config);
  std::string printed = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].status, PluginStatus::OpenFailed);
  EXPECT_THAT(records[0].detail, HasSubstr("FIFO"));
  EXPECT_THAT(printed, HasSubstr("FIFO"));
}

TEST(PluginLoader, ConcurrentLoadsOfOneFileLoadItOnce) {
  // Loads are serialised: one thread loads the file, the others find it loaded;
  // readers of the report meanwhile see whole records.
  std::string path = testPluginPath("libaccel_plugtest_race.so");
  std::atomic<int> loaded{0};
  std::atomic<int> already_loaded{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      PluginStatus status = loadBackend(path).status;
      if (status == PluginStatus::Loaded) ++loaded;
      if (status == PluginStatus::AlreadyLoaded) ++already_loaded;
      for (const PluginRecord& r : pluginReport()) EXPECT_FALSE(r.source.empty());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(loaded, 1);
  EXPECT_EQ(already_loaded, 3);
}

TEST(PluginLoader, StatusNamesAreDistinct) {
  std::set<std::string_view> names;
  for (PluginStatus s :
       {PluginStatus::Loaded, PluginStatus::NotFound, PluginStatus::Refused,
        PluginStatus::OpenFailed, PluginStatus::NotAPlugin, PluginStatus::VersionMismatch,
        PluginStatus::InitFailed, PluginStatus::Duplicate, PluginStatus::NoDevices,
        PluginStatus::AlreadyLoaded}) {
    names.insert(pluginStatusName(s));
  }
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(pluginStatusName(PluginStatus::VersionMismatch), "version mismatch");
}

TEST(PluginLoader, DescriptionNamesPathPluginStatusDetailAndTypes) {
  PluginRecord r;
  r.path = "/opt/x/libaccel_x.so";
  r.plugin_name = "x";
  r.plugin_version = "2.0";
  r.status = PluginStatus::NoDevices;
  r.detail = "x reports 0 devices";
  r.registered = {DeviceType::CUDA};
  EXPECT_EQ(
      describePluginRecord(r),
      "/opt/x/libaccel_x.so (x 2.0): no devices: x reports 0 devices [registers cuda]");
}

TEST(PluginLoader, SecureConfigIgnoresTheEnvironmentAndLoadsNothing) {
  AutoloadConfig config;
  config.plugins = testPluginPath("libaccel_plugtest_good.so");
  config.plugin_path = std::string(ACCEL_TEST_PLUGIN_DIR);
  config.secure = true;
  std::size_t before = pluginReport().size();
  std::vector<PluginRecord> records = autoloadPlugins(config);
  ASSERT_EQ(records.size(), 2u);
  for (const PluginRecord& r : records) {
    EXPECT_EQ(r.status, PluginStatus::Refused);
    EXPECT_THAT(r.detail, HasSubstr("setuid"));
  }
  EXPECT_EQ(records[0].source, "ACCEL_PLUGINS");
  EXPECT_EQ(records[1].source, "ACCEL_PLUGIN_PATH");
  EXPECT_EQ(pluginReport().size(), before + 2);
}

TEST(PluginLoader, DisabledConfigLoadsNothing) {
  AutoloadConfig config;
  config.plugins = testPluginPath("libaccel_fake.so");
  config.autoload = "0";
  EXPECT_TRUE(autoloadPlugins(config).empty());
}

}  // namespace
}  // namespace accel
