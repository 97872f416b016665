#include "memviz_model.h"

#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace accel::tool {
namespace {

using nlohmann::json;

bool isPythonFrame(std::string_view filename) {
  return filename.size() >= 3 && filename.substr(filename.size() - 3) == ".py";
}

struct VectorHash {
  template <typename Id>
  std::size_t operator()(const std::vector<Id>& ids) const noexcept {
    std::size_t hash = ids.size();
    for (Id id : ids) hash = hash * 1000003u ^ static_cast<std::size_t>(id);
    return hash;
  }
};

// Interns strings, frames and stacks.
class Tables {
 public:
  Tables() { stacks_.push_back(json::array()); }

  std::uint32_t string(const std::string& text) {
    const auto [it, added] =
        string_ids_.emplace(text, static_cast<std::uint32_t>(strings_.size()));
    if (added) strings_.push_back(text);
    return it->second;
  }

  // The stack of a "frames" array, Python frames first.
  std::uint32_t stack(const json& frames, const FieldPath& path,
                      const SnapshotFields& fields) {
    fields.array(frames, path);
    if (frames.empty()) return 0;
    std::vector<std::uint32_t> python, native;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const FieldPath at = path.element(i);
      const json& frame = fields.object(frames[i], at);
      const std::string& name =
          fields.string(fields.member(frame, at, "name"), at.member("name"));
      const json* file = SnapshotFields::optionalMember(frame, "filename");
      const std::string& filename =
          file != nullptr ? fields.string(*file, at.member("filename")) : empty_;
      const json* line_value = SnapshotFields::optionalMember(frame, "line");
      const std::int64_t line =
          line_value != nullptr ? fields.integer(*line_value, at.member("line")) : 0;
      // The line as written (any 64-bit value), so that two lines never meet.
      const std::vector<std::int64_t> key{string(name), string(filename), line};
      const auto [it, added] =
          frame_ids_.emplace(key, static_cast<std::uint32_t>(frame_ids_.size()));
      if (added) {
        frames_.push_back(key[0]);
        frames_.push_back(key[1]);
        frames_.push_back(line);
      }
      (isPythonFrame(filename) ? python : native).push_back(it->second);
    }
    python.insert(python.end(), native.begin(), native.end());
    const auto [it, added] =
        stack_ids_.emplace(python, static_cast<std::uint32_t>(stacks_.size()));
    if (added) stacks_.push_back(python);
    return it->second;
  }

  void moveInto(json& model) {
    model["strings"] = std::move(strings_);
    model["frames"] = std::move(frames_);
    model["stacks"] = std::move(stacks_);
  }

 private:
  const std::string empty_;
  std::unordered_map<std::string, std::uint32_t> string_ids_;
  std::unordered_map<std::vector<std::int64_t>, std::uint32_t, VectorHash> frame_ids_;
  std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, VectorHash> stack_ids_;
  json strings_ = json::array();
  json frames_ = json::array();
  json stacks_ = json::array();
};

// Names (block states, trace actions) as small ids into a table.
class NameTable {
 public:
  std::uint32_t id(const std::string& name) {
    const auto [it, added] =
        ids_.emplace(name, static_cast<std::uint32_t>(names_.size()));
    if (added) names_.push_back(name);
    return it->second;
  }
  json take() { return std::move(names_); }

 private:
  std::unordered_map<std::string, std::uint32_t> ids_;
  json names_ = json::array();
};

std::uint64_t optionalByteCount(const json& object, const FieldPath& path,
                                std::string_view key, std::uint64_t fallback,
                                const SnapshotFields& fields) {
  const json* value = SnapshotFields::optionalMember(object, key);
  return value != nullptr ? fields.byteCount(*value, path.member(key)) : fallback;
}

std::int64_t optionalInteger(const json& object, const FieldPath& path,
                             std::string_view key, const SnapshotFields& fields) {
  const json* value = SnapshotFields::optionalMember(object, key);
  return value != nullptr ? fields.integer(*value, path.member(key)) : 0;
}

json segmentModel(const json& segment, const FieldPath& at, const SnapshotFields& fields,
                  Tables& tables, NameTable& states) {
  const std::uint64_t address =
      fields.byteCount(fields.member(segment, at, "address"), at.member("address"));
  const std::uint64_t total =
      fields.byteCount(fields.member(segment, at, "total_size"), at.member("total_size"));
  if (address + total < address) fields.fail(at, "ends beyond the address space");
  const FieldPath blocks_at = at.member("blocks");
  const json& blocks = fields.array(fields.member(segment, at, "blocks"), blocks_at);
  json flat = json::array();
  std::uint64_t next = address, allocated = 0, active = 0, requested = 0;
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const FieldPath block_at = blocks_at.element(j);
    const json& block = fields.object(blocks[j], block_at);
    // PyTorch's older snapshots give no block addresses: blocks tile the
    // segment in order.
    const std::uint64_t block_address =
        optionalByteCount(block, block_at, "address", next, fields);
    const std::uint64_t size =
        fields.byteCount(fields.member(block, block_at, "size"), block_at.member("size"));
    if (block_address < address || block_address - address > total ||
        size > total - (block_address - address)) {
      fields.fail(block_at, "lies outside its segment");
    }
    next = block_address + size;
    const std::uint64_t block_requested =
        optionalByteCount(block, block_at, "requested_size", size, fields);
    const std::string& state =
        fields.string(fields.member(block, block_at, "state"), block_at.member("state"));
    const json* frames = SnapshotFields::optionalMember(block, "frames");
    const std::uint32_t stack =
        frames != nullptr ? tables.stack(*frames, block_at.member("frames"), fields) : 0;
    if (state != "inactive") {
      active += size;
      requested += block_requested;
      if (state == "active_allocated") allocated += size;
    }
    flat.push_back(block_address);
    flat.push_back(size);
    flat.push_back(block_requested);
    flat.push_back(states.id(state));
    flat.push_back(stack);
  }
  const json* type = SnapshotFields::optionalMember(segment, "segment_type");
  const json* expandable = SnapshotFields::optionalMember(segment, "is_expandable");
  return json{
      {"address", address},
      {"total_size", total},
      {"allocated_size",
       optionalByteCount(segment, at, "allocated_size", allocated, fields)},
      {"active_size", optionalByteCount(segment, at, "active_size", active, fields)},
      {"requested_size",
       optionalByteCount(segment, at, "requested_size", requested, fields)},
      {"stream", optionalInteger(segment, at, "stream", fields)},
      {"type", type != nullptr ? fields.string(*type, at.member("segment_type")) : ""},
      {"expandable",
       expandable != nullptr && fields.boolean(*expandable, at.member("is_expandable"))},
      {"blocks", std::move(flat)}};
}

// Actions whose events name an address and a size.
bool needsAddressAndSize(std::string_view action) {
  return action == "alloc" || action == "free_requested" || action == "free_completed" ||
         action.substr(0, 8) == "segment_";
}

json traceModel(const json& trace, const FieldPath& at, const SnapshotFields& fields,
                Tables& tables, NameTable& actions) {
  json action_ids = json::array(), addrs = json::array(), sizes = json::array(),
       streams = json::array(), stacks = json::array(), times = json::array();
  bool every_time = true;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const FieldPath entry_at = at.element(i);
    const json& entry = fields.object(trace[i], entry_at);
    const std::string& action = fields.string(fields.member(entry, entry_at, "action"),
                                              entry_at.member("action"));
    const bool sized = needsAddressAndSize(action);
    action_ids.push_back(actions.id(action));
    addrs.push_back(sized ? fields.byteCount(fields.member(entry, entry_at, "addr"),
                                             entry_at.member("addr"))
                          : optionalByteCount(entry, entry_at, "addr", 0, fields));
    sizes.push_back(sized ? fields.byteCount(fields.member(entry, entry_at, "size"),
                                             entry_at.member("size"))
                          : optionalByteCount(entry, entry_at, "size", 0, fields));
    streams.push_back(optionalInteger(entry, entry_at, "stream", fields));
    const json* frames = SnapshotFields::optionalMember(entry, "frames");
    stacks.push_back(
        frames != nullptr ? tables.stack(*frames, entry_at.member("frames"), fields) : 0);
    const json* time = SnapshotFields::optionalMember(entry, "time_us");
    if (time != nullptr) {
      times.push_back(fields.nonNegativeNumber(*time, entry_at.member("time_us")));
    } else {
      every_time = false;
    }
  }
  json model{{"action", std::move(action_ids)},
             {"addr", std::move(addrs)},
             {"size", std::move(sizes)},
             {"stream", std::move(streams)},
             {"stack", std::move(stacks)}};
  if (every_time && !trace.empty()) model["time_us"] = std::move(times);
  return model;
}

}  // namespace

std::set<std::int64_t> snapshotDevices(const json& snapshot,
                                       const SnapshotFields& fields) {
  const FieldPath root;
  fields.object(snapshot, root);
  std::set<std::int64_t> devices;
  const FieldPath segments_at = root.member("segments");
  const json& segments =
      fields.array(fields.member(snapshot, root, "segments"), segments_at);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const FieldPath at = segments_at.element(i);
    const json& segment = fields.object(segments[i], at);
    devices.insert(
        fields.integer(fields.member(segment, at, "device"), at.member("device")));
  }
  if (const json* traces = SnapshotFields::optionalMember(snapshot, "device_traces")) {
    const FieldPath traces_at = root.member("device_traces");
    fields.array(*traces, traces_at);
    for (std::size_t i = 0; i < traces->size(); ++i) {
      fields.array((*traces)[i], traces_at.element(i));
      devices.insert(static_cast<std::int64_t>(i));
    }
  }
  return devices;
}

json buildMemvizModel(const json& snapshot, std::int64_t device, const std::string& title,
                      const SnapshotFields& fields) {
  const FieldPath root;
  Tables tables;
  NameTable states, actions;
  json segments = json::array();
  const FieldPath segments_at = root.member("segments");
  const json& all_segments =
      fields.array(fields.member(snapshot, root, "segments"), segments_at);
  for (std::size_t i = 0; i < all_segments.size(); ++i) {
    const FieldPath at = segments_at.element(i);
    const json& segment = fields.object(all_segments[i], at);
    // Every segment is checked, not only the device's: a page drawn from a
    // file with wrong values elsewhere would hide that the file is damaged.
    json model = segmentModel(segment, at, fields, tables, states);
    if (fields.integer(fields.member(segment, at, "device"), at.member("device")) ==
        device) {
      segments.push_back(std::move(model));
    }
  }
  json trace = json::object();
  if (const json* traces = SnapshotFields::optionalMember(snapshot, "device_traces")) {
    const FieldPath traces_at = root.member("device_traces");
    fields.array(*traces, traces_at);
    if (device >= 0 && static_cast<std::uint64_t>(device) < traces->size()) {
      const FieldPath at = traces_at.element(static_cast<std::size_t>(device));
      trace = traceModel(fields.array((*traces)[static_cast<std::size_t>(device)], at),
                         at, fields, tables, actions);
    }
  }
  json model{{"title", title}, {"device", device}};
  tables.moveInto(model);
  model["states"] = states.take();
  model["segments"] = std::move(segments);
  model["actions"] = actions.take();
  model["trace"] = std::move(trace);
  return model;
}

}  // namespace accel::tool
