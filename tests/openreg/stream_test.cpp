// openreg streams and kernels: ordering, current streams, the pool,
// priorities and execution units, kernel buffers and kernel errors.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "openreg_test_support.h"

namespace {

using openreg_test::Gate;
using openreg_test::OpenRegTest;
using openreg_test::readBack;
using openreg_test::upload;

using OpenRegStreamTest = OpenRegTest;

TEST_F(OpenRegStreamTest, WorkOnOneStreamRunsInEnqueueOrder) {
  const accel::Stream stream = hooks().getNewStream(0);
  std::vector<int> order;  // written only by the stream's worker
  for (int i = 0; i < 50; ++i) {
    accel::openreg::launchKernel(
        stream, "append", {},
        [&order, i](const accel::openreg::KernelContext&) { order.push_back(i); });
  }
  hooks().synchronizeStream(stream);
  std::vector<int> expected(50);
  for (int i = 0; i < 50; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
}

TEST_F(OpenRegStreamTest, QueryIsFalseWhileWorkIsPendingAndTrueAfterSynchronize) {
  const accel::Stream stream = hooks().getNewStream(1);
  EXPECT_TRUE(hooks().queryStream(stream));
  Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  EXPECT_FALSE(hooks().queryStream(stream));
  gate.open();
  hooks().synchronizeStream(stream);
  EXPECT_TRUE(hooks().queryStream(stream));
}

TEST_F(OpenRegStreamTest, DeviceSynchronizeWaitsForEveryStreamOfTheDevice) {
  std::atomic<int> done{0};
  for (int i = 0; i < 6; ++i) {
    accel::openreg::launchKernel(
        hooks().getNewStream(2), "count", {},
        [&done](const accel::openreg::KernelContext&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          done.fetch_add(1);
        });
  }
  hooks().deviceSynchronize(2);
  EXPECT_EQ(done.load(), 6);
}

TEST_F(OpenRegStreamTest, CurrentStreamIsPerThreadAndPerDevice) {
  const accel::Stream mine = hooks().getNewStream(0);
  hooks().setCurrentStream(mine);
  EXPECT_EQ(hooks().getCurrentStream(0), mine);
  EXPECT_EQ(hooks().getCurrentStream(1), hooks().getDefaultStream(1));
  accel::Stream seen_by_other_thread;
  std::thread([&] { seen_by_other_thread = hooks().getCurrentStream(0); }).join();
  EXPECT_EQ(seen_by_other_thread, hooks().getDefaultStream(0));
}

TEST_F(OpenRegStreamTest, DefaultStreamHasIdZeroAndNewStreamsComeFromARoundRobinPool) {
  EXPECT_EQ(hooks().getDefaultStream(3).id, accel::kDefaultStreamId);
  std::vector<accel::Stream> streams;
  for (int i = 0; i < 8; ++i) streams.push_back(hooks().getNewStream(3));
  for (const accel::Stream& s : streams) {
    EXPECT_NE(s.id, accel::kDefaultStreamId);
    EXPECT_EQ(s.device, openreg_test::device(3));
  }
  EXPECT_NE(streams[0], streams[1]);
  EXPECT_EQ(streams[0], streams[4]);  // a pool of four per priority
  EXPECT_NE(hooks().getNewStream(3, 2).id, hooks().getNewStream(3, 0).id);
}

TEST_F(OpenRegStreamTest, PriorityOutsideTheRangeIsRejected) {
  EXPECT_EQ(hooks().streamPriorityRange(), (std::pair<int, int>{0, 2}));
  EXPECT_THROW((void)hooks().getNewStream(0, 3), accel::InvalidArgument);
  EXPECT_THROW((void)hooks().getNewStream(0, -1), accel::InvalidArgument);
}

TEST_F(OpenRegStreamTest, UnknownStreamIdIsRejected) {
  const accel::Stream bogus(openreg_test::device(0), 99);
  EXPECT_THROW((void)hooks().queryStream(bogus), accel::InvalidArgument);
  EXPECT_THROW(hooks().setCurrentStream(bogus), accel::InvalidArgument);
}

TEST_F(OpenRegStreamTest, HigherPriorityWorkGetsTheNextFreeExecutionUnitFirst) {
  accel::openreg::setExecutionUnits(4, 1);
  const accel::Stream blocker = hooks().getNewStream(4, 1);
  const accel::Stream low = hooks().getNewStream(4, 0);
  const accel::Stream high = hooks().getNewStream(4, 2);
  Gate gate;
  openreg_test::launchGatedKernel(blocker, gate);
  gate.waitUntilReached();
  std::mutex mutex;
  std::vector<std::string> order;
  const auto record = [&](std::string name) {
    return [&, name](const accel::openreg::KernelContext&) {
      std::lock_guard<std::mutex> lock(mutex);
      order.push_back(name);
    };
  };
  accel::openreg::launchKernel(low, "low", {}, record("low"));
  while (accel::openreg::executionUnitsState(4).waiting < 1) std::this_thread::yield();
  accel::openreg::launchKernel(high, "high", {}, record("high"));
  while (accel::openreg::executionUnitsState(4).waiting < 2) std::this_thread::yield();
  gate.open();
  hooks().deviceSynchronize(4);
  EXPECT_EQ(order, (std::vector<std::string>{"high", "low"}));
}

TEST_F(OpenRegStreamTest, KernelsOnDifferentStreamsOfOneDeviceRunConcurrently) {
  // Each kernel waits for the other to have started: this only finishes if
  // both run at once, on different allocations of the same device.
  accel::DataPtr a = accel::openreg::allocate(sizeof(int), 5);
  accel::DataPtr b = accel::openreg::allocate(sizeof(int), 5);
  Gate both_started;
  std::atomic<int> started{0};
  const auto body = [&](const char* name) {
    return [&, name](const accel::openreg::KernelContext& k) {
      k.buffer<int>(name)[0] = 1;
      if (started.fetch_add(1) + 1 == 2) both_started.open();
      both_started.wait();
      k.buffer<int>(name)[0] = 2;
    };
  };
  accel::openreg::launchKernel(hooks().getNewStream(5), "a",
                               {{"a", a.get(), sizeof(int)}}, body("a"));
  accel::openreg::launchKernel(hooks().getNewStream(5), "b",
                               {{"b", b.get(), sizeof(int)}}, body("b"));
  hooks().deviceSynchronize(5);
  EXPECT_EQ(readBack<int>(a.get(), 1)[0], 2);
  EXPECT_EQ(readBack<int>(b.get(), 1)[0], 2);
}

TEST_F(OpenRegStreamTest, KernelSeesItsNamedBuffers) {
  accel::DataPtr x = accel::openreg::allocate(4 * sizeof(float), 1);
  accel::DataPtr y = accel::openreg::allocate(4 * sizeof(float), 1);
  upload(x.get(), std::vector<float>{1, 2, 3, 4});
  const accel::Stream stream = hooks().getNewStream(1);
  accel::openreg::launchKernel(
      stream, "axpy",
      {{"x", x.get(), 4 * sizeof(float)}, {"y", y.get(), 4 * sizeof(float)}},
      [](const accel::openreg::KernelContext& k) {
        std::span<const float> in = k.buffer<float>("x");
        std::span<float> out = k.buffer<float>("y");
        for (std::size_t i = 0; i < in.size(); ++i) out[i] = 2 * in[i] + 1;
        EXPECT_EQ(k.kernelName(), "axpy");
        EXPECT_EQ(k.device(), openreg_test::device(1));
      });
  hooks().synchronizeStream(stream);
  EXPECT_EQ(readBack<float>(y.get(), 4), (std::vector<float>{3, 5, 7, 9}));
}

TEST_F(OpenRegStreamTest, KernelLaunchRejectsBadBuffersAtOnce) {
  accel::DataPtr on_zero = accel::openreg::allocate(64, 0);
  accel::DataPtr on_one = accel::openreg::allocate(64, 1);
  const accel::Stream stream = hooks().getDefaultStream(0);
  const auto noop = [](const accel::openreg::KernelContext&) {};
  int host = 0;
  EXPECT_THROW(accel::openreg::launchKernel(stream, "k", {{"h", &host, 4}}, noop),
               accel::InvalidArgument);
  EXPECT_THROW(accel::openreg::launchKernel(stream, "k", {{"x", on_one.get(), 4}}, noop),
               accel::InvalidArgument);
  EXPECT_THROW(
      accel::openreg::launchKernel(stream, "k", {{"x", on_zero.get(), 8192}}, noop),
      accel::InvalidArgument);
  EXPECT_THROW(accel::openreg::launchKernel(
                   stream, "k", {{"x", on_zero.get(), 4}, {"x", on_zero.get(), 4}}, noop),
               accel::InvalidArgument);
  EXPECT_THROW(accel::openreg::launchKernel(stream, "k", {}, {}), accel::InvalidArgument);
}

TEST_F(OpenRegStreamTest, KernelErrorIsReportedOnceByTheNextSynchronize) {
  const accel::Stream stream = hooks().getNewStream(2);
  accel::openreg::launchKernel(stream, "explode", {},
                               [](const accel::openreg::KernelContext& k) {
                                 (void)k.bytes("missing");  // throws InvalidArgument
                               });
  try {
    hooks().synchronizeStream(stream);
    FAIL() << "the kernel's error was not reported";
  } catch (const accel::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'explode'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(hooks().synchronizeStream(stream));
  EXPECT_TRUE(hooks().queryStream(stream));
}

// query() answers without the lock when there is no capture and no pending
// error (stream_queue.cpp); a failed operation must still be reported by the
// query that first sees it complete, never after a query that said "done".
TEST_F(OpenRegStreamTest, KernelErrorIsReportedOnceByTheQueryThatSeesItComplete) {
  const accel::Stream stream = hooks().getNewStream(2);
  accel::openreg::launchKernel(stream, "explode", {},
                               [](const accel::openreg::KernelContext& k) {
                                 (void)k.bytes("missing");  // throws InvalidArgument
                               });
  std::string reported;
  bool finished = false;
  // Polls until the error is reported or the stream says it is done (a
  // failure); the deadline only keeps a broken build from hanging.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (reported.empty() && !finished && std::chrono::steady_clock::now() < deadline) {
    try {
      finished = hooks().queryStream(stream);
    } catch (const accel::DeviceError& e) {
      reported = e.what();
    }
  }
  EXPECT_FALSE(finished) << "query() said done before reporting the kernel's error";
  EXPECT_NE(reported.find("earlier work failed"), std::string::npos) << reported;
  EXPECT_NE(reported.find("kernel 'explode'"), std::string::npos) << reported;
  EXPECT_TRUE(hooks().queryStream(stream));  // reported once
  EXPECT_NO_THROW(hooks().synchronizeStream(stream));
}

// For TSan: a thread polling query() while another enqueues work, some of
// which fails; every error is reported once, by one of the two threads.
TEST_F(OpenRegStreamTest, QueryFromAnotherThreadWhileWorkIsEnqueuedAndFails) {
  const accel::Stream stream = hooks().getNewStream(3);
  std::atomic<bool> stop{false};
  std::vector<std::string> polled_errors;  // the poller's alone until joined
  std::thread poller([&] {
    while (!stop.load()) {
      try {
        (void)hooks().queryStream(stream);
      } catch (const accel::DeviceError& e) {
        polled_errors.emplace_back(e.what());
      }
    }
  });
  std::vector<std::string> errors;
  for (int i = 0; i < 200; ++i) {
    accel::openreg::launchKernel(stream, i % 10 == 0 ? "explode" : "fine", {},
                                 [i](const accel::openreg::KernelContext& k) {
                                   if (i % 10 == 0) (void)k.bytes("missing");
                                 });
    if (i % 50 == 49) {
      try {
        hooks().synchronizeStream(stream);
      } catch (const accel::DeviceError& e) {
        errors.emplace_back(e.what());
      }
    }
  }
  stop.store(true);
  poller.join();
  errors.insert(errors.end(), polled_errors.begin(), polled_errors.end());
  EXPECT_FALSE(errors.empty());
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("earlier work failed: kernel 'explode'"), std::string::npos) << e;
  }
  EXPECT_NO_THROW(hooks().synchronizeStream(stream));
  EXPECT_TRUE(hooks().queryStream(stream));
}

TEST_F(OpenRegStreamTest, ExecutionUnitsCanBeInspectedAndChanged) {
  EXPECT_EQ(accel::openreg::executionUnitsState(0).units,
            accel::openreg::kDefaultExecutionUnits);
  accel::openreg::setExecutionUnits(0, 2);
  EXPECT_EQ(accel::openreg::executionUnitsState(0).units, 2);
  EXPECT_EQ(accel::openreg::executionUnitsState(0).busy, 0);
  EXPECT_THROW(accel::openreg::setExecutionUnits(0, 0), accel::InvalidArgument);
  EXPECT_EQ(hooks().getDeviceProperties(0).multiprocessor_count, 2);
}

// A kernel that touches a device buffer it did not name crashes, because that
// buffer stays PROT_NONE (the named buffer fills a whole page, so the two
// share none; blocks are 512-byte granular). Run in a fresh process (fork + exec of this
// test binary), since openreg cannot be used in a plain fork child.
TEST_F(OpenRegStreamTest, KernelTouchingAnUndeclaredBufferFaults) {
  if (std::getenv("OPENREG_TEST_CHILD") != nullptr) {
    accel::DataPtr declared = accel::openreg::allocate(4096, 0);
    accel::DataPtr undeclared = accel::openreg::allocate(64, 0);
    void* secret = undeclared.get();
    accel::openreg::launchKernel(hooks().getDefaultStream(0), "sneaky",
                                 {{"ok", declared.get(), 4096}},
                                 [secret](const accel::openreg::KernelContext&) {
                                   static_cast<volatile char*>(secret)[0] = 1;
                                 });
    hooks().deviceSynchronize(0);
    std::_Exit(0);  // not reached when the kernel faults
  }
  const int status = openreg_test::runTestInFreshProcess(
      "OpenRegStreamTest.KernelTouchingAnUndeclaredBufferFaults",
      {"OPENREG_TEST_CHILD=1",
       // A sanitizer would otherwise report the fault and exit with a status.
       "ASAN_OPTIONS=handle_segv=0:detect_leaks=0", "TSAN_OPTIONS=handle_segv=0"},
      {"ASAN_OPTIONS=", "TSAN_OPTIONS="});
  EXPECT_TRUE(openreg_test::killedBySegv(status)) << "wait status " << status;
}

}  // namespace
