// The core's hooks over a C backend, against plugins that misbehave in ways
// the tables cannot refuse at registration: a device count that changes
// after init, a message given with a call that did not fail, an init the
// core's part of initialisation fails after, a second capture of a stream
// that is being captured, a device_of that answers a device the backend
// does not have; and pointer queries for memory of the plugin's runtime that
// the core's caches did not hand out (device_of, 1.4). Each plugin here is a C entry
// linked into the test (accel_core_load_entry), written with the plugin ABI's C types
// only.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "accel/error.h"
#include "accel/graph.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/plugin_abi.h"

namespace {

using accel::AcceleratorHooks;

const accel_core_services* g_services = nullptr;
accel_core* g_core = nullptr;

// What each test's plugin varies.
struct Plugin {
  const char* name = "";
  int32_t (*is_available)(void*) = [](void*) -> int32_t { return 1; };
  int32_t (*device_count)(void*) = [](void*) -> int32_t { return 1; };
  accel_status (*init)(void*) = [](void*) -> accel_status { return ACCEL_OK; };
  accel_status (*properties)(void*, int8_t, accel_device_properties*) =
      [](void*, int8_t, accel_device_properties*) -> accel_status { return ACCEL_OK; };
  uint32_t version = ACCEL_PLUGIN_ABI_CURRENT;  // what the entry answers
  // device_memory's optional members (null: not provided).
  void (*memory_info)(void*, int8_t, uint64_t*, uint64_t*) = nullptr;
  accel_status (*check_allocation)(void*, int8_t, size_t) = nullptr;
  const char* out_of_memory_advice = nullptr;
  size_t largest_segment = SIZE_MAX;  // allocate_segment gives null above it
  // device_of (1.4) of device_memory and of pinned_memory (null: not provided).
  int32_t (*device_of)(void*, const void*, int8_t*) = nullptr;
  int32_t (*pinned_device_of)(void*, const void*, int8_t*) = nullptr;
  uint32_t flags = 0;  // accel_backend.flags
  // low.unavailable_reason (1.4; null: not provided).
  void (*unavailable_reason)(void*, const accel_text_sink*) = nullptr;
};
Plugin g_plugin;

accel_status allocateSegment(void*, int8_t, size_t bytes, void** out) {
  *out = bytes <= g_plugin.largest_segment ? std::malloc(bytes) : nullptr;
  return ACCEL_OK;
}
void freeSegment(void*, int8_t, void* data, size_t) { std::free(data); }

accel_status registerBackends(accel_core* core) {
  int32_t type = 0;
  if (accel_status s = g_services->register_device_type(core, g_plugin.name, &type))
    return s;
  const accel_low_fns low{sizeof(low),
                          [](void*) -> int32_t { return 1; },
                          g_plugin.is_available,
                          g_plugin.device_count,
                          nullptr,
                          nullptr,
                          g_plugin.unavailable_reason};
  const accel_high_fns high{sizeof(high), g_plugin.init, nullptr};
  const accel_device_fns device{
      sizeof(device), [](void*, int8_t) -> accel_status { return ACCEL_OK; },
      [](void*, const accel_text_sink*) -> accel_status { return ACCEL_OK; },
      g_plugin.properties};
  accel_segment_fns memory{};
  memory.struct_size = sizeof(memory);
  memory.allocate_segment = allocateSegment;
  memory.free_segment = freeSegment;
  memory.memory_info = g_plugin.memory_info;
  memory.check_allocation = g_plugin.check_allocation;
  memory.out_of_memory_advice = g_plugin.out_of_memory_advice;
  accel_segment_fns pinned = memory;
  memory.device_of = g_plugin.device_of;
  pinned.device_of = g_plugin.pinned_device_of;
  accel_backend backend{};
  backend.struct_size = sizeof(backend);
  backend.device_type = type;
  backend.groups = ACCEL_GROUP_LOW | ACCEL_GROUP_HIGH | ACCEL_GROUP_DEVICE;
  backend.low = &low;
  backend.high = &high;
  backend.device = &device;
  backend.flags = g_plugin.flags;
  backend.device_memory = &memory;
  backend.pinned_memory = &pinned;
  return g_services->register_backend(core, &backend);
}

accel_status entry(const accel_core_offer* offer, accel_plugin_answer* answer) {
  g_services = offer->services;
  g_core = offer->core;
  answer->version = g_plugin.version;
  answer->plugin_newest_version = ACCEL_PLUGIN_ABI_CURRENT;
  answer->plugin_oldest_version = ACCEL_PLUGIN_ABI_VERSION(1, 0);
  answer->name = g_plugin.name;
  answer->version_text = "0";
  answer->register_backends = registerBackends;
  return ACCEL_OK;
}

AcceleratorHooks& loaded(const Plugin& plugin) {
  g_plugin = plugin;
  EXPECT_EQ(accel_core_load_entry(entry, plugin.name), ACCEL_OK);
  return accel::getHooks(accel::deviceTypeFromName(plugin.name));
}

std::atomic<int> g_counted{0};
std::atomic<int> g_inits{0};

TEST(CBackendHooks, ADeviceCountThatGrowsAfterInitKeepsTheCountInitBuiltFor) {
  Plugin plugin;
  plugin.name = "countgrows";
  // One device until init ran and for the core's first question after it
  // (what init builds for), two from then on: a driver that finds more.
  plugin.init = [](void*) -> accel_status {
    ++g_inits;
    return ACCEL_OK;
  };
  plugin.device_count = [](void*) -> int32_t {
    if (g_inits.load() == 0) return 1;
    return g_counted++ == 0 ? 1 : 2;
  };
  AcceleratorHooks& hooks = loaded(plugin);
  hooks.init();
  EXPECT_EQ(hooks.deviceCount(), 1);
  EXPECT_THROW((void)hooks.getDeviceAllocator(1), accel::InvalidArgument);
  EXPECT_NE(hooks.getDeviceAllocator(0).allocate(64).get(), nullptr);
}

TEST(CBackendHooks, AMessageGivenWithACallThatDidNotFailIsNotTakenForALaterFailures) {
  Plugin plugin;
  plugin.name = "stalemessage";
  // A probe cannot fail: a message it gives belongs to nothing.
  plugin.is_available = [](void*) -> int32_t {
    g_services->set_error(g_core, ACCEL_ERROR_INVALID_ARGUMENT, "STALE probe note");
    return 1;
  };
  plugin.properties = [](void*, int8_t, accel_device_properties*) -> accel_status {
    return ACCEL_ERROR_INVALID_ARGUMENT;  // and no message of its own
  };
  AcceleratorHooks& hooks = loaded(plugin);
  EXPECT_TRUE(hooks.isAvailable());
  EXPECT_TRUE(hooks.isAvailable());
  try {
    (void)hooks.getDeviceProperties(0);
    ADD_FAILURE() << accel::hookInfo(accel::HookId::getDeviceProperties).name
                  << " returned";
  } catch (const accel::InvalidArgument& error) {
    const std::string what = error.what();
    EXPECT_EQ(what.find("STALE"), std::string::npos) << what;
    EXPECT_NE(what.find("gave no message"), std::string::npos) << what;
  }
}

TEST(CBackendHooks, ThePluginsInitRunsOnceWhenTheCoresPartOfInitFails) {
  Plugin plugin;
  plugin.name = "initonce";
  plugin.init = [](void*) -> accel_status {
    ++g_inits;
    return ACCEL_OK;
  };
  // The core's caches refuse a malformed allocator setting, so the core's
  // part of init fails after the plugin's, and every initialising hook
  // retries it.
  AcceleratorHooks& hooks = loaded(plugin);
  ::setenv("ACCEL_ALLOC_CONF", "no_such_setting:1", 1);
  for (int attempt = 0; attempt < 3; ++attempt)
    EXPECT_THROW((void)hooks.getDeviceAllocator(0), accel::InvalidArgument);
  ::unsetenv("ACCEL_ALLOC_CONF");
  EXPECT_EQ(g_inits.load(), 1);
  EXPECT_NO_THROW((void)hooks.getDeviceAllocator(0));
  EXPECT_EQ(g_inits.load(), 1);
}

// The hooks contract: init succeeds without devices (a driver that finds
// none), and the hooks that take no device still answer.
TEST(CBackendHooks, ABackendWithoutDevicesInitialises) {
  Plugin plugin;
  plugin.name = "nodevices";
  plugin.device_count = [](void*) -> int32_t { return 0; };
  AcceleratorHooks& hooks = loaded(plugin);
  EXPECT_NO_THROW(hooks.init());
  EXPECT_TRUE(hooks.isInitialized());
  EXPECT_EQ(hooks.deviceCount(), 0);
  accel::DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(64);
  EXPECT_TRUE(hooks.isPinnedPtr(pinned.get()));
  EXPECT_THROW((void)hooks.getDeviceAllocator(0), accel::InvalidArgument);
}

std::atomic<int> g_checks{0};

int32_t typeOf(const char* name) {
  return static_cast<int32_t>(accel::deviceTypeFromName(name));
}

// A diverted device asks the plugin before each allocation; a refusal is the
// caller's error with the plugin's message, and undiverted it asks nothing.
TEST(CBackendHooks, ADivertedDeviceAsksThePluginBeforeEachAllocation) {
  Plugin plugin;
  plugin.name = "diverts";
  plugin.check_allocation = [](void*, int8_t, size_t) -> accel_status {
    ++g_checks;
    g_services->set_error(g_core, ACCEL_ERROR_DEVICE, "diverts: the device is lost");
    return ACCEL_ERROR_DEVICE;
  };
  AcceleratorHooks& hooks = loaded(plugin);
  hooks.init();
  EXPECT_NO_THROW((void)hooks.getDeviceAllocator(0).allocate(64));
  EXPECT_EQ(g_checks.load(), 0);
  ASSERT_EQ(g_services->divert_allocations(g_core, typeOf("diverts"), 0, 1), ACCEL_OK);
  try {
    (void)hooks.getDeviceAllocator(0).allocate(64);
    ADD_FAILURE() << "a diverted allocation the plugin refused succeeded";
  } catch (const accel::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("the device is lost"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(g_checks.load(), 1);
  ASSERT_EQ(g_services->divert_allocations(g_core, typeOf("diverts"), 0, 0), ACCEL_OK);
  EXPECT_NO_THROW((void)hooks.getDeviceAllocator(0).allocate(64));
  EXPECT_EQ(g_checks.load(), 1);
}

// A plugin that answered 1.1 gets nothing of 1.2 from a table long enough to
// hold it: its check_allocation does not count (diverting is refused as for
// a plugin without one) and its advice is not added.
TEST(CBackendHooks, APluginSpeaking1_1GetsNothingOf1_2FromItsSegmentTable) {
  Plugin plugin;
  plugin.name = "speaks11";
  plugin.version = ACCEL_PLUGIN_ABI_VERSION(1, 1);
  plugin.check_allocation = [](void*, int8_t, size_t) -> accel_status {
    return ACCEL_ERROR_DEVICE;
  };
  plugin.memory_info = [](void*, int8_t, uint64_t* total, uint64_t* free_bytes) {
    *total = std::uint64_t{1} << 20;
    *free_bytes = *total;
  };
  plugin.out_of_memory_advice = "raise SPEAKS11_MEMORY";
  plugin.largest_segment = std::size_t{1} << 20;
  AcceleratorHooks& hooks = loaded(plugin);
  hooks.init();
  EXPECT_EQ(g_services->divert_allocations(g_core, typeOf("speaks11"), 0, 1),
            ACCEL_ERROR_INVALID_ARGUMENT);
  try {
    (void)hooks.getDeviceAllocator(0).allocate(std::size_t{4} << 20);
    ADD_FAILURE() << "4 MiB on a 1 MiB device succeeded";
  } catch (const accel::OutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()).find("SPEAKS11_MEMORY"), std::string::npos)
        << e.what();
  }
}

// The same advice from a plugin of 1.2 is added when the capacity refuses,
// and only when the plugin knows its capacity.
TEST(CBackendHooks, TheOutOfMemoryAdviceIsAddedWhenTheCapacityRefuses) {
  Plugin plugin;
  plugin.name = "advises";
  plugin.memory_info = [](void*, int8_t, uint64_t* total, uint64_t* free_bytes) {
    *total = std::uint64_t{1} << 20;
    *free_bytes = *total;
  };
  plugin.out_of_memory_advice = "raise ADVISES_MEMORY";
  plugin.largest_segment = std::size_t{1} << 20;
  AcceleratorHooks& hooks = loaded(plugin);
  try {
    (void)hooks.getDeviceAllocator(0).allocate(std::size_t{4} << 20);
    ADD_FAILURE() << "4 MiB on a 1 MiB device succeeded";
  } catch (const accel::OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("(raise ADVISES_MEMORY)"), std::string::npos)
        << e.what();
  }
}

// ---- memory of the plugin's runtime outside the core's caches (1.4) ----

// What the plugin's runtime knows besides the caches: device memory (on
// the device g_runtime_answer says) and page-locked host memory.
char g_runtime_device[256];
char g_runtime_pinned[256];
std::atomic<int> g_runtime_answer{1};     // the device device_of answers
std::atomic<int32_t> g_runtime_known{1};  // what device_of returns for a known ptr

bool inside(const char (&region)[256], const void* ptr) {
  const auto base = reinterpret_cast<std::uintptr_t>(region);
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  return address >= base && address - base < sizeof region;
}
int32_t runtimeDeviceOf(void*, const void* ptr, int8_t* device) {
  if (!inside(g_runtime_device, ptr)) return 0;
  *device = static_cast<int8_t>(g_runtime_answer.load());
  return g_runtime_known.load();
}
int32_t runtimePinnedOf(void*, const void* ptr, int8_t*) {
  return inside(g_runtime_pinned, ptr) ? g_runtime_known.load() : 0;
}

Plugin runtimePlugin(const char* name, uint32_t flags) {
  Plugin plugin;
  plugin.name = name;
  plugin.device_count = [](void*) -> int32_t { return 2; };
  plugin.device_of = runtimeDeviceOf;
  plugin.pinned_device_of = runtimePinnedOf;
  plugin.flags = flags;
  return plugin;
}

// getDeviceFromPtr and isPinnedPtr ask the caches, then the runtime:
// interior pointers count, each kind is asked of its own table, and memory
// neither knows is still refused (and not pinned).
void expectRuntimeMemoryResolves(AcceleratorHooks& hooks) {
  const accel::Device device1(hooks.deviceType(), 1);
  EXPECT_EQ(hooks.getDeviceFromPtr(g_runtime_device), device1);
  EXPECT_EQ(hooks.getDeviceFromPtr(g_runtime_device + 255), device1);
  EXPECT_TRUE(hooks.isPinnedPtr(g_runtime_pinned + 17));
  EXPECT_FALSE(hooks.isPinnedPtr(g_runtime_device));
  EXPECT_THROW((void)hooks.getDeviceFromPtr(g_runtime_pinned), accel::InvalidArgument);
  int unknown = 0;
  EXPECT_THROW((void)hooks.getDeviceFromPtr(&unknown), accel::InvalidArgument);
  EXPECT_FALSE(hooks.isPinnedPtr(&unknown));
  accel::DataPtr data = hooks.getDeviceAllocator(0).allocate(64);
  EXPECT_EQ(hooks.getDeviceFromPtr(data.get()), accel::Device(hooks.deviceType(), 0));
  accel::DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(64);
  EXPECT_TRUE(hooks.isPinnedPtr(pinned.get()));
}

TEST(CBackendHooks, MemoryTheRuntimeKnowsResolvesPastTheCaches) {
  expectRuntimeMemoryResolves(loaded(runtimePlugin("runtimememory", 0)));
}

TEST(CBackendHooks, MemoryTheRuntimeKnowsResolvesPastASynchronousBackendsCaches) {
  expectRuntimeMemoryResolves(
      loaded(runtimePlugin("syncruntimememory", ACCEL_BACKEND_SYNCHRONOUS)));
}

// isPinnedPtr never initialises, and memory the runtime page-locked before
// the backend was initialised is pinned all the same.
TEST(CBackendHooks, IsPinnedPtrAsksTheRuntimeWithoutInitialising) {
  AcceleratorHooks& hooks = loaded(runtimePlugin("pinnedbeforeinit", 0));
  EXPECT_EQ(hooks.deviceCount(), 2);
  EXPECT_TRUE(hooks.isPinnedPtr(g_runtime_pinned));
  EXPECT_FALSE(hooks.isInitialized());
}

// A device the plugin answers outside the backend's devices is not
// trusted: the pointer is refused as unknown, with the plugin's answer
// named, on either kind of backend.
void expectDeviceOutsideTheBackendIgnored(AcceleratorHooks& hooks) {
  for (const int answer : {2, 7, -1}) {
    g_runtime_answer = answer;
    try {
      const accel::Device device = hooks.getDeviceFromPtr(g_runtime_device);
      ADD_FAILURE() << "device " << answer << " of 2 was trusted: " << device;
    } catch (const accel::InvalidArgument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("answered device " + std::to_string(answer)),
                std::string::npos)
          << message;
    }
  }
  g_runtime_answer = 1;
}

TEST(CBackendHooks, ADeviceThePluginAnswersOutsideItsDevicesIsIgnored) {
  expectDeviceOutsideTheBackendIgnored(loaded(runtimePlugin("runtimebadindex", 0)));
}

TEST(CBackendHooks, ADeviceOutsideASynchronousBackendsDevicesIsIgnored) {
  expectDeviceOutsideTheBackendIgnored(
      loaded(runtimePlugin("syncruntimebadindex", ACCEL_BACKEND_SYNCHRONOUS)));
}

// device_of is a probe answering 1 or 0: anything else is no.
TEST(CBackendHooks, ADeviceOfAnswerOtherThanOneIsNo) {
  AcceleratorHooks& hooks = loaded(runtimePlugin("runtimeanswers2", 0));
  g_runtime_known = 2;
  EXPECT_THROW((void)hooks.getDeviceFromPtr(g_runtime_device), accel::InvalidArgument);
  EXPECT_FALSE(hooks.isPinnedPtr(g_runtime_pinned));
  g_runtime_known = -1;
  EXPECT_THROW((void)hooks.getDeviceFromPtr(g_runtime_device), accel::InvalidArgument);
  EXPECT_FALSE(hooks.isPinnedPtr(g_runtime_pinned));
  g_runtime_known = 1;
}

// Without devices, a hook that needs one says why the backend has none, in
// the plugin's words (low.unavailable_reason, 1.4), and which hook asked:
// NotAvailable, not "index 0 out of range [0, 0)". Without the function,
// or from a plugin that answered 1.3, the range error stays.
void sayNoDriver(void*, const accel_text_sink* sink) {
  const char text[] = "no driver: libnodevice.so.1 not found\n";
  sink->append(sink->sink, text, sizeof text - 1);
}

Plugin unavailablePlugin(const char* name) {
  Plugin plugin;
  plugin.name = name;
  plugin.is_available = [](void*) -> int32_t { return 0; };
  plugin.device_count = [](void*) -> int32_t { return 0; };
  plugin.unavailable_reason = sayNoDriver;
  return plugin;
}

TEST(CBackendHooks, AHookThatNeedsADeviceSaysWhyTheBackendHasNone) {
  AcceleratorHooks& hooks = loaded(unavailablePlugin("unavailable"));
  const std::string_view hook = accel::hookInfo(accel::HookId::setCurrentDevice).name;
  try {
    hooks.setCurrentDevice(0);
    FAIL() << hook << "(0) was accepted without devices";
  } catch (const accel::NotAvailable& e) {
    const std::string what = e.what();
    EXPECT_NE(
        what.find(accel::detail::concat(
            "'unavailable' is not available: no driver: libnodevice.so.1 not found (",
            hook, "() needs a device)")),
        std::string::npos)
        << what;
  }
  EXPECT_THROW((void)hooks.getDefaultGenerator(0), accel::NotAvailable);
  int local = 0;
  try {
    (void)hooks.getDeviceFromPtr(&local);
    FAIL() << "a pointer resolved without devices";
  } catch (const accel::NotAvailable& e) {
    EXPECT_NE(std::string(e.what()).find("libnodevice.so.1"), std::string::npos)
        << e.what();
  }
}

TEST(CBackendHooks, WithoutAReasonADeviceIndexWithoutDevicesIsOutOfRange) {
  Plugin plugin = unavailablePlugin("unavailablemute");
  plugin.unavailable_reason = nullptr;
  AcceleratorHooks& hooks = loaded(plugin);
  EXPECT_THROW(hooks.setCurrentDevice(0), accel::InvalidArgument);
}

TEST(CBackendHooks, APluginSpeaking1_3IsNotAskedWhyItIsUnavailable) {
  Plugin plugin = unavailablePlugin("unavailable13");
  plugin.version = ACCEL_PLUGIN_ABI_VERSION(1, 3);
  AcceleratorHooks& hooks = loaded(plugin);
  EXPECT_THROW(hooks.setCurrentDevice(0), accel::InvalidArgument);
}

// A plugin that answered 1.3 is not asked device_of, though its tables
// hold it.
TEST(CBackendHooks, APluginSpeaking1_3IsNotAskedDeviceOf) {
  Plugin plugin = runtimePlugin("runtimespeaks13", 0);
  plugin.version = ACCEL_PLUGIN_ABI_VERSION(1, 3);
  AcceleratorHooks& hooks = loaded(plugin);
  EXPECT_THROW((void)hooks.getDeviceFromPtr(g_runtime_device), accel::InvalidArgument);
  EXPECT_FALSE(hooks.isPinnedPtr(g_runtime_pinned));
}

}  // namespace
