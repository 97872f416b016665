// Tracing for Python (accel/trace.h): what accel.profiler is made of.
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

#include "accel/trace.h"
#include "bindings.h"

namespace accel::python {

void bindTrace(py::module_& m) {
  m.def(
      "_trace_start",
      [](const std::string& path, std::size_t capacity, bool write_at_exit) {
        trace::TraceOptions options;
        options.path = path;
        options.capacity = capacity;
        options.write_at_exit = write_at_exit;
        trace::start(options);
      },
      py::arg("path"), py::arg("capacity"), py::arg("write_at_exit"),
      "Starts tracing every backend (accel::trace::start); raises InvalidArgumentError "
      "for a path that cannot be written or while a trace runs.");
  // Stopping reads the device work still in flight: it waits for the device.
  m.def(
      "_trace_stop", [] { trace::stop(); }, Release(),
      "Stops the trace (accel::trace::stop); its events stay until the next start.");
  m.def(
      "_trace_is_tracing", [] { return trace::isTracing(); },
      "True while a trace records.");
  m.def(
      "_trace_write",
      [](const std::string& path) {
        const trace::TraceWriteResult result = trace::write(path);
        return std::tuple<std::string, std::size_t, std::uint64_t>(
            result.path, result.events, result.dropped);
      },
      Release(), py::arg("path"),
      "Writes the trace (accel::trace::write): (path, events, dropped).");
  m.def(
      "_trace_json", [] { return trace::toJson(); }, Release(),
      "The trace's Chrome trace-event JSON text (accel::trace::toJson).");
}

}  // namespace accel::python
