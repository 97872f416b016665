#include "trace_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "accel/error.h"
#include "byte_size.h"
#include "input_file.h"
#include "trace_file.h"
#include "trace_summary.h"
#include "trace_view_model.h"
#include "trace_view_page.h"

namespace accel::tool {
namespace {

TraceFile readTrace(const TraceCommandOptions& options, std::string_view command) {
  std::size_t max_bytes = kDefaultMaxInputBytes;
  if (!options.max_input_size.empty()) {
    max_bytes = parseByteSize(options.max_input_size,
                              std::string(command) + ": --max-input-size");
  }
  return readTraceFile(options.trace, command, max_bytes);
}

}  // namespace

int runTraceSummary(const TraceCommandOptions& options) {
  const TraceFile file = readTrace(options, "trace summary");
  std::cout << traceSummaryText(summarizeTrace(file));
  return 0;
}

int runTraceView(const TraceCommandOptions& options) {
  const TraceFile file = readTrace(options, "trace view");
  const std::string title =
      "Trace — " + std::filesystem::path(options.trace).filename().string();
  const nlohmann::json model = buildTraceViewModel(file, title);
  const std::string page = renderTraceViewPage(model);
  std::ofstream out(options.output, std::ios::binary);
  ACCEL_CHECK(out.good(), InvalidArgument, "trace view: cannot write '", options.output,
              "'");
  out << page;
  out.close();
  ACCEL_CHECK(out.good(), InvalidArgument, "trace view: writing '", options.output,
              "' failed");
  std::cout << "wrote " << options.output << " (" << page.size() << " bytes, "
            << model["tracks"].size() << " tracks, " << model["memory"].size()
            << " memory charts)\n";
  return 0;
}

}  // namespace accel::tool
