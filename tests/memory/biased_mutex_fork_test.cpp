// A fork while another thread is still finding out whether this process can
// grant biases (registering for membarrier) must leave a child that can.
// Its own binary: the answer is kept for the process's life, so the test
// needs a process that has not asked yet (the death test re-executes it).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <thread>

#include "memory/biased_mutex.h"

namespace {

// While set, a membarrier registration (syscall() below) says it started and
// takes 50 ms, as it can on a busy many-core machine (15 ms was measured),
// so that the fork lands inside it every time.
std::atomic<bool> g_slow_registration{false};
std::atomic<bool> g_registering{false};

}  // namespace

// The executable's syscall() is the one every caller in the process reaches
// (the library under test calls membarrier through it); all other calls pass
// through to the C library's.
extern "C" long syscall(long number, ...) {
  va_list args;
  va_start(args, number);
  long a[6];
  for (long& value : a) value = va_arg(args, long);
  va_end(args);
  using Real = long (*)(long, ...);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "syscall"));
#ifdef __NR_membarrier
  if (number == __NR_membarrier && a[0] == MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED &&
      g_slow_registration.load()) {
    g_registering.store(true);
    usleep(50'000);
  }
#endif
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

namespace accel::detail {
namespace {

// In a process that has not asked yet: one thread asks, the process forks
// while it is registering, and the child asks and takes a lock repeatedly.
// Exits 0 when the child finished, 1 when it had to be killed after 10 s.
[[noreturn]] void forkDuringTheFirstQuestion() {
  g_slow_registration.store(true);
  std::thread first([] { (void)BiasedMutex::biasSupported(); });
  while (!g_registering.load()) std::this_thread::yield();
  const pid_t child = fork();
  if (child == 0) {
    (void)BiasedMutex::biasSupported();
    BiasedMutex mutex;
    for (int i = 0; i < 20; ++i) BiasedMutex::Guard lock(mutex);
    _exit(0);
  }
  first.join();
  int status = 0;
  for (int waited_ms = 0; waited_ms < 10'000; waited_ms += 10) {
    if (waitpid(child, &status, WNOHANG) == child) {
      _exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 2);
    }
    usleep(10'000);
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  _exit(1);
}

TEST(BiasedMutexForkTest, AChildForkedDuringTheFirstBiasQuestionCanLock) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process each time
  for (int attempt = 0; attempt < 3; ++attempt) {
    EXPECT_EXIT(forkDuringTheFirstQuestion(), ::testing::ExitedWithCode(0), "")
        << "the fork child hung (exit 1) or failed (exit 2)";
  }
}

}  // namespace
}  // namespace accel::detail
