#include "memreplay_command.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "accel/error.h"
#include "byte_size.h"
#include "input_file.h"
#include "memreplay_trace.h"
#include "snapshot_document.h"
#include "snapshot_fields.h"

namespace accel::tool {
namespace {

constexpr std::string_view kExpectedTrace =
    "a trace file (docs/memory.md) or a memory snapshot (JSON or pickle)";

// A snapshot's device trace as text trace lines: alloc and free_requested
// (what the program asked; free_completed follows from the allocator).
std::string traceFromSnapshot(const nlohmann::json& snapshot, int device,
                              const std::string& path) {
  const SnapshotFields fields("memreplay: " + path);
  const FieldPath root;
  fields.object(snapshot, root);
  const nlohmann::json* traces =
      SnapshotFields::optionalMember(snapshot, "device_traces");
  ACCEL_CHECK(traces != nullptr, InvalidArgument, "memreplay: ", path,
              " is a snapshot without \"device_traces\"; record history before the "
              "snapshot");
  const FieldPath traces_at = root.member("device_traces");
  fields.array(*traces, traces_at);
  ACCEL_CHECK(device >= 0 && static_cast<std::size_t>(device) < traces->size(),
              InvalidArgument, "memreplay: ", path, " has traces for ", traces->size(),
              " device(s); --device ", device, " is not one of them");
  const FieldPath trace_at = traces_at.element(static_cast<std::size_t>(device));
  const nlohmann::json& trace =
      fields.array((*traces)[static_cast<std::size_t>(device)], trace_at);
  std::string out;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const FieldPath at = trace_at.element(i);
    const nlohmann::json& entry = fields.object(trace[i], at);
    const std::string& action =
        fields.string(fields.member(entry, at, "action"), at.member("action"));
    if (action != "alloc" && action != "free_requested") continue;
    const std::uint64_t address =
        fields.byteCount(fields.member(entry, at, "addr"), at.member("addr"));
    const nlohmann::json* stream_value = SnapshotFields::optionalMember(entry, "stream");
    const std::int64_t stream =
        stream_value != nullptr ? fields.integer(*stream_value, at.member("stream")) : 0;
    if (action == "alloc") {
      const std::uint64_t size =
          fields.byteCount(fields.member(entry, at, "size"), at.member("size"));
      out += "alloc " + std::to_string(address) + ' ' + std::to_string(size) + ' ' +
             std::to_string(stream) + '\n';
    } else {
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
  InputFileOptions input{"memreplay", kExpectedTrace, kDefaultMaxInputBytes, {}};
  if (!options.max_input_size.empty()) {
    input.max_bytes =
        parseByteSize(options.max_input_size, "memreplay: --max-input-size");
  }
  // A trace is text and a snapshot starts like one: refuse anything else at
  // its first bytes (memreplay /dev/zero) instead of reading up to the limit.
  input.check_start = [&](std::string_view first) {
    if (snapshotFormOf(first.substr(0, 4096)) != SnapshotForm::Other) return;
    const std::size_t nul = first.find('\0');
    ACCEL_CHECK(nul == std::string_view::npos, InvalidArgument, "memreplay: '",
                options.trace, "' is not a trace: byte ", nul,
                " is NUL, and a trace is text; give ", kExpectedTrace);
  };
  std::string text = readInputFile(options.trace, input);
  bool from_snapshot = false;
  if (snapshotFormOf(std::string_view(text).substr(0, 4096)) != SnapshotForm::Other) {
    const nlohmann::json snapshot =
        parseSnapshotDocument(text, options.trace, "memreplay");
    text = traceFromSnapshot(snapshot, options.device, options.trace);
    from_snapshot = true;
  }
  std::istringstream lines(text);
  const Trace trace = parseTrace(lines, options.trace, /*lenient_frees=*/from_snapshot);
  ReplayOptions replay;
  replay.settings = memory::parseAllocatorSettings(options.settings);
  replay.capacity = parseByteSize(options.capacity, "memreplay: --capacity");
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
