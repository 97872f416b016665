#include "double_state.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace cuda_double {
namespace {

bool overlaps(const Range& a, const Range& b) {
  return a.begin < b.begin + b.bytes && b.begin < a.begin + a.bytes;
}

bool touches(const std::vector<Range>& memory, const Range& range) {
  for (const Range& used : memory) {
    if (overlaps(used, range)) return true;
  }
  return false;
}

}  // namespace

ThreadState& thread() {
  thread_local ThreadState state;
  return state;
}

State& State::get() {
  static State* const state = new State();  // never destroyed: workers outlive main
  return *state;
}

State::State() {
  if (const char* count = std::getenv("CUDA_DOUBLE_DEVICES"); count != nullptr) {
    device_count = std::atoi(count);
  }
  if (const char* mode = std::getenv("CUDA_DOUBLE_PAGEABLE_ASYNC"); mode != nullptr) {
    pageable_async = std::string(mode) == "1";
  }
  if (const char* p2p = std::getenv("CUDA_DOUBLE_NO_P2P"); p2p != nullptr) {
    no_p2p = std::string(p2p) == "1";
  }
  peer_enabled.assign(static_cast<std::size_t>(device_count), 0);
  contexts.resize(static_cast<std::size_t>(device_count));
  for (int d = 0; d < device_count; ++d) contexts[d].device = d;
  used.assign(static_cast<std::size_t>(device_count), 0);
  legacy_streams.assign(static_cast<std::size_t>(device_count), nullptr);
}

void State::violation(std::string text) {
  ++violations;
  last_violation = std::move(text);
}

const Allocation* State::find(std::uintptr_t address, std::size_t bytes) const {
  // Contiguous mapped pages count as one range (expandable segments).
  const Allocation* first = nullptr;
  const std::uintptr_t end = address + std::max<std::size_t>(bytes, 1);
  for (std::uintptr_t at = address; at < end;) {
    auto found = memory.upper_bound(at);
    if (found == memory.begin()) return nullptr;
    --found;
    if (at >= found->first + found->second.bytes) return nullptr;
    if (first == nullptr) {
      first = &found->second;
    } else if (found->second.kind != MemoryKind::Mapped) {
      return nullptr;
    }
    at = found->first + found->second.bytes;
  }
  return first;
}

CUstream_st* State::newStream(int device, unsigned int flags, int priority, bool legacy) {
  // CUDA hands a destroyed stream's handle out again (handles are addresses
  // of the driver's objects); the double reuses the most recently destroyed
  // stream that has finished its work, with its worker, on any device.
  CUstream_st* stream = nullptr;
  for (auto it = destroyed.rbegin(); it != destroyed.rend(); ++it) {
    CUstream_st* old = *it;
    if (old->queue.empty() && old->enqueued == old->completed && !old->capture) {
      destroyed.erase(std::next(it).base());
      stream = old;
      break;
    }
  }
  if (stream != nullptr) {
    stream->device = device;
    stream->flags = flags;
    stream->priority = priority;
    stream->capture_seq = 0;
    streams.insert(stream);
    return stream;
  }
  stream = new CUstream_st();  // reused after cudaStreamDestroy, never freed
  stream->device = device;
  stream->flags = flags;
  stream->priority = priority;
  stream->legacy = legacy;
  streams.insert(stream);
  std::thread([this, stream] { work(stream); }).detach();
  return stream;
}

CUstream_st* State::legacy(int device) {
  CUstream_st*& stream = legacy_streams[static_cast<std::size_t>(device)];
  if (stream == nullptr) stream = newStream(device, 0, 0, /*legacy=*/true);
  return stream;
}

void State::work(CUstream_st* stream) {
  std::unique_lock lock(mutex);
  for (;;) {
    changed.wait(lock, [&] { return !stream->queue.empty(); });
    Item item = std::move(stream->queue.front());
    stream->queue.pop_front();
    if (item.wait_for) {
      stream->waiting_for_event = true;
      changed.wait(lock, [&] { return item.wait_for->done; });
      stream->waiting_for_event = false;
    }
    if (item.record) {
      item.record->done = true;
      item.record->at = std::chrono::steady_clock::now();
    }
    if (item.work.run) {
      bool valid = true;
      for (const Range& range : item.work.memory) {
        const Allocation* target = find(range.begin, range.bytes);
        if (target != nullptr && (target->access & (1u << item.work.device)) == 0) {
          // CUDA: Driver API, cuMemSetAccess: mapped memory is accessible
          // only to the devices given access.
          violation("work on cuda:" + std::to_string(stream->device) +
                    " touches mapped memory it was given no access to");
          valid = false;
        } else if (target != nullptr && item.work.kernel &&
                   target->kind == MemoryKind::Device &&
                   target->device != item.work.device &&
                   (peer_enabled[static_cast<std::size_t>(item.work.device)] &
                    (1u << target->device)) == 0) {
          // CUDA: Runtime API, cudaDeviceEnablePeerAccess: a kernel on one
          // device reaches another device's memory only once peer access
          // to it is enabled (copies go through unified addressing).
          violation("a kernel on cuda:" + std::to_string(stream->device) +
                    " touches cuda:" + std::to_string(target->device) +
                    "'s memory without peer access enabled");
          valid = false;
        } else if (target == nullptr) {
          // CUDA: Programming Guide, "Device Memory": kernels access device
          // memory that is allocated (or mapped, and made accessible) while
          // they run; on a GPU this is an illegal-address fault.
          violation("work on cuda:" + std::to_string(stream->device) +
                    " touches memory that is not allocated or mapped (0x" +
                    std::to_string(range.begin) + ", " + std::to_string(range.bytes) +
                    " bytes)");
          valid = false;
        }
      }
      if (valid) {
        stream->running = item.work.memory;
        lock.unlock();
        item.work.run();
        lock.lock();
        stream->running.clear();
      }
    }
    ++stream->completed;
    changed.notify_all();
  }
}

cudaError_t State::submit(CUstream_st* stream, Work work) {
  if (stream->capture) {
    Capture& capture = *stream->capture;
    if (capture.invalidated) return cudaErrorStreamCaptureInvalidated;
    capture.nodes.push_back(std::move(work));
    ++stream->capture_seq;
    return cudaSuccess;
  }
  Item item;
  item.work = std::move(work);
  stream->queue.push_back(std::move(item));
  ++stream->enqueued;
  changed.notify_all();
  return cudaSuccess;
}

void State::drain(std::unique_lock<std::mutex>& lock, CUstream_st* stream) {
  const std::uint64_t target = stream->enqueued;
  ++waiting;
  changed.wait(lock, [&] { return stream->completed >= target; });
  --waiting;
}

void State::drainDevice(std::unique_lock<std::mutex>& lock, int device) {
  std::vector<std::pair<CUstream_st*, std::uint64_t>> targets;
  for (CUstream_st* stream : streams) {
    if (device < 0 || stream->device == device)
      targets.emplace_back(stream, stream->enqueued);
  }
  ++waiting;
  changed.wait(lock, [&] {
    for (const auto& [stream, target] : targets) {
      if (stream->completed < target) return false;
    }
    return true;
  });
  --waiting;
}

void State::invalidate(Capture& capture, std::string why) {
  if (capture.invalidated) return;
  capture.invalidated = true;
  capture.why_invalidated = std::move(why);
}

cudaError_t State::unsafeCall(const char* call) {
  // CUDA: Runtime API, cudaThreadExchangeStreamCaptureMode: in Global mode a
  // thread is prohibited from potentially unsafe API calls when it has an
  // ongoing capture not begun in Relaxed mode, or another thread has a
  // capture begun in Global mode; in ThreadLocal mode only its own captures
  // count; in Relaxed mode it is not prohibited. Programming Guide, "CUDA
  // Graphs > Stream Capture > Prohibited and Unhandled Operations": the
  // prohibited call fails and invalidates the captures involved.
  const ThreadState& self = thread();
  if (self.mode == cudaStreamCaptureModeRelaxed) return cudaSuccess;
  const std::thread::id me = std::this_thread::get_id();
  bool prohibited = false;
  for (const std::shared_ptr<Capture>& capture : captures) {
    const bool own = capture->thread == me;
    if ((own && capture->mode != cudaStreamCaptureModeRelaxed) ||
        (!own && self.mode == cudaStreamCaptureModeGlobal &&
         capture->mode == cudaStreamCaptureModeGlobal)) {
      prohibited = true;
      invalidate(*capture,
                 std::string(call) + " during the capture (a potentially unsafe call)");
    }
  }
  return prohibited ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

bool State::inUse(const Range& range) const {
  for (const CUstream_st* stream : streams) {
    if (touches(stream->running, range)) return true;
    for (const Item& item : stream->queue) {
      if (touches(item.work.memory, range)) return true;
    }
  }
  return false;
}

bool State::capturing(int device) const {
  for (const std::shared_ptr<Capture>& capture : captures) {
    if (device < 0 || capture->device == device) return true;
  }
  return false;
}

}  // namespace cuda_double

extern "C" {

int cuda_double_violations(char* text, std::size_t capacity) {
  cuda_double::State& s = cuda_double::State::get();
  std::lock_guard lock(s.mutex);
  if (text != nullptr && capacity > 0) {
    const std::size_t n = std::min(capacity - 1, s.last_violation.size());
    s.last_violation.copy(text, n);
    text[n] = '\0';
  }
  return s.violations;
}

void cuda_double_reset_violations() {
  cuda_double::State& s = cuda_double::State::get();
  std::lock_guard lock(s.mutex);
  s.violations = 0;
  s.last_violation.clear();
}

int cuda_double_waiting_threads() {
  cuda_double::State& s = cuda_double::State::get();
  std::lock_guard lock(s.mutex);
  return s.waiting;
}

int cuda_double_active_captures() {
  cuda_double::State& s = cuda_double::State::get();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.captures.size());
}

}  // extern "C"
