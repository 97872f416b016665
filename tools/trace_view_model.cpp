#include "trace_view_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace_summary.h"

namespace accel::tool {
namespace {

// Strings kept once, referred to by index.
class Interned {
 public:
  int index(const std::string& text) {
    auto [it, inserted] = indices_.try_emplace(text, static_cast<int>(list_.size()));
    if (inserted) list_.push_back(text);
    return it->second;
  }
  [[nodiscard]] nlohmann::json json() const { return list_; }

 private:
  std::unordered_map<std::string, int> indices_;
  std::vector<std::string> list_;
};

// "bytes=4096 stream=3": an event's arguments, as a tooltip shows them.
std::string detailOf(const nlohmann::json& event) {
  std::string text;
  if (!event.contains("args") || !event["args"].is_object()) return text;
  for (const auto& [key, value] : event["args"].items()) {
    text += (text.empty() ? "" : "  ") + key + "=" +
            (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

double roundedUs(double us) {
  return static_cast<double>(std::llround(us * 1000)) / 1000;
}

struct TrackKey {
  std::string pid;
  std::string tid;
  bool operator<(const TrackKey& other) const {
    return std::pair(pid, tid) < std::pair(other.pid, other.tid);
  }
};

// Numeric ids sort as numbers, others after them as text.
bool idLess(const std::string& a, const std::string& b) {
  const bool a_number =
      !a.empty() && a.find_first_not_of("-0123456789") == std::string::npos;
  const bool b_number =
      !b.empty() && b.find_first_not_of("-0123456789") == std::string::npos;
  if (a_number != b_number) return a_number;
  if (a_number) return std::stoll(a) < std::stoll(b);
  return a < b;
}

}  // namespace

nlohmann::json buildTraceViewModel(const TraceFile& file, const std::string& title) {
  double origin = std::numeric_limits<double>::infinity(), end = 0;
  for (const nlohmann::json& event : file.events) {
    if (event["ph"] == "M") continue;
    origin = std::min(origin, event["ts"].get<double>());
  }
  if (origin == std::numeric_limits<double>::infinity()) origin = 0;

  Interned names, details;
  std::map<TrackKey, nlohmann::json> spans;
  std::map<TrackKey, bool> host;
  struct Memory {
    nlohmann::json allocated = nlohmann::json::array();
    nlohmann::json reserved = nlohmann::json::array();
    nlohmann::json marks = nlohmann::json::array();
  };
  std::map<std::string, Memory> memory;
  for (const nlohmann::json& event : file.events) {
    const std::string phase = event["ph"];
    if (phase == "M") continue;
    const double ts = event["ts"].get<double>() - origin;
    const std::string pid = traceIdText(event["pid"]);
    const std::string name = event.contains("name") && event["name"].is_string()
                                 ? event["name"].get<std::string>()
                                 : "(unnamed)";
    if (phase == "X") {
      const double dur = event["dur"].get<double>();
      end = std::max(end, ts + dur);
      const TrackKey key{pid, traceIdText(event["tid"])};
      auto& list = spans[key];
      if (list.is_null()) list = nlohmann::json::array();
      list.push_back({roundedUs(ts), roundedUs(dur), names.index(name),
                      details.index(detailOf(event))});
      const bool is_device =
          event.contains("cat") && (event["cat"] == "device" || event["cat"] == "graph");
      host[key] = host.count(key) == 0 ? !is_device : host[key] && !is_device;
    } else if (phase == "C") {
      end = std::max(end, ts);
      if (name != "allocated bytes" && name != "reserved bytes") continue;
      if (!event.contains("args") || !event["args"].is_object()) continue;
      for (const auto& [key, value] : event["args"].items()) {
        if (!value.is_number()) continue;
        auto& series =
            name == "allocated bytes" ? memory[pid].allocated : memory[pid].reserved;
        series.push_back({roundedUs(ts), value.get<double>()});
        break;
      }
    } else if (phase == "i" || phase == "I") {
      end = std::max(end, ts);
      if (name == "oom" || name == "empty_cache")
        memory[pid].marks.push_back({roundedUs(ts), name});
    }
  }

  const auto processName = [&](const std::string& pid) {
    const auto it = file.process_names.find(pid);
    return it == file.process_names.end() ? "process " + pid : it->second;
  };
  std::vector<TrackKey> order;
  for (const auto& [key, list] : spans) order.push_back(key);
  std::sort(order.begin(), order.end(), [&](const TrackKey& a, const TrackKey& b) {
    if (host[a] != host[b]) return host[a];  // the host's threads first
    if (a.pid != b.pid) return idLess(a.pid, b.pid);
    return idLess(a.tid, b.tid);
  });
  nlohmann::json tracks = nlohmann::json::array();
  for (const TrackKey& key : order) {
    const auto thread = file.thread_names.find({key.pid, key.tid});
    const std::string label =
        processName(key.pid) + " · " +
        (thread == file.thread_names.end() ? "thread " + key.tid : thread->second);
    tracks.push_back({{"label", label},
                      {"group", host[key] ? "host" : "device"},
                      {"spans", spans[key]}});
  }
  nlohmann::json memory_json = nlohmann::json::array();
  for (auto& [pid, m] : memory) {
    // A device whose figures never left 0 and that had no OOM has nothing
    // to draw (a flush of its backend alone is no reason for a chart).
    bool drawn = false;
    for (const nlohmann::json& mark : m.marks) drawn = drawn || mark[1] == "oom";
    for (const auto* series : {&m.allocated, &m.reserved})
      for (const nlohmann::json& point : *series)
        drawn = drawn || point[1].get<double>() != 0;
    if (!drawn) continue;
    memory_json.push_back({{"label", processName(pid)},
                           {"allocated", std::move(m.allocated)},
                           {"reserved", std::move(m.reserved)},
                           {"marks", std::move(m.marks)}});
  }

  const TraceSummary summary = summarizeTrace(file);
  nlohmann::json hooks = nlohmann::json::array(), streams = nlohmann::json::array();
  for (const SpanFigures& row : summary.hooks)
    hooks.push_back({row.name, row.count, row.total_us, row.meanUs(), row.max_us});
  for (const SpanFigures& row : summary.streams)
    streams.push_back({row.name, row.count, row.total_us, row.busy_us});

  nlohmann::json model = {{"title", title},
                          {"end", roundedUs(end)},
                          {"names", names.json()},
                          {"details", details.json()},
                          {"tracks", std::move(tracks)},
                          {"memory", std::move(memory_json)},
                          {"summary", {{"hooks", hooks}, {"streams", streams}}}};
  model["dropped"] = file.dropped ? nlohmann::json(*file.dropped) : nlohmann::json();
  return model;
}

}  // namespace accel::tool
