// StreamQueue: one simulated stream, a FIFO of operations run in order by a
// worker thread of its own; and Capture, the graph capture a stream may be
// recording into.
//
// enqueue() appends an operation and wakes the worker (started on the first
// enqueue, so unused streams cost no thread). The worker takes the front
// operation, waits the injected latency, takes an execution unit (device work
// only), opens the operation's blocks, runs the body, closes the blocks,
// releases its references and only then counts it completed, so a caller that
// waited for it sees the memory accounting already updated. An exception
// thrown by a body is kept as the stream's pending error, published with the
// operation's completion, and reported by the next synchronisation or query,
// once.
//
// While a capture is attached, enqueue() records operations into the capture
// instead of running them; synchronising or querying the stream is then an
// error that also invalidates the capture (graphCaptureEnd reports it), as
// CUDA does.
//
// Hand-offs spin briefly before they sleep: a worker that has just finished
// polls for new work, and a caller waiting for a ticket polls for completion,
// for up to kSpinTime each. Back-to-back launches and short synchronisations
// then cost a few hundred nanoseconds instead of a futex sleep and wake-up
// (tens of microseconds on a busy machine), at the price of a short burst of
// polling (with yields) after each operation.
//
// Workers are detached and never joined: the queue is never destroyed, and a
// worker blocked on its condition variable does not delay process exit.
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "accel/adapter/captured_draws.h"
#include "device_faults.h"
#include "operation.h"
#include "types.h"
#include "unit_scheduler.h"

namespace accel::openreg::detail {

// A capture in progress: shared by the graph and the stream it records.
struct Capture {
  GraphId graph = kNoGraph;
  CaptureMode mode = CaptureMode::Global;
  std::thread::id thread;  // the thread that began it

  // The captured fills' draws (accel/adapter/captured_draws.h): each replay
  // writes their positions first, so it draws new numbers. The graph keeps
  // it after the capture ends.
  const std::shared_ptr<adapter::CapturedDraws> draws =
      std::make_shared<adapter::CapturedDraws>();

  std::mutex mutex;  // guards the fields below
  std::vector<Operation> operations;
  std::string invalidated;  // why the capture is void; empty while valid
};

class StreamQueue {
 public:
  StreamQueue(Stream stream, int priority, UnitScheduler& units, DeviceFaults& faults,
              std::chrono::microseconds latency) noexcept;
  StreamQueue(const StreamQueue&) = delete;
  StreamQueue& operator=(const StreamQueue&) = delete;

  [[nodiscard]] Stream stream() const noexcept { return stream_; }
  [[nodiscard]] int priority() const noexcept { return priority_; }

  // Appends `operation`, or records it into the attached capture. Returns the
  // ticket to wait for (0 when captured). Throws DeviceError if no worker
  // thread can be started.
  std::uint64_t enqueue(Operation operation);
  // Records `operation` into `capture`, which must still be attached: throws
  // InvalidArgument when the capture ended while the operation was being
  // made (it was made for the capture and must not run now).
  void record(const std::shared_ptr<Capture>& capture, Operation operation);

  // Waits until the operations up to `ticket` have completed. Does not check
  // captures or errors: callers do.
  void waitFor(std::uint64_t ticket);

  // Waits for everything enqueued so far, then throws the pending error as
  // DeviceError naming `hook`. Throws DeviceError (and invalidates the
  // capture) if the stream is capturing.
  void synchronize(std::string_view hook);
  // Like synchronize, for deviceSynchronize: a capture in Relaxed mode, or in
  // ThreadLocal mode begun by another thread, is left alone (and its
  // recorded work is not waited for, since it does not run).
  void synchronizeForDevice(std::string_view hook);
  // True when everything enqueued has completed. Throws like synchronize.
  // Takes no lock when the stream is not capturing and has no pending error.
  [[nodiscard]] bool query(std::string_view hook);
  // Throws DeviceError (and invalidates the capture) if the stream is
  // capturing: for synchronous operations, which would wait for captured work.
  void checkNotCapturing(std::string_view hook) { failIfCapturing(hook, false); }
  // Throws the pending error (once) as DeviceError naming `hook`, if any.
  void throwPendingError(std::string_view hook);

  void setLatency(std::chrono::microseconds latency) noexcept {
    latency_us_.store(latency.count(), std::memory_order_relaxed);
  }

  // Attaches `capture`. Throws InvalidArgument if a capture is attached.
  void beginCapture(std::shared_ptr<Capture> capture);
  // Detaches the capture (if it is `capture`) and returns whether it was.
  bool endCapture(const std::shared_ptr<Capture>& capture) noexcept;
  [[nodiscard]] std::shared_ptr<Capture> capture() const;
  // Whether a capture is attached, without the lock (a hint: confirm with
  // capture()). Never throws.
  [[nodiscard]] bool capturing() const noexcept {
    return capturing_.load(std::memory_order_acquire);
  }

 private:
  // Throws (invalidating the capture) when a capture forbids synchronising.
  void failIfCapturing(std::string_view hook, bool device_wide);
  // query() with the lock: captures and pending errors.
  [[nodiscard]] bool queryLocked(std::string_view hook);
  // The ticket of the last operation enqueued so far (0: none).
  [[nodiscard]] std::uint64_t lastSubmitted();
  void startWorkerLocked();
  void workerLoop();
  // Runs one operation on the worker; returns its error for the stream's
  // pending error (empty: it succeeded, or a lost device dropped it).
  [[nodiscard]] std::string execute(Operation& operation);

  const Stream stream_;
  const int priority_;
  UnitScheduler& units_;
  DeviceFaults& faults_;
  std::atomic<std::int64_t> latency_us_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<Operation> queue_;
  // Written under mutex_; atomic so that the worker and waiters can spin on
  // them without the lock before they sleep.
  std::atomic<std::uint64_t> submitted_{0};
  std::atomic<std::uint64_t> completed_{0};
  bool worker_started_ = false;
  std::string pending_error_;
  std::shared_ptr<Capture> capture_;
  // Mirrors of `!pending_error_.empty()` and `capture_ != nullptr`, written
  // under mutex_ with them, so that query() can answer its common case (no
  // capture, no error) without the lock: a caller polling query() in a loop
  // would otherwise take the mutex three times per call.
  std::atomic<bool> error_pending_{false};
  std::atomic<bool> capturing_{false};
};

}  // namespace accel::openreg::detail
