#include "layers/trace/device_timing.h"

#include <cmath>
#include <utility>

namespace accel::trace::detail {
namespace {

std::uint64_t typeBit(DeviceType type) noexcept {
  return std::uint64_t{1} << (static_cast<unsigned>(type) & 63u);
}

// The layer clock's ticks (the ring's unit) in a device's millisecond, at
// the rate measured now (a reading of both clocks: taken once per work).
double ticksPerMs() noexcept {
  const double ns_per_tick = accel::detail::g_layer_clock.scale().ns_per_tick;
  return 1e6 / (ns_per_tick > 0.0 ? ns_per_tick : 1.0);
}

}  // namespace

EventId DeviceTiming::takeEvent(AcceleratorHooks& inner, DeviceIndex device) noexcept {
  {
    std::lock_guard lock(mutex_);
    if ((untimed_types_ & typeBit(inner.deviceType())) != 0) return kNoEvent;
    auto& pool = pool_[{inner.deviceType(), device}];
    owners_[{inner.deviceType(), device}] = &inner;
    if (!pool.empty()) {
      const EventId event = pool.back();
      pool.pop_back();
      return event;
    }
  }
  try {
    if (!inner.supports(HookGroup::Events)) throw NotSupported("no events group");
    return inner.createEvent(device, EventFlags{.enable_timing = true});
  } catch (...) {
    std::lock_guard lock(mutex_);
    untimed_types_ |= typeBit(inner.deviceType());
    return kNoEvent;
  }
}

void DeviceTiming::giveBack(AcceleratorHooks& inner, DeviceIndex device,
                            EventId event) noexcept {
  if (event == kNoEvent) return;
  try {
    std::lock_guard lock(mutex_);
    pool_[{inner.deviceType(), device}].push_back(event);
  } catch (...) {
    inner.destroyEvent(event);
  }
}

DeviceTiming::Started DeviceTiming::begin(AcceleratorHooks& inner,
                                          Stream stream) noexcept {
  const DeviceIndex device = stream.device.index();
  const EventId start = takeEvent(inner, device);
  if (start == kNoEvent) return {};
  try {
    inner.recordEvent(start, stream);
    return {start};
  } catch (...) {
    // A stream that cannot record now (capturing, say): this work goes host-timed.
    giveBack(inner, device, start);
    return {};
  }
}

void DeviceTiming::finish(AcceleratorHooks& inner, Stream stream, Started started,
                          TraceEvent work, std::vector<TraceEvent>& ready) noexcept {
  const DeviceIndex device = stream.device.index();
  work.timing = WorkTiming::HostSide;
  if (started.start == kNoEvent) {
    ready.push_back(work);
    return;
  }
  const EventId end = takeEvent(inner, device);
  bool recorded = false;
  if (end != kNoEvent) {
    try {
      inner.recordEvent(end, stream);
      recorded = true;
    } catch (...) {
      giveBack(inner, device, end);
    }
  }
  if (!recorded) {
    giveBack(inner, device, started.start);
    ready.push_back(work);
    return;
  }
  std::vector<Pending> overflow;
  try {
    std::lock_guard lock(mutex_);
    pending_.push_back(Pending{&inner, stream, started.start, end, work});
    while (pending_.size() > kMaxPending) {
      overflow.push_back(pending_.front());
      pending_.pop_front();
    }
  } catch (...) {
    ready.push_back(work);
    return;
  }
  for (Pending& late : overflow) {
    ready.push_back(late.work);  // host-timed: its events did not complete in time
    late.inner->destroyEvent(late.start);
    late.inner->destroyEvent(late.end);
  }
  // Reads what finished already, oldest first, without waiting.
  resolvePending(false, false, ready);
}

bool DeviceTiming::read(Pending& pending, bool wait) noexcept {
  AcceleratorHooks& inner = *pending.inner;
  try {
    if (wait) {
      inner.synchronizeEvent(pending.end);
    } else if (!inner.queryEvent(pending.end)) {
      return false;
    }
  } catch (...) {
    return false;
  }
  const StreamKey key{inner.deviceType(), pending.stream.device.index(),
                      pending.stream.id};
  Reference reference;
  bool is_reference = false;
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = references_.try_emplace(key, Reference{});
    if (inserted) {
      it->second = Reference{pending.start, pending.work.begin};
      is_reference = true;
    }
    reference = it->second;
  }
  try {
    const double from_reference =
        is_reference ? 0.0 : inner.elapsedTime(reference.event, pending.start);
    const double duration = inner.elapsedTime(pending.start, pending.end);
    const double ticks_per_ms = ticksPerMs();
    pending.work.begin =
        reference.host_ticks + std::llround(from_reference * ticks_per_ms);
    pending.work.end = pending.work.begin + std::llround(duration * ticks_per_ms);
    pending.work.timing = WorkTiming::Events;
  } catch (...) {
    pending.work.timing = WorkTiming::HostSide;
  }
  const DeviceIndex device = pending.stream.device.index();
  if (!is_reference) giveBack(inner, device, pending.start);
  giveBack(inner, device, pending.end);
  return true;
}

void DeviceTiming::resolvePending(bool wait, bool flush_rest,
                                  std::vector<TraceEvent>& ready) noexcept {
  while (true) {
    Pending next;
    {
      std::lock_guard lock(mutex_);
      if (pending_.empty()) return;
      next = pending_.front();
      pending_.pop_front();
    }
    if (read(next, wait)) {
      ready.push_back(next.work);
      continue;
    }
    if (flush_rest) {
      ready.push_back(next.work);
      next.inner->destroyEvent(next.start);
      next.inner->destroyEvent(next.end);
      continue;
    }
    // Not done yet: back to the front, in order, for a later look.
    try {
      std::lock_guard lock(mutex_);
      pending_.push_front(next);
    } catch (...) {
      ready.push_back(next.work);
    }
    return;
  }
}

void DeviceTiming::appendPendingHostTimed(std::vector<TraceEvent>& out) noexcept {
  try {
    std::lock_guard lock(mutex_);
    for (const Pending& pending : pending_) out.push_back(pending.work);
  } catch (...) {
  }
}

void DeviceTiming::release() noexcept {
  std::lock_guard lock(mutex_);
  for (auto& [key, events] : pool_) {
    AcceleratorHooks* inner = owners_[key];
    for (EventId event : events) inner->destroyEvent(event);
  }
  pool_.clear();
  for (auto& [key, reference] : references_) {
    AcceleratorHooks* inner = owners_[{key.type, key.device}];
    if (inner != nullptr) inner->destroyEvent(reference.event);
  }
  references_.clear();
  untimed_types_ = 0;
}

}  // namespace accel::trace::detail
