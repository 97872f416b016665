// The adapter's asynchronous half (accel::adapter::Backend) seen from the
// core, beyond what `accel check` asks: the testdev plugins (a C plugin on
// the adapter, testdev/testdev_backend.h) loaded by path. testdevctl keeps
// the current device and streams itself, leaves the graphs group out and
// exports test controls (testdev/testdev_control.h) that hold a stream's
// work, make the next deviceSynchronize throw and call the core's services
// from inside the plugin.
//
// The same tests run on testdevctl built with clang and libc++
// (tests/conformance/CMakeLists.txt), where what the backend throws is
// another standard library's exception.
//
// Held streams make pending work a fact rather than a race: nothing here
// waits on time.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/generator.h"
#include "accel/graph.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/memory/record_stream.h"
#include "accel/plugin.h"
#include "accel/random_fill.h"
#include "testdev/testdev_control.h"

namespace {

using accel::AcceleratorHooks;
using accel::DataPtr;
using accel::Stream;

// Loads the plugin at `path` once per process and returns the hooks of `type`.
AcceleratorHooks& loaded(const char* path, const char* type) {
  const accel::PluginRecord record = accel::loadBackend(path);
  EXPECT_TRUE(accel::pluginStatusIsSuccess(record.status))
      << accel::describePluginRecord(record);
  return accel::getHooks(accel::deviceTypeFromName(type));
}

// The testdevctl build: TESTDEVCTL_PLUGIN in the environment names another
// build of it (clang and libc++), else the one built with the tests.
const char* testdevctlPath() {
  static const char* const path = [] {
    const char* chosen = std::getenv("TESTDEVCTL_PLUGIN");
    return chosen != nullptr && *chosen != '\0' ? chosen : TESTDEVCTL_PLUGIN_PATH;
  }();
  return path;
}

AcceleratorHooks& testdevctl() {
  static AcceleratorHooks& hooks = loaded(testdevctlPath(), "testdevctl");
  return hooks;
}
AcceleratorHooks& testdev() {
  static AcceleratorHooks& hooks = loaded(TESTDEV_PLUGIN_PATH, "testdev");
  return hooks;
}

// The control `name` of the loaded testdevctl plugin.
template <typename Fn>
Fn control(const char* name) {
  (void)testdevctl();
  void* handle = ::dlopen(testdevctlPath(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr) << "testdevctl is not loaded";
  void* symbol = handle != nullptr ? ::dlsym(handle, name) : nullptr;
  EXPECT_NE(symbol, nullptr) << "testdevctl exports no " << name;
  if (handle != nullptr) ::dlclose(handle);  // still loaded by the core
  return reinterpret_cast<Fn>(symbol);
}

void hold(Stream stream, bool held) {
  ASSERT_EQ(control<testdev_hold_stream_fn>("testdev_hold_stream")(
                stream.device.index(), stream.id, held ? 1 : 0),
            ACCEL_OK);
}

void inNewThread(const std::function<void()>& body) { std::thread(body).join(); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// deviceSynchronize after the backend was told to throw `failure` with
// `message`: what reached the caller.
template <typename Expected>
void expectSynchronizeThrows(std::int32_t failure, const std::string& message,
                             const std::string& expected_text) {
  ASSERT_EQ(control<testdev_fail_next_synchronize_fn>("testdev_fail_next_synchronize")(
                failure, message.c_str()),
            ACCEL_OK);
  try {
    testdevctl().deviceSynchronize(0);
    ADD_FAILURE() << accel::hookInfo(accel::HookId::deviceSynchronize).name
                  << " returned; the backend threw " << message;
  } catch (const Expected& error) {
    EXPECT_TRUE(contains(error.what(), expected_text)) << error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "the backend's failure " << failure << " reached the caller as "
                  << typeid(error).name() << ": " << error.what();
  }
  EXPECT_NO_THROW(testdevctl().deviceSynchronize(0)) << "the failure was for one call";
}

TEST(AdapterAsync, FailuresThrownInTheBackendReachTheCallerAsTheLibrarysErrors) {
  expectSynchronizeThrows<accel::DeviceError>(TESTDEV_THROW_DEVICE_ERROR,
                                              "the device fell off the bus",
                                              "the device fell off the bus");
  expectSynchronizeThrows<accel::InvalidArgument>(TESTDEV_THROW_INVALID_ARGUMENT,
                                                  "bad stream 99", "bad stream 99");
  expectSynchronizeThrows<accel::NotAvailable>(TESTDEV_THROW_NOT_AVAILABLE,
                                               "driver unloaded", "driver unloaded");
  // Any other exception is ACCEL_ERROR_INTERNAL, which the core throws as
  // DeviceError, with the exception's what().
  expectSynchronizeThrows<accel::DeviceError>(TESTDEV_THROW_RUNTIME_ERROR,
                                              "a std::runtime_error of the backend",
                                              "a std::runtime_error of the backend");
  expectSynchronizeThrows<accel::OutOfMemory>(TESTDEV_THROW_BAD_ALLOC, "",
                                              "out of host memory in the plugin");
  expectSynchronizeThrows<accel::DeviceError>(TESTDEV_THROW_NON_STD, "",
                                              "the plugin threw an unknown exception");
}

TEST(AdapterAsync, AnUndeclaredGroupIsNotSupportedNamingBackendAndGroup) {
  AcceleratorHooks& hooks = testdevctl();
  ASSERT_FALSE(hooks.supports(accel::HookGroup::Graphs));
  try {
    (void)hooks.graphCreate();
    ADD_FAILURE() << accel::hookInfo(accel::HookId::graphCreate).name
                  << " returned on a backend without the graphs group";
  } catch (const accel::NotSupported& error) {
    EXPECT_TRUE(contains(error.what(), "'testdevctl'")) << error.what();
    EXPECT_TRUE(contains(error.what(), "graphs")) << error.what();
  }
  EXPECT_TRUE(hooks.supports(accel::HookGroup::Copies));
}

TEST(AdapterAsync, CoreFindBlockFindsABlockOfTheCoresDeviceAllocator) {
  AcceleratorHooks& hooks = testdevctl();
  DataPtr data = hooks.getDeviceAllocator(1).allocate(1000);
  auto find = control<testdev_find_block_fn>("testdev_find_block");
  std::int8_t device = -1;
  void* base = nullptr;
  std::size_t bytes = 0;
  ASSERT_EQ(find(static_cast<char*>(data.get()) + 999, &device, &base, &bytes), ACCEL_OK);
  EXPECT_EQ(device, 1);
  EXPECT_EQ(base, data.get());
  EXPECT_EQ(bytes, 1000u);
  int on_the_stack = 0;
  EXPECT_EQ(find(&on_the_stack, &device, &base, &bytes), ACCEL_ERROR_INVALID_ARGUMENT);
  void* freed = data.get();
  data.reset();
  EXPECT_EQ(find(freed, &device, &base, &bytes), ACCEL_ERROR_INVALID_ARGUMENT)
      << "a freed block is no live block";
}

TEST(AdapterAsync, CoreReservePhiloxReservesFromTheDefaultGenerator) {
  AcceleratorHooks& hooks = testdevctl();
  const accel::Generator& generator = hooks.getDefaultGenerator(1);
  generator.manualSeed(1234);
  auto reserve = control<testdev_reserve_philox_fn>("testdev_reserve_philox");
  std::uint64_t seed = 0;
  std::uint64_t offset = 99;
  ASSERT_EQ(reserve(1, 100, &seed, &offset), ACCEL_OK);
  EXPECT_EQ(seed, 1234u);
  EXPECT_EQ(offset, 0u);
  const std::uint64_t moved_to = generator.offset();
  EXPECT_GE(moved_to, 100u) << "the generator moves past what was reserved";
  ASSERT_EQ(reserve(1, 8, &seed, &offset), ACCEL_OK);
  EXPECT_EQ(offset, moved_to);
  EXPECT_EQ(hooks.getDefaultGenerator(0).offset(), 0u) << "device 0's is another";
}

TEST(AdapterAsync, CoreFillHostWritesWhatTheLibrarysFillsWrite) {
  auto fill = control<testdev_fill_host_fn>("testdev_fill_host");
  const accel::PhiloxPosition from{7, 12};
  std::vector<std::uint32_t> bits(1001);
  std::vector<std::uint32_t> expected_bits(bits.size());
  ASSERT_EQ(
      fill(ACCEL_FILL_BITS32, bits.data(), bits.size(), 0, 0, from.seed, from.offset),
      ACCEL_OK);
  accel::fillBits(expected_bits, from);
  EXPECT_EQ(bits, expected_bits);
  std::vector<float> uniform(513);
  std::vector<float> expected_uniform(uniform.size());
  ASSERT_EQ(fill(ACCEL_FILL_UNIFORM_FLOAT, uniform.data(), uniform.size(), -1.0, 3.0,
                 from.seed, from.offset),
            ACCEL_OK);
  accel::fillUniform(expected_uniform, -1.0f, 3.0f, from);
  EXPECT_EQ(uniform, expected_uniform);
  EXPECT_EQ(fill(ACCEL_FILL_UNIFORM_FLOAT, uniform.data(), 0, 3.0, -1.0, 0, 0),
            ACCEL_ERROR_INVALID_ARGUMENT)
      << "low above high";
}

TEST(AdapterAsync, KeepsCurrentRoutesTheCurrentDeviceAndStreamToTheBackend) {
  AcceleratorHooks& hooks = testdevctl();
  auto kept = control<testdev_kept_current_fn>("testdev_kept_current");
  inNewThread([&] {
    hooks.setCurrentDevice(1);
    std::int8_t device = -1;
    std::int64_t stream = -1;
    ASSERT_EQ(kept(1, &device, &stream), ACCEL_OK);
    EXPECT_EQ(device, 1) << accel::hookInfo(accel::HookId::setCurrentDevice).name
                         << " did not reach the backend";
    const Stream mine = hooks.getNewStream(1);
    hooks.setCurrentStream(mine);
    ASSERT_EQ(kept(1, &device, &stream), ACCEL_OK);
    EXPECT_EQ(stream, mine.id) << accel::hookInfo(accel::HookId::setCurrentStream).name
                               << " did not reach the backend";
    EXPECT_EQ(hooks.getCurrentStream(1), mine);
    EXPECT_EQ(hooks.getCurrentDevice(), 1);
    inNewThread([&] {
      std::int8_t other_device = -1;
      std::int64_t other_stream = -1;
      ASSERT_EQ(kept(1, &other_device, &other_stream), ACCEL_OK);
      EXPECT_EQ(other_device, 0) << "the backend keeps the current device per thread";
      EXPECT_EQ(other_stream, 0) << "the backend keeps the current stream per thread";
    });
  });
}

TEST(AdapterAsync, WorkOnAHeldStreamStaysPendingAndItsEventsIncomplete) {
  AcceleratorHooks& hooks = testdevctl();
  constexpr std::size_t kBytes = 4096;
  DataPtr pinned = hooks.getPinnedMemoryAllocator().allocate(kBytes);
  DataPtr device = hooks.getDeviceAllocator(0).allocate(kBytes);
  std::memset(pinned.get(), 0x5a, kBytes);
  const Stream stream = hooks.getNewStream(0);
  const accel::EventId event = hooks.createEvent(0);
  hold(stream, true);
  hooks.copyHostToDevice(device.get(), pinned.get(), kBytes, stream);
  hooks.recordEvent(event, stream);
  EXPECT_FALSE(hooks.queryStream(stream)) << "a held stream with a copy queued is busy";
  EXPECT_FALSE(hooks.queryEvent(event)) << "an event behind held work is not complete";
  hold(stream, false);
  hooks.synchronizeEvent(event);
  EXPECT_TRUE(hooks.queryEvent(event));
  hooks.synchronizeStream(stream);
  EXPECT_TRUE(hooks.queryStream(stream));
  std::vector<unsigned char> back(kBytes);
  hooks.copyDeviceToHost(back.data(), device.get(), kBytes, stream);
  EXPECT_EQ(back, std::vector<unsigned char>(kBytes, 0x5a));
  hooks.destroyEvent(event);
}

TEST(AdapterAsync, ABlockFreedWhileAHeldStreamUsesItIsNotReusedUntilTheStreamPasses) {
  AcceleratorHooks& hooks = testdevctl();
  // Past 10 MiB a block is a whole segment of its own (docs/memory.md), so
  // the cache can serve the next request only with a block freed before.
  constexpr std::size_t kBytes = std::size_t{12} << 20;
  hooks.emptyCache();
  inNewThread([&] {
    // Allocated on this thread's current stream (the default), used on another.
    DataPtr block = hooks.getDeviceAllocator(0).allocate(kBytes);
    DataPtr source = hooks.getDeviceAllocator(1).allocate(kBytes);
    const Stream user = hooks.getNewStream(0);
    hold(user, true);
    hooks.copyDeviceToDevice(block.get(), source.get(), kBytes, user);  // 1 -> 0
    ASSERT_TRUE(accel::memory::recordStreamUse(block, user));
    void* freed = block.get();
    block.reset();
    DataPtr next = hooks.getDeviceAllocator(0).allocate(kBytes);
    EXPECT_NE(next.get(), freed) << "the caching allocator handed out a block that a "
                                    "held stream may still write";
    hold(user, false);
    hooks.synchronizeStream(user);
  });
}

TEST(AdapterAsync, APinnedBlockFreedBehindAHeldCopyKeepsItsBytesForTheCopy) {
  AcceleratorHooks& hooks = testdevctl();
  constexpr std::size_t kBytes = 8192;
  DataPtr device = hooks.getDeviceAllocator(0).allocate(kBytes);
  const Stream stream = hooks.getNewStream(0);
  hold(stream, true);
  DataPtr sent = hooks.getPinnedMemoryAllocator().allocate(kBytes);
  std::memset(sent.get(), 0x11, kBytes);
  hooks.copyHostToDevice(device.get(), sent.get(), kBytes, stream);
  sent.reset();
  // Its next owner writes at once; the held copy must still send 0x11.
  DataPtr next = hooks.getPinnedMemoryAllocator().allocate(kBytes);
  std::memset(next.get(), 0x22, kBytes);
  hold(stream, false);
  std::vector<unsigned char> back(kBytes);
  hooks.copyDeviceToHost(back.data(), device.get(), kBytes, stream);
  EXPECT_EQ(back, std::vector<unsigned char>(kBytes, 0x11));
}

TEST(AdapterAsync, AGraphReplaysTheCopiesItCapturedOnItsStream) {
  AcceleratorHooks& hooks = testdev();
  constexpr std::size_t kBytes = 4096;
  inNewThread([&] {
    const Stream stream = hooks.getNewStream(0);
    hooks.setCurrentStream(stream);
    DataPtr from = hooks.getDeviceAllocator(0).allocate(kBytes);
    DataPtr to = hooks.getDeviceAllocator(0).allocate(kBytes);
    std::vector<unsigned char> bytes(kBytes, 'Z');
    hooks.copyHostToDevice(to.get(), bytes.data(), kBytes, stream);
    std::fill(bytes.begin(), bytes.end(), 'A');
    hooks.copyHostToDevice(from.get(), bytes.data(), kBytes, stream);
    std::vector<unsigned char> back(kBytes);
    auto readBack = [&] {
      hooks.copyDeviceToHost(back.data(), to.get(), kBytes, stream);
      return back;
    };

    const accel::GraphId graph = hooks.graphCreate();
    hooks.graphCaptureBegin(graph);
    hooks.copyDeviceToDevice(to.get(), from.get(), kBytes, stream);
    hooks.graphCaptureEnd(graph);
    EXPECT_EQ(readBack(), std::vector<unsigned char>(kBytes, 'Z'))
        << "a captured copy is recorded, not run";
    hooks.graphReplay(graph);
    EXPECT_EQ(readBack(), std::vector<unsigned char>(kBytes, 'A'));
    std::fill(bytes.begin(), bytes.end(), 'B');
    hooks.copyHostToDevice(from.get(), bytes.data(), kBytes, stream);
    hooks.graphReplay(graph);
    EXPECT_EQ(readBack(), std::vector<unsigned char>(kBytes, 'B'))
        << "a replay copies what the source holds then";
    hooks.graphReset(graph);
    hooks.graphDestroy(graph);
  });
}

}  // namespace
