#include "memviz_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "accel/error.h"
#include "byte_size.h"
#include "input_file.h"
#include "memviz_model.h"
#include "memviz_page.h"
#include "snapshot_document.h"
#include "snapshot_fields.h"

namespace accel::tool {
namespace {

constexpr std::string_view kExpectedSnapshot =
    "a memory snapshot: JSON from memorySnapshotToJson() or a pickle from "
    "accel.memory._dump_snapshot() (docs/memory.md)";

std::string deviceList(const std::set<std::int64_t>& devices) {
  std::string out;
  for (std::int64_t device : devices) {
    out += (out.empty() ? "" : ", ") + std::to_string(device);
  }
  return out;
}

}  // namespace

int runMemviz(const MemvizOptions& options) {
  InputFileOptions input{"memviz", kExpectedSnapshot, kDefaultMaxInputBytes, {}};
  if (!options.max_input_size.empty()) {
    input.max_bytes = parseByteSize(options.max_input_size, "memviz: --max-input-size");
  }
  // Refuse what is neither form at its first bytes (memviz /dev/zero).
  input.check_start = [&](std::string_view first) {
    if (snapshotFormOf(first.substr(0, 4096)) == SnapshotForm::Other) {
      (void)parseSnapshotDocument(first.substr(0, 64), options.snapshot, "memviz");
    }
  };
  const std::string text = readInputFile(options.snapshot, input);
  const nlohmann::json snapshot = parseSnapshotDocument(text, options.snapshot, "memviz");
  const SnapshotFields fields("memviz: " + options.snapshot);
  const std::set<std::int64_t> devices = snapshotDevices(snapshot, fields);
  ACCEL_CHECK(!devices.empty(), InvalidArgument, "memviz: ", options.snapshot,
              " describes no device (no segments and no device_traces): nothing to draw");
  ACCEL_CHECK(devices.count(options.device) != 0, InvalidArgument, "memviz: --device ",
              options.device, " is not in ", options.snapshot,
              ", which describes device(s) ", deviceList(devices));
  const std::string title = "Memory of device " + std::to_string(options.device) + " — " +
                            std::filesystem::path(options.snapshot).filename().string();
  const nlohmann::json model = buildMemvizModel(snapshot, options.device, title, fields);
  const std::string page = renderMemvizPage(model);
  std::ofstream out(options.output, std::ios::binary);
  ACCEL_CHECK(out.good(), InvalidArgument, "memviz: cannot write '", options.output, "'");
  out << page;
  out.close();
  ACCEL_CHECK(out.good(), InvalidArgument, "memviz: writing '", options.output,
              "' failed");
  std::cout << "wrote " << options.output << " (" << page.size() << " bytes, "
            << model["segments"].size() << " segments, "
            << (model["trace"].contains("action") ? model["trace"]["action"].size() : 0)
            << " trace events of device " << options.device << ")\n";
  return 0;
}

}  // namespace accel::tool
