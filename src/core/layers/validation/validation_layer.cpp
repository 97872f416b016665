#include "layers/validation/validation_layer.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <new>

#include "accel/error.h"
#include "accel/hooks.h"
#include "layers/hook_layer.h"
#include "layers/validation/validation_report.h"

namespace accel::detail {

namespace {

std::uintptr_t address(const void* ptr) noexcept {
  return reinterpret_cast<std::uintptr_t>(ptr);
}

// Hooks that wait for the device: refused while a capture is running,
// which they would invalidate (and could never finish inside a graph).
bool synchronises(HookId hook) noexcept {
  return hook == HookId::deviceSynchronize || hook == HookId::synchronizeStream ||
         hook == HookId::synchronizeEvent;
}

}  // namespace

void ValidationLayer::setQuarantineLimits(QuarantineLimits limits) noexcept {
  memory_.setLimits(limits);
  quarantine_holds_.store(limits.blocks != 0 && limits.bytes != 0,
                          std::memory_order_relaxed);
}

// ---- the rules ----

void ValidationLayer::checkMemory(const HookCall& call, const void* ptr,
                                  std::size_t bytes, std::string_view which,
                                  std::vector<Violation>& found) {
  if (ptr == nullptr) return;
  const std::uintptr_t begin = address(ptr);
  BiasedMutex::Guard lock(memory_.booksLock());
  if (const TrackedBlock* old = memory_.freedBlock(begin)) {
    found.push_back({concat("use after free: ", which, " lies in a block of ", old->bytes,
                            " bytes at ", hexAddress(old->base), " of '",
                            deviceTypeName(old->type), "' that was freed"),
                     old->made, old->freed});
    return;
  }
  const TrackedBlock* block = memory_.live(begin);
  if (block == nullptr) return;  // not made through the hooks while the layer was on
  if (block->type != call.type) {
    found.push_back({concat(which, " is memory of '", deviceTypeName(block->type),
                            "', not of '", deviceTypeName(call.type), "'"),
                     block->made, nullptr});
    return;
  }
  const std::uintptr_t end = block->base + block->bytes;
  if (bytes > end - begin) {
    found.push_back({concat(which, " range [", hexAddress(begin), ", +", bytes,
                            ") runs past the end of its block of ", block->bytes,
                            " bytes at ", hexAddress(block->base)),
                     block->made, nullptr});
  }
}

void ValidationLayer::checkStream(const HookCall& call,
                                  std::vector<Violation>& found) const {
  if (call.stream < 0) return;
  auto known = streams_.find({call.type, static_cast<std::uint64_t>(call.stream)});
  if (known == streams_.end() || known->second.contains(call.device)) return;
  found.push_back(
      {concat("stream #", call.stream, " was made on device ", *known->second.begin(),
              " of '", deviceTypeName(call.type), "', not on device ", call.device),
       nullptr, nullptr});
}

void ValidationLayer::checkEvent(const HookCall& call, std::uint64_t event,
                                 bool must_be_recorded,
                                 std::vector<Violation>& found) const {
  if (event == 0) return;
  const Key key{call.type, event};
  if (auto destroyed = destroyed_events_.find(key);
      destroyed != destroyed_events_.end()) {
    found.push_back(
        {concat("event ", event, " was destroyed"), nullptr, destroyed->second.where});
    return;
  }
  auto known = events_.find(key);
  if (known == events_.end()) return;  // made before the layer was on
  const EventState& state = known->second;
  if (call.hook == HookId::recordEvent && call.device >= 0 &&
      state.device != call.device) {
    found.push_back(
        {concat("event ", event, " was made on device ", state.device,
                "; it cannot be recorded on a stream of device ", call.device),
         state.made, nullptr});
  }
  if (must_be_recorded && !state.recorded) {
    found.push_back({concat("event ", event,
                            " was never recorded: waiting on it or timing it waits for "
                            "nothing (",
                            hookInfo(HookId::recordEvent).name, " it on a stream first)"),
                     state.made, nullptr});
  }
  if (call.hook == HookId::queryEvent && state.recorded) {
    const Capture* capture = captureFor(call.type, state.stream_device);
    if (capture != nullptr && capture->stream == state.stream) {
      found.push_back({concat("event ", event, " was recorded on stream #", state.stream,
                              ", which graph ", capture->graph,
                              " is capturing: an event query on a capturing stream "
                              "invalidates the capture"),
                       state.made, nullptr});
    }
  }
}

const ValidationLayer::Capture* ValidationLayer::captureFor(DeviceType type,
                                                            int device) const noexcept {
  auto of_type = captures_.find(type);
  if (of_type == captures_.end()) return nullptr;
  const std::thread::id me = std::this_thread::get_id();
  for (const Capture& capture : of_type->second) {
    if (device >= 0 && capture.device != device) continue;
    if (capture.mode == CaptureMode::Relaxed) continue;
    if (capture.mode == CaptureMode::ThreadLocal && capture.thread != me) continue;
    return &capture;
  }
  return nullptr;
}

void ValidationLayer::checkCapture(const HookCall& call,
                                   std::vector<Violation>& found) const {
  if (captures_.empty()) return;
  int device = call.device;
  if (call.hook == HookId::synchronizeEvent) {
    auto known = events_.find({call.type, call.object});
    device = known != events_.end() ? known->second.device : -1;
  }
  if (synchronises(call.hook)) {
    if (const Capture* capture = captureFor(call.type, device)) {
      found.push_back({concat("a synchronising call while graph ", capture->graph,
                              " captures stream #", capture->stream, " of device ",
                              capture->device, " (it would invalidate the capture)"),
                       nullptr, nullptr});
    }
  } else if (call.hook == HookId::queryStream) {
    const Capture* capture = captureFor(call.type, call.device);
    if (capture != nullptr && capture->stream == call.stream) {
      found.push_back({concat("a query of stream #", call.stream, ", which graph ",
                              capture->graph, " is capturing"),
                       nullptr, nullptr});
    }
  }
}

namespace {

// Whether a rule reads the call: one with a stream, a pointer, an event, or
// one that synchronises. The others pass without taking the layer's lock.
bool checked(const HookCall& call) noexcept {
  if (call.stream >= 0) return true;
  switch (call.hook) {
    case HookId::copyHostToDevice:
    case HookId::copyDeviceToHost:
    case HookId::copyDeviceToDevice:
    case HookId::fillRandom:
    case HookId::getDeviceFromPtr:
    case HookId::isPinnedPtr:
    case HookId::recordEvent:
    case HookId::queryEvent:
    case HookId::blockStream:
    case HookId::synchronizeEvent:
    case HookId::elapsedTime:
    case HookId::deviceSynchronize:
      return true;
    default:
      return false;
  }
}

}  // namespace

void ValidationLayer::before(const HookCall& call) {
  if (!checked(call)) return;
  std::vector<Violation> found;
  int event_device = -1;  // for a report of an event hook, which names no device
  {
    std::lock_guard<std::mutex> lock(mutex_);
    checkStream(call, found);
    switch (call.hook) {
      case HookId::copyHostToDevice:
        checkMemory(call, call.ptr, call.bytes, "dst", found);
        checkMemory(call, call.ptr2, call.bytes, "src", found);
        break;
      case HookId::copyDeviceToHost:
        checkMemory(call, call.ptr2, call.bytes, "src", found);
        checkMemory(call, call.ptr, call.bytes, "dst", found);
        break;
      case HookId::copyDeviceToDevice:
        checkMemory(call, call.ptr2, call.bytes, "src", found);
        checkMemory(call, call.ptr, call.bytes, "dst", found);
        break;
      case HookId::fillRandom:
        checkMemory(call, call.ptr, 1, "data", found);
        if (call.device2 >= 0 && call.device >= 0 && call.device2 != call.device) {
          found.push_back({concat("the generator is device ", call.device2,
                                  "'s; the stream is of device ", call.device),
                           nullptr, nullptr});
        }
        break;
      case HookId::getDeviceFromPtr:
      case HookId::isPinnedPtr:
        checkMemory(call, call.ptr, 1, "ptr", found);
        break;
      case HookId::recordEvent:
      case HookId::queryEvent:
        checkEvent(call, call.object, false, found);
        break;
      case HookId::blockStream:
      case HookId::synchronizeEvent:
        checkEvent(call, call.object, true, found);
        break;
      case HookId::elapsedTime:
        checkEvent(call, call.object, true, found);
        checkEvent(call, call.object2, true, found);
        break;
      default:
        break;
    }
    checkCapture(call, found);
    if (!found.empty() && call.device < 0 && call.object != 0 &&
        hookInfo(call.hook).group == HookGroup::Events) {
      if (auto made = events_.find({call.type, call.object}); made != events_.end()) {
        event_device = made->second.device;
      } else if (auto gone = destroyed_events_.find({call.type, call.object});
                 gone != destroyed_events_.end()) {
        event_device = gone->second.device;
      }
    }
  }
  if (found.empty()) [[likely]]
    return;
  const HookInfo& info = hookInfo(call.hook);
  HookCall described = call;
  if (event_device >= 0) described.device = event_device;
  report(describeCall(described), found,
         !info.probe && call.hook != HookId::destroyEvent);
}

void ValidationLayer::after(const HookCall& call, bool failed) noexcept {
  if (failed) return;
  try {
    switch (call.hook) {
      case HookId::createEvent: {
        CapturedStack made = recordedStack();
        std::lock_guard<std::mutex> lock(mutex_);
        const Key key{call.type, call.result};
        destroyed_events_.erase(key);  // an id may be handed out again
        events_[key] = EventState{call.device, false, -1, -1, std::move(made)};
        break;
      }
      case HookId::destroyEvent: {
        if (call.object == 0) break;
        CapturedStack where = recordedStack();
        std::lock_guard<std::mutex> lock(mutex_);
        const Key key{call.type, call.object};
        if (auto known = events_.find(key); known != events_.end()) {
          destroyed_events_[key] = DestroyedEvent{known->second.device, std::move(where)};
          events_.erase(known);
        }
        break;
      }
      case HookId::recordEvent: {
        std::lock_guard<std::mutex> lock(mutex_);
        auto known = events_.find({call.type, call.object});
        if (known != events_.end()) {
          known->second.recorded = true;
          known->second.stream_device = call.device;
          known->second.stream = call.stream;
        }
        break;
      }
      case HookId::getNewStream: {
        std::lock_guard<std::mutex> lock(mutex_);
        streams_[{call.type, call.result}].insert(call.device);
        break;
      }
      case HookId::graphCreate: {
        CapturedStack made = recordedStack();
        std::lock_guard<std::mutex> lock(mutex_);
        graphs_[{call.type, call.result}] = std::move(made);
        break;
      }
      case HookId::graphDestroy: {
        std::lock_guard<std::mutex> lock(mutex_);
        graphs_.erase({call.type, call.object});
        break;
      }
      case HookId::graphCaptureBegin: {
        // The capture is of this thread's current stream of its current device.
        const DeviceIndex device = call.inner->getCurrentDevice();
        const Stream stream = call.inner->getCurrentStream(device);
        std::lock_guard<std::mutex> lock(mutex_);
        captures_[call.type].push_back(Capture{call.object, device, stream.id,
                                               std::this_thread::get_id(),
                                               call.capture_mode});
        captures_running_.fetch_add(1, std::memory_order_release);
        break;
      }
      case HookId::graphCaptureEnd: {
        std::lock_guard<std::mutex> lock(mutex_);
        auto of_type = captures_.find(call.type);
        if (of_type == captures_.end()) break;
        const std::size_t ended = std::erase_if(
            of_type->second, [&](const Capture& c) { return c.graph == call.object; });
        captures_running_.fetch_sub(static_cast<int>(ended), std::memory_order_release);
        if (of_type->second.empty()) captures_.erase(of_type);
        break;
      }
      default:
        break;
    }
  } catch (...) {
    // No memory to remember the object: the layer checks less, never fails the call.
  }
}

// ---- memory ----

void ValidationLayer::allocatingWhileCapturing(DeviceType type, Device device,
                                               std::size_t bytes) {
  std::vector<Violation> found;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (captures_.empty()) return;
    auto of_type = captures_.find(type);
    const Capture* capture = nullptr;
    if (of_type != captures_.end()) capture = captureFor(type, -1);
    if (capture != nullptr && capture->device != device.index()) {
      found.push_back(
          {concat("an allocation on device ", int(device.index()), " while graph ",
                  capture->graph, " captures on device ", capture->device,
                  ": the memory comes from a pool foreign to the graph"),
           nullptr, nullptr});
    }
  }
  if (!found.empty())
    report(describeMemoryCall("allocate", type, device, nullptr, bytes), found, true);
}

void ValidationLayer::disposeRecord(BlockNote& note) noexcept {
  recordIn(note).~LiveRecord();
}

bool ValidationLayer::holdsFreeSlow(const void* ptr, const void* token,
                                    LiveRecord& record, bool quarantine) noexcept {
  // Where it was freed matters only for a free the quarantine holds.
  CapturedStack where = quarantine ? recordedStack() : nullptr;
  TrackedMemory::LetGo let_go;
  TrackedBlock first_free;
  const TrackedMemory::Free free =
      memory_.hold(record, std::move(where), token, let_go, first_free);
  for (std::size_t i = 0; i < let_go.count; ++i) releaseHeldFree(let_go.tokens[i]);
  switch (free) {
    case TrackedMemory::Free::Held:
      return true;
    case TrackedMemory::Free::HeldAlready:
      // The deleter ran twice for one allocation: the first free holds it.
      try {
        std::vector<Violation> found;
        found.push_back({"double free: the block was freed already", first_free.made,
                         first_free.freed});
        report(describeMemoryCall("free", first_free.type, first_free.device, ptr,
                                  first_free.bytes),
               found, /*may_throw=*/false);
      } catch (...) {
        // No memory for the report: the free is still held, not repeated.
      }
      return true;
    case TrackedMemory::Free::NotHeld:
    case TrackedMemory::Free::NotLive:
      break;
  }
  return false;
}

void ValidationLayer::giveBack(const std::vector<const void*>& tokens) noexcept {
  for (const void* token : tokens) releaseHeldFree(token);
}

void ValidationLayer::lockForFork() noexcept {
  mutex_.lock();
  memory_.lockForFork();
}

void ValidationLayer::unlockAfterFork(bool in_child) noexcept {
  memory_.unlockAfterFork(in_child);
  mutex_.unlock();
}

void ValidationLayer::activate() noexcept {
  BiasedMutex::Guard lock(memory_.booksLock());
  memory_.setActive(true);
}

std::vector<const void*> ValidationLayer::forgetAll() noexcept {
  std::vector<const void*> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    BiasedMutex::Guard books(memory_.booksLock());
    memory_.setActive(false);
    memory_.clear(released);
    events_.clear();
    destroyed_events_.clear();
    graphs_.clear();
    captures_.clear();
    captures_running_.store(0, std::memory_order_release);
    streams_.clear();
  }
  return released;
}

}  // namespace accel::detail
