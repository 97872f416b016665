#include "accel/memory/snapshot_json.h"

#include "hooks/enum_names.h"
#include "hooks/json_text.h"

namespace accel::memory {
namespace {

void appendKey(std::string& out, std::string_view key) {
  accel::detail::appendJsonString(out, key);
  out += ':';
}

template <typename Number>
void appendField(std::string& out, std::string_view key, Number value) {
  appendKey(out, key);
  out += std::to_string(value);
  out += ',';
}

void appendFrames(std::string& out, const std::vector<MemoryFrame>& frames) {
  appendKey(out, "frames");
  out += '[';
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (i > 0) out += ',';
    out += '{';
    appendKey(out, "filename");
    accel::detail::appendJsonString(out, frames[i].filename);
    out += ',';
    appendField(out, "line", frames[i].line);
    appendKey(out, "name");
    accel::detail::appendJsonString(out, frames[i].name);
    out += '}';
  }
  out += ']';
}

}  // namespace

std::string_view blockStateName(MemoryBlock::State state) noexcept {
  switch (state) {
    case MemoryBlock::State::Allocated:
      return "active_allocated";
    case MemoryBlock::State::ActivePendingFree:
      return "active_pending_free";
    case MemoryBlock::State::Free:
      break;
  }
  return "inactive";
}

namespace {

// In the enum's declaration order, which is not the order of PyTorch's list.
constexpr accel::detail::EnumNames<MemoryTraceEntry::Action::SegmentUnmap>
    kTraceActionNames{"alloc",         "free_requested", "free_completed",
                      "segment_alloc", "segment_free",   "snapshot",
                      "oom",           "segment_map",    "segment_unmap"};

}  // namespace

std::string_view traceActionName(MemoryTraceEntry::Action action) noexcept {
  return kTraceActionNames[action];
}

std::string memorySnapshotToJson(const MemorySnapshot& snapshot) {
  std::string out;
  out.reserve(256 + snapshot.segments.size() * 512);
  out += '{';
  appendKey(out, "segments");
  out += '[';
  for (std::size_t s = 0; s < snapshot.segments.size(); ++s) {
    const MemorySegment& segment = snapshot.segments[s];
    if (s > 0) out += ',';
    out += '{';
    appendField(out, "device", static_cast<int>(segment.device.index()));
    appendField(out, "address", segment.address);
    appendField(out, "total_size", segment.total_size);
    appendField(out, "allocated_size", segment.allocated_size);
    appendField(out, "active_size", segment.active_size);
    appendField(out, "requested_size", segment.requested_size);
    appendField(out, "stream", segment.stream.id);
    appendKey(out, "segment_type");
    accel::detail::appendJsonString(out, segment.is_large ? "large" : "small");
    out += ',';
    appendKey(out, "segment_pool_id");
    out += '[' + std::to_string(segment.pool.first) + ',' +
           std::to_string(segment.pool.second) + "],";
    appendKey(out, "is_expandable");
    out += segment.is_expandable ? "true," : "false,";
    appendKey(out, "frames");
    out += "[],";
    appendKey(out, "blocks");
    out += '[';
    for (std::size_t b = 0; b < segment.blocks.size(); ++b) {
      const MemoryBlock& block = segment.blocks[b];
      if (b > 0) out += ',';
      out += '{';
      appendField(out, "address", block.address);
      appendField(out, "size", block.size);
      appendField(out, "requested_size", block.requested_size);
      appendKey(out, "state");
      accel::detail::appendJsonString(out, blockStateName(block.state));
      out += ',';
      appendFrames(out, block.frames);
      out += '}';
    }
    out += "]}";
  }
  out += "],";
  appendKey(out, "device_traces");
  out += '[';
  for (std::size_t d = 0; d < snapshot.device_traces.size(); ++d) {
    if (d > 0) out += ',';
    out += '[';
    const std::vector<MemoryTraceEntry>& trace = snapshot.device_traces[d];
    for (std::size_t i = 0; i < trace.size(); ++i) {
      const MemoryTraceEntry& entry = trace[i];
      if (i > 0) out += ',';
      out += '{';
      appendKey(out, "action");
      accel::detail::appendJsonString(out, traceActionName(entry.action));
      out += ',';
      appendField(out, "addr", entry.address);
      appendField(out, "size", entry.size);
      appendField(out, "stream", entry.stream.id);
      appendField(out, "time_us", entry.time_ns / 1000);
      if (entry.action == MemoryTraceEntry::Action::Oom) {
        appendField(out, "device_free", entry.device_free);
      }
      appendFrames(out, entry.frame_details);
      out += '}';
    }
    out += ']';
  }
  out += "]}";
  return out;
}

}  // namespace accel::memory
