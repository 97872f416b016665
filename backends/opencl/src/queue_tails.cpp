#include "queue_tails.h"

#include <unordered_map>

#include "loader.h"
#include "opencl_error.h"

namespace accel::opencl::detail {

void QueueTail::adopt(cl_event event, cl_event* keep) noexcept {
  const Loader& l = loader();
  if (keep != nullptr) {
    (void)l.clRetainEvent(event);
    *keep = event;
  }
  if (last_ != nullptr) (void)l.clReleaseEvent(last_);
  last_ = event;
}

void QueueTail::markUntracked() noexcept {
  std::lock_guard lock(mutex_);
  untracked_ = true;
}

void QueueTail::markExternal() noexcept {
  std::lock_guard lock(mutex_);
  external_ = true;
}

bool QueueTail::lastComplete(DeviceIndex device) {
  if (last_ == nullptr) return true;
  cl_int status = CL_COMPLETE;
  checkCl(loader().clGetEventInfo(last_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                  &status, nullptr),
          "clGetEventInfo", HookId::queryStream, device);
  if (status < 0) throwCl(status, "work on the queried stream", device);
  if (status != CL_COMPLETE) return false;
  dropLast();  // complete for good: later queries need not ask
  return true;
}

void QueueTail::dropLast() noexcept {
  if (last_ != nullptr) (void)loader().clReleaseEvent(last_);
  last_ = nullptr;
}

QueueTail& queueTail(cl_command_queue queue) {
  static std::mutex mutex;
  // Never destroyed: a stream (and its queue) may be used from static
  // destructors. Nodes are stable, so a tail's address outlives the lock.
  static auto* const tails = new std::unordered_map<cl_command_queue, QueueTail>();
  std::lock_guard lock(mutex);
  return (*tails)[queue];
}

}  // namespace accel::opencl::detail
