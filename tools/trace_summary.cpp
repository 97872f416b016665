#include "trace_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace accel::tool {
namespace {

std::string durationText(double us) {
  char text[32];
  if (us >= 1e6) {
    std::snprintf(text, sizeof text, "%.3f s", us / 1e6);
  } else if (us >= 1e3) {
    std::snprintf(text, sizeof text, "%.3f ms", us / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.3f us", us);
  }
  return text;
}

std::string bytesText(std::int64_t bytes) {
  char text[32];
  const double value = static_cast<double>(bytes);
  if (bytes >= (std::int64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.2f GiB", value / (1 << 30));
  } else if (bytes >= (1 << 20)) {
    std::snprintf(text, sizeof text, "%.2f MiB", value / (1 << 20));
  } else if (bytes >= (1 << 10)) {
    std::snprintf(text, sizeof text, "%.2f KiB", value / (1 << 10));
  } else {
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  }
  return text;
}

std::string padded(std::string text, std::size_t width, bool right) {
  if (text.size() >= width) return text;
  const std::string pad(width - text.size(), ' ');
  return right ? pad + text : text + pad;
}

// The time covered by at least one of `spans` ({begin, end}).
double unionLength(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double covered = 0, begin = 0, end = -1;
  for (const auto& [b, e] : spans) {
    if (b > end) {
      if (end > begin) covered += end - begin;
      begin = b;
      end = e;
    } else {
      end = std::max(end, e);
    }
  }
  if (end > begin) covered += end - begin;
  return covered;
}

std::string nameOf(const nlohmann::json& event) {
  return event.contains("name") && event["name"].is_string()
             ? event["name"].get<std::string>()
             : std::string("(unnamed)");
}

std::string categoryOf(const nlohmann::json& event) {
  return event.contains("cat") && event["cat"].is_string()
             ? event["cat"].get<std::string>()
             : std::string();
}

void table(std::string& out, const std::string& title,
           const std::vector<SpanFigures>& rows, bool busy) {
  if (rows.empty()) return;
  std::size_t width = title.size();
  for (const SpanFigures& row : rows) width = std::max(width, row.name.size());
  out += padded(title, width + 2, false) + padded("calls", 8, true) +
         padded("total", 14, true) + padded("mean", 14, true) + padded("max", 14, true) +
         (busy ? padded("busy", 14, true) : "") + "\n";
  for (const SpanFigures& row : rows) {
    out += padded(row.name, width + 2, false) +
           padded(std::to_string(row.count), 8, true) +
           padded(durationText(row.total_us), 14, true) +
           padded(durationText(row.meanUs()), 14, true) +
           padded(durationText(row.max_us), 14, true) +
           (busy ? padded(durationText(row.busy_us), 14, true) : "") + "\n";
  }
  out += "\n";
}

}  // namespace

TraceSummary summarizeTrace(const TraceFile& file) {
  TraceSummary summary;
  summary.dropped = file.dropped;
  std::map<std::string, SpanFigures> hooks, others;
  std::map<std::pair<std::string, std::string>, SpanFigures> streams;
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>>
      stream_spans;
  std::map<std::string, MemoryFigures> memory;
  double first = 0, last = 0;
  bool any = false;
  for (const nlohmann::json& event : file.events) {
    const std::string phase = event["ph"];
    if (phase == "M") continue;
    const double ts = event["ts"].get<double>();
    const double dur = phase == "X" ? event["dur"].get<double>() : 0.0;
    first = any ? std::min(first, ts) : ts;
    last = any ? std::max(last, ts + dur) : ts + dur;
    any = true;
    const std::string pid = traceIdText(event["pid"]);
    if (phase == "X") {
      const std::string category = categoryOf(event);
      SpanFigures* row = nullptr;
      if (category == "hook") {
        row = &hooks[nameOf(event)];
        row->name = nameOf(event);
      } else if (category == "device" || category == "graph") {
        const std::pair key{pid, traceIdText(event["tid"])};
        row = &streams[key];
        stream_spans[key].emplace_back(ts, ts + dur);
      } else {
        row = &others[nameOf(event)];
        row->name = nameOf(event);
      }
      ++row->count;
      row->total_us += dur;
      row->max_us = std::max(row->max_us, dur);
    } else if (phase == "C" && event.contains("args") && event["args"].is_object()) {
      MemoryFigures& figures = memory[pid];
      for (const auto& [key, value] : event["args"].items()) {
        if (!value.is_number()) continue;
        const auto bytes = static_cast<std::int64_t>(value.get<double>());
        if (nameOf(event) == "allocated bytes")
          figures.peak_allocated = std::max(figures.peak_allocated, bytes);
        if (nameOf(event) == "reserved bytes")
          figures.peak_reserved = std::max(figures.peak_reserved, bytes);
      }
    } else if ((phase == "i" || phase == "I") && nameOf(event) == "oom") {
      ++memory[pid].ooms;
    }
  }
  summary.span_us = any ? last - first : 0;
  const auto processName = [&](const std::string& pid) {
    const auto it = file.process_names.find(pid);
    return it == file.process_names.end() ? "process " + pid : it->second;
  };
  for (auto& [key, row] : streams) {
    const auto thread = file.thread_names.find(key);
    row.name =
        processName(key.first) + " · " +
        (thread == file.thread_names.end() ? "track " + key.second : thread->second);
    row.busy_us = unionLength(stream_spans[key]);
    summary.streams.push_back(row);
  }
  for (auto& [name, row] : hooks) summary.hooks.push_back(row);
  for (auto& [name, row] : others) summary.others.push_back(row);
  for (auto& [pid, figures] : memory) {
    figures.device = processName(pid);
    summary.memory.push_back(figures);
  }
  const auto byTotal = [](const SpanFigures& a, const SpanFigures& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.name < b.name;
  };
  std::sort(summary.hooks.begin(), summary.hooks.end(), byTotal);
  std::sort(summary.others.begin(), summary.others.end(), byTotal);
  std::sort(summary.streams.begin(), summary.streams.end(),
            [](const SpanFigures& a, const SpanFigures& b) {
              return a.busy_us != b.busy_us ? a.busy_us > b.busy_us : a.name < b.name;
            });
  return summary;
}

std::string traceSummaryText(const TraceSummary& summary) {
  std::string out;
  table(out, "Hook", summary.hooks, false);
  table(out, "Stream", summary.streams, true);
  table(out, "Span", summary.others, false);
  if (!summary.memory.empty()) {
    std::size_t width = 6;
    for (const MemoryFigures& m : summary.memory)
      width = std::max(width, m.device.size());
    out += padded("Device", width + 2, false) + padded("peak allocated", 16, true) +
           padded("peak reserved", 16, true) + padded("OOMs", 6, true) + "\n";
    for (const MemoryFigures& m : summary.memory) {
      out += padded(m.device, width + 2, false) +
             padded(bytesText(m.peak_allocated), 16, true) +
             padded(bytesText(m.peak_reserved), 16, true) +
             padded(std::to_string(m.ooms), 6, true) + "\n";
    }
    out += "\n";
  }
  out += "Trace length " + durationText(summary.span_us);
  if (summary.dropped) {
    out += "; events dropped by the recorder's ring: " + std::to_string(*summary.dropped);
  }
  out += "\n";
  return out;
}

}  // namespace accel::tool
