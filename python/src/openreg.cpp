// accel.openreg._native: openreg's extras beyond the hooks (registration,
// fault injection, execution units), a module of its own that
// accel/openreg/__init__.py wraps (backend_modules.h). Built only with the
// openreg backend.
#include <pybind11/chrono.h>
#include <pybind11/stl.h>

#include "accel/error.h"
#include "accel/openreg/openreg.h"
#include "backend_modules.h"
#include "bindings.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {
namespace {

void bindOpenRegModule(py::module_& o) {
  // Registers the type name, so that accel.openreg's modules can make their
  // Hooks("openreg") before they call register_backend().
  (void)openreg::deviceType();

  o.def(
      "register_backend", [] { (void)openreg::registerBackend(); },
      "Registers the openreg hooks (once per process; no device is touched).");
  o.def(
      "library_path", [] { return openreg::pluginPath(); },
      "Path of the libaccel_openreg.so this module uses.");
  o.def(
      "fail_nth_allocation",
      [](IntArg<std::uint64_t, "nth"> nth) { openreg::failNthAllocation(nth.value); },
      py::arg("nth"), "The nth allocation from now raises OutOfMemoryError (0 cancels).");
  o.def(
      "lose_device_after",
      [](DeviceIndexArg index, IntArg<std::uint64_t, "operations"> operations) {
        openreg::loseDeviceAfter(index.value, operations.value);
      },
      py::arg("index"), py::arg("operations"));
  o.def(
      "is_device_lost",
      [](DeviceIndexArg index) { return openreg::isDeviceLost(index.value); },
      py::arg("index"));
  o.def(
      "set_stream_latency",
      [](const Typed<"accel._C.Stream">& stream, double microseconds) {
        const auto packed =
            stream.attr("pack3")().cast<std::tuple<long long, long long, long long>>();
        openreg::setStreamLatency(
            Stream::unpack3(std::get<0>(packed), std::get<1>(packed),
                            std::get<2>(packed)),
            std::chrono::microseconds(static_cast<long long>(microseconds)));
      },
      py::arg("stream"), py::arg("microseconds"),
      "Every operation on `stream` starts this much later (simulates a slow device).");
  o.def("clear_faults", &openreg::clearFaults);
  o.def(
      "set_execution_units",
      [](DeviceIndexArg index, IntArg<int, "units"> units) {
        openreg::setExecutionUnits(index.value, units.value);
      },
      py::arg("index"), py::arg("units"));
  o.def(
      "execution_units_state", [](DeviceIndexArg index) -> Typed<"Dict[str, int]"> {
        const openreg::ExecutionUnitsState s = openreg::executionUnitsState(index.value);
        py::dict out;
        out["units"] = s.units;
        out["busy"] = s.busy;
        out["waiting"] = s.waiting;
        return out;
      },
      py::arg("index"));
  o.def(
      "config", []() -> Typed<"Dict[str, Any]"> {
        const openreg::Config* config = nullptr;
        {
          GilRelease release;  // initialises the backend
          config = &openreg::activeConfig();
        }
        const openreg::Config& c = *config;
        py::dict out;
        out["device_count"] = c.device_count;
        out["memory_bytes"] = c.memory_bytes;
        out["execution_units"] = c.execution_units;
        out["stream_latency_us"] = c.stream_latency.count();
        return out;
      });
}

const BackendModuleRegistrar kOpenRegModule{"accel.openreg._native",
                                            "openreg's extras (fills, faults, units).",
                                            &bindOpenRegModule};

}  // namespace
}  // namespace accel::python
