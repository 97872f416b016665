// The last command the backend enqueued on each queue ("its tail"), so that
// queryStream costs one clGetEventInfo instead of a marker round trip
// through the runtime (enqueue, flush, wait for the runtime's worker, about
// 20 us on pocl).
//
// A queue is in order, so it is idle exactly when its last command is
// complete. That holds while every command on it is enqueued through
// QueueTail::enqueue. Two cases break it, and the query then asks the queue
// itself with a marker, as before:
//  - work the backend enqueues as several commands whose events it does not
//    keep (graph replays): markUntracked() after enqueuing it; a marker query
//    that finds the queue idle makes the tail exact again;
//  - a queue whose handle left the backend (accel::opencl::nativeQueue, a
//    wrapped external queue): markExternal(); anyone may enqueue on it, so
//    every query asks the queue.
//
// Thread-safety: thread-safe; one mutex per queue, held while a tracked
// command is enqueued, so that the kept event is the last one enqueued.
// Lifetime: a queue's tail lives as long as the process (queues are never
// released, streams.h).
#pragma once

#include <mutex>

#include "cl_api.h"
#include "types.h"

namespace accel::opencl::detail {

class QueueTail {
 public:
  QueueTail() = default;
  QueueTail(const QueueTail&) = delete;
  QueueTail& operator=(const QueueTail&) = delete;

  // Runs `enqueue(cl_event* out)`, one clEnqueue* call returning its status
  // and setting *out, with the tail held, and keeps the command's event as
  // the queue's last. With `keep`, the caller gets its own reference to the
  // event too. Returns the call's status (nothing kept on failure). Throws
  // what `enqueue` throws.
  template <typename Enqueue>
  cl_int enqueue(Enqueue&& enqueue, cl_event* keep = nullptr) {
    std::lock_guard lock(mutex_);
    cl_event event = nullptr;
    const cl_int status = enqueue(&event);
    if (status == CL_SUCCESS && event != nullptr) adopt(event, keep);
    return status;
  }

  // Commands were enqueued that the tail does not know of. Never throws.
  void markUntracked() noexcept;
  // The queue's handle was given out. Never throws.
  void markExternal() noexcept;

  // Whether every command enqueued on the queue so far is complete: from
  // its last command when the tail knows it, else `askQueue()` (a marker
  // query), called with the tail held; an idle answer from it makes the
  // tail exact again (unless the queue is external). Throws DeviceError
  // naming `device` when the last command failed or cannot be asked, and
  // what `askQueue` throws.
  template <typename AskQueue>
  bool idle(DeviceIndex device, AskQueue&& askQueue) {
    std::lock_guard lock(mutex_);
    if (!untracked_ && !external_) return lastComplete(device);
    const bool idle = askQueue();
    if (idle && !external_) {
      dropLast();
      untracked_ = false;
    }
    return idle;
  }

 private:
  void adopt(cl_event event, cl_event* keep) noexcept;
  bool lastComplete(DeviceIndex device);  // with the mutex held
  void dropLast() noexcept;               // with the mutex held

  std::mutex mutex_;
  cl_event last_ = nullptr;  // owned reference; null: nothing pending
  bool untracked_ = false;
  bool external_ = false;
};

// The tail of `queue`, created on first use. Never throws but bad_alloc.
QueueTail& queueTail(cl_command_queue queue);

}  // namespace accel::opencl::detail
