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
// equal to it on every write. The table is a block of its own, made at the
// thread's first device setting: as a thread_local array it was 1 KiB of the
// library's static TLS, which glibc takes from a surplus of about 1.6 KiB
// shared by every library loaded after the program started (Python imports
// this one so; torch's libgomp, imported after it, then failed to load with
// "cannot allocate memory in static TLS block").
// kMaxLive entries.
constinit thread_local CurrentDeviceEntry* t_current_devices = nullptr;

using tls::StreamEntry;
using tls::t_streams;
using tls::ThreadStreams;

constinit thread_local bool t_tables_released = false;

// Frees the thread's blocks when the thread exits. Constructed on the first
// device or stream setting of a thread, so threads that set neither pay
// nothing.
struct TablesReleaser {
  ~TablesReleaser() {
    delete t_streams;
    t_streams = nullptr;
    delete[] t_current_devices;
    t_current_devices = nullptr;
    t_tables_released = true;
  }
};

// Arranges for the thread's blocks to be freed at its exit. After the
// releaser ran (code in a later thread_local destructor, or in a static
// destructor on the main thread) a block made again is never freed: see the
// header.
void releaseTablesAtExit() noexcept {
  if (!t_tables_released) {
    thread_local TablesReleaser releaser;
    (void)releaser;
  }
}

// The thread's device table, made on first use. std::terminate when its
// kilobyte cannot be allocated (the setters are noexcept: a DeviceGuard
// restores a device in a destructor).
CurrentDeviceEntry* deviceTable() noexcept {
  if (t_current_devices == nullptr) {
    t_current_devices = new CurrentDeviceEntry[ThreadCurrent::kMaxLive]();
    releaseTablesAtExit();
  }
  return t_current_devices;
}

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
    releaseTablesAtExit();
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
  DeviceIndex index = 0;
  if (t_current_devices != nullptr) {
    const CurrentDeviceEntry& entry = t_current_devices[slot_];
    if (entry.uid == uid_) index = entry.index;
  }
  t_last_current_device = CurrentDeviceEntry{uid_, index};
  return index;
}

void ThreadCurrent::setDevice(DeviceIndex index) noexcept {
  deviceTable()[slot_] = t_last_current_device = CurrentDeviceEntry{uid_, index};
}

DeviceIndex ThreadCurrent::exchangeDevice(DeviceIndex index) noexcept {
  CurrentDeviceEntry& entry = deviceTable()[slot_];
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
