// The plugin ABI (accel/plugin_abi.h) held to its promise with binaries:
// the C test plugin (test_plugin/) built against each frozen API version,
// against made-up newer headers, and as each bad input the loader must
// refuse, loaded into this core by accel::loadBackend.
//
// A plugin file loads once per process; ctest runs each test in a process of
// its own, and each test loads the builds it needs.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/linked_plugin.h"
#include "accel/memory_stats.h"
#include "accel/plugin.h"
#include "accel/plugin_abi.h"
#include "accel/plugin_status.h"
#include "accel/random_fill.h"

namespace accel {
namespace {

constexpr std::uint32_t kCoreNewest = ACCEL_PLUGIN_ABI_CURRENT;
constexpr std::uint32_t kV1_0 = ACCEL_PLUGIN_ABI_VERSION(1, 0);
constexpr std::uint32_t kV1_1 = ACCEL_PLUGIN_ABI_VERSION(1, 1);
constexpr std::uint32_t kV1_2 = ACCEL_PLUGIN_ABI_VERSION(1, 2);
constexpr std::uint32_t kV1_3 = ACCEL_PLUGIN_ABI_VERSION(1, 3);

std::string versionText(std::uint32_t version) {
  return std::to_string(ACCEL_PLUGIN_ABI_MAJOR_OF(version)) + "." +
         std::to_string(ACCEL_PLUGIN_ABI_MINOR_OF(version));
}
// The versions the made-up headers of tests/abi/CMakeLists.txt declare.
const std::string kNextMinor = versionText(
    ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR, ACCEL_PLUGIN_ABI_MINOR + 1));
const std::string kNextMajor =
    versionText(ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR + 1, 0));

std::string pluginPath(const std::string& build) {
  return std::string(ACCEL_ABI_PLUGIN_DIR) + "/libaccel_abitest_" + build + ".so";
}

// The record of the first load of the build in this process (a file that
// loaded is not loaded again), whether or not it loaded.
PluginRecord load(const std::string& build) {
  static std::mutex mutex;
  static std::map<std::string, PluginRecord> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = loaded.find(build); found != loaded.end()) return found->second;
  PluginRecord record;
  try {
    record = loadBackend(pluginPath(build));
  } catch (const PluginLoadError& error) {
    record = error.record();
  }
  if (pluginStatusIsSuccess(record.status)) loaded.emplace(build, record);
  return record;
}

AcceleratorHooks& hooksOf(const std::string& build) {
  return getHooks(deviceTypeFromName("abitest_" + build));
}

// What a loaded build reports of itself (its exported test functions).
template <typename Result>
Result askPlugin(const std::string& build, const char* function) {
  void* handle = dlopen(pluginPath(build).c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr) << build << " is not loaded";
  if (handle == nullptr) return Result{};
  auto* answer = reinterpret_cast<Result (*)()>(dlsym(handle, function));
  EXPECT_NE(answer, nullptr) << build << " has no " << function;
  Result result = answer != nullptr ? answer() : Result{};
  dlclose(handle);
  return result;
}
std::uint64_t prepareReplayCalls(const std::string& build) {
  return askPlugin<std::uint64_t>(build, "abitest_prepare_replay_calls");
}

void expectLoaded(const PluginRecord& record, std::uint32_t negotiated) {
  EXPECT_EQ(record.status, PluginStatus::Loaded) << describePluginRecord(record);
  EXPECT_EQ(record.abi_negotiated, negotiated)
      << "negotiated " << versionText(record.abi_negotiated) << ", expected "
      << versionText(negotiated) << ": " << describePluginRecord(record);
}

// Refused, nothing of it registered, and the reason names every one of `words`.
void expectRefused(const PluginRecord& record, const std::string& build,
                   const std::vector<std::string>& words) {
  EXPECT_FALSE(pluginStatusIsSuccess(record.status)) << describePluginRecord(record);
  EXPECT_FALSE(record.detail.empty()) << "refused without a reason";
  EXPECT_TRUE(record.registered.empty()) << describePluginRecord(record);
  const std::optional<DeviceType> type = findDeviceType("abitest_" + build);
  EXPECT_FALSE(type && isHooksRegistered(*type))
      << "abitest_" << build << " stayed registered";
  for (const std::string& word : words) {
    EXPECT_NE(record.detail.find(word), std::string::npos)
        << "the reason does not name '" << word << "': " << describePluginRecord(record);
  }
}

// Device memory, a copy there and back, and a graph replayed twice: the
// groups the plugin declares, through the core's caches and tables.
void useBackend(const std::string& build) {
  AcceleratorHooks& hooks = hooksOf(build);
  ASSERT_EQ(hooks.deviceCount(), 2);
  DataPtr data = hooks.getDeviceAllocator(1).allocate(4096);
  ASSERT_NE(data.get(), nullptr);
  EXPECT_EQ(hooks.getDeviceFromPtr(static_cast<char*>(data.get()) + 100).index(), 1);
  std::vector<char> in(4096, 'a'), out(4096, 0);
  const Stream stream = hooks.getNewStream(1);
  hooks.copyHostToDevice(data.get(), in.data(), in.size(), stream);
  hooks.copyDeviceToHost(out.data(), data.get(), out.size(), stream);
  hooks.synchronizeStream(stream);
  EXPECT_EQ(in, out);
  const GraphId graph = hooks.graphCreate();
  hooks.graphCaptureBegin(graph);
  hooks.graphCaptureEnd(graph);
  hooks.graphReplay(graph);
  hooks.graphReplay(graph);
  hooks.graphDestroy(graph);
}

// ---- old binaries and the version each speaks ----

TEST(PluginAbi, FirstCReleasePluginLoadsSpeakingItsOwnVersion) {
  const PluginRecord record = load("v1_0");
  expectLoaded(record, kV1_0);
  EXPECT_EQ(record.abi_newest, kV1_0);
  EXPECT_EQ(record.abi_oldest, kV1_0);
  useBackend("v1_0");
  // Its headers have no negotiated_version service to ask.
  EXPECT_EQ(askPlugin<std::uint32_t>("v1_0", "abitest_negotiated_version"), 0u);
}

TEST(PluginAbi, PreviousMinorPluginLoadsSpeakingItsOwnVersion) {
  expectLoaded(load("v1_1"), kV1_1);
  useBackend("v1_1");
  EXPECT_EQ(askPlugin<std::uint32_t>("v1_1", "abitest_negotiated_version"), kV1_1)
      << "the negotiated_version service (since 1.1)";
}

TEST(PluginAbi, CurrentPluginLoadsSpeakingTheCoresNewestVersion) {
  expectLoaded(load("v1_2"), kV1_2);
  useBackend("v1_2");
  EXPECT_EQ(askPlugin<std::uint32_t>("v1_2", "abitest_negotiated_version"), kV1_2);
}

// The services of 1.2, called by the plugin: the reference fill writes what
// the core's own fill writes, fill_outputs agrees with fillOutputs, a bad
// kind is refused with a message, and a retained generator shares the
// default generator's position.
TEST(PluginAbi, FillAndGeneratorServicesAnswerAsTheCoresOwnFunctions) {
  expectLoaded(load("v1_2"), kV1_2);
  void* handle = dlopen(pluginPath("v1_2").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto* fill = reinterpret_cast<accel_status (*)(std::uint32_t*)>(
      dlsym(handle, "abitest_fill_host"));
  ASSERT_NE(fill, nullptr);
  std::uint32_t from_plugin[4] = {};
  ASSERT_EQ(fill(from_plugin), ACCEL_OK);
  std::uint32_t expected[4] = {};
  fillBits(std::span<std::uint32_t>(expected), PhiloxPosition{42, 7});
  EXPECT_EQ(std::vector<std::uint32_t>(from_plugin, from_plugin + 4),
            std::vector<std::uint32_t>(expected, expected + 4));
  dlclose(handle);

  EXPECT_EQ(askPlugin<std::uint64_t>("v1_2", "abitest_fill_outputs_of_3_normal_floats"),
            fillOutputs(FillKind::NormalFloat, 3));
  EXPECT_EQ(askPlugin<accel_status>("v1_2", "abitest_fill_host_bad_kind"),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(askPlugin<std::uint64_t>("v1_2", "abitest_reserve_through_retained"), 8u)
      << "a reservation through the retained handle moves the default generator";
}

// use_block keeps a freed block out of the cache until the use is
// released and tells a use after free from memory that is no block;
// current_stream is refused to a plugin that keeps its current streams.
TEST(PluginAbi, BlockUsesKeepFreedBlocksAndCurrentStreamIsOnlyTheCoresToTell) {
  expectLoaded(load("v1_2"), kV1_2);
  AcceleratorHooks& hooks = hooksOf("v1_2");
  void* handle = dlopen(pluginPath("v1_2").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  using UseBlock = std::int32_t (*)(const void*, accel_block_use**, std::size_t*);
  auto* use_block = reinterpret_cast<UseBlock>(dlsym(handle, "abitest_use_block"));
  auto* release = reinterpret_cast<void (*)(accel_block_use*)>(
      dlsym(handle, "abitest_release_block_use"));
  auto* current = reinterpret_cast<std::int64_t (*)(std::int8_t)>(
      dlsym(handle, "abitest_current_stream"));
  ASSERT_TRUE(use_block != nullptr && release != nullptr && current != nullptr);

  DataPtr data = hooks.getDeviceAllocator(1).allocate(1000);
  const std::int64_t allocated_before = hooks.memoryStats(1).allocated_bytes.current;
  accel_block_use* use = nullptr;
  std::size_t requested = 0;
  ASSERT_EQ(use_block(static_cast<char*>(data.get()) + 10, &use, &requested),
            ACCEL_BLOCK_LIVE);
  EXPECT_EQ(requested, 1000u);
  void* const address = data.get();
  data = DataPtr();  // freed while the use lives: still allocated
  EXPECT_EQ(hooks.memoryStats(1).allocated_bytes.current, allocated_before);
  accel_block_use* late = nullptr;
  EXPECT_EQ(use_block(address, &late, &requested), ACCEL_BLOCK_FREED);
  EXPECT_EQ(late, nullptr);
  release(use);
  EXPECT_LT(hooks.memoryStats(1).allocated_bytes.current, allocated_before);
  int host = 0;
  EXPECT_EQ(use_block(&host, &late, &requested), ACCEL_BLOCK_NONE);

  // abitest keeps its current streams itself: the core has none to tell it
  // (asking would only call the plugin back), so the service refuses.
  // openreg's graph replays read the core's current stream (openreg tests).
  EXPECT_EQ(current(1), -2);
  dlclose(handle);
}

TEST(PluginAbi, PrepareReplayRunsBeforeEachReplayOfAPluginThatHasIt) {
  expectLoaded(load("v1_1"), kV1_1);
  const std::uint64_t before = prepareReplayCalls("v1_1");
  useBackend("v1_1");
  EXPECT_EQ(prepareReplayCalls("v1_1") - before, 2u)
      << "useBackend replays its graph twice";
}

// A 1.0 table has no prepare_replay: never called, replay still works.
TEST(PluginAbi, PluginOlderThanPrepareReplayReplaysWithoutIt) {
  expectLoaded(load("v1_0"), kV1_0);
  useBackend("v1_0");
  EXPECT_EQ(prepareReplayCalls("v1_0"), 0u);
}

// A 1.1 build whose graphs table is the 1.0 layout (its struct_size ends
// before prepare_replay, and so does the block): the function past the end
// is not provided, and never read (AddressSanitizer would see the read).
TEST(PluginAbi, FunctionPastTheEndOfAShortTableIsNotProvided) {
  expectLoaded(load("short_graphs_table"), kCoreNewest);
  useBackend("short_graphs_table");
  EXPECT_EQ(prepareReplayCalls("short_graphs_table"), 0u);
}

// What API 1.1 added to the segments, device_memory.memory_info, behaves
// for a 1.0 plugin as an undeclared hook: NotSupported naming the backend,
// the hook and the plugin's API version.
void expectCapacityNotSupported(const std::string& build) {
  AcceleratorHooks& hooks = hooksOf(build);
  const std::string hook(hookInfo(HookId::getMemoryInfo).name);
  const std::vector<std::string> words = {"abitest_" + build, hook, "1.0", "1.1"};
  try {
    (void)hooks.getMemoryInfo(0);
    ADD_FAILURE() << hook << " of a plugin speaking 1.0 returned";
  } catch (const NotSupported& error) {
    for (const std::string& word : words) {
      EXPECT_NE(std::string(error.what()).find(word), std::string::npos)
          << "'" << word << "' not in: " << error.what();
    }
  }
  EXPECT_THROW(hooks.setMemoryFraction(0.5, 0), NotSupported);
}

TEST(PluginAbi, HookAddedAfterThePluginsVersionIsNotSupportedNamingBoth) {
  expectLoaded(load("v1_0"), kV1_0);
  expectCapacityNotSupported("v1_0");
}

TEST(PluginAbi, CurrentPluginReportsItsCapacity) {
  expectLoaded(load("v1_1"), kV1_1);
  const DeviceMemoryInfo info = hooksOf("v1_1").getMemoryInfo(1);
  EXPECT_EQ(info.total_bytes, std::size_t{1} << 30);
  EXPECT_LE(info.free_bytes, info.total_bytes);
}

// A plugin on the current headers that answered 1.0: its tables hold the
// 1.1 functions, but the core gives it nothing of 1.1 (gated on the
// version, not only on the size), and it asks for no 1.1 service.
TEST(PluginAbi, PluginSpeakingAnOlderVersionGetsNothingNewerFromLongTables) {
  expectLoaded(load("speaks_1_0"), kV1_0);
  const std::uint64_t before = prepareReplayCalls("speaks_1_0");
  useBackend("speaks_1_0");
  EXPECT_EQ(prepareReplayCalls("speaks_1_0"), before);
  expectCapacityNotSupported("speaks_1_0");
  EXPECT_EQ(askPlugin<std::uint32_t>("speaks_1_0", "abitest_negotiated_version"), 0u);
}

// The fill group came in 1.3: for a plugin speaking 1.2 it is an undeclared
// group whose refusal names the backend, the hook and both versions (the
// plugin's tables cannot hold it).
TEST(PluginAbi, FillGroupOfAnOlderPluginIsNotSupportedNamingBothVersions) {
  expectLoaded(load("v1_2"), kV1_2);
  AcceleratorHooks& hooks = hooksOf("v1_2");
  EXPECT_FALSE(hooks.supports(HookGroup::Fill));
  const std::string hook(hookInfo(HookId::fillRandom).name);
  try {
    hooks.fillRandom(hooks.getCurrentStream(0), DeviceFill::Bits32, nullptr, 0, 0, 0);
    ADD_FAILURE() << hook << " of a plugin speaking 1.2 returned";
  } catch (const NotSupported& error) {
    for (const std::string word : {"'abitest_v1_2'", hook.c_str(), "1.2", "1.3"}) {
      EXPECT_NE(std::string(error.what()).find(word), std::string::npos)
          << "'" << word << "' not in: " << error.what();
    }
  }
}

// join_capture (1.3): a stream that joined a capture allocates into the
// capture's private pool until the capture ends; a stream that is not being
// captured cannot be joined.
TEST(PluginAbi, StreamThatJoinedACaptureAllocatesIntoItsPool) {
  expectLoaded(load("v1_3"), kV1_3);
  AcceleratorHooks& hooks = hooksOf("v1_3");
  using Join = accel_status (*)(std::int8_t, std::int64_t, std::int64_t);
  void* handle = dlopen(pluginPath("v1_3").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto join = reinterpret_cast<Join>(dlsym(handle, "abitest_join_capture"));
  ASSERT_NE(join, nullptr);
  hooks.setCurrentDevice(0);
  const Stream captured = hooks.getNewStream(0);
  const Stream joined = hooks.getNewStream(0);
  EXPECT_NE(join(0, captured.id, joined.id), ACCEL_OK)
      << "a stream that is not being captured was joined";
  hooks.setCurrentStream(captured);
  const GraphId graph = hooks.graphCreate();
  hooks.graphCaptureBegin(graph);
  ASSERT_EQ(join(0, captured.id, joined.id), ACCEL_OK);
  ASSERT_EQ(join(0, captured.id, joined.id), ACCEL_OK) << "joining twice is one join";
  hooks.setCurrentStream(joined);
  DataPtr block = hooks.getDeviceAllocator(0).allocate(4096);
  const MempoolId pool = hooks.graphPool(graph);
  bool in_pool = false;
  for (const MemorySegment& segment : hooks.memorySnapshot().segments) {
    const auto ptr = reinterpret_cast<std::uint64_t>(block.get());
    if (ptr >= segment.address && ptr < segment.address + segment.total_size)
      in_pool = segment.pool == pool;
  }
  EXPECT_TRUE(in_pool)
      << "an allocation on the joined stream is not in the capture's pool";
  block = DataPtr();
  hooks.setCurrentStream(captured);
  hooks.graphCaptureEnd(graph);
  EXPECT_NE(join(0, captured.id, joined.id), ACCEL_OK)
      << "a stream joined a capture that had ended";
  hooks.graphDestroy(graph);
  dlclose(handle);
}

// ---- memory of the plugin's runtime outside the core's caches (1.4) ----

// The test plugin's runtime regions (device memory on its device 1, and
// page-locked host memory), which the core's caches did not hand out.
// ABITEST_RUNTIME_DEVICE (test_plugin/abi_test_device.h).
constexpr DeviceIndex kRuntimeDevice = 1;
struct RuntimeMemory {
  char* device = nullptr;
  char* pinned = nullptr;
  std::size_t bytes = 0;
};
RuntimeMemory runtimeMemoryOf(const std::string& build) {
  RuntimeMemory memory;
  void* handle = dlopen(pluginPath(build).c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr) << build << " is not loaded";
  if (handle == nullptr) return memory;
  using Regions = void (*)(void**, void**, std::size_t*);
  auto* regions = reinterpret_cast<Regions>(dlsym(handle, "abitest_runtime_memory"));
  EXPECT_NE(regions, nullptr) << build << " has no abitest_runtime_memory";
  if (regions != nullptr) {
    void* device = nullptr;
    void* pinned = nullptr;
    regions(&device, &pinned, &memory.bytes);
    memory.device = static_cast<char*>(device);
    memory.pinned = static_cast<char*>(pinned);
  }
  dlclose(handle);
  return memory;
}

// What the core says of memory its caches do not hold when the plugin's
// runtime is not asked: not device memory, not pinned.
void expectRuntimeMemoryUnknown(const std::string& build) {
  AcceleratorHooks& hooks = hooksOf(build);
  const RuntimeMemory memory = runtimeMemoryOf(build);
  ASSERT_NE(memory.device, nullptr);
  EXPECT_THROW((void)hooks.getDeviceFromPtr(memory.device + 100), InvalidArgument);
  EXPECT_FALSE(hooks.isPinnedPtr(memory.pinned + 100));
  EXPECT_EQ(askPlugin<std::uint64_t>(build, "abitest_device_of_calls"), 0u)
      << "the core asked device_of of a plugin speaking "
      << versionText(load(build).abi_negotiated);
}

// Since 1.4 the core asks the plugin's runtime about memory its caches did
// not hand out (device_of): device memory resolves to the device the
// plugin answers, page-locked host memory is pinned, interior pointers
// count, and each kind is asked only of its own table.
TEST(PluginAbi, MemoryThePluginsRuntimeKnowsResolvesThroughDeviceOf) {
  expectLoaded(load("v1_4"), kCoreNewest);
  AcceleratorHooks& hooks = hooksOf("v1_4");
  const RuntimeMemory memory = runtimeMemoryOf("v1_4");
  ASSERT_NE(memory.device, nullptr);
  EXPECT_EQ(hooks.getDeviceFromPtr(memory.device),
            Device(hooks.deviceType(), kRuntimeDevice));
  EXPECT_EQ(hooks.getDeviceFromPtr(memory.device + memory.bytes - 1),
            Device(hooks.deviceType(), kRuntimeDevice));
  EXPECT_TRUE(hooks.isPinnedPtr(memory.pinned));
  EXPECT_TRUE(hooks.isPinnedPtr(memory.pinned + memory.bytes - 1));
  EXPECT_FALSE(hooks.isPinnedPtr(memory.device)) << "device memory taken for pinned";
  EXPECT_THROW((void)hooks.getDeviceFromPtr(memory.pinned), InvalidArgument)
      << "pinned host memory taken for device memory";
  EXPECT_THROW((void)hooks.getDeviceFromPtr(memory.device + memory.bytes),
               InvalidArgument)
      << "the byte past the runtime's region";
}

// Memory neither the caches nor the runtime know stays a clear error (and
// not pinned); memory the caches hold is answered without asking the
// plugin.
TEST(PluginAbi, MemoryNeitherTheCachesNorTheRuntimeKnowIsStillRefused) {
  expectLoaded(load("v1_4"), kCoreNewest);
  AcceleratorHooks& hooks = hooksOf("v1_4");
  int unknown = 0;
  try {
    (void)hooks.getDeviceFromPtr(&unknown);
    ADD_FAILURE() << "a stack variable was taken for device memory";
  } catch (const InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("is not device memory of 'abitest_v1_4'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("its plugin's runtime does not know it"), std::string::npos)
        << message;
  }
  EXPECT_FALSE(hooks.isPinnedPtr(&unknown));
  DataPtr data = hooks.getDeviceAllocator(1).allocate(4096);
  DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(4096);
  const auto before = askPlugin<std::uint64_t>("v1_4", "abitest_device_of_calls");
  EXPECT_EQ(hooks.getDeviceFromPtr(data.get()).index(), 1);
  EXPECT_TRUE(hooks.isPinnedPtr(pinned.get()));
  EXPECT_EQ(askPlugin<std::uint64_t>("v1_4", "abitest_device_of_calls"), before)
      << "the core asked device_of about memory of its own caches";
}

// A plugin built on the 1.3 headers has no device_of: its table ends
// before it (and the block the core reads is exactly that long, which
// AddressSanitizer holds the core to), so the runtime's memory is unknown.
TEST(PluginAbi, PluginOlderThanDeviceOfAnswersFromTheCachesAlone) {
  expectLoaded(load("v1_3"), kV1_3);
  useBackend("v1_3");
  expectRuntimeMemoryUnknown("v1_3");
}

// A plugin on the current headers that answered 1.3: its segment tables
// hold device_of, but the core does not read what came after the version
// it speaks.
TEST(PluginAbi, PluginSpeaking1_3IsNotAskedDeviceOfFromItsLongTables) {
  expectLoaded(load("speaks_1_3"), kV1_3);
  expectRuntimeMemoryUnknown("speaks_1_3");
}

// ---- headers newer than the core ----

TEST(PluginAbi, NewerHeadersAcceptingTheCoreLoadSpeakingTheCoresNewest) {
  const PluginRecord record = load("next_minor");
  expectLoaded(record, kCoreNewest);
  EXPECT_EQ(versionText(record.abi_newest), kNextMinor);
  EXPECT_EQ(record.abi_oldest, kV1_0);
  useBackend("next_minor");  // its graphs table is longer than the core knows
  EXPECT_EQ(askPlugin<std::uint32_t>("next_minor", "abitest_negotiated_version"),
            kCoreNewest);
}

TEST(PluginAbi, NewerHeadersNeedingTheirOwnVersionAreRefusedNamingBoth) {
  const PluginRecord record = load("next_minor_only");
  EXPECT_EQ(record.status, PluginStatus::VersionMismatch) << describePluginRecord(record);
  EXPECT_EQ(versionText(record.abi_newest), kNextMinor);
  EXPECT_EQ(versionText(record.abi_oldest), kNextMinor);
  EXPECT_EQ(record.abi_negotiated, 0u);
  expectRefused(record, "next_minor_only", {kNextMinor, versionText(kCoreNewest)});
}

TEST(PluginAbi, AnswerAboveWhatTheCoreOfferedIsRefusedNamingBoth) {
  const PluginRecord record = load("next_minor_insists");
  EXPECT_EQ(record.status, PluginStatus::VersionMismatch) << describePluginRecord(record);
  expectRefused(record, "next_minor_insists", {kNextMinor, versionText(kCoreNewest)});
}

TEST(PluginAbi, NextMajorVersionIsRefusedNamingBoth) {
  for (const std::string build : {"next_major", "next_major_insists"}) {
    SCOPED_TRACE(build);
    const PluginRecord record = load(build);
    EXPECT_EQ(record.status, PluginStatus::VersionMismatch)
        << describePluginRecord(record);
    expectRefused(record, build, {kNextMajor, versionText(kCoreNewest)});
  }
}

// ---- bad input at the boundary ----

TEST(PluginAbi, FileWithoutTheEntryIsNotAPlugin) {
  const PluginRecord record = load("no_entry");
  EXPECT_EQ(record.status, PluginStatus::NotAPlugin) << describePluginRecord(record);
  expectRefused(record, "no_entry", {ACCEL_PLUGIN_ENTRY_NAME});
}

TEST(PluginAbi, EntryFailureIsRefusedWithThePluginsMessage) {
  expectRefused(load("entry_fails"), "entry_fails", {"no device driver found"});
}

// A file whose load failed is tried again (docs/plugins.md): refused again,
// for the same reason, and nothing of the attempt before it stays behind
// (under LeakSanitizer, neither the core's handle of each attempt).
TEST(PluginAbi, RefusedPluginLoadedAgainIsRefusedAgainForTheSameReason) {
  for (const std::string build : {"entry_fails", "answer_garbage", "fail_halfway"}) {
    const PluginRecord first = load(build);
    const PluginRecord second = load(build);
    EXPECT_FALSE(pluginStatusIsSuccess(second.status)) << describePluginRecord(second);
    EXPECT_EQ(second.status, first.status) << build;
    EXPECT_EQ(second.detail, first.detail) << build;
  }
}

// Exceptions do not cross the boundary: the core catches one and refuses.
TEST(PluginAbi, EntryThatThrowsIsRefusedWithTheExceptionsText) {
  expectRefused(load("throws"), "throws", {"the entry threw on purpose"});
}

TEST(PluginAbi, RegisterFunctionThatThrowsIsRefusedWithTheExceptionsText) {
  expectRefused(load("throws_in_register"), "throws_in_register",
                {"registration threw on purpose"});
}

TEST(PluginAbi, AnswerLeftUnfilledIsRefused) {
  expectRefused(load("answer_unfilled"), "answer_unfilled", {});
}

TEST(PluginAbi, GarbageVersionIsRefusedNamingIt) {
  // 0xdeadbeef: major 57005, minor 48879.
  expectRefused(load("answer_garbage"), "answer_garbage", {"57005"});
}

TEST(PluginAbi, AnswerWithoutRegisterFunctionIsRefused) {
  expectRefused(load("no_register"), "no_register", {"register_backends"});
}

TEST(PluginAbi, TableSizeZeroIsRefusedNamingTheTable) {
  expectRefused(load("streams_size_zero"), "streams_size_zero", {"streams"});
}

TEST(PluginAbi, AbsurdTableSizeIsRefusedNamingTheTable) {
  expectRefused(load("streams_size_absurd"), "streams_size_absurd", {"streams"});
}

TEST(PluginAbi, DeclaredGroupWithoutATableIsRefusedNamingTheGroup) {
  expectRefused(load("null_graphs_table"), "null_graphs_table", {"graphs"});
}

TEST(PluginAbi, DeclaredGroupMissingAFunctionIsRefusedNamingIt) {
  expectRefused(load("null_graph_replay"), "null_graph_replay", {"graphs", "replay"});
}

TEST(PluginAbi, RegisterFailingHalfwayLeavesNothingRegistered) {
  expectRefused(load("fail_halfway"), "fail_halfway", {"firmware did not load"});
}

// ---- what the core exports in C ----

TEST(PluginAbi, CoreReportsThePluginApiRangeItImplements) {
  std::uint32_t oldest = 0;
  std::uint32_t newest = 0;
  accel_core_plugin_abi_range(&oldest, &newest);
  EXPECT_EQ(oldest, kV1_0) << "every version since the first C release loads";
  EXPECT_EQ(newest, kCoreNewest);
  accel_core_plugin_abi_range(nullptr, nullptr);  // never fails
}

// The entry of a plugin the program opened itself (as if linked into it).
accel_plugin_negotiate_fn entryOf(const std::string& build) {
  void* handle = dlopen(pluginPath(build).c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<accel_plugin_negotiate_fn>(
      dlsym(handle, ACCEL_PLUGIN_ENTRY_NAME));
}

std::optional<PluginRecord> recordOf(const std::string& origin) {
  std::optional<PluginRecord> last;
  for (const PluginRecord& record : pluginReport()) {
    if (record.path == origin) last = record;
  }
  return last;
}

TEST(PluginAbi, EntryLinkedIntoTheProgramLoadsThroughTheCore) {
  accel_plugin_negotiate_fn entry = entryOf("linked");
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(accel_core_load_entry(entry, "abitest linked into the test"), ACCEL_OK);
  const std::optional<PluginRecord> record = recordOf("abitest linked into the test");
  ASSERT_TRUE(record.has_value());
  expectLoaded(*record, kCoreNewest);
  useBackend("linked");
}

TEST(PluginAbi, EntryFailingThroughTheCoreIsReportedWithItsMessage) {
  accel_plugin_negotiate_fn entry = entryOf("entry_fails");
  ASSERT_NE(entry, nullptr);
  EXPECT_NE(accel_core_load_entry(entry, "abitest failing entry"), ACCEL_OK);
  const std::optional<PluginRecord> record = recordOf("abitest failing entry");
  ASSERT_TRUE(record.has_value());
  expectRefused(*record, "entry_fails", {"no device driver found"});
  EXPECT_NE(accel_core_load_entry(nullptr, "abitest null entry"), ACCEL_OK);
  ASSERT_TRUE(recordOf("abitest null entry").has_value());
  EXPECT_FALSE(recordOf("abitest null entry")->detail.empty());
}

// A backend's C++ API registers the plugin the program links once, through
// accel::LinkedPlugin; a refused entry is NotAvailable with the load report's
// reason, and a null entry is the caller's mistake.
TEST(PluginAbi, LinkedPluginRegistersOnceAndReportsARefusedEntry) {
  LinkedPlugin linked{"abitest_linked", entryOf("linked"), "abitest::registerBackend"};
  AcceleratorHooks& hooks = linked.hooks();
  EXPECT_EQ(&linked.hooks(), &hooks);
  EXPECT_EQ(&hooksOf("linked"), &hooks);
  EXPECT_TRUE(recordOf("libaccel_abitest_linked (abitest::registerBackend)").has_value());
  EXPECT_EQ(linked.path(), pluginPath("linked"));
  useBackend("linked");

  LinkedPlugin failing{"abitest_entry_fails", entryOf("entry_fails"),
                       "abitest::registerFailing"};
  try {
    (void)failing.hooks();
    ADD_FAILURE() << "a refused entry registered";
  } catch (const NotAvailable& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("abitest::registerFailing(): "), std::string::npos) << message;
    EXPECT_NE(message.find("no device driver found"), std::string::npos) << message;
  }
  LinkedPlugin null{"abitest_null", nullptr, "abitest::registerNull"};
  EXPECT_THROW((void)null.hooks(), InvalidArgument);
  EXPECT_EQ(linkedPluginPath(nullptr), "");
}

// A backend's C++ API names streams to its plugin with pluginStreamOf, and
// refuses another device type's stream by the caller's name.
TEST(PluginAbi, PluginStreamOfRefusesAnotherDeviceTypesStream) {
  expectLoaded(load("v1_3"), kV1_3);
  const DeviceType type = deviceTypeFromName("abitest_v1_3");
  const accel_stream s =
      pluginStreamOf(Stream(Device(type, 1), 7), type, "abitest::fill");
  EXPECT_EQ(s.id, 7);
  EXPECT_EQ(s.device, 1);
  try {
    (void)pluginStreamOf(Stream(Device(DeviceType::CPU, 0), 0), type, "abitest::fill");
    ADD_FAILURE() << "a cpu stream was taken for an abitest_v1_3 one";
  } catch (const InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("abitest::fill: "), std::string::npos) << message;
    EXPECT_NE(message.find("'abitest_v1_3'"), std::string::npos) << message;
  }
}

// The services register only while register_backends runs.
TEST(PluginAbi, RegisteringAfterRegisterBackendsReturnedIsRefused) {
  expectLoaded(load("v1_1"), kV1_1);
  EXPECT_NE(askPlugin<accel_status>("v1_1", "abitest_register_late"), ACCEL_OK);
  const std::optional<DeviceType> late = findDeviceType("abitest_v1_1_late");
  EXPECT_FALSE(late && isHooksRegistered(*late));
  useBackend("v1_1");
}

// ---- the plugin's statuses reach the caller ----

// A status a plugin function returns becomes the matching error, with the
// message the plugin gave set_error.
TEST(PluginAbi, PluginStatusBecomesTheMatchingErrorWithItsMessage) {
  expectLoaded(load("v1_1"), kV1_1);
  AcceleratorHooks& hooks = hooksOf("v1_1");
  try {
    hooks.graphReplay(0x7fffffffffffULL);
    ADD_FAILURE() << hookInfo(HookId::graphReplay).name
                  << " of an id never created returned";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("is not a live graph of 'abitest_v1_1'"),
              std::string::npos)
        << error.what();
  }
  const GraphId graph = hooks.graphCreate();
  hooks.setCurrentStream(hooks.getNewStream(0));
  hooks.graphCaptureBegin(graph);
  try {
    hooks.synchronizeStream(hooks.getCurrentStream(0));
    ADD_FAILURE() << "synchronizing a capturing stream returned";
  } catch (const DeviceError& error) {
    EXPECT_NE(std::string(error.what()).find("is being captured"), std::string::npos)
        << error.what();
  }
  hooks.graphCaptureEnd(graph);
  hooks.graphDestroy(graph);
  hooks.setCurrentStream(hooks.getDefaultStream(0));
}

// ---- refusals leave the process working ----

const std::vector<std::string> kRefusedBuilds = {"next_minor_only",
                                                 "next_minor_insists",
                                                 "next_major",
                                                 "next_major_insists",
                                                 "no_entry",
                                                 "entry_fails",
                                                 "answer_unfilled",
                                                 "answer_garbage",
                                                 "no_register",
                                                 "streams_size_zero",
                                                 "streams_size_absurd",
                                                 "null_graphs_table",
                                                 "null_graph_replay",
                                                 "fail_halfway",
                                                 "throws",
                                                 "throws_in_register"};

TEST(PluginAbi, RefusalsLeaveOtherBackendsWorking) {
  expectLoaded(load("v1_0"), kV1_0);
  AcceleratorHooks* before = &hooksOf("v1_0");
  for (const std::string& build : kRefusedBuilds) {
    EXPECT_THROW((void)loadBackend(pluginPath(build)), PluginLoadError) << build;
  }
  EXPECT_EQ(&hooksOf("v1_0"), before);
  useBackend("v1_0");
  expectLoaded(load("v1_1"), kV1_1);  // and a load after them still works
  useBackend("v1_1");
}

// What `import accel` and the tool do: autoload a list with every bad build
// in it; each is refused in the report, the good ones load.
TEST(PluginAbi, AutoloadRefusesEachBadPluginAndLoadsTheRest) {
  AutoloadConfig config;
  std::string list = pluginPath("v1_0");
  for (const std::string& build : kRefusedBuilds) list += ":" + pluginPath(build);
  list += ":" + pluginPath("v1_1");
  config.plugins = list;
  const std::vector<PluginRecord> records = autoloadPlugins(config);
  ASSERT_EQ(records.size(), kRefusedBuilds.size() + 2);
  // Loaded, or already loaded by another test of this process.
  EXPECT_TRUE(pluginStatusIsSuccess(records.front().status))
      << describePluginRecord(records.front());
  EXPECT_TRUE(pluginStatusIsSuccess(records.back().status))
      << describePluginRecord(records.back());
  for (std::size_t i = 1; i + 1 < records.size(); ++i) {
    EXPECT_FALSE(pluginStatusIsSuccess(records[i].status))
        << describePluginRecord(records[i]);
    EXPECT_FALSE(records[i].detail.empty()) << describePluginRecord(records[i]);
  }
  useBackend("v1_0");
  useBackend("v1_1");
}

// A second capture refused on a stream that is being captured leaves the
// first capture its private pool: a block freed inside the capture is not
// handed out again outside it (the graph's replays still use it).
TEST(PluginAbi, ARefusedSecondCaptureOfAStreamLeavesTheFirstCaptureItsPool) {
  expectLoaded(load("v1_1"), kV1_1);
  AcceleratorHooks& hooks = hooksOf("v1_1");
  Allocator& allocator = hooks.getDeviceAllocator(0);
  const GraphId first = hooks.graphCreate(false);
  const GraphId second = hooks.graphCreate(false);
  hooks.graphCaptureBegin(first, MempoolId{}, CaptureMode::Global);
  EXPECT_THROW(hooks.graphCaptureBegin(second, MempoolId{}, CaptureMode::Global),
               DeviceError);
  void* captured = nullptr;
  {
    DataPtr block = allocator.allocate(4096);
    captured = block.get();
  }
  hooks.graphCaptureEnd(first);
  const DataPtr after = allocator.allocate(4096);
  EXPECT_NE(after.get(), captured);
  hooks.graphDestroy(first);
  hooks.graphDestroy(second);
}

}  // namespace
}  // namespace accel
