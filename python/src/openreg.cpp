// accel.openreg._native: openreg's extras beyond the hooks (registration,
// fills, fault injection, execution units), a module of its own that
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

// The device buffer a fill writes, with its element count for `dtype`.
template <typename T>
std::pair<T*, std::size_t> fillTarget(const py::handle& buffer, const char* what) {
  const BufferView view = bufferView(buffer, what);
  ACCEL_CHECK(
      view.device.type() == openreg::deviceType(), InvalidArgument, what,
      ": the buffer is on ", view.device.str(),
      ", not an openreg device; allocate it with accel.empty(n, device='openreg:0')");
  ACCEL_CHECK(view.nbytes % sizeof(T) == 0, InvalidArgument, what, ": ", view.nbytes,
              " bytes is not a whole number of ", sizeof(T), "-byte elements");
  return {static_cast<T*>(view.data), view.nbytes / sizeof(T)};
}

Stream fillStream(const py::handle& buffer, const py::object& stream, const char* what) {
  const BufferView view = bufferView(buffer, what);
  if (stream.is_none()) {
    return getHooks(openreg::deviceType()).getCurrentStream(view.device.index());
  }
  const auto packed =
      stream.attr("pack3")().cast<std::tuple<long long, long long, long long>>();
  const Stream s =
      Stream::unpack3(std::get<0>(packed), std::get<1>(packed), std::get<2>(packed));
  ACCEL_CHECK(s.device == view.device, InvalidArgument, what, ": the stream is on ",
              s.device.str(), " but the buffer on ", view.device.str());
  return s;
}

template <bool kNormal>
void openRegFill(const py::handle& buffer, double a, double b, const std::string& dtype,
                 const std::optional<Generator>& generator, const py::object& stream) {
  const char* what = kNormal ? "fill_normal" : "fill_uniform";
  const Stream s = fillStream(buffer, stream, what);
  const Generator g = generator.value_or(Generator{});
  if (dtype == "float32") {
    auto [data, count] = fillTarget<float>(buffer, what);
    GilRelease release;
    if constexpr (kNormal) {
      openreg::fillNormal(s, data, count, float(a), float(b), g);
    } else {
      openreg::fillUniform(s, data, count, float(a), float(b), g);
    }
  } else if (dtype == "float64") {
    auto [data, count] = fillTarget<double>(buffer, what);
    GilRelease release;
    if constexpr (kNormal) {
      openreg::fillNormal(s, data, count, a, b, g);
    } else {
      openreg::fillUniform(s, data, count, a, b, g);
    }
  } else {
    throw InvalidArgument(std::string(what) + ": dtype '" + dtype +
                          "': use 'float32' or 'float64'");
  }
}

// fill_uniform(buffer, low=0, high=1, ...) or fill_normal(buffer, mean=0,
// stddev=1, ...): the two share every parameter but the names of the first two.
template <bool kNormal>
void defOpenRegFill(py::module_& o, const char* first, const char* second,
                    const char* doc) {
  o.def(
      kNormal ? "fill_normal" : "fill_uniform",
      [](const Typed<"accel._C.Buffer">& buffer, double a, double b,
         const std::string& dtype, const std::optional<Generator>& generator,
         const Typed<"Optional[accel._C.Stream]">& stream) {
        openRegFill<kNormal>(buffer, a, b, dtype, generator, stream);
      },
      py::arg("buffer"), py::arg(first) = 0.0, py::arg(second) = 1.0,
      py::arg("dtype") = "float32", py::arg("generator") = py::none(),
      py::arg("stream") = py::none(), doc);
}

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
  defOpenRegFill<false>(
      o, "low", "high",
      "Enqueues a uniform fill of an openreg buffer on `stream` (default: the "
      "buffer device's current stream) from `generator` (default: the device's "
      "default generator). Same numbers as the host fill for the same (seed, "
      "offset).");
  defOpenRegFill<true>(o, "mean", "stddev", "Like fill_uniform, normal(mean, stddev).");
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
