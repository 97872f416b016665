#include "memreplay_command.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "accel/error.h"
#include "memreplay_trace.h"

namespace accel::tool {
namespace {

std::size_t parseCapacity(const std::string& text) {
  std::size_t number = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, number);
  const std::string unit(rest, end);
  std::size_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "KiB") scale = std::size_t{1} << 10;
  if (unit == "MiB") scale = std::size_t{1} << 20;
  if (unit == "GiB") scale = std::size_t{1} << 30;
  if (unit == "TiB") scale = std::size_t{1} << 40;
  ACCEL_CHECK(ec == std::errc() && scale != 0 && number > 0, InvalidArgument,
              "memreplay: --capacity '", text,
              "' is not a size; write bytes or a number with B, KiB, MiB, GiB or TiB");
  return number * scale;
}

// A snapshot's device trace as text trace lines: alloc and free_requested
// (what the program asked; free_completed follows from the allocator).
std::string traceFromSnapshot(const nlohmann::json& snapshot, int device,
                              const std::string& path) {
  ACCEL_CHECK(
      snapshot.contains("device_traces") && snapshot["device_traces"].is_array(),
      InvalidArgument, "memreplay: ", path,
      " is JSON but has no \"device_traces\"; record history before the snapshot");
  const auto& traces = snapshot["device_traces"];
  ACCEL_CHECK(device >= 0 && static_cast<std::size_t>(device) < traces.size(),
              InvalidArgument, "memreplay: ", path, " has traces for ", traces.size(),
              " device(s); --device ", device, " is not one of them");
  std::string out;
  for (const auto& entry : traces[static_cast<std::size_t>(device)]) {
    const std::string action = entry.value("action", "");
    const std::uint64_t address = entry.value("addr", std::uint64_t{0});
    const std::int64_t stream = entry.value("stream", std::int64_t{0});
    if (action == "alloc") {
      out += "alloc " + std::to_string(address) + ' ' +
             std::to_string(entry.value("size", std::uint64_t{0})) + ' ' +
             std::to_string(stream) + '\n';
    } else if (action == "free_requested") {
      out += "free " + std::to_string(address) + ' ' + std::to_string(stream) + '\n';
    }
  }
  return out;
}

std::string mib(std::int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

}  // namespace

int runMemreplay(const MemreplayOptions& options) {
  std::ifstream file(options.trace);
  ACCEL_CHECK(file.good(), InvalidArgument, "memreplay: cannot open '", options.trace,
              "'; give a trace file (docs/memory.md) or a snapshot JSON");
  std::stringstream content;
  content << file.rdbuf();
  std::string text = content.str();
  std::size_t first = 0;
  while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) {
    ++first;
  }
  bool from_snapshot = false;
  if (first < text.size() && text[first] == '{') {
    nlohmann::json snapshot;
    try {
      snapshot = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
      throw InvalidArgument(accel::detail::concat("memreplay: ", options.trace,
                                                  " is not valid JSON: ", error.what()));
    }
    text = traceFromSnapshot(snapshot, options.device, options.trace);
    from_snapshot = true;
  }
  std::istringstream lines(text);
  const Trace trace = parseTrace(lines, options.trace, /*lenient_frees=*/from_snapshot);
  ReplayOptions replay;
  replay.settings = memory::parseAllocatorSettings(options.settings);
  replay.capacity = parseCapacity(options.capacity);
  const ReplayResult result = replayTrace(trace, replay);
  const double malloc_ns = replayWithMalloc(trace);
  if (options.json) {
    nlohmann::json out{{"events", result.events},
                       {"allocs", result.allocs},
                       {"frees", result.frees},
                       {"device_allocs", result.device_allocs},
                       {"device_frees", result.device_frees},
                       {"peak_reserved_bytes", result.peak_reserved},
                       {"peak_allocated_bytes", result.peak_allocated},
                       {"peak_requested_bytes", result.peak_requested},
                       {"reserved_over_allocated", result.reservedOverAllocated()},
                       {"peak_inactive_split_bytes", result.peak_inactive_split},
                       {"ooms", result.ooms},
                       {"ns_per_op", result.ns_per_op},
                       {"malloc_ns_per_op", malloc_ns}};
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::printf("trace: %s (%zu events: %zu allocs, %zu frees)\n", options.trace.c_str(),
              result.events, result.allocs, result.frees);
  std::printf("settings: %s\n",
              options.settings.empty() ? "(defaults)" : options.settings.c_str());
  std::printf("device allocations: %lld (frees %lld)\n",
              static_cast<long long>(result.device_allocs),
              static_cast<long long>(result.device_frees));
  std::printf("peak reserved: %s\npeak allocated: %s\nreserved/allocated peak: %.3f\n",
              mib(result.peak_reserved).c_str(), mib(result.peak_allocated).c_str(),
              result.reservedOverAllocated());
  std::printf(
      "fragmentation: %s free inside split segments at most (%.1f%% of peak "
      "reserved)\n",
      mib(result.peak_inactive_split).c_str(),
      result.peak_reserved == 0
          ? 0.0
          : 100.0 * static_cast<double>(result.peak_inactive_split) /
                static_cast<double>(result.peak_reserved));
  std::printf("out of memory: %lld\n", static_cast<long long>(result.ooms));
  std::printf("time per operation: %.1f ns (malloc/free on the same events: %.1f ns)\n",
              result.ns_per_op, malloc_ns);
  return 0;
}

}  // namespace accel::tool
