#include "stream_queue.h"

#include <exception>
#include <system_error>
#include <utility>

namespace accel::openreg::detail {
namespace {

constexpr std::chrono::microseconds kSpinTime{20};

// Polls `done` (yielding between polls) until it returns true or kSpinTime
// has passed; returns the last answer.
template <typename Done>
bool spinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int polls = 0;; ++polls) {
    if (done()) return true;
    // Reading the clock costs about as much as a poll: do it now and then.
    if (polls % 16 == 15 && std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
}

}  // namespace

StreamQueue::StreamQueue(Stream stream, int priority, UnitScheduler& units,
                         DeviceFaults& faults, std::chrono::microseconds latency) noexcept
    : stream_(stream),
      priority_(priority),
      units_(units),
      faults_(faults),
      latency_us_(latency.count()) {}

std::uint64_t StreamQueue::enqueue(Operation operation) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (capture_ != nullptr) {
    std::lock_guard<std::mutex> capture_lock(capture_->mutex);
    capture_->operations.push_back(std::move(operation));
    return 0;
  }
  if (!worker_started_) startWorkerLocked();
  queue_.push_back(std::move(operation));
  const std::uint64_t ticket = submitted_.load(std::memory_order_relaxed) + 1;
  submitted_.store(ticket, std::memory_order_release);
  lock.unlock();
  work_cv_.notify_one();
  return ticket;
}

void StreamQueue::record(const std::shared_ptr<Capture>& capture, Operation operation) {
  std::lock_guard<std::mutex> lock(mutex_);
  ACCEL_ADAPTER_CHECK(
      capture != nullptr && capture_ == capture, InvalidArgument, operation.name, " on ",
      StreamName{stream_},
      ": the capture ended while the work was being enqueued; end a capture "
      "after the work captured into it");
  std::lock_guard<std::mutex> capture_lock(capture_->mutex);
  capture_->operations.push_back(std::move(operation));
}

void StreamQueue::startWorkerLocked() {
  try {
    std::thread(&StreamQueue::workerLoop, this).detach();
  } catch (const std::system_error& e) {
    throw DeviceError(concat("openreg could not start the worker thread of ",
                             StreamName{stream_}, ": ", e.what(),
                             "; the process has run out of threads"));
  }
  worker_started_ = true;
}

void StreamQueue::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queue_.empty()) {
      lock.unlock();
      spinUntil([this] {
        return submitted_.load(std::memory_order_acquire) !=
               completed_.load(std::memory_order_relaxed);
      });
      lock.lock();
    }
    work_cv_.wait(lock, [this] { return !queue_.empty(); });
    // Enqueuers only push_back, which keeps references to existing elements
    // valid, so the front can be used without the lock.
    Operation& operation = queue_.front();
    lock.unlock();
    std::string error = execute(operation);
    // Drop the references before counting the operation complete, so that
    // whoever waits for it sees the memory already released.
    operation.buffers.clear();
    operation.body = nullptr;
    std::function<void()> then = std::move(operation.then);
    lock.lock();
    queue_.pop_front();
    // The error and the completion in one critical section, the error first:
    // a query that reports the error (under the lock) sees the operation
    // complete too, and one that reads the completion without the lock
    // (acquire) sees error_pending_.
    if (!error.empty() && pending_error_.empty()) {
      pending_error_ = std::move(error);
      error_pending_.store(true, std::memory_order_release);
    }
    completed_.store(completed_.load(std::memory_order_relaxed) + 1,
                     std::memory_order_release);
    done_cv_.notify_all();
    if (then) {
      lock.unlock();
      then();
      lock.lock();
    }
  }
}

std::string StreamQueue::execute(Operation& operation) {
  const std::int64_t latency = latency_us_.load(std::memory_order_relaxed);
  if (latency > 0) std::this_thread::sleep_for(std::chrono::microseconds(latency));
  const bool device_work = !operation.is_marker;
  if (device_work && faults_.lost()) return {};  // the work of a lost device is dropped
  if (device_work) units_.acquire(priority_);
  std::size_t opened = 0;
  std::string error;
  try {
    for (AllocationRef& buffer : operation.buffers) {
      buffer.owner()->grantAccess(buffer);
      ++opened;
    }
    if (operation.body) operation.body();
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an exception that is not a std::exception";
  }
  for (std::size_t i = 0; i < opened; ++i) {
    operation.buffers[i].owner()->revokeAccess(operation.buffers[i]);
  }
  if (device_work) units_.release();
  if (error.empty()) return {};
  return concat(operation.name, " failed on ", StreamName{stream_}, ": ", error);
}

void StreamQueue::waitFor(std::uint64_t ticket) {
  const auto done = [&] { return completed_.load(std::memory_order_acquire) >= ticket; };
  if (spinUntil(done)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, done);
}

void StreamQueue::failIfCapturing(std::string_view hook, bool device_wide) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capture_ == nullptr) return;
  if (device_wide && (capture_->mode == CaptureMode::Relaxed ||
                      (capture_->mode == CaptureMode::ThreadLocal &&
                       capture_->thread != std::this_thread::get_id()))) {
    return;
  }
  std::string message = concat(
      hook, "(): ", StreamName{stream_}, " is capturing graph ", capture_->graph,
      "; a capturing stream cannot be synchronised or queried, because its recorded work "
      "has not run (as on real devices). The capture is now invalid and ",
      hookInfo(HookId::graphCaptureEnd).name, " will fail; synchronise before ",
      hookInfo(HookId::graphCaptureBegin).name, " or after ",
      hookInfo(HookId::graphCaptureEnd).name);
  {
    std::lock_guard<std::mutex> capture_lock(capture_->mutex);
    if (capture_->invalidated.empty()) capture_->invalidated = message;
  }
  throw DeviceError(std::move(message));
}

std::uint64_t StreamQueue::lastSubmitted() {
  std::lock_guard<std::mutex> lock(mutex_);
  return submitted_.load(std::memory_order_relaxed);
}

void StreamQueue::synchronize(std::string_view hook) {
  failIfCapturing(hook, false);
  waitFor(lastSubmitted());
  faults_.checkNotLost(hook);
  throwPendingError(hook);
}

void StreamQueue::synchronizeForDevice(std::string_view hook) {
  failIfCapturing(hook, true);
  waitFor(lastSubmitted());
  throwPendingError(hook);
}

bool StreamQueue::query(std::string_view hook) {
  // Lock-free common case. completed_ is read before submitted_: completed
  // never exceeds submitted, so equal values mean that all work was complete
  // when completed_ was read. The worker sets error_pending_ before it counts
  // the failed operation complete (release, in the same critical section),
  // so a completion this read sees brings its error with it, and the error
  // is reported as the locked path would. Anything unusual takes the locked
  // path, which has the messages.
  if (!capturing_.load(std::memory_order_acquire)) {
    const std::uint64_t completed = completed_.load(std::memory_order_acquire);
    const std::uint64_t submitted = submitted_.load(std::memory_order_acquire);
    if (!error_pending_.load(std::memory_order_acquire)) {
      faults_.checkNotLost(hook);
      return completed == submitted;
    }
  }
  return queryLocked(hook);
}

bool StreamQueue::queryLocked(std::string_view hook) {
  failIfCapturing(hook, false);
  faults_.checkNotLost(hook);
  throwPendingError(hook);
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_.load(std::memory_order_relaxed) ==
         submitted_.load(std::memory_order_relaxed);
}

void StreamQueue::throwPendingError(std::string_view hook) {
  std::string error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_error_.empty()) return;
    error.swap(pending_error_);
    error_pending_.store(false, std::memory_order_relaxed);
  }
  throw DeviceError(concat(hook, "(): earlier work failed: ", error,
                           " (the error is reported once; the stream keeps working)"));
}

void StreamQueue::beginCapture(std::shared_ptr<Capture> capture) {
  std::lock_guard<std::mutex> lock(mutex_);
  ACCEL_ADAPTER_CHECK(
      capture_ == nullptr, InvalidArgument, hookInfo(HookId::graphCaptureBegin).name,
      "(): ", StreamName{stream_}, " is already capturing graph ", capture_->graph,
      "; end that capture first (", hookInfo(HookId::graphCaptureEnd).name, ")");
  capture_ = std::move(capture);
  capturing_.store(true, std::memory_order_release);
}

bool StreamQueue::endCapture(const std::shared_ptr<Capture>& capture) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capture_ != capture) return false;
  capture_.reset();
  capturing_.store(false, std::memory_order_release);
  return true;
}

std::shared_ptr<Capture> StreamQueue::capture() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capture_;
}

}  // namespace accel::openreg::detail
