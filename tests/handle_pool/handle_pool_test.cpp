// DeviceThreadHandlePool: reservation, reuse across threads, stats, trim, the
// idle cap, failing creates and device switching. Exit-time behaviour is in
// handle_pool_exit_test.cpp (it needs a process of its own).
#include "accel/handle_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "handle_pool/fake_handle_pool.h"
#include "minimal_backend.h"

namespace accel {
namespace {

using testing::FakeHandle;
using testing::FakeHandlePool;

// The concept names what a traits type must provide.
struct MinimalTraits {
  using Handle = int*;
  static constexpr DeviceType kDeviceType = DeviceType::CPU;
  static Handle create(DeviceIndex);
  static void destroy(Handle) noexcept;
};
struct DestroyMayThrowTraits : MinimalTraits {
  static void destroy(Handle);
};
struct NoDestroyTraits {
  using Handle = int*;
  static constexpr DeviceType kDeviceType = DeviceType::CPU;
  static Handle create(DeviceIndex);
};
struct NonTrivialHandleTraits : MinimalTraits {
  using Handle = std::shared_ptr<int>;
  static Handle create(DeviceIndex);
  static void destroy(Handle) noexcept;
};
static_assert(HandlePoolTraits<MinimalTraits>);
static_assert(HandlePoolTraits<FakeHandlePool<void>>);
static_assert(!HandlePoolTraits<DestroyMayThrowTraits>);
static_assert(!HandlePoolTraits<NoDestroyTraits>);
static_assert(!HandlePoolTraits<NonTrivialHandleTraits>);

template <typename Pool>
HandlePoolStats statsOf(int device) {
  return handlePool<Pool>().stats(device);
}

// Runs fn on a new thread and joins it; the thread's handles are back in the
// pool when this returns (join waits for thread_local destructors).
template <typename Fn>
void runOnNewThread(Fn fn) {
  std::thread thread(fn);
  thread.join();
}

// Starts `count` threads that each call fn, then wait until all have, so that
// every thread holds its handles at the same time; joins them all.
template <typename Fn>
void runConcurrently(int count, Fn fn) {
  std::barrier all_hold(count);
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      fn(i);
      all_hold.arrive_and_wait();
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// `threads` threads each reserve a handle of `device` and hold it until all
// have theirs, then exit, returning them to the pool: the pool then holds at
// least `threads` handles of the device.
template <typename Pool>
void holdAtOnce(int threads, int device) {
  runConcurrently(threads, [device](int) { (void)reserveHandle<Pool>(device); });
}

TEST(HandlePool, ReserveOnSameThreadReturnsSameHandle) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  runOnNewThread([] {
    FakeHandle* first = reserveHandle<Pool>(0);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->device, 0);
    EXPECT_EQ(reserveHandle<Pool>(0), first);
    EXPECT_EQ(reserveHandle<Pool>(0), first);
    EXPECT_EQ(statsOf<Pool>(0).created, 1u);
  });
}

TEST(HandlePool, ReserveOnDifferentDevicesReturnsDifferentHandles) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  runOnNewThread([] {
    FakeHandle* on0 = reserveHandle<Pool>(0);
    FakeHandle* on5 = reserveHandle<Pool>(5);
    FakeHandle* on127 = reserveHandle<Pool>(kMaxDevicesPerType - 1);
    EXPECT_NE(on0, on5);
    EXPECT_NE(on5, on127);
    EXPECT_EQ(on5->device, 5);
    EXPECT_EQ(on127->device, kMaxDevicesPerType - 1);
    EXPECT_EQ(reserveHandle<Pool>(5), on5);
  });
}

TEST(HandlePool, ReserveOnDifferentThreadsReturnsDifferentHandles) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  constexpr int kThreads = 8;
  std::vector<FakeHandle*> handles(kThreads);
  runConcurrently(kThreads, [&](int i) { handles[i] = reserveHandle<Pool>(3); });
  std::set<FakeHandle*> distinct(handles.begin(), handles.end());
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(statsOf<Pool>(3).created, static_cast<std::size_t>(kThreads));
}

TEST(HandlePool, ReserveReusesHandleReturnedByExitedThread) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  FakeHandle* first = nullptr;
  FakeHandle* second = nullptr;
  runOnNewThread([&] { first = reserveHandle<Pool>(1); });
  EXPECT_EQ(statsOf<Pool>(1), (HandlePoolStats{.created = 1, .available = 1}));
  runOnNewThread([&] { second = reserveHandle<Pool>(1); });
  EXPECT_EQ(second, first);
  EXPECT_EQ(statsOf<Pool>(1), (HandlePoolStats{.created = 1, .available = 1}));
  EXPECT_EQ(Pool::live.load(), 1);
}

TEST(HandlePool, ThreadExitReturnsHandlesOfEveryDevice) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  std::promise<void> reserved;
  std::promise<void> may_exit;
  std::thread thread([&] {
    (void)reserveHandle<Pool>(0);
    (void)reserveHandle<Pool>(2);
    reserved.set_value();
    may_exit.get_future().wait();
  });
  reserved.get_future().wait();
  EXPECT_EQ(statsOf<Pool>(0), (HandlePoolStats{.created = 1, .in_use = 1}));
  EXPECT_EQ(statsOf<Pool>(2), (HandlePoolStats{.created = 1, .in_use = 1}));
  may_exit.set_value();
  thread.join();
  EXPECT_EQ(statsOf<Pool>(0), (HandlePoolStats{.created = 1, .available = 1}));
  EXPECT_EQ(statsOf<Pool>(2), (HandlePoolStats{.created = 1, .available = 1}));
  EXPECT_EQ(statsOf<Pool>(1), HandlePoolStats{});
}

// 64 threads hold handles at once, then 64 slots keep replacing their thread
// with a fresh one: handles created stay at the peak concurrency, 64.
TEST(HandlePool, ChurningThreadsCreateOnlyPeakConcurrencyHandles) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  constexpr int kSlots = 64;
  constexpr int kGenerations = 8;
  constexpr int kDevices = 3;
  const auto reserveAll = [] {
    for (int device = 0; device < kDevices; ++device) {
      FakeHandle* handle = reserveHandle<Pool>(device);
      ASSERT_EQ(handle->device, device);
      ASSERT_EQ(reserveHandle<Pool>(device), handle);
    }
  };
  runConcurrently(kSlots, [&](int) { reserveAll(); });
  for (int device = 0; device < kDevices; ++device) {
    EXPECT_EQ(statsOf<Pool>(device),
              (HandlePoolStats{.created = kSlots, .available = kSlots}));
  }

  std::vector<std::thread> slots;
  for (int slot = 0; slot < kSlots; ++slot) {
    slots.emplace_back([&] {
      for (int generation = 0; generation < kGenerations; ++generation) {
        runOnNewThread(reserveAll);
      }
    });
  }
  for (std::thread& slot : slots) slot.join();
  for (int device = 0; device < kDevices; ++device) {
    EXPECT_EQ(statsOf<Pool>(device),
              (HandlePoolStats{.created = kSlots, .available = kSlots}));
  }
  EXPECT_EQ(Pool::live.load(), kSlots * kDevices);
}

TEST(HandlePool, StatsCountCreatedInUseAndAvailablePerDevice) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  EXPECT_EQ(statsOf<Pool>(4), HandlePoolStats{});
  std::promise<void> reserved;
  std::promise<void> may_exit;
  std::thread holder([&] {
    (void)reserveHandle<Pool>(4);
    reserved.set_value();
    may_exit.get_future().wait();
  });
  reserved.get_future().wait();
  holdAtOnce<Pool>(2, 4);
  EXPECT_EQ(statsOf<Pool>(4),
            (HandlePoolStats{.created = 3, .in_use = 1, .available = 2}));
  EXPECT_EQ(statsOf<Pool>(5), HandlePoolStats{});
  may_exit.set_value();
  holder.join();
  EXPECT_EQ(statsOf<Pool>(4), (HandlePoolStats{.created = 3, .available = 3}));
}

TEST(HandlePool, TrimDestroysIdleHandlesAndKeepsThoseInUse) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  std::promise<FakeHandle*> reserved;
  std::promise<void> may_exit;
  std::promise<FakeHandle*> reserved_again;
  std::thread holder([&] {
    reserved.set_value(reserveHandle<Pool>(0));
    may_exit.get_future().wait();
    reserved_again.set_value(reserveHandle<Pool>(0));
  });
  FakeHandle* held = reserved.get_future().get();
  holdAtOnce<Pool>(2, 0);
  ASSERT_EQ(Pool::live.load(), 3);

  EXPECT_EQ(handlePool<Pool>().trim(0), 2u);
  EXPECT_EQ(Pool::live.load(), 1);
  EXPECT_EQ(statsOf<Pool>(0),
            (HandlePoolStats{.created = 3, .destroyed = 2, .in_use = 1}));
  EXPECT_EQ(handlePool<Pool>().trim(0), 0u);

  may_exit.set_value();
  EXPECT_EQ(reserved_again.get_future().get(), held);  // still alive, still its own
  holder.join();
  EXPECT_EQ(statsOf<Pool>(0),
            (HandlePoolStats{.created = 3, .destroyed = 2, .available = 1}));

  // A thread after the trim gets the pooled handle, then a new one is created.
  holdAtOnce<Pool>(2, 0);
  EXPECT_EQ(statsOf<Pool>(0),
            (HandlePoolStats{.created = 4, .destroyed = 2, .available = 2}));
}

TEST(HandlePool, TrimAllDestroysIdleHandlesOfEveryDevice) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  runOnNewThread([] {
    for (int device : {0, 7, kMaxDevicesPerType - 1}) (void)reserveHandle<Pool>(device);
  });
  ASSERT_EQ(Pool::live.load(), 3);
  EXPECT_EQ(handlePool<Pool>().trimAll(), 3u);
  EXPECT_EQ(Pool::live.load(), 0);
  for (int device : {0, 7, kMaxDevicesPerType - 1}) {
    EXPECT_EQ(statsOf<Pool>(device), (HandlePoolStats{.created = 1, .destroyed = 1}));
  }
}

TEST(HandlePool, IdleCapDestroysHandlesReturnedBeyondIt) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  EXPECT_EQ(handlePool<Pool>().maxIdleHandles(), std::numeric_limits<std::size_t>::max());
  EXPECT_EQ(handlePool<Pool>().setMaxIdleHandles(1), 0u);
  EXPECT_EQ(handlePool<Pool>().maxIdleHandles(), 1u);
  holdAtOnce<Pool>(3, 2);
  EXPECT_EQ(statsOf<Pool>(2),
            (HandlePoolStats{.created = 3, .destroyed = 2, .available = 1}));
  EXPECT_EQ(Pool::live.load(), 1);
}

TEST(HandlePool, LoweringIdleCapDestroysIdleHandlesAboveItNow) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  runConcurrently(4, [](int) {
    (void)reserveHandle<Pool>(0);
    (void)reserveHandle<Pool>(1);
  });
  ASSERT_EQ(Pool::live.load(), 8);
  EXPECT_EQ(handlePool<Pool>().setMaxIdleHandles(1), 6u);
  EXPECT_EQ(Pool::live.load(), 2);
  EXPECT_EQ(statsOf<Pool>(0),
            (HandlePoolStats{.created = 4, .destroyed = 3, .available = 1}));
  EXPECT_EQ(statsOf<Pool>(1),
            (HandlePoolStats{.created = 4, .destroyed = 3, .available = 1}));
}

struct CappedTag;
struct CappedPool : FakeHandlePool<CappedTag> {
  static constexpr std::size_t kMaxIdleHandles = 2;
};

TEST(HandlePool, TraitsSetTheInitialIdleCap) {
  EXPECT_EQ(handlePool<CappedPool>().maxIdleHandles(), 2u);
  holdAtOnce<CappedPool>(5, 0);
  EXPECT_EQ(statsOf<CappedPool>(0),
            (HandlePoolStats{.created = 5, .destroyed = 3, .available = 2}));
}

TEST(HandlePool, DeviceOutsideRangeIsInvalidArgument) {
  struct Tag;
  using Pool = FakeHandlePool<Tag>;
  for (int device : {-1, -128, kMaxDevicesPerType, 1000}) {
    try {
      (void)reserveHandle<Pool>(device);
      ADD_FAILURE() << "reserve(" << device << ") did not throw";
    } catch (const InvalidArgument& error) {
      EXPECT_NE(error.message().find("out of range [0, 128)"), std::string::npos)
          << error.message();
      EXPECT_NE(error.message().find("'fake' pool"), std::string::npos)
          << error.message();
    }
    EXPECT_THROW((void)statsOf<Pool>(device), InvalidArgument);
    EXPECT_THROW((void)handlePool<Pool>().trim(device), InvalidArgument);
  }
  EXPECT_EQ(Pool::live.load(), 0);
}

// create() fails while `fail` is set.
template <typename Tag>
struct FailingPool : FakeHandlePool<Tag> {
  static FakeHandle* create(DeviceIndex device) {
    if (fail.load()) throw std::runtime_error("fake library refused to create a handle");
    return FakeHandlePool<Tag>::create(device);
  }
  static inline std::atomic<bool> fail{true};
};

TEST(HandlePool, CreateThatThrowsReachesCallerAndLeavesPoolConsistent) {
  struct Tag;
  using Pool = FailingPool<Tag>;
  runOnNewThread([] {
    EXPECT_THROW(
        {
          try {
            (void)reserveHandle<Pool>(0);
          } catch (const std::runtime_error& error) {
            EXPECT_STREQ(error.what(), "fake library refused to create a handle");
            throw;
          }
        },
        std::runtime_error);
    EXPECT_EQ(statsOf<Pool>(0), HandlePoolStats{});
    // The same thread may try again; nothing was cached.
    EXPECT_THROW((void)reserveHandle<Pool>(0), std::runtime_error);
    Pool::fail = false;
    FakeHandle* handle = reserveHandle<Pool>(0);
    ASSERT_NE(handle, nullptr);
    EXPECT_EQ(reserveHandle<Pool>(0), handle);
    EXPECT_EQ(statsOf<Pool>(0), (HandlePoolStats{.created = 1, .in_use = 1}));
  });
  EXPECT_EQ(statsOf<Pool>(0), (HandlePoolStats{.created = 1, .available = 1}));
  EXPECT_EQ(Pool::live.load(), 1);
}

template <typename Tag>
struct NullPool : FakeHandlePool<Tag> {
  static FakeHandle* create(DeviceIndex) { return nullptr; }
};

TEST(HandlePool, CreateReturningNullHandleIsDeviceError) {
  struct Tag;
  using Pool = NullPool<Tag>;
  try {
    (void)reserveHandle<Pool>(3);
    ADD_FAILURE() << "reserve did not throw";
  } catch (const DeviceError& error) {
    EXPECT_NE(error.message().find("null handle"), std::string::npos) << error.message();
  }
  EXPECT_EQ(statsOf<Pool>(3), HandlePoolStats{});
}

// create() blocks until released, to show that no pool lock is held meanwhile.
template <typename Tag>
struct BlockingPool : FakeHandlePool<Tag> {
  static FakeHandle* create(DeviceIndex device) {
    if (device == 0) {
      entered.set_value();
      release.wait();
    }
    return FakeHandlePool<Tag>::create(device);
  }
  static inline std::promise<void> entered;
  static inline std::shared_future<void> release;
};

TEST(HandlePool, SlowCreateDoesNotBlockOtherThreadsOfThePool) {
  struct Tag;
  using Pool = BlockingPool<Tag>;
  std::promise<void> release;
  Pool::release = release.get_future().share();
  std::thread slow([] { (void)reserveHandle<Pool>(0); });
  Pool::entered.get_future().wait();

  // While create() for device 0 runs, other threads reserve, read stats, trim.
  auto others = std::async(std::launch::async, [] {
    holdAtOnce<Pool>(2, 1);
    EXPECT_EQ(statsOf<Pool>(0), HandlePoolStats{});
    EXPECT_EQ(handlePool<Pool>().trim(1), 2u);
  });
  // A deadlock guard, not a timing assertion: with a pool lock held across
  // create() the other threads could never finish.
  const bool others_finished =
      others.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  release.set_value();
  slow.join();
  others.get();
  EXPECT_TRUE(others_finished)
      << "reserve on another device waited for a running create()";
  EXPECT_EQ(statsOf<Pool>(0), (HandlePoolStats{.created = 1, .available = 1}));
}

// bind() records what it was given.
template <typename Tag>
struct BindingPool : FakeHandlePool<Tag> {
  static void bind(FakeHandle* handle, DeviceIndex device) {
    binds.fetch_add(1);
    if (handle->device != device) mismatches.fetch_add(1);
  }
  static inline std::atomic<int> binds{0};
  static inline std::atomic<int> mismatches{0};
};

TEST(HandlePool, BindRunsOnEveryReserveWithTheHandleAndDevice) {
  struct Tag;
  using Pool = BindingPool<Tag>;
  runOnNewThread([] {
    (void)reserveHandle<Pool>(2);  // slow path
    (void)reserveHandle<Pool>(2);  // fast path
    (void)reserveHandle<Pool>(6);
  });
  runOnNewThread([] { (void)reserveHandle<Pool>(2); });  // pooled handle
  EXPECT_EQ(Pool::binds.load(), 4);
  EXPECT_EQ(Pool::mismatches.load(), 0);
}

// A backend of four devices whose current device is per thread (the minimal
// backend of tests/conformance), for the one test that switches devices.
DeviceType poolTestDeviceType() {
  static const DeviceType type =
      conformance::testing::registerMinimalBackend("pooltestdev", 4).deviceType();
  return type;
}

// Records the current device while create() runs. kDeviceType is a run-time
// registered type, so it is a static const rather than constexpr.
struct SwitchingPool {
  using Handle = FakeHandle*;
  static inline const DeviceType kDeviceType = poolTestDeviceType();
  static Handle create(DeviceIndex device) {
    current_during_create = getHooks(kDeviceType).getCurrentDevice();
    return new FakeHandle{device, 0};
  }
  static void destroy(Handle handle) noexcept { delete handle; }
  static inline thread_local DeviceIndex current_during_create = -1;
};

TEST(HandlePool, CreateRunsWithThatDeviceCurrentAndRestoresIt) {
  runOnNewThread([] {
    AcceleratorHooks& hooks = getHooks(SwitchingPool::kDeviceType);
    hooks.setCurrentDevice(2);
    FakeHandle* handle = reserveHandle<SwitchingPool>(1);
    EXPECT_EQ(handle->device, 1);
    EXPECT_EQ(SwitchingPool::current_during_create, 1);
    EXPECT_EQ(hooks.getCurrentDevice(), 2);

    SwitchingPool::current_during_create = -1;
    (void)reserveHandle<SwitchingPool>(3);
    EXPECT_EQ(SwitchingPool::current_during_create, 3);
    EXPECT_EQ(hooks.getCurrentDevice(), 2);

    // A device the backend does not have fails in the device switch, before
    // create(); the pool is unchanged.
    EXPECT_THROW((void)reserveHandle<SwitchingPool>(5), InvalidArgument);
    EXPECT_EQ(handlePool<SwitchingPool>().stats(5), HandlePoolStats{});
    EXPECT_EQ(hooks.getCurrentDevice(), 2);
  });
}

TEST(HandlePool, NotExitingWhileMainRuns) { EXPECT_FALSE(handlePoolsExiting()); }

}  // namespace
}  // namespace accel
