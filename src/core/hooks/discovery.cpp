// The discovery probes (isAvailable, deviceCount) and the first discovery's
// bound (docs/lifecycle.md, "Discovery").
//
// The first time a hooks object's probes reach the backend, its driver loads
// and lists devices: a dlopen, a read of the ICD vendors directory, a
// driver's worker threads started. A broken install can hang there for good
// (a FIFO where a vendor file should be, a driver that waits for a daemon),
// and a program that never meant to use the backend would hang with it. So
// that first call runs on a watchdog thread of its own; callers wait for it
// at most ACCEL_DISCOVERY_TIMEOUT seconds and then answer "no devices", with
// the reason kept for discoveryProblem() (`accel info` prints it). The
// thread is left to finish whenever it can; its answer is used from then on
// (the hooks object's destructor waits for it: see ~AcceleratorHooks).
//
// The state also tells the fork handlers that the backend was discovered:
// from the first probe on, its driver may have threads a child cannot have.
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "accel/discovery_limit.h"
#include "accel/error.h"
#include "accel/hooks.h"
#include "hooks/fork_handlers.h"

namespace accel {

struct detail::DiscoveryRun {
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;  // the backend's probe returned
  int answer = 0;         // what it returned, for `probe`
  std::uint8_t probe = 0;
  double limit_s = 0;
  std::chrono::steady_clock::time_point deadline;
  pid_t process = 0;  // the process whose thread runs it (a fork child has none)
};

namespace {

constexpr double kDefaultDiscoveryLimitSeconds = 30;
// The largest limit (about 11.6 days): larger values are taken as this one.
// A deadline must stay representable: seconds past about 9.2e9 overflow the
// clock's nanoseconds.
constexpr double kMaxDiscoveryLimitSeconds = 1e6;

// The end of a wait of `seconds` (at most kMaxDiscoveryLimitSeconds) from now.
std::chrono::steady_clock::time_point deadlineAfter(double seconds) noexcept {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

// Runs `probe` and then puts back the alternate signal stack the thread had
// before it. A driver may install one of its own on the thread that first
// loads it (pocl's LLVM does, with memory from malloc); the watchdog thread
// then exits, and a runtime that frees the thread's alternate stack at exit
// (AddressSanitizer's unmaps it) must find the stack it made, not the
// driver's. The driver's stack is left to the driver, which keeps it.
template <typename Probe>
int withOwnAlternateSignalStack(const Probe& probe) {
  stack_t own{};
  const bool known = ::sigaltstack(nullptr, &own) == 0;
  const int answer = probe();
  stack_t now{};
  if (known && ::sigaltstack(nullptr, &now) == 0 &&
      (now.ss_sp != own.ss_sp || now.ss_flags != own.ss_flags)) {
    own.ss_flags &= SS_DISABLE;  // SS_ONSTACK is a report, not a setting
    (void)::sigaltstack(&own, nullptr);
  }
  return answer;
}

// The hooks object whose first discovery this thread runs: a backend probe
// that asks its own probes again must not wait for itself.
thread_local const AcceleratorHooks* t_discovering = nullptr;

}  // namespace

// Read at each first discovery (no function-local static: a fork child must
// not find its guard in progress).
double discoveryLimitSeconds() noexcept {
  const char* text = std::getenv("ACCEL_DISCOVERY_TIMEOUT");
  if (text == nullptr || *text == '\0') return kDefaultDiscoveryLimitSeconds;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(value) || value <= 0)
    return kDefaultDiscoveryLimitSeconds;
  return value > kMaxDiscoveryLimitSeconds ? kMaxDiscoveryLimitSeconds : value;
}

int AcceleratorHooks::callProbe(Probe probe) const noexcept {
  try {
    if (probe == Probe::Available) return isAvailableImpl() ? 1 : 0;
    int count = deviceCountImpl();
    count = count < 0 ? 0 : (count > kMaxDevicesPerType ? kMaxDevicesPerType : count);
    // Written only when it changes: every thread's deviceCount() comes here,
    // and a store on each call would bounce the line between their caches.
    if (last_device_count_.load(std::memory_order_relaxed) != count)
      last_device_count_.store(count, std::memory_order_relaxed);
    return count;
  } catch (...) {
    return 0;  // a probe never throws: its benign answer
  }
}

bool AcceleratorHooks::isAvailable() const noexcept {
  if (discovery_.load(std::memory_order_acquire) != Discovery::Done) [[unlikely]]
    return discoverSlow(Probe::Available) != 0;
  return callProbe(Probe::Available) != 0;
}

int AcceleratorHooks::deviceCount() const noexcept {
  if (discovery_.load(std::memory_order_acquire) != Discovery::Done) [[unlikely]]
    return discoverSlow(Probe::Count);
  return callProbe(Probe::Count);
}

int AcceleratorHooks::discoverSlow(Probe probe) const noexcept {
  if (discovery_.load(std::memory_order_acquire) == Discovery::Forked) return 0;
  if (t_discovering == this) return callProbe(probe);
  // The first discovery's probe. One that only asked for availability counts
  // the devices too (the driver is loaded by then), so that a fork's
  // stand-in reports the count (lastDeviceCount) whichever probe came first.
  const auto first_probe = [this, probe] {
    const int answer = callProbe(probe);
    if (probe == Probe::Available && answer != 0) (void)callProbe(Probe::Count);
    return answer;
  };
  if (discovery_.load(std::memory_order_acquire) == Discovery::NotStarted) {
    // What the run needs is made before this caller claims the discovery, and
    // discovery_mutex_ is taken only after the claim: the mutex is held only
    // while the state already says Running, so a fork child that inherits it
    // locked is poisoned and never takes it.
    std::shared_ptr<detail::DiscoveryRun> fresh;
    try {
      fresh = std::make_shared<detail::DiscoveryRun>();
    } catch (...) {
      // No memory for a watchdog: discover on this thread, unbounded, as
      // before the bound existed, and count the backend discovered after.
      // A fork during this probe leaves the child unpoisoned: without memory
      // nothing better can be done (the fork's stand-ins need memory too).
      const int answer = first_probe();
      Discovery expected = Discovery::NotStarted;
      discovery_.compare_exchange_strong(expected, Discovery::Done,
                                         std::memory_order_acq_rel);
      return answer;
    }
    fresh->probe = static_cast<std::uint8_t>(probe);
    fresh->limit_s = discoveryLimitSeconds();
    fresh->deadline = deadlineAfter(fresh->limit_s);
    fresh->process = ::getpid();
    Discovery expected = Discovery::NotStarted;
    // Running before the thread exists: a fork from now on poisons the
    // child, which must not meet the driver half-loaded. One caller wins.
    if (discovery_.compare_exchange_strong(expected, Discovery::Running,
                                           std::memory_order_acq_rel)) {
      {
        std::lock_guard<std::mutex> lock(discovery_mutex_);
        discovery_run_ = fresh;
      }
      // Publishes the answer: Done first (a waiter that sees the answer sees
      // Done), then `finished`, after which nothing touches `this`: the
      // destructor waits for `finished` (~AcceleratorHooks below).
      const auto publish = [this, fresh](int answer) {
        discovery_.store(Discovery::Done, std::memory_order_release);
        {
          std::lock_guard<std::mutex> run_lock(fresh->mutex);
          fresh->answer = answer;
          fresh->finished = true;
        }
        fresh->finished_cv.notify_all();
      };
      try {
        std::thread([this, first_probe, publish] {
          t_discovering = this;
          const int answer = withOwnAlternateSignalStack(first_probe);
          publish(answer);
        }).detach();
      } catch (...) {
        // No thread: discover on this one, unbounded. Other callers wait for
        // the published run within the bound, and discoveryProblem() says
        // why past it, as with a watchdog.
        const AcceleratorHooks* const outer = t_discovering;
        t_discovering = this;
        const int answer = first_probe();
        t_discovering = outer;
        publish(answer);
        return answer;
      }
    }
  }
  // Wait for the first discovery, whoever started it.
  std::shared_ptr<detail::DiscoveryRun> run;
  std::chrono::steady_clock::time_point unpublished_deadline{};
  for (;;) {
    const Discovery state = discovery_.load(std::memory_order_acquire);
    if (state == Discovery::Forked) return 0;
    if (state == Discovery::Done) return callProbe(probe);
    {
      std::lock_guard<std::mutex> lock(discovery_mutex_);
      run = discovery_run_;
    }
    if (run != nullptr) break;
    // The caller that claimed the discovery is between its claim and
    // publishing the run (a lock and an assignment), or, in a fork child of
    // a process that was there, will never publish it: wait no longer than
    // the limit for it either.
    if (unpublished_deadline == std::chrono::steady_clock::time_point{}) {
      unpublished_deadline = deadlineAfter(discoveryLimitSeconds());
    } else if (std::chrono::steady_clock::now() >= unpublished_deadline) {
      return 0;
    }
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> run_lock(run->mutex);
  if (!run->finished_cv.wait_until(run_lock, run->deadline,
                                   [&] { return run->finished; }))
    return 0;  // not within the limit: no devices, discoveryProblem() says why
  if (run->probe == static_cast<std::uint8_t>(probe)) return run->answer;
  run_lock.unlock();
  return callProbe(probe);  // the driver is loaded now: ask it directly
}

// A hooks object destroyed while its first discovery still runs waits for
// the backend's probe to return: the watchdog thread calls it on this object
// and then stores its answer here. Only the base class's part is kept alive
// this way (a derived class's members are gone by now), so a backend whose
// probes use members of its own must not be destroyed during its first
// discovery; the process table never destroys the hooks it holds. A fork
// child destroying its copy of the object waits for nothing: the thread is
// the parent's.
AcceleratorHooks::~AcceleratorHooks() {
  if (discovery_.load(std::memory_order_acquire) != Discovery::Running) return;
  std::shared_ptr<detail::DiscoveryRun> run;
  {
    std::lock_guard<std::mutex> lock(discovery_mutex_);
    run = discovery_run_;
  }
  // In a fork child of the process that ran it, no thread will finish it,
  // and none touches this copy of the object.
  if (run == nullptr || run->process != ::getpid()) return;
  std::unique_lock<std::mutex> run_lock(run->mutex);
  run->finished_cv.wait(run_lock, [&] { return run->finished; });
}

std::string AcceleratorHooks::discoveryProblem() const {
  const Discovery state = discovery_.load(std::memory_order_acquire);
  if (state == Discovery::Forked) {
    return detail::concat("'", name(),
                          "' was discovered or initialised before fork(): this child "
                          "process does not ask it");
  }
  if (state != Discovery::Running) return {};
  std::shared_ptr<detail::DiscoveryRun> run;
  {
    std::lock_guard<std::mutex> lock(discovery_mutex_);
    run = discovery_run_;
  }
  if (run == nullptr) return {};
  std::lock_guard<std::mutex> run_lock(run->mutex);
  if (run->finished || std::chrono::steady_clock::now() < run->deadline) return {};
  return detail::concat(
      "the first discovery of '", name(), "' devices did not finish within ",
      run->limit_s,
      " s (ACCEL_DISCOVERY_TIMEOUT): its driver hangs while loading or listing devices; "
      "until it finishes the backend reports no devices. Check the driver install (the "
      "library it loads, its ICD vendors directory), or raise ACCEL_DISCOVERY_TIMEOUT "
      "for a driver that is only slow");
}

void AcceleratorHooks::requireDiscovered(HookId hook) const {
  if (discovery_.load(std::memory_order_acquire) == Discovery::Done) [[likely]]
    return;
  if (t_discovering == this)
    return;             // initialising from inside a probe: its own business
  (void)deviceCount();  // the first discovery, bounded
  if (discovery_.load(std::memory_order_acquire) != Discovery::Running) return;
  std::string problem = discoveryProblem();
  // Empty only while the discovery's run is not published yet (its starter
  // between claim and publication, or a fork child that will never see it).
  if (problem.empty())
    problem =
        detail::concat("the first discovery of '", name(), "' devices has not finished");
  throw NotAvailable(
      detail::concat(hookInfo(hook).name, "(): ", problem,
                     ". Initialising it would wait for that discovery without bound"));
}

bool AcceleratorHooks::discoverForSettling() const noexcept {
  if (t_discovering == this) return true;  // a probe asking which groups it has
  if (discovery_.load(std::memory_order_acquire) != Discovery::Done) (void)deviceCount();
  return discovery_.load(std::memory_order_acquire) == Discovery::Done;
}

void AcceleratorHooks::refuseAfterFork(detail::ForkKey) noexcept {
  init_state_.store(InitState::Forked, std::memory_order_release);
  discovery_.store(Discovery::Forked, std::memory_order_release);
  served_generators_ = nullptr;
}

}  // namespace accel
