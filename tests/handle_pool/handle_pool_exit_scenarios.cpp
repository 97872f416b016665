// Child program for handle_pool_exit_test: each scenario ends the process in a
// way a test process cannot survive (threads still running when main
// returns), and reports on stdout what the pool did during exit.
//
//   handle_pool_exit_scenarios held-at-exit
//   handle_pool_exit_scenarios thread-exits-after-main
//
// Any destroy() after main returned prints "DESTROY DURING EXIT" and ends the
// process with status 3. A scenario that ran to its end prints "OK".
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "accel/error.h"
#include "accel/handle_pool.h"

namespace {

std::atomic<bool> g_main_returned{false};

struct ExitPool {
  using Handle = int*;
  static constexpr accel::DeviceType kDeviceType = accel::DeviceType::CPU;
  static constexpr bool kSwitchDevice = false;
  static constexpr const char* kName = "exit-test";
  static Handle create(accel::DeviceIndex device) { return new int(device); }
  static void destroy(Handle handle) noexcept {
    if (g_main_returned.load()) {
      static const char kMessage[] = "DESTROY DURING EXIT\n";
      (void)!::write(STDOUT_FILENO, kMessage, sizeof kMessage - 1);
      std::_Exit(3);
    }
    delete handle;
  }
};

accel::DeviceThreadHandlePool<ExitPool>& pool() { return accel::handlePool<ExitPool>(); }

void printStats(const char* label, int device) {
  const accel::HandlePoolStats s = pool().stats(device);
  std::printf("%s device %d: created=%zu destroyed=%zu in_use=%zu available=%zu\n", label,
              device, s.created, s.destroyed, s.in_use, s.available);
}

// Reserves during exit and prints what was thrown.
void reserveDuringExit(const char* who, int device) {
  try {
    (void)accel::reserveHandle<ExitPool>(device);
    std::printf("%s: reserve during exit returned a handle\n", who);
  } catch (const accel::NotAvailable& error) {
    std::printf("%s: NotAvailable: %s\n", who, error.message().c_str());
  } catch (const std::exception& error) {
    std::printf("%s: unexpected exception: %s\n", who, error.what());
  }
}

// Blocks the calling thread until the process ends. (No condition variable:
// static destruction would destroy it under its waiters.)
[[noreturn]] void parkForever() {
  for (;;) ::pause();
}

// Threads that still hold handles when main returns, a handle pooled by a
// thread that exited, and handles of the main thread itself, one of them
// beyond the idle cap of 1: with the process exiting, none may be destroyed.
void onExitHeldAtExit() {
  // Registered before the pool's own exit handler, so it runs after it.
  std::printf("exiting=%d\n", accel::handlePoolsExiting() ? 1 : 0);
  reserveDuringExit("atexit", 0);
  reserveDuringExit("atexit", 9);
  for (int device : {0, 1, 3}) printStats("at exit", device);
  std::printf("OK\n");
  std::fflush(stdout);
}

int heldAtExit() {
  std::atexit(onExitHeldAtExit);
  (void)pool().setMaxIdleHandles(0);
  std::thread([] {
    (void)accel::reserveHandle<ExitPool>(0);
  }).join();  // destroyed: cap 0
  (void)pool().setMaxIdleHandles(1);
  (void)accel::reserveHandle<ExitPool>(3);
  std::thread([] { (void)accel::reserveHandle<ExitPool>(3); }).join();  // pooled: cap 1

  constexpr int kParked = 4;
  std::atomic<int> holding{0};
  for (int i = 0; i < kParked; ++i) {
    std::thread([&holding] {
      (void)accel::reserveHandle<ExitPool>(0);
      (void)accel::reserveHandle<ExitPool>(1);
      holding.fetch_add(1);
      parkForever();
    }).detach();
  }
  while (holding.load() < kParked) std::this_thread::yield();
  (void)accel::reserveHandle<ExitPool>(0);
  (void)accel::reserveHandle<ExitPool>(1);
  for (int device : {0, 1, 3}) printStats("before exit", device);
  std::fflush(stdout);
  g_main_returned = true;
  return 0;
}

// A detached thread that is still running when main returns and finishes
// during exit: it reserves (and is refused), then exits, returning its
// handles to the pool while static destructors run.
std::mutex g_done_mutex;
std::condition_variable g_done_cv;
bool g_worker_done = false;
std::string g_worker_report;

// Constructed before the worker's first reserve, so its destructor runs
// after the pool's thread-exit hook: it marks the thread as truly finished.
struct WorkerDone {
  bool armed = false;
  ~WorkerDone() {
    std::lock_guard lock(g_done_mutex);
    g_worker_done = true;
    g_done_cv.notify_all();
  }
};
thread_local WorkerDone t_worker_done;

// A static whose destructor runs after the pool's exit handler (it was
// constructed first) and waits for the worker to finish exiting.
struct AwaitWorkerAtExit {
  bool active = false;
  ~AwaitWorkerAtExit() {
    if (!active) return;
    std::unique_lock lock(g_done_mutex);
    // Generous: the worker only waits for the exit flag, then returns.
    const bool done =
        g_done_cv.wait_for(lock, std::chrono::seconds(60), [] { return g_worker_done; });
    std::printf("worker finished=%d\n%s", done ? 1 : 0, g_worker_report.c_str());
    printStats("at exit", 0);
    printStats("at exit", 2);
    std::printf("%s\n", done ? "OK" : "TIMEOUT");
    std::fflush(stdout);
  }
} g_await_worker;

int threadExitsAfterMain() {
  g_await_worker.active = true;
  (void)pool().setMaxIdleHandles(0);
  std::atomic<bool> reserved{false};
  std::thread([&reserved] {
    t_worker_done.armed = true;  // constructed first, destroyed last
    (void)accel::reserveHandle<ExitPool>(0);
    (void)accel::reserveHandle<ExitPool>(2);
    reserved = true;
    while (!accel::handlePoolsExiting()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::string report;
    for (int device : {0, 5}) {
      try {
        (void)accel::reserveHandle<ExitPool>(device);
        report += "worker: reserve during exit returned a handle\n";
      } catch (const accel::NotAvailable& error) {
        report += "worker: NotAvailable: " + error.message() + "\n";
      }
    }
    std::lock_guard lock(g_done_mutex);
    g_worker_report = report;
  }).detach();
  while (!reserved.load()) std::this_thread::yield();
  g_main_returned = true;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "held-at-exit") == 0) return heldAtExit();
  if (argc == 2 && std::strcmp(argv[1], "thread-exits-after-main") == 0) {
    return threadExitsAfterMain();
  }
  std::fprintf(stderr, "usage: %s held-at-exit|thread-exits-after-main\n", argv[0]);
  return 2;
}
