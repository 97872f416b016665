#include "accel/kit/thread_current.h"

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "accel/error.h"

namespace accel::kit {

namespace tls {
constinit thread_local CurrentDeviceEntry t_last_current_device
    __attribute__((tls_model("initial-exec"))) = {};

struct StreamEntry {
  std::uint32_t uid;
  std::uint16_t slot;
  DeviceIndex device;
  StreamId id;
};

// A thread's current streams: few entries (one per object and device the
// thread set a stream on), so a linear scan beats any map.
struct ThreadStreams {
  std::vector<StreamEntry> entries;
};

constinit thread_local ThreadStreams* t_streams
    __attribute__((tls_model("initial-exec"))) = nullptr;
}  // namespace tls

namespace {

using tls::CurrentDeviceEntry;
using tls::t_last_current_device;

// One entry per live object, indexed by its slot; `uid` tells the object that
// owns the entry now from an earlier holder of the slot, whose values must not
// leak into it. t_last_current_device caches the entry used last, and is kept
// equal to it on every write.
constinit thread_local CurrentDeviceEntry t_current_devices[ThreadCurrent::kMaxLive] = {};

using tls::StreamEntry;
using tls::t_streams;
using tls::ThreadStreams;

constinit thread_local bool t_streams_released = false;

// Frees the thread's block when the thread exits. Constructed on the first
// stream setting of a thread, so threads that never set one pay nothing.
struct StreamsReleaser {
  ~StreamsReleaser() {
    delete t_streams;
    t_streams = nullptr;
    t_streams_released = true;
  }
};

struct Slots {
  std::mutex mutex;
  std::array<std::atomic<std::uint32_t>, ThreadCurrent::kMaxLive> live_uid{};  // 0: free
  std::uint32_t next_uid = 1;
};

Slots& slots() noexcept {
  static Slots* s = new Slots();  // never destroyed: reached during static destruction
  return *s;
}

bool isLive(const StreamEntry& entry) noexcept {
  return slots().live_uid[entry.slot].load(std::memory_order_relaxed) == entry.uid;
}

ThreadStreams& threadStreams() {
  if (t_streams == nullptr) {
    t_streams = new ThreadStreams();
    // After the releaser ran (code in a later thread_local destructor, or in
    // a static destructor on the main thread) the block is never freed: see
    // the header.
    if (!t_streams_released) {
      thread_local StreamsReleaser releaser;
      (void)releaser;
    }
  }
  return *t_streams;
}

}  // namespace

ThreadCurrent::ThreadCurrent() {
  Slots& s = slots();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (std::size_t i = 0; i < s.live_uid.size(); ++i) {
    if (s.live_uid[i].load(std::memory_order_relaxed) == 0) {
      uid_ = s.next_uid++;
      if (s.next_uid == 0) s.next_uid = 1;  // 0 marks a free slot
      slot_ = static_cast<std::uint16_t>(i);
      s.live_uid[i].store(uid_, std::memory_order_relaxed);
      return;
    }
  }
  throw InvalidArgument(detail::concat(
      "accel::kit::ThreadCurrent: ", kMaxLive,
      " objects are alive already (one per hooks object); destroy hooks objects a "
      "test no longer needs before creating more"));
}

ThreadCurrent::~ThreadCurrent() {
  Slots& s = slots();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.live_uid[slot_].store(0, std::memory_order_relaxed);
}

DeviceIndex ThreadCurrent::deviceFromTable() const noexcept {
  const CurrentDeviceEntry& entry = t_current_devices[slot_];
  const CurrentDeviceEntry current{uid_,
                                   entry.uid == uid_ ? entry.index : DeviceIndex{0}};
  t_last_current_device = current;
  return current.index;
}

void ThreadCurrent::setDevice(DeviceIndex index) noexcept {
  t_current_devices[slot_] = t_last_current_device = CurrentDeviceEntry{uid_, index};
}

DeviceIndex ThreadCurrent::exchangeDevice(DeviceIndex index) noexcept {
  CurrentDeviceEntry& entry = t_current_devices[slot_];
  const DeviceIndex previous = entry.uid == uid_ ? entry.index : DeviceIndex{0};
  entry = t_last_current_device = CurrentDeviceEntry{uid_, index};
  return previous;
}

StreamId ThreadCurrent::streamFromTable(DeviceIndex index) const noexcept {
  for (const StreamEntry& entry : t_streams->entries) {
    if (entry.uid == uid_ && entry.device == index) return entry.id;
  }
  return kDefaultStreamId;
}

void ThreadCurrent::setStream(DeviceIndex index, StreamId id) {
  (void)exchangeStream(index, id);
}

StreamId ThreadCurrent::exchangeStream(DeviceIndex index, StreamId id) {
  std::vector<StreamEntry>& entries = threadStreams().entries;
  StreamEntry* reusable = nullptr;
  for (StreamEntry& entry : entries) {
    if (entry.uid == uid_ && entry.device == index) {
      const StreamId previous = entry.id;
      entry.id = id;
      return previous;
    }
    // Entries of destroyed objects are recycled, so a thread's table stays
    // as small as the set of live objects it used.
    if (reusable == nullptr && !isLive(entry)) reusable = &entry;
  }
  const StreamEntry fresh{uid_, slot_, index, id};
  if (reusable != nullptr) {
    *reusable = fresh;
  } else {
    entries.push_back(fresh);
  }
  return kDefaultStreamId;
}

}  // namespace accel::kit
