#include "copies.h"

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "device_table.h"

namespace accel::openreg::detail {
namespace {

// A validated copy: which device runs it and the blocks it opens.
struct CopyPlan {
  DeviceIndex home = 0;              // the device whose stream runs the copy
  std::optional<DeviceIndex> other;  // the second device of a cross-device copy
  std::vector<AllocationRef> buffers;
};

CopyPlan planCopy(const DeviceTable& devices, void* dst, const void* src,
                  std::size_t bytes, std::string_view what) {
  const std::optional<DeviceIndex> dst_device = devices.deviceOfAddress(dst);
  const std::optional<DeviceIndex> src_device = devices.deviceOfAddress(src);
  ACCEL_ADAPTER_CHECK(dst_device || src_device, InvalidArgument, what, ": neither dst (",
                      dst, ") nor src (", src,
                      ") is openreg device memory; copy host memory with "
                      "std::memcpy");
  ACCEL_ADAPTER_CHECK(dst != nullptr && src != nullptr, InvalidArgument, what,
                      ": null host pointer (dst ", dst, ", src ", src, ")");
  CopyPlan plan;
  if (dst_device) {
    plan.buffers.push_back(devices.resolveOn(devices.device(*dst_device, what), dst,
                                             bytes, concat(what, " (dst)")));
  }
  if (src_device) {
    plan.buffers.push_back(devices.resolveOn(devices.device(*src_device, what), src,
                                             bytes, concat(what, " (src)")));
  }
  plan.home = src_device ? *src_device : *dst_device;
  if (dst_device && src_device && *dst_device != *src_device) plan.other = *dst_device;
  return plan;
}

Operation copyOperation(CopyPlan&& plan, void* dst, const void* src, std::size_t bytes) {
  Operation operation;
  operation.name = "copy";
  operation.buffers = std::move(plan.buffers);
  // memmove: a device-to-device copy within one allocation may overlap.
  operation.body = [dst, src, bytes] { std::memmove(dst, src, bytes); };
  return operation;
}

}  // namespace

void Copies::now(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  CopyPlan plan = planCopy(devices_, dst, src, bytes, "copy");
  DeviceState& device = devices_.device(plan.home, "copy");
  StreamQueue& queue = devices_.currentQueue(plan.home, "copy");
  queue.checkNotCapturing("copy");
  if (plan.other) devices_.device(*plan.other, "copy").faults.checkNotLost("copy");
  device.faults.beginOperation("copy");
  const std::uint64_t ticket =
      queue.enqueue(copyOperation(std::move(plan), dst, src, bytes));
  ACCEL_ADAPTER_CHECK(
      ticket != 0, DeviceError, "copy(): ", StreamName{queue.stream()},
      " began capturing a graph while a synchronous copy was submitted to it; the "
      "copy was recorded into the graph and has not run");
  queue.waitFor(ticket);
  device.faults.checkNotLost("copy");
  queue.throwPendingError("copy");
}

void Copies::enqueue(void* dst, const void* src, std::size_t bytes, Stream stream,
                     std::string_view what, bool wait) {
  StreamQueue& queue = devices_.queue(stream, what);
  if (bytes == 0) return;
  CopyPlan plan = planCopy(devices_, dst, src, bytes, what);
  const DeviceIndex on = stream.device;
  ACCEL_ADAPTER_CHECK(
      on == plan.home || (plan.other && on == *plan.other), InvalidArgument, what,
      "(): ", StreamName{stream},
      " is on a device the copy does not involve; pass a stream of the device that "
      "holds dst or src");
  // A copy the caller waits for cannot be recorded into a graph instead.
  if (wait) queue.checkNotCapturing(what);
  const DeviceIndex second = on == plan.home ? plan.other.value_or(on) : plan.home;
  if (second != on) devices_.device(second, what).faults.checkNotLost(what);
  DeviceState& device = devices_.device(on, what);
  device.faults.beginOperation(what);
  const std::uint64_t ticket =
      queue.enqueue(copyOperation(std::move(plan), dst, src, bytes));
  if (!wait) return;
  ACCEL_ADAPTER_CHECK(ticket != 0, DeviceError, what, "(): ", StreamName{queue.stream()},
                      " began capturing a graph while a copy the caller waits for was "
                      "submitted to it; the copy was recorded into the graph and has "
                      "not run");
  queue.waitFor(ticket);
  device.faults.checkNotLost(what);
  queue.throwPendingError(what);
}

}  // namespace accel::openreg::detail
