#include "memory/biased_mutex.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace accel::detail {
namespace {

// Takes the lock `times` times in a row on the calling thread; returns how
// many of those went through the bias.
int lockRepeatedly(BiasedMutex& mutex, int times) {
  int biased = 0;
  for (int i = 0; i < times; ++i) {
    BiasedMutex::Guard lock(mutex);
    biased += lock.biased() ? 1 : 0;
  }
  return biased;
}

// A thread that takes `mutex` and then sets `entered`.
std::thread lockOnAnotherThread(BiasedMutex& mutex, std::atomic<bool>& entered) {
  return std::thread([&mutex, &entered] {
    BiasedMutex::Guard lock(mutex);
    entered.store(true);
  });
}

#define SKIP_WITHOUT_BIAS()                                                        \
  if (!BiasedMutex::biasSupported())                                               \
  GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not available " \
                  "here, so no bias is granted"

TEST(BiasedMutexTest, AThreadThatLocksRepeatedlyIsGrantedTheBias) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  EXPECT_EQ(mutex.biasOwner(), nullptr);
  // The first kGrantAfter locks take the inner mutex; the one that completes
  // the run grants the bias on unlock, so every later lock is biased.
  const int runs = static_cast<int>(BiasedMutex::kGrantAfter);
  EXPECT_EQ(lockRepeatedly(mutex, runs), 0);
  EXPECT_EQ(mutex.biasOwner(), t_biased_record);
  EXPECT_EQ(lockRepeatedly(mutex, 100), 100);
}

TEST(BiasedMutexTest, AnotherThreadWithdrawsTheBias) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  (void)lockRepeatedly(mutex, 10);
  ASSERT_EQ(mutex.biasOwner(), t_biased_record);
  std::thread other([&] {
    BiasedMutex::Guard lock(mutex);
    EXPECT_FALSE(lock.biased());
    EXPECT_EQ(mutex.biasOwner(), nullptr);
  });
  other.join();
  EXPECT_EQ(mutex.biasOwner(), nullptr);
  BiasedMutex::Guard lock(mutex);
  EXPECT_FALSE(lock.biased());
}

TEST(BiasedMutexTest, ALockWhoseBiasWasWithdrawnOnceGrantsNoBiasAgain) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  (void)lockRepeatedly(mutex, static_cast<int>(BiasedMutex::kGrantAfter));
  ASSERT_NE(mutex.biasOwner(), nullptr);
  EXPECT_FALSE(mutex.shared());
  std::thread([&] { BiasedMutex::Guard lock(mutex); }).join();
  EXPECT_TRUE(mutex.shared());
  // However long a run, on this thread or another, the lock stays a mutex.
  EXPECT_EQ(lockRepeatedly(mutex, 1000), 0);
  std::thread([&] { EXPECT_EQ(lockRepeatedly(mutex, 1000), 0); }).join();
  EXPECT_EQ(mutex.biasOwner(), nullptr);
}

TEST(BiasedMutexTest, AllowBiasFalseStopsNewGrants) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  mutex.allowBias(false);
  EXPECT_EQ(lockRepeatedly(mutex, 100), 0);
  EXPECT_EQ(mutex.biasOwner(), nullptr);
  mutex.allowBias(true);
  (void)lockRepeatedly(mutex, static_cast<int>(BiasedMutex::kGrantAfter));
  EXPECT_EQ(lockRepeatedly(mutex, 10), 10);
}

TEST(BiasedMutexTest, ARevokerWaitsForTheOwnerToLeave) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  (void)lockRepeatedly(mutex, 10);
  std::atomic<bool> other_entered{false};
  std::thread other;
  {
    BiasedMutex::Guard lock(mutex);
    ASSERT_TRUE(lock.biased());
    other = lockOnAnotherThread(mutex, other_entered);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(other_entered.load())
        << "the revoker entered while the owner was inside";
  }
  other.join();
  EXPECT_TRUE(other_entered.load());
}

// Waits up to 10 s for `flag`; true if it was set.
bool waitFor(const std::atomic<bool>& flag) {
  for (int i = 0; i < 1000 && !flag.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return flag.load();
}

TEST(BiasedMutexTest, GuardUnlockReleasesEarlyAndOnlyOnce) {
  BiasedMutex mutex;
  (void)lockRepeatedly(mutex, 10);  // biased where supported
  BiasedMutex::Guard lock(mutex);
  lock.unlock();
  lock.unlock();  // does nothing
  std::atomic<bool> other_entered{false};
  std::thread other = lockOnAnotherThread(mutex, other_entered);
  if (!waitFor(other_entered)) {
    other.detach();
    FAIL() << "another thread could not take the lock after Guard::unlock";
  }
  other.join();
}

// The owner of two locks' biases is inside the second while it takes and
// releases the first: a revoker of the second must still wait for it (a
// flag per thread rather than per thread and lock was cleared by the first
// release).
TEST(BiasedMutexTest, LeavingOneBiasedLockDoesNotLeaveAnother) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex first;
  BiasedMutex second;
  (void)lockRepeatedly(first, 10);
  (void)lockRepeatedly(second, 10);
  std::atomic<bool> other_entered{false};
  std::thread other;
  {
    BiasedMutex::Guard outer(second);
    ASSERT_TRUE(outer.biased());
    {
      BiasedMutex::Guard inner(first);
      ASSERT_TRUE(inner.biased());
    }
    other = lockOnAnotherThread(second, other_entered);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(other_entered.load())
        << "entered the second lock while its owner was inside";
  }
  other.join();
  EXPECT_TRUE(other_entered.load());
}

// The owner of two biases is inside the second; another thread revokes the
// first and must not wait for the owner's stay in the second, since the
// owner is about to wait for it on the first's inner mutex.
TEST(BiasedMutexTest, RevokingOneLockDoesNotWaitForTheOwnersOtherLock) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex first;
  BiasedMutex second;
  (void)lockRepeatedly(first, 10);
  (void)lockRepeatedly(second, 10);
  std::atomic<bool> revoker_in{false};
  std::atomic<bool> owner_done{false};
  std::atomic<bool> release_revoker{false};
  std::thread revoker;
  {
    BiasedMutex::Guard outer(second);
    ASSERT_TRUE(outer.biased());
    revoker = std::thread([&] {
      BiasedMutex::Guard lock(first);  // withdraws first's bias
      revoker_in.store(true);
      while (!release_revoker.load()) std::this_thread::yield();
    });
    if (!waitFor(revoker_in)) {
      revoker.detach();
      FAIL() << "the revoker of the first lock waited for the owner inside the second";
    }
    release_revoker.store(true);
    BiasedMutex::Guard inner(first);  // the inner mutex, after the revoker
    owner_done.store(true);
  }
  revoker.join();
  EXPECT_TRUE(owner_done.load());
}

// Threads that lock in bursts win and lose the bias many times over; a
// plain counter only they touch must come out exact (and TSan sees every
// hand-over as synchronised).
TEST(BiasedMutexTest, BurstsFromEightThreadsExcludeEachOther) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  constexpr int kBursts = 20;
  constexpr int kBurst = 40;
  std::atomic<int> biased_total{0};
  for (int round = 0; round < kRounds; ++round) {
    BiasedMutex mutex;  // fresh: grants start again at kGrantAfter
    long counter = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        int biased = 0;
        for (int burst = 0; burst < kBursts; ++burst) {
          for (int i = 0; i < kBurst; ++i) {
            BiasedMutex::Guard lock(mutex);
            biased += lock.biased() ? 1 : 0;
            counter = counter + 1;
          }
          std::this_thread::yield();
        }
        biased_total.fetch_add(biased);
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_EQ(counter, static_cast<long>(kThreads) * kBursts * kBurst)
        << "round " << round;
  }
  if (BiasedMutex::biasSupported()) {
    EXPECT_GT(biased_total.load(), 0) << "no lock went through a bias";
  }
}

TEST(BiasedMutexTest, ANewThreadReusesAnExitedThreadsRecordAndItsBias) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  const BiasedThreadRecord* first = nullptr;
  std::thread([&] {
    (void)lockRepeatedly(mutex, 10);
    first = t_biased_record;
  }).join();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(mutex.biasOwner(), first);
  // The exited thread's record went back to the pool; the next thread to
  // need one (no other thread asks meanwhile) gets it, and with it the bias.
  std::thread([&] {
    BiasedMutex other;
    (void)lockRepeatedly(other, 1);  // makes this thread's record
    EXPECT_EQ(t_biased_record, first);
    BiasedMutex::Guard lock(mutex);
    EXPECT_TRUE(lock.biased());
  }).join();
}

// A thread_local made before the thread's first slow lock is destroyed after
// the thread gave its record back: a lock taken then uses the inner mutex.
struct LockAtExit {
  BiasedMutex* mutex = nullptr;
  std::atomic<int>* outcome = nullptr;  // 1: taken through the mutex, 2: biased
  ~LockAtExit() {
    if (mutex == nullptr) return;
    BiasedMutex::Guard lock(*mutex);
    outcome->store(lock.biased() ? 2 : 1);
  }
};
thread_local LockAtExit t_lock_at_exit;

TEST(BiasedMutexTest, ALockTakenAfterTheThreadGaveItsRecordBackUsesTheMutex) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  std::atomic<int> outcome{0};
  std::thread([&] {
    t_lock_at_exit.mutex = &mutex;  // constructed first, destroyed last
    t_lock_at_exit.outcome = &outcome;
    (void)lockRepeatedly(mutex, 10);
    EXPECT_NE(mutex.biasOwner(), nullptr);
  }).join();
  EXPECT_EQ(outcome.load(), 1);
  BiasedMutex::Guard lock(mutex);  // and the lock is still usable
}

TEST(BiasedMutexTest, AForkChildWithdrawsABiasHeldByAThreadThatDidNotSurvive) {
  SKIP_WITHOUT_BIAS();
  BiasedMutex mutex;
  BiasedMutex mine;
  (void)lockRepeatedly(mine, 1);  // this thread has its own record
  // A thread that owns the bias and is alive (parked) when the process forks:
  // the child has no such thread.
  std::atomic<bool> has_bias{false};
  std::atomic<bool> forked{false};
  std::thread owner([&] {
    (void)lockRepeatedly(mutex, 10);
    has_bias.store(true);
    while (!forked.load()) std::this_thread::yield();
  });
  while (!has_bias.load()) std::this_thread::yield();
  ASSERT_NE(mutex.biasOwner(), nullptr);
  ASSERT_NE(mutex.biasOwner(), t_biased_record);
  const pid_t child = fork();
  if (child == 0) {
    bool ok = false;
    {
      BiasedMutex::Guard lock(mutex);
      ok = !lock.biased() && mutex.biasOwner() == nullptr;
    }
    // The lock was shared (a bias withdrawn): it is a plain mutex from now on.
    ok = ok && lockRepeatedly(mutex, 10) == 0 && mutex.shared();
    _exit(ok ? 0 : 1);
  }
  forked.store(true);
  owner.join();
  ASSERT_GE(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace accel::detail
