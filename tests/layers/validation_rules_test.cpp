// The validation layer's rules (docs/validation.md), one deliberately wrong
// program per rule, run against a backend that checks nothing (LaxHooks):
// with the layer off the wrong call reaches the backend; in throw mode it
// is refused with the rule's report and the backend never sees it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/validation.h"
#include "layers/hook_layer.h"
#include "layers/lax_backend.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

testing::LaxHooks& lax() { return testing::laxBackend(); }

// "accel validation: copyDeviceToHost": how a report begins for `hook`.
std::string reportOf(HookId hook) {
  return "accel validation: " + std::string(hookInfo(hook).name);
}
AcceleratorHooks& served() { return getHooks(lax().deviceType()); }

class ValidationRules : public ::testing::Test {
 protected:
  void TearDown() override { setValidationMode(ValidationMode::Off); }

  // Runs `wrong` with the layer off: it must reach the backend's `hook`.
  // Then in throw mode: it must throw InvalidArgument whose message holds
  // `rule`, and the backend's `hook` must not be reached. Returns the message.
  std::string expectRefused(HookId hook, const std::string& rule,
                            const std::function<void()>& wrong) {
    setValidationMode(ValidationMode::Off);
    const int before_off = lax().reached(hook);
    EXPECT_NO_THROW(wrong());
    EXPECT_GT(lax().reached(hook), before_off)
        << "the wrong call did not reach the backend";
    setValidationMode(ValidationMode::Throw);
    const int before_on = lax().reached(hook);
    std::string message;
    try {
      wrong();
      ADD_FAILURE() << "the layer let the wrong call through: " << rule;
    } catch (const InvalidArgument& e) {
      message = e.what();
    }
    EXPECT_THAT(message, HasSubstr(rule));
    EXPECT_EQ(lax().reached(hook), before_on) << "the backend saw the refused call";
    return message;
  }
};

TEST_F(ValidationRules, CopyFromAFreedBlockIsAUseAfterFree) {
  const std::string message =
      expectRefused(HookId::copyDeviceToHost, "use after free", [] {
        const Stream stream = served().getCurrentStream(0);
        DataPtr data = served().getDeviceAllocator(0).allocate(256);
        const void* freed = data.get();
        data.reset();
        std::vector<char> host(64);
        served().copyDeviceToHost(host.data(), freed, host.size(), stream);
      });
  // The report names the hook, its arguments, the backend and the device.
  EXPECT_THAT(message, HasSubstr(reportOf(HookId::copyDeviceToHost) + "(dst="));
  EXPECT_THAT(message, HasSubstr("bytes=64, stream=laxdev:0 #0) on 'laxdev' device 0"));
  EXPECT_THAT(message, HasSubstr("freed at "));
  EXPECT_THAT(message, HasSubstr("; called at "));
}

TEST_F(ValidationRules, PointerQueryOfAFreedBlockIsAUseAfterFree) {
  expectRefused(HookId::getDeviceFromPtr, "use after free", [] {
    DataPtr data = served().getDeviceAllocator(1).allocate(128);
    const void* freed = data.get();
    data.reset();
    (void)served().getDeviceFromPtr(freed);
  });
}

TEST_F(ValidationRules, CopyMustStayInsideItsBlock) {
  expectRefused(HookId::copyHostToDevice, "runs past the end of its block of 256 bytes",
                [] {
                  const Stream stream = served().getCurrentStream(0);
                  DataPtr data = served().getDeviceAllocator(0).allocate(256);
                  std::vector<char> host(512);
                  served().copyHostToDevice(data.get(), host.data(), host.size(), stream);
                });
}

TEST_F(ValidationRules, WaitingOnAnEventNeverRecordedIsRefused) {
  expectRefused(HookId::blockStream, "was never recorded", [] {
    const EventId event = served().createEvent(0);
    served().blockStream(event, served().getCurrentStream(0));
    served().destroyEvent(event);
  });
}

TEST_F(ValidationRules, TimingAnEventNeverRecordedIsRefused) {
  expectRefused(HookId::elapsedTime, "was never recorded", [] {
    const EventId start = served().createEvent(0, EventFlags{true});
    const EventId end = served().createEvent(0, EventFlags{true});
    served().recordEvent(start, served().getCurrentStream(0));
    (void)served().elapsedTime(start, end);
  });
}

TEST_F(ValidationRules, AnEventIsRecordedOnlyOnItsOwnDevice) {
  expectRefused(HookId::recordEvent, "was made on device 0", [] {
    const EventId event = served().createEvent(0);
    served().recordEvent(event, served().getCurrentStream(1));
  });
}

TEST_F(ValidationRules, ADestroyedEventIsNotUsedAgain) {
  expectRefused(HookId::recordEvent, "was destroyed", [] {
    const EventId event = served().createEvent(0);
    served().destroyEvent(event);
    served().recordEvent(event, served().getCurrentStream(0));
  });
}

TEST_F(ValidationRules, AStreamIsUsedOnlyWithItsOwnDevice) {
  expectRefused(HookId::queryStream, "was made on device 1", [] {
    const Stream made = served().getNewStream(1);
    (void)served().queryStream(Stream{Device(lax().deviceType(), 0), made.id});
  });
}

TEST_F(ValidationRules, AGeneratorIsUsedOnlyWithItsOwnDevice) {
  expectRefused(HookId::fillRandom, "the generator is device 1's", [] {
    DataPtr data = served().getDeviceAllocator(0).allocate(256);
    served().fillRandom(served().getCurrentStream(0), DeviceFill::UniformFloat,
                        data.get(), 16, 0.0, 1.0, served().getDefaultGenerator(1));
  });
}

// Runs `during` inside a capture of device 0's current stream, ending the
// capture whatever `during` throws.
void whileCapturing(const std::function<void()>& during) {
  const GraphId graph = served().graphCreate();
  served().graphCaptureBegin(graph);
  try {
    during();
  } catch (...) {
    served().graphCaptureEnd(graph);
    served().graphDestroy(graph);
    throw;
  }
  served().graphCaptureEnd(graph);
  served().graphDestroy(graph);
}

TEST_F(ValidationRules, NoSynchronisingCallWhileCapturing) {
  expectRefused(HookId::synchronizeStream, "a synchronising call while graph", [] {
    whileCapturing([] { served().synchronizeStream(served().getNewStream(0)); });
  });
}

TEST_F(ValidationRules, NoQueryOfTheCapturingStream) {
  expectRefused(HookId::queryStream, "which graph", [] {
    whileCapturing([] { (void)served().queryStream(served().getCurrentStream(0)); });
  });
}

TEST_F(ValidationRules, NoEventQueryOnACapturingStream) {
  expectRefused(HookId::queryEvent, "an event query on a capturing stream", [] {
    const EventId event = served().createEvent(0);
    whileCapturing([&] {
      served().recordEvent(event, served().getCurrentStream(0));
      (void)served().queryEvent(event);
    });
  });
}

TEST_F(ValidationRules, NoAllocationFromAForeignPoolWhileCapturing) {
  setValidationMode(ValidationMode::Off);
  EXPECT_NO_THROW(
      whileCapturing([] { (void)served().getDeviceAllocator(1).allocate(64); }));
  setValidationMode(ValidationMode::Throw);
  try {
    whileCapturing([] { (void)served().getDeviceAllocator(1).allocate(64); });
    ADD_FAILURE() << "the foreign allocation was let through";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("allocate(bytes=64) on 'laxdev' device 1"));
    EXPECT_THAT(e.what(), HasSubstr("a pool foreign to the graph"));
  }
}

TEST_F(ValidationRules, AFreeTwiceIsReportedAndFreesOnce) {
  setValidationMode(ValidationMode::Throw);
  const std::uint64_t before = validationViolations();
  DataPtr data = served().getDeviceAllocator(0).allocate(64);
  auto [context, deleter] = data.releaseContext();
  ::testing::internal::CaptureStderr();
  deleter(context);
  deleter(context);  // frees never throw: reported on stderr
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, HasSubstr("free(ptr="));
  EXPECT_THAT(printed, HasSubstr("double free"));
  EXPECT_EQ(validationViolations(), before + 1);
}

TEST_F(ValidationRules, LogModePrintsTheLineAndLetsTheCallThrough) {
  setValidationMode(ValidationMode::Log);
  const int reached = lax().reached(HookId::blockStream);
  const EventId event = served().createEvent(0);
  ::testing::internal::CaptureStderr();
  served().blockStream(event, served().getCurrentStream(0));
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, HasSubstr(reportOf(HookId::blockStream) + "(event="));
  EXPECT_THAT(printed, HasSubstr("on 'laxdev' device 0: event"));
  EXPECT_THAT(printed, HasSubstr("was never recorded"));
  EXPECT_EQ(lax().reached(HookId::blockStream), reached + 1);
  served().destroyEvent(event);
}

TEST_F(ValidationRules, AbortModePrintsTheLineThenAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        setValidationMode(ValidationMode::Abort);
        const EventId event = served().createEvent(0);
        served().blockStream(event, served().getCurrentStream(0));
      },
      reportOf(HookId::blockStream) +
          "\\(event=[0-9]+, stream=laxdev:0 #0\\) on 'laxdev' device 0: event [0-9]+ was "
          "never recorded");
}

TEST_F(ValidationRules, TheQuarantineHoldsFreesBackWithinItsBounds) {
  setValidationMode(ValidationMode::Throw);
  setValidationQuarantine(4, std::size_t{1} << 20);
  std::vector<const void*> freed;
  const int frees_before = testing::LaxHooks::devicesFrees();
  for (int i = 0; i < 6; ++i) {
    DataPtr data = served().getDeviceAllocator(0).allocate(256);
    freed.push_back(data.get());
  }
  // Four frees wait in the quarantine; the two oldest went back.
  EXPECT_EQ(testing::LaxHooks::devicesFrees(), frees_before + 2);
  // The four held back are known as freed; the two that went back are not.
  for (std::size_t i = 0; i < freed.size(); ++i) {
    if (i < 2) {
      EXPECT_NO_THROW((void)served().getDeviceFromPtr(freed[i])) << i;
    } else {
      EXPECT_THROW((void)served().getDeviceFromPtr(freed[i]), InvalidArgument) << i;
    }
  }
  setValidationMode(ValidationMode::Off);  // gives the held frees back
  EXPECT_EQ(testing::LaxHooks::devicesFrees(), frees_before + 6);
  setValidationQuarantine(1024, std::size_t{256} << 20);
}

TEST_F(ValidationRules, TheLeakReportNamesWhatWasNeverReleasedAndWhereItWasMade) {
  setValidationMode(ValidationMode::Log);
  DataPtr kept = served().getDeviceAllocator(1).allocate(512);
  const EventId event = served().createEvent(1);
  const GraphId graph = served().graphCreate();
  const std::string report = validationLeakReport();
  EXPECT_THAT(report, HasSubstr("3 object(s) made while validating were never released"));
  EXPECT_THAT(report, HasSubstr("of 512 bytes, 'laxdev' device 1, made at:"));
  EXPECT_THAT(report,
              HasSubstr("event " + std::to_string(event) + ", 'laxdev' device 1"));
  EXPECT_THAT(report, HasSubstr("graph " + std::to_string(graph) + ", 'laxdev'"));
  served().destroyEvent(event);
  served().graphDestroy(graph);
  kept.reset();
  EXPECT_EQ(validationLeakReport(), "");
}

// The leak report lists blocks by address, whatever order the books keep
// them in (a new block's record waits unsorted until a rule looks an
// address up).
TEST_F(ValidationRules, TheLeakReportListsBlocksByAddress) {
  setValidationMode(ValidationMode::Log);
  std::vector<DataPtr> kept;
  for (std::size_t bytes : {256, 512, 768})
    kept.push_back(served().getDeviceAllocator(0).allocate(bytes));
  const std::string report = validationLeakReport();
  std::vector<std::size_t> at;
  for (std::size_t bytes : {256, 512, 768}) {
    at.push_back(report.find("of " + std::to_string(bytes) + " bytes"));
    ASSERT_NE(at.back(), std::string::npos) << report;
  }
  // The arena hands addresses out upwards: the first made is listed first.
  EXPECT_LT(at[0], at[1]) << report;
  EXPECT_LT(at[1], at[2]) << report;
}

// A block is known from its allocation to its free, whether a rule looked
// it up meanwhile or not; with the quarantine holding nothing its free
// forgets it at once, so nothing is said of its range after.
TEST_F(ValidationRules, AFreedBlockLeavesTheBooksOnceLookedUp) {
  setValidationMode(ValidationMode::Throw);
  setValidationQuarantine(0, 0);
  const Stream stream = served().getCurrentStream(0);
  std::vector<char> host(512);
  DataPtr data = served().getDeviceAllocator(0).allocate(256);
  void* ptr = data.get();
  EXPECT_NO_THROW(served().copyHostToDevice(ptr, host.data(), 64, stream));
  EXPECT_THROW(served().copyHostToDevice(ptr, host.data(), host.size(), stream),
               InvalidArgument);
  data.reset();
  EXPECT_NO_THROW(served().copyHostToDevice(ptr, host.data(), host.size(), stream));
  setValidationQuarantine(1024, std::size_t{256} << 20);
}

// Turning the layer off forgets what it knew: blocks made before (looked
// up or not) are unknown once it is on again, their frees say nothing and
// the leak report names none; blocks made after are known.
TEST_F(ValidationRules, BlocksMadeBeforeTheLayerWasTurnedOffAreForgotten) {
  setValidationMode(ValidationMode::Throw);
  const Stream stream = served().getCurrentStream(0);
  std::vector<char> host(512);
  DataPtr looked_up = served().getDeviceAllocator(0).allocate(256);
  served().copyHostToDevice(looked_up.get(), host.data(), 64, stream);
  DataPtr never_looked_up = served().getDeviceAllocator(0).allocate(256);
  setValidationMode(ValidationMode::Off);
  setValidationMode(ValidationMode::Throw);
  for (DataPtr* old : {&looked_up, &never_looked_up}) {
    void* ptr = old->get();
    EXPECT_NO_THROW(served().copyHostToDevice(ptr, host.data(), host.size(), stream));
    EXPECT_EQ(validationLeakReport(), "");
    const std::uint64_t violations = validationViolations();
    old->reset();
    EXPECT_EQ(validationViolations(), violations);
    // Its free was none the layer knew of: not held, no use after free.
    EXPECT_NO_THROW(served().copyHostToDevice(ptr, host.data(), host.size(), stream));
  }
  DataPtr made_now = served().getDeviceAllocator(0).allocate(256);
  EXPECT_THROW(
      served().copyHostToDevice(made_now.get(), host.data(), host.size(), stream),
      InvalidArgument);
  EXPECT_THAT(validationLeakReport(), HasSubstr("1 object(s)"));
}

// Alone, the validation layer is called by the decorator directly; beside
// another layer, through the layers' loops. A block made one way and freed
// the other is known all the same: its free is held and caught as a use
// after free, the other layer sees what it should, and nothing is left in
// the leak report.
TEST_F(ValidationRules, BesideAnotherLayerTheRulesHoldForBlocksOfEitherPath) {
  class CountingLayer final : public detail::HookLayer {
   public:
    void before(const detail::HookCall&) override {}
    void after(const detail::HookCall&, bool) noexcept override {}
    void allocated(DeviceType, Device, const void*, std::size_t, bool) noexcept override {
      ++allocations;
    }
    void freed(DeviceType, Device, const void*, std::size_t, bool) noexcept override {
      ++frees;
    }
    std::atomic<int> allocations{0};
    std::atomic<int> frees{0};
  };
  setValidationMode(ValidationMode::Throw);
  const Stream stream = served().getCurrentStream(0);
  std::vector<char> host(64);
  auto expectUseAfterFree = [&](const void* freed) {
    try {
      served().copyDeviceToHost(host.data(), freed, host.size(), stream);
      ADD_FAILURE() << "a copy from a freed block was let through";
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("use after free"));
    }
  };
  DataPtr made_alone = served().getDeviceAllocator(0).allocate(256);
  CountingLayer counting;
  // Removed at the end of the case whatever happens (the registry must not
  // keep a layer that is gone); removing it twice does nothing.
  struct Added {
    detail::HookLayer& layer;
    ~Added() { detail::removeHookLayer(layer); }
  };
  detail::addHookLayer(counting);
  const Added added{counting};
  DataPtr made_beside = served().getDeviceAllocator(0).allocate(512);
  EXPECT_EQ(counting.allocations.load(), 1);
  const void* freed_beside = made_alone.get();
  made_alone.reset();  // made alone, freed beside the other layer
  EXPECT_EQ(counting.frees.load(), 1);
  expectUseAfterFree(freed_beside);
  detail::removeHookLayer(counting);
  const void* freed_alone = made_beside.get();
  made_beside.reset();  // made beside it, freed alone
  EXPECT_EQ(counting.frees.load(), 1);
  expectUseAfterFree(freed_alone);
  EXPECT_EQ(validationLeakReport(), "");
}

// A block made on one thread and freed on another leaves the books all the
// same (the memory books' lock, biased to the thread that took it alone,
// is then shared), and its free is held and known as one.
TEST_F(ValidationRules, BlocksFreedOnAnotherThreadAreKnownAsFreed) {
  setValidationMode(ValidationMode::Throw);
  std::vector<DataPtr> made;
  for (int i = 0; i < 8; ++i)
    made.push_back(served().getDeviceAllocator(0).allocate(256));
  std::vector<const void*> addresses;
  for (const DataPtr& data : made) addresses.push_back(data.get());
  std::thread([&] { made.clear(); }).join();
  EXPECT_EQ(validationLeakReport(), "");
  for (const void* freed : addresses)
    EXPECT_THROW((void)served().getDeviceFromPtr(freed), InvalidArgument);
}

// A fork child (which may not use the parent's devices) frees what its
// parent made through the layer: the books it inherited know the block, and
// their lock (biased to the forking thread) and the decorator's blocks that
// thread kept for reuse serve the free.
TEST_F(ValidationRules, AForkChildFreesWhatItsParentMade) {
  setValidationMode(ValidationMode::Throw);
  for (int i = 0; i < 4; ++i)
    DataPtr kept_for_reuse = served().getDeviceAllocator(0).allocate(256);
  DataPtr made = served().getDeviceAllocator(0).allocate(512);
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    int code = 0;
    if (validationLeakReport().find("of 512 bytes") == std::string::npos) code = 1;
    made.reset();
    if (!validationLeakReport().empty()) code = 2;
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: the child's books did not know the block; 2: its free left them";
}

// The layer's state is shared by every calling thread (the
// ThreadSanitizer build runs this): threads make and free blocks, events
// and streams while the layer is on, one of them breaking a rule now and
// then, and the layer is turned off and on meanwhile.
TEST_F(ValidationRules, ThreadsShareTheLayer) {
  setValidationMode(ValidationMode::Log);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      const DeviceIndex device = static_cast<DeviceIndex>(t % 2);
      std::vector<char> host(64);
      while (!stop.load()) {
        const Stream stream = served().getCurrentStream(device);
        DataPtr data = served().getDeviceAllocator(device).allocate(256);
        served().copyHostToDevice(data.get(), host.data(), host.size(), stream);
        const EventId event = served().createEvent(device);
        served().recordEvent(event, stream);
        served().blockStream(event, stream);
        served().destroyEvent(event);
      }
    });
  }
  ::testing::internal::CaptureStderr();
  for (int round = 0; round < 20; ++round) {
    const EventId never_recorded = served().createEvent(0);
    served().blockStream(never_recorded, served().getCurrentStream(0));  // reported
    served().destroyEvent(never_recorded);
    setValidationMode(round % 2 == 0 ? ValidationMode::Off : ValidationMode::Log);
  }
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, HasSubstr("was never recorded"));
}

TEST_F(ValidationRules, TurnedOffTheLayerLeavesThePath) {
  setValidationMode(ValidationMode::Throw);
  EXPECT_NE(&served(), &lax());
  EXPECT_EQ(validationMode(), ValidationMode::Throw);
  setValidationMode(ValidationMode::Off);
  EXPECT_EQ(&served(), &lax());
  EXPECT_EQ(validationMode(), ValidationMode::Off);
}

}  // namespace
}  // namespace accel
