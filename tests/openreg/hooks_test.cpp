// openreg against the hooks contract, hook by hook, for what is specific to
// openreg (the generic contract is checked by openreg_conformance_test).
#include <sys/wait.h>

#include <functional>
#include <string_view>

#include "extension.h"
#include "openreg_test_support.h"

namespace {

using openreg_test::OpenRegTest;

using OpenRegHooksTest = OpenRegTest;

TEST_F(OpenRegHooksTest, RegistrationIsIdempotentAndNamesTheType) {
  accel::AcceleratorHooks& again = accel::openreg::registerBackend();
  EXPECT_EQ(&again, &hooks());
  EXPECT_EQ(hooks().name(), "openreg");
  EXPECT_EQ(accel::deviceTypeFromName("openreg"), accel::openreg::deviceType());
  EXPECT_NE(accel::hooksOrigin(accel::openreg::deviceType()).find("openreg"),
            std::string::npos);
}

TEST_F(OpenRegHooksTest, CapabilitiesAreDeclaredHonestly) {
  for (accel::HookGroup group :
       {accel::HookGroup::Device, accel::HookGroup::Streams, accel::HookGroup::Events,
        accel::HookGroup::Memory, accel::HookGroup::MemoryHistory,
        accel::HookGroup::Graphs}) {
    EXPECT_TRUE(hooks().supports(group)) << accel::hookGroupName(group);
  }
  // memory_history comes from the core caching allocator.
  EXPECT_NO_THROW(hooks().recordMemoryHistory({accel::HistoryRecording::Off}));
  EXPECT_NO_THROW((void)hooks().memorySnapshot());
}

TEST_F(OpenRegHooksTest, ProbesAnswerFromTheConfiguration) {
  EXPECT_TRUE(hooks().isBuilt());
  EXPECT_TRUE(hooks().isAvailable());
  EXPECT_EQ(hooks().deviceCount(), openreg_test::kTestDevices);
  EXPECT_EQ(accel::openreg::activeConfig().device_count, openreg_test::kTestDevices);
  EXPECT_EQ(accel::openreg::activeConfig().memory_bytes, std::uint64_t{64} << 20);
}

TEST_F(OpenRegHooksTest, CurrentDeviceIsPerThreadAndZeroUntilSet) {
  hooks().setCurrentDevice(3);
  EXPECT_EQ(hooks().getCurrentDevice(), 3);
  accel::DeviceIndex other = -1;
  std::thread([&] { other = hooks().getCurrentDevice(); }).join();
  EXPECT_EQ(other, 0);
  EXPECT_EQ(hooks().exchangeDevice(5), 3);
  EXPECT_EQ(hooks().getCurrentDevice(), 5);
  EXPECT_EQ(hooks().maybeExchangeDevice(-1), 5);
  EXPECT_EQ(hooks().maybeExchangeDevice(100), 5);
  EXPECT_EQ(hooks().getCurrentDevice(), 5);
  try {
    hooks().setCurrentDevice(8);
    FAIL() << "device 8 of 8 was accepted";
  } catch (const accel::InvalidArgument& e) {
    EXPECT_NE(
        std::string(e.what()).find("device index 8 out of range [0, 8) for 'openreg'"),
        std::string::npos)
        << e.what();
  }
}

TEST_F(OpenRegHooksTest, DeviceGuardSwitchesAndRestores) {
  {
    accel::DeviceGuard guard(openreg_test::device(6));
    EXPECT_EQ(hooks().getCurrentDevice(), 6);
  }
  EXPECT_EQ(hooks().getCurrentDevice(), 0);
}

TEST_F(OpenRegHooksTest, PrimaryContextExistsOnceADeviceIsUsed) {
  // Device 7 is untouched by this program until here when run alone; other
  // tests may have used it, so only the "becomes true" half is checked.
  (void)accel::openreg::allocate(1, 7);
  EXPECT_TRUE(hooks().hasPrimaryContext(7));
  EXPECT_FALSE(hooks().hasPrimaryContext(8));
  EXPECT_FALSE(hooks().hasPrimaryContext(-1));
}

TEST_F(OpenRegHooksTest, DefaultGeneratorIsOnePerDeviceAndNewOnesAreIndependent) {
  accel::Generator a = hooks().getDefaultGenerator(2);
  EXPECT_EQ(a, hooks().getDefaultGenerator(2));
  EXPECT_EQ(a.device(), openreg_test::device(2));
  EXPECT_FALSE(a == hooks().getDefaultGenerator(3));
  hooks().setCurrentDevice(2);
  EXPECT_EQ(hooks().getDefaultGenerator(), a);
  accel::Generator fresh = hooks().getNewGenerator(2);
  EXPECT_FALSE(fresh == a);
  fresh.manualSeed(5);
  a.manualSeed(6);
  EXPECT_EQ(fresh.currentSeed(), 5u);
  EXPECT_THROW((void)hooks().getDefaultGenerator(8), accel::InvalidArgument);
}

TEST_F(OpenRegHooksTest, ContextManualSeedSeedsEveryDefaultGenerator) {
  for (int i = 0; i < openreg_test::kTestDevices; ++i) {
    (void)hooks().getDefaultGenerator(static_cast<accel::DeviceIndex>(i));
  }
  accel::globalContext().manualSeed(1234);
  for (int i = 0; i < openreg_test::kTestDevices; ++i) {
    accel::Generator g = hooks().getDefaultGenerator(static_cast<accel::DeviceIndex>(i));
    EXPECT_EQ(g.currentSeed(), 1234u);
    EXPECT_EQ(g.offset(), 0u);
  }
}

TEST_F(OpenRegHooksTest, ContextResolvesDevicePointers) {
  accel::DataPtr a = accel::openreg::allocate(100, 4);
  EXPECT_EQ(accel::globalContext().getDeviceFromPtr(static_cast<char*>(a.get()) + 99,
                                                    accel::openreg::deviceType()),
            openreg_test::device(4));
}

TEST_F(OpenRegHooksTest, ShowConfigAndPropertiesAreTyped) {
  const std::string config = hooks().showConfig();
  EXPECT_NE(config.find("devices:"), std::string::npos) << config;
  EXPECT_NE(config.find("64 MiB"), std::string::npos) << config;
  const accel::DeviceProperties properties = hooks().getDeviceProperties(1);
  EXPECT_EQ(properties.name, "openreg simulated device");
  EXPECT_EQ(properties.total_memory_bytes, std::uint64_t{64} << 20);
  EXPECT_EQ(properties.multiprocessor_count, accel::openreg::kDefaultExecutionUnits);
  EXPECT_FALSE(properties.is_integrated);
  EXPECT_NE(properties.uuid, hooks().getDeviceProperties(2).uuid);
}

TEST_F(OpenRegHooksTest, StreamGuardSetsTheStreamAndItsDevice) {
  const accel::Stream stream = hooks().getNewStream(5, 1);
  {
    accel::StreamGuard guard(stream);
    EXPECT_EQ(hooks().getCurrentDevice(), 5);
    EXPECT_EQ(hooks().getCurrentStream(), stream);
  }
  EXPECT_EQ(hooks().getCurrentDevice(), 0);
  EXPECT_EQ(hooks().getCurrentStream(5), hooks().getDefaultStream(5));
}

TEST_F(OpenRegHooksTest, StreamsOfAnotherBackendAreRejected) {
  const accel::Stream cpu_stream(accel::Device(accel::DeviceType::CPU, 0), 0);
  EXPECT_THROW(hooks().setCurrentStream(cpu_stream), accel::InvalidArgument);
  EXPECT_THROW(accel::openreg::copyAsync(nullptr, nullptr, 4, cpu_stream),
               accel::InvalidArgument);
}

TEST_F(OpenRegHooksTest, ForkChildCannotUseOpenRegButDoesNotHang) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only the verdict is reported, as the exit status: 0 when every call
    // failed cleanly with DeviceError.
    int failures = 0;
    try {
      (void)accel::getHooks(accel::openreg::deviceType()).getNewStream(0);
      failures += 1;
    } catch (const accel::DeviceError&) {
    } catch (...) {
      failures += 1;
    }
    try {
      (void)accel::openreg::allocate(16, 0);
      failures += 1;
    } catch (const accel::DeviceError&) {
    } catch (...) {
      failures += 1;
    }
    if (accel::getHooks(accel::openreg::deviceType()).isAvailable()) failures += 1;
    ::_exit(failures);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << "wait status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Runs `call` and returns 0 when it threw DeviceError whose message holds
// `says`, else 1 (in a fork child: its only verdict is the exit status).
int refusedWithDeviceError(const std::function<void()>& call, std::string_view says) {
  try {
    call();
  } catch (const accel::DeviceError& e) {
    return e.message().find(says) != std::string::npos ? 0 : 1;
  } catch (...) {
  }
  return 1;
}

// openreg's own API in a fork child of a process that initialised openreg:
// each call fails with the fork's DeviceError instead of waiting for a
// device worker that did not survive the fork (the alarm turns a wait into
// a failed test). The API has the core initialise openreg first, and the
// core refuses the child.
TEST_F(OpenRegHooksTest, ForkChildOfAnInitialisedOpenRegRefusesItsOwnApiWithoutWaiting) {
  accel::DataPtr data = hooks().getDeviceAllocator(0).allocate(64);
  const accel::Stream stream = hooks().getDefaultStream(0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(30);
    constexpr std::string_view kSays = "was initialised before fork()";
    char host[64] = {};
    int failures = refusedWithDeviceError(
        [&] { accel::openreg::copy(data.get(), host, sizeof host); }, kSays);
    failures |=
        refusedWithDeviceError(
            [&] {
              accel::openreg::launchKernel(stream, "noop", {{"x", data.get(), 64}},
                                           [](const accel::openreg::KernelContext&) {});
            },
            kSays)
        << 1;
    failures |=
        refusedWithDeviceError([] { accel::openreg::setExecutionUnits(0, 2); }, kSays)
        << 2;
    (void)data.releaseContext();  // the parent's memory: not freed here
    ::_exit(failures);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status << " (14: SIGALRM, a hang)";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "bits of the calls not refused: 1 copy, 2 launchKernel, 4 setExecutionUnits";
}

// The plugin refuses a fork child by itself too, whatever its caller checked:
// its after-fork handler marks the fork state of the backend the plugin
// entry registered, and the extension interface (which the API calls
// without a handle) reaches that backend and refuses with openreg's own
// message.
TEST_F(OpenRegHooksTest, ForkChildIsRefusedByThePluginsExtensionInterfaceItself) {
  accel::DataPtr data = hooks().getDeviceAllocator(0).allocate(64);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(30);
    namespace extension = accel::openreg::extension;
    const auto refused = [](const extension::Status& status) {
      return status.code == ACCEL_ERROR_DEVICE &&
             status.message.find("openreg was initialised before fork()") !=
                 std::string::npos;
    };
    char host[64] = {};
    int failures = refused(extension::copy(data.get(), host, sizeof host)) ? 0 : 1;
    if (!refused(extension::setExecutionUnits(0, 2))) failures |= 2;
    if (!refused(extension::clearFaults())) failures |= 4;
    (void)data.releaseContext();  // the parent's memory: not freed here
    ::_exit(failures);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status << " (14: SIGALRM, a hang)";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "bits of the calls not refused: 1 copy, 2 setExecutionUnits, 4 clearFaults";
}

// A framework keeps getDeviceAllocator's Allocator and allocates through it
// with no hook call in between; in a fork child that reference, whose fast
// path goes straight to the core's cache, must refuse as the hooks do.
TEST_F(OpenRegHooksTest, ForkChildRefusesAllocationsThroughAnAllocatorKeptFromBefore) {
  accel::Allocator& allocator = hooks().getDeviceAllocator(1);
  accel::DataPtr warm = allocator.allocate(256);  // the fast path from now on
  warm.reset();
  const pid_t pid = ::fork();
  if (pid == 0) {
    int verdict = 0;
    try {
      accel::DataPtr data = allocator.allocate(256);
      verdict = 1;  // served in the child
      (void)data.releaseContext();
    } catch (const accel::DeviceError&) {
    } catch (...) {
      verdict = 2;
    }
    ::_exit(verdict);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << "wait status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the child allocated, 2: another error";
}

// openreg hands out the core's blocks as they are, so a fork child's free of
// memory it inherited takes the core's path, which leaks it (the memory is the
// parent's; docs/lifecycle.md) instead of waiting for a device lock that a
// vanished thread may have held. The core's own fork tests check the leak;
// this one that openreg's blocks reach it and the child exits cleanly.
TEST_F(OpenRegHooksTest, ForkChildFreesOfInheritedMemoryWithoutHanging) {
  accel::DataPtr inherited = hooks().getDeviceAllocator(0).allocate(4096);
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      inherited = accel::DataPtr();
    } catch (...) {
      ::_exit(4);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << "wait status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(inherited.get(), nullptr);
}

// docs/lifecycle.md lets a fork child call emptyCache on a backend started
// in its parent (as torch.cuda.empty_cache does nothing in such a child): it
// gives nothing back, through the table's stand-in and a kept reference alike.
TEST_F(OpenRegHooksTest, ForkChildMayEmptyTheCacheOfABackendStartedBeforeIt) {
  accel::AcceleratorHooks& real = hooks();
  accel::DataPtr inherited = real.getDeviceAllocator(0).allocate(4096);
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      accel::getHooks(accel::openreg::deviceType()).emptyCache();
    } catch (...) {
      code = 1;
    }
    try {
      real.emptyCache();
    } catch (...) {
      code += 2;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: the stand-in threw, 2: the kept reference, 3: both";
  EXPECT_NO_THROW(real.emptyCache()) << "the parent's cache empties as before";
}

// isPinnedPtr is a probe: on a reference kept across fork() it answers
// false without the backend, as the table's stand-in and the context do.
TEST_F(OpenRegHooksTest, ForkChildKeptReferenceAnswersIsPinnedPtrFalse) {
  accel::AcceleratorHooks& real = hooks();
  accel::DataPtr pinned = real.getPinnedMemoryAllocator().allocate(4096);
  ASSERT_TRUE(real.isPinnedPtr(pinned.get()));
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    if (accel::getHooks(accel::openreg::deviceType()).isPinnedPtr(pinned.get())) code = 1;
    if (real.isPinnedPtr(pinned.get())) code += 2;
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: the stand-in said pinned, 2: the kept reference";
  EXPECT_TRUE(real.isPinnedPtr(pinned.get())) << "the parent is untouched";
}

// A caller that kept a reference to the real hooks object across fork()
// bypasses the poisoned stand-in in the hooks table. getDefaultGenerator on
// an initialised openreg is served inline by the core
// (serveDefaultGeneratorsFrom); in the child the object itself refuses with
// the core's fork error instead of handing out a generator of a device that
// did not survive the fork.
TEST_F(OpenRegHooksTest, ForkChildRefusesTheDefaultGeneratorOfAReferenceKeptFromBefore) {
  accel::AcceleratorHooks& real = hooks();
  const accel::Generator& parent_generator = real.getDefaultGenerator(0);
  ASSERT_TRUE(real.isInitialized());
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The verdict is the exit status: 0 when the call failed with the fork
    // refusal.
    int code = 0;
    if (&accel::getHooks(accel::openreg::deviceType()) == &real) code = 1;
    try {
      (void)real.getDefaultGenerator(0);
      code = 2;
    } catch (const accel::DeviceError& e) {
      if (e.message().find(
              std::string(accel::hookInfo(accel::HookId::getDefaultGenerator).name) +
              "(): 'openreg' was initialised before fork()") == std::string::npos) {
        code = 3;
      }
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: not poisoned, 2: the child got a generator, 3: another message, 4: "
         "another exception";
  EXPECT_EQ(&real.getDefaultGenerator(0), &parent_generator) << "the parent is untouched";
}

}  // namespace
