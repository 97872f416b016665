#include "layers/trace/trace_json.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "accel/memory/snapshot_json.h"
#include "accel/version.h"
#include "layers/trace/trace_event_text.h"

namespace accel::trace::detail {
namespace {

constexpr int kHostProcess = 1;
constexpr int kAllocatorTrack = 0;  // tid of a device's allocator instants

struct DeviceKey {
  DeviceType type;
  int device;
  friend auto operator<=>(const DeviceKey&, const DeviceKey&) = default;
};

std::string deviceName(DeviceKey key) {
  return std::string(deviceTypeName(key.type)) + ":" + std::to_string(key.device);
}

// One stream's track: the work its timing events measured, or what only
// host times place (waits, captures, work of a backend without timing
// events). Two tracks per stream because spans of one track must nest, and
// a host-timed span (a synchronisation, say) overlaps the device's spans.
struct StreamTrack {
  StreamId id = 0;
  bool host_times = false;
  friend bool operator==(const StreamTrack&, const StreamTrack&) = default;
};

// The processes and stream tracks of the devices, numbered in a stable
// order (devices and tracks sorted). Every track is made before number()
// and the metadata (Writer::write's first pass).
class Tracks {
 public:
  // Numbered by number(), once every device is known.
  void process(DeviceKey key) { processes_.try_emplace(key, 0); }
  int stream(DeviceKey key, StreamTrack track) {
    process(key);
    auto& tracks = streams_[key];
    for (std::size_t i = 0; i < tracks.size(); ++i)
      if (tracks[i] == track) return static_cast<int>(i) + 1;
    tracks.push_back(track);
    return static_cast<int>(tracks.size());
  }
  // Numbers the processes, and each device's tracks by stream, the
  // events-timed track before the host-timed one.
  void number() {
    int next = kHostProcess + 1;
    for (auto& [key, pid] : processes_) pid = next++;
    for (auto& [key, tracks] : streams_) {
      std::sort(tracks.begin(), tracks.end(),
                [](const StreamTrack& a, const StreamTrack& b) {
                  return std::pair(a.id, a.host_times) < std::pair(b.id, b.host_times);
                });
    }
  }
  int pid(DeviceKey key) const { return processes_.at(key); }
  const std::map<DeviceKey, int>& processes() const { return processes_; }
  const std::vector<StreamTrack>& streamsOf(DeviceKey key) const {
    static const std::vector<StreamTrack> none;
    auto it = streams_.find(key);
    return it == streams_.end() ? none : it->second;
  }

 private:
  std::map<DeviceKey, int> processes_;
  std::map<DeviceKey, std::vector<StreamTrack>> streams_;
};

// The track of a work event.
StreamTrack workTrack(const TraceEvent& e) {
  return StreamTrack{e.stream, e.timing != WorkTiming::Events};
}

struct Capture {
  const TraceEvent* begin = nullptr;
  const TraceEvent* end = nullptr;
};

// The device a whole capture (begin and end seen) was made on.
std::optional<DeviceKey> captureDevice(const Capture& capture) {
  if (capture.begin == nullptr || capture.end == nullptr) return std::nullopt;
  const int device =
      capture.begin->device >= 0 ? capture.begin->device : capture.end->device;
  if (device < 0) return std::nullopt;
  return DeviceKey{capture.begin->type, device};
}

StreamId captureStream(const Capture& capture) {
  return capture.begin->stream >= 0 ? capture.begin->stream : capture.end->stream;
}

bool isSegmentGrowth(MemoryTraceEntry::Action action) {
  return action == MemoryTraceEntry::Action::SegmentAlloc ||
         action == MemoryTraceEntry::Action::SegmentMap;
}
bool isSegmentRelease(MemoryTraceEntry::Action action) {
  return action == MemoryTraceEntry::Action::SegmentFree ||
         action == MemoryTraceEntry::Action::SegmentUnmap;
}

class Writer {
 public:
  explicit Writer(const TraceContents& contents) : c_(contents) {}

  std::string write() {
    for (const MemoryTrack& track : c_.memory)
      history_.insert(DeviceKey{track.type, track.device});
    // Number every track first: metadata events name them.
    for (const TraceEvent& e : c_.events) {
      if (e.kind == TraceEventKind::Hook) {
        if (e.hook == HookId::graphCaptureBegin) captures_[{e.type, e.object}].begin = &e;
        if (e.hook == HookId::graphCaptureEnd) captures_[{e.type, e.object}].end = &e;
        continue;
      }
      if (e.kind == TraceEventKind::PluginCall || e.device < 0) continue;
      const DeviceKey key{e.type, e.device};
      if (e.kind == TraceEventKind::DeviceWork) {
        tracks_.stream(key, workTrack(e));
      } else {
        tracks_.process(key);
      }
    }
    for (const auto& [id, capture] : captures_) {
      if (const std::optional<DeviceKey> key = captureDevice(capture))
        tracks_.stream(*key, StreamTrack{captureStream(capture), true});
    }
    for (const MemoryTrack& track : c_.memory)
      tracks_.process(DeviceKey{track.type, track.device});
    tracks_.number();

    out_.reserve(c_.events.size() * 180 + 4096);
    out_ += "{\"traceEvents\":[";
    writeMetadata();
    for (const TraceEvent& e : c_.events) writeEvent(e);
    writeCaptures();
    for (const MemoryTrack& track : c_.memory) writeMemory(track);
    writeLooseAllocations();
    out_ += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"accelhooks ";
    out_ += libraryVersion();
    out_ +=
        "\",\"clock\":\"steady\",\"origin_steady_ns\":" + std::to_string(c_.origin_ns) +
        ",\"ring_capacity\":" + std::to_string(c_.capacity) +
        ",\"dropped_events\":" + std::to_string(c_.dropped) + "}}\n";
    return std::move(out_);
  }

 private:
  void name(const char* what, int pid, int tid, const std::string& value) {
    EventText(out_, first_)
        .text("name", what)
        .text("ph", "M")
        .number("pid", pid)
        .number("tid", tid)
        .args()
        .text("name", value);
  }

  void writeMetadata() {
    name("process_name", kHostProcess, 0,
         "host (pid " + std::to_string(c_.process_id) + ")");
    std::set<std::uint32_t> named;
    for (const ThreadName& thread : c_.threads) {
      if (!named.insert(thread.thread).second) continue;
      name("thread_name", kHostProcess, static_cast<int>(thread.thread), thread.name);
    }
    // Threads the recorder did not name (past its bound): their id.
    for (const TraceEvent& e : c_.events) {
      if (e.kind != TraceEventKind::Hook && e.kind != TraceEventKind::PluginCall)
        continue;
      if (named.insert(e.thread).second)
        name("thread_name", kHostProcess, static_cast<int>(e.thread),
             "thread " + std::to_string(e.thread));
    }
    for (const auto& [key, pid] : tracks_.processes()) {
      name("process_name", pid, 0, deviceName(key));
      name("thread_name", pid, kAllocatorTrack, "allocator");
      const auto& streams = tracks_.streamsOf(key);
      for (std::size_t i = 0; i < streams.size(); ++i)
        name("thread_name", pid, static_cast<int>(i) + 1,
             "stream " + std::to_string(streams[i].id) +
                 (streams[i].host_times ? " (host times)" : ""));
    }
  }

  std::int64_t rel(std::int64_t ns) const { return ns - c_.origin_ns; }

  void writeEvent(const TraceEvent& e) {
    const std::string_view hook = hookInfo(e.hook).name;
    switch (e.kind) {
      case TraceEventKind::Hook: {
        EventText event(out_, first_);
        event.span(hook, "hook", rel(e.begin), e.end - e.begin, kHostProcess, e.thread)
            .args()
            .text("backend", deviceTypeName(e.type));
        if (e.device >= 0) event.number("device", e.device);
        if (e.stream >= 0) event.number("stream", e.stream);
        if (e.bytes != 0)
          event.number(e.hook == HookId::fillRandom ? "elements" : "bytes",
                       static_cast<std::int64_t>(e.bytes));
        if (e.ptr != 0) event.address("ptr", e.ptr);
        if (e.ptr2 != 0) event.address("src", e.ptr2);
        if (e.object != 0) event.number("id", static_cast<std::int64_t>(e.object));
        if (e.failed) event.flag("failed", true);
        if (e.hook == HookId::emptyCache && !e.failed) flushes_.push_back(&e);
        break;
      }
      case TraceEventKind::DeviceWork: {
        if (e.device < 0) break;
        const DeviceKey key{e.type, e.device};
        std::string label(hook);
        if (e.hook == HookId::graphReplay)
          label = "replay graph " + std::to_string(e.object);
        EventText event(out_, first_);
        event
            .span(label, "device", rel(e.begin), e.end - e.begin, tracks_.pid(key),
                  tracks_.stream(key, workTrack(e)))
            .args()
            .text("timing", e.timing == WorkTiming::Events ? "events" : "host");
        if (e.bytes != 0)
          event.number(e.hook == HookId::fillRandom ? "elements" : "bytes",
                       static_cast<std::int64_t>(e.bytes));
        break;
      }
      case TraceEventKind::PluginCall: {
        const std::string_view function(reinterpret_cast<const char*>(e.ptr), e.bytes);
        EventText(out_, first_)
            .span("plugin " + std::string(function), "plugin", rel(e.begin),
                  e.end - e.begin, kHostProcess, e.thread)
            .args()
            .text("backend", deviceTypeName(e.type))
            .number("status", static_cast<std::int32_t>(e.object));
        break;
      }
      case TraceEventKind::Allocation:
      case TraceEventKind::Free:
        break;  // writeLooseAllocations
    }
  }

  // A capture's span on its device: from its begin hook to its end hook.
  void writeCaptures() {
    for (const auto& [id, capture] : captures_) {
      const std::optional<DeviceKey> key = captureDevice(capture);
      if (!key) continue;
      EventText(out_, first_)
          .span("capture graph " + std::to_string(id.second), "graph",
                rel(capture.begin->begin), capture.end->end - capture.begin->begin,
                tracks_.pid(*key),
                tracks_.stream(*key, StreamTrack{captureStream(capture), true}))
          .args()
          .number("graph", static_cast<std::int64_t>(id.second));
    }
    // emptyCache names no device: the flush is drawn on each device of its backend.
    for (const TraceEvent* flush : flushes_) {
      for (const auto& [key, pid] : tracks_.processes()) {
        if (key.type != flush->type) continue;
        EventText(out_, first_)
            .instant("empty_cache", "allocator", rel(flush->end), pid, kAllocatorTrack);
      }
    }
  }

  void counter(int pid, std::int64_t ns, const char* name, std::int64_t value) {
    EventText(out_, first_)
        .text("name", name)
        .text("cat", "allocator")
        .text("ph", "C")
        .micros("ts", rel(ns))
        .number("pid", pid)
        .number("tid", kAllocatorTrack)
        .args()
        .number("bytes", value);
  }

  void writeMemory(const MemoryTrack& track) {
    const int pid = tracks_.pid(DeviceKey{track.type, track.device});
    std::int64_t allocated = track.base_allocated;
    std::int64_t reserved = track.base_reserved;
    if (!track.entries.empty()) {
      counter(pid, track.entries.front().time_ns, "allocated bytes", allocated);
      counter(pid, track.entries.front().time_ns, "reserved bytes", reserved);
    }
    for (const MemoryTraceEntry& entry : track.entries) {
      using Action = MemoryTraceEntry::Action;
      const auto size = static_cast<std::int64_t>(entry.size);
      {
        EventText event(out_, first_);
        event
            .instant(memory::traceActionName(entry.action), "allocator",
                     rel(entry.time_ns), pid, kAllocatorTrack)
            .args()
            .address("addr", entry.address)
            .number("size", size)
            .number("stream", entry.stream.id);
        if (entry.action == Action::Oom) {
          event.number("device_free", static_cast<std::int64_t>(entry.device_free))
              .number("allocated", allocated)
              .number("reserved", reserved);
        }
      }
      if (entry.action == Action::Alloc) {
        allocated += size;
      } else if (entry.action == Action::FreeCompleted) {
        allocated -= size;
      } else if (isSegmentGrowth(entry.action)) {
        reserved += size;
      } else if (isSegmentRelease(entry.action)) {
        reserved -= size;
      } else {
        continue;
      }
      const bool segment =
          isSegmentGrowth(entry.action) || isSegmentRelease(entry.action);
      counter(pid, entry.time_ns, segment ? "reserved bytes" : "allocated bytes",
              segment ? reserved : allocated);
    }
  }

  // Allocation and Free events of devices without allocator history.
  void writeLooseAllocations() {
    std::map<DeviceKey, std::int64_t> allocated;
    for (const TraceEvent& e : c_.events) {
      if (e.kind != TraceEventKind::Allocation && e.kind != TraceEventKind::Free)
        continue;
      // Pinned host memory (failed set) belongs to no device track.
      if (e.device < 0 || e.failed) continue;
      const DeviceKey key{e.type, e.device};
      if (history_.count(key) != 0) continue;
      const bool is_alloc = e.kind == TraceEventKind::Allocation;
      const int pid = tracks_.pid(key);
      EventText(out_, first_)
          .instant(is_alloc ? "alloc" : "free_completed", "allocator", rel(e.begin), pid,
                   kAllocatorTrack)
          .args()
          .address("addr", e.ptr)
          .number("size", static_cast<std::int64_t>(e.bytes));
      std::int64_t& value = allocated[key];
      value += is_alloc ? static_cast<std::int64_t>(e.bytes)
                        : -static_cast<std::int64_t>(e.bytes);
      counter(pid, e.begin, "allocated bytes", value);
    }
  }

  const TraceContents& c_;
  std::string out_;
  bool first_ = true;
  Tracks tracks_;
  std::set<DeviceKey> history_;
  std::map<std::pair<DeviceType, std::uint64_t>, Capture> captures_;
  std::vector<const TraceEvent*> flushes_;
};

}  // namespace

std::string traceToJson(const TraceContents& contents) {
  return Writer(contents).write();
}

}  // namespace accel::trace::detail
