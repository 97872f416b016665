// Value objects of accel._C: Device, Generator, DeviceProperties, and the
// argument conversions every other part of the binding uses.
#include <pybind11/stl.h>

#include <climits>
#include <span>

#include "accel/context.h"
#include "accel/device_properties.h"
#include "accel/error.h"
#include "accel/generator.h"
#include "bindings.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {

DeviceType typeFromName(std::string_view name) {
  std::optional<DeviceType> type = findDeviceType(name);
  if (type) return *type;
  std::string problem = explainBadDeviceTypeName(name);
  if (problem.empty()) {
    problem = "no backend is registered for device type '" + std::string(name) + "'";
  }
  const std::vector<DeviceType> registered = registeredHooksTypes();
  throw InvalidArgument(
      problem + "; registered backends: " +
      (registered.empty() ? std::string("none") : joinDeviceTypeNames(registered)) +
      "; load another with accel.load_backend(path)");
}

DeviceType typeFromName(const py::handle& name, const char* what) {
  return typeFromName(toText(name, what));
}

std::string toText(const py::handle& text, const char* what) {
  if (!PyUnicode_Check(text.ptr())) {
    throw py::type_error(
        std::string(what) + ": expected a str, got " +
        std::string(py::str(py::type::handle_of(text).attr("__name__"))));
  }
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (utf8 == nullptr) {
    // A lone surrogate ('\udcff', from a bytes name decoded with
    // surrogateescape) has no UTF-8 form: no device or type is called that.
    PyErr_Clear();
    throw InvalidArgument(std::string(what) + ": " +
                          std::string(py::str(py::repr(text))) +
                          " is not valid text (it holds a lone surrogate); device "
                          "and type names are ASCII, e.g. 'openreg:0'");
  }
  return {utf8, static_cast<std::size_t>(size)};
}

void lazyInitFromPython(DeviceType type) {
  if (globalContext().isInitialized(type)) return;
  // The package's lazy state runs the calls queued before initialisation
  // (a manual_seed), which Context::lazyInitDevice alone would skip.
  py::module_::import("accel._lazy")
      .attr("state")(std::string(deviceTypeName(type)))
      .attr("lazy_init")();
}

DeviceType currentAcceleratorType(const char* what) {
  const std::optional<DeviceType> type = globalContext().currentAccelerator();
  if (type) return *type;
  const std::vector<DeviceType> registered = registeredHooksTypes();
  std::vector<DeviceType> started_before_fork;
  for (DeviceType t : registered) {
    if (isPoisonedByFork(t)) started_before_fork.push_back(t);
  }
  // In a fork child the likely reason: the backends were started in the parent.
  const std::string fork_note =
      started_before_fork.empty()
          ? std::string()
          : "; " + joinDeviceTypeNames(started_before_fork) +
                " were started before fork() and cannot be used in this child process";
  throw NotAvailable(std::string(what) +
                     ": no accelerator is available (registered backends: " +
                     joinDeviceTypeNames(registered) + fork_note +
                     "); pass a device, or load a backend with accel.load_backend(path)");
}

std::uint64_t toSeed(const py::handle& seed) {
  if (!PyLong_Check(seed.ptr()) || PyBool_Check(seed.ptr())) {
    throw InvalidArgument(
        "a seed must be an int, not " +
        std::string(py::str(py::type::handle_of(seed).attr("__name__"))));
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(seed.ptr(), &overflow);
  if (overflow == 0) return static_cast<std::uint64_t>(value);  // negative: 2^64 + seed
  if (overflow > 0) {
    const unsigned long long unsigned_value = PyLong_AsUnsignedLongLong(seed.ptr());
    if (!PyErr_Occurred()) return unsigned_value;
    PyErr_Clear();
  }
  throw InvalidArgument("seed " + std::string(py::str(seed)) +
                        " is out of range: use an int in [-2**63, 2**64)");
}

Device toDevice(const py::handle& device) {
  if (py::isinstance<Device>(device)) return device.cast<Device>();
  if (py::isinstance<py::str>(device)) return Device::parse(toText(device, "device"));
  throw py::type_error("expected an accel.Device or text like 'openreg:1', got " +
                       std::string(py::str(py::repr(device))));
}

DeviceType acceleratorTypeFor(const py::handle& device, const char* what) {
  const DeviceType type = currentAcceleratorType(what);
  if (device.is_none() || PyLong_Check(device.ptr())) return type;
  const Device given = toDevice(device);
  if (given.type() == type) return type;
  const std::string other(deviceTypeName(given.type()));
  throw InvalidArgument(accel::detail::concat(
      what, ": expected a device of the current accelerator '", deviceTypeName(type),
      "', got '", given.str(), "' (",
      given.isCpu() ? std::string("cpu is not an accelerator")
                    : "use accel." + other + "." + what +
                          " for that backend, or accel.set_current_accelerator('" +
                          other + "') first",
      ")"));
}

Device toDeviceOrCurrent(const py::handle& device, const char* what) {
  if (device.is_none()) {
    const DeviceType type = currentAcceleratorType(what);
    return Device(type, getHooks(type).getCurrentDevice());
  }
  if (PyLong_Check(device.ptr()) && !PyBool_Check(device.ptr())) {
    const DeviceType type = currentAcceleratorType(what);
    const DeviceIndex index = deviceIndexOfInt(device);
    return Device(type,
                  index == kCurrentDevice ? getHooks(type).getCurrentDevice() : index);
  }
  const Device d = toDevice(device);
  if (d.isCpu() || d.hasIndex()) return d;
  return Device(d.type(), getHooks(d.type()).getCurrentDevice());
}

namespace {

py::bytes stateBytes(const std::vector<std::uint8_t>& state) {
  return py::bytes(reinterpret_cast<const char*>(state.data()), state.size());
}

void setStateFrom(Generator& generator, const py::buffer& state) {
  py::buffer_info info = state.request();
  ACCEL_CHECK(info.ndim <= 1 && (info.ndim == 0 || info.strides[0] == info.itemsize),
              InvalidArgument,
              "a generator state must be contiguous bytes (as get_state() returns)");
  const auto* data = static_cast<const std::uint8_t*>(info.ptr);
  generator.setState(std::span<const std::uint8_t>(
      data, static_cast<std::size_t>(info.size * info.itemsize)));
}

}  // namespace

void bindObjects(py::module_& m) {
  withEquality(
      py::class_<Device>(m, "Device",
                         "A device: a type and an index, e.g. Device('openreg:1') or "
                         "Device('openreg', 1). Index None means 'the current device'."))
      .def(py::init(
               [](const py::str& text) { return Device::parse(toText(text, "Device")); }),
           py::arg("device"),
           "Parses 'type' or 'type:index'. Raises InvalidArgumentError on bad text.")
      .def(py::init([](const py::str& type, DeviceIndexArg index) {
             return Device(typeFromName(type, "Device"), index.value);
           }),
           py::arg("type"), py::arg("index"),
           "A device of a registered type and an index.")
      .def(py::init([](const Device& device) { return device; }), py::arg("device"))
      .def_property_readonly(
          "type", [](const Device& d) { return std::string(deviceTypeName(d.type())); },
          "The device type's name, e.g. 'openreg'.")
      .def_property_readonly(
          "index",
          [](const Device& d) -> std::optional<int> {
            if (!d.hasIndex()) return std::nullopt;
            return int(d.index());
          },
          "The index, or None for 'the current device of this type'.")
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) { return "accel.Device('" + d.str() + "')"; })
      .def("__hash__", [](const Device& d) { return std::hash<Device>{}(d); })
      .def("__reduce__", [](const Device& d) {
        return py::make_tuple(py::type::of<Device>(), py::make_tuple(d.str()));
      });

  withEquality(py::class_<Generator>(
                   m, "Generator",
                   "A handle to a Philox4x32-10 random-number generator: a seed and an "
                   "offset into its stream. Copies share state; clone() does not."))
      .def(py::init([](const DeviceLike& device) {
             // A new, independent generator (getNewGenerator), as
             // torch.Generator(device) makes one; the default generator is
             // the backend module's default_generator().
             const Device d = toDeviceOrCurrent(device, "Generator");
             ACCEL_CHECK(!d.isCpu(), NotSupported,
                         "accel.Generator('cpu'): accel has no CPU generator object; use "
                         "an accelerator device, e.g. accel.Generator('openreg:0')");
             lazyInitFromPython(d.type());
             return getHooks(d.type()).getNewGenerator(d.index());
           }),
           py::arg("device") = py::none(),
           "A new generator on `device` (default: the current accelerator's current "
           "device), independent of the default one, from the backend's new-generator "
           "hook.")
      .def("__reduce__", &refusePickle<Generator>)
      .def_property_readonly("device", &Generator::device, "The device it serves.")
      .def(
          "manual_seed",
          [](Generator& g, const Typed<"int">& seed) -> Generator& {
            g.manualSeed(toSeed(seed));
            return g;
          },
          py::arg("seed"), py::return_value_policy::reference_internal,
          "Seeds deterministically and rewinds the offset to 0. Returns self.")
      .def("seed", &Generator::seed,
           "Seeds from a non-deterministic source and returns the seed.")
      .def("initial_seed", &Generator::initialSeed,
           "The seed this generator started from or was last seeded with.")
      .def("current_seed", &Generator::currentSeed, "The seed of the current stream.")
      .def("get_offset", &Generator::offset, "Outputs consumed so far (32-bit words).")
      .def(
          "set_offset",
          [](Generator& g, IntArg<std::uint64_t, "offset"> offset) {
            g.setOffset(offset.value);
          },
          py::arg("offset"), "Moves to `offset` in the current stream.")
      .def_property("offset", &Generator::offset,
                    [](Generator& g, IntArg<std::uint64_t, "offset"> offset) {
                      g.setOffset(offset.value);
                    })
      .def(
          "get_state", [](const Generator& g) { return stateBytes(g.getState()); },
          "The state as a versioned byte blob (docs/random.md).")
      .def(
          "set_state",
          [](Generator& g, const Typed<"Any", py::buffer>& state) -> Generator& {
            setStateFrom(g, state);
            return g;
          },
          py::arg("state"), py::return_value_policy::reference_internal,
          "Restores a blob from get_state(). Raises InvalidArgumentError on a blob of "
          "the wrong size, magic or version, leaving the state as it was.")
      .def("clone", &Generator::clone, "An independent generator with the same state.")
      .def_property_readonly(
          "engine", [](const Generator& g) { return std::string(g.impl().engineName()); },
          "The engine's name.")
      .def("__hash__",
           [](const Generator& g) { return std::hash<const void*>{}(&g.impl()); })
      .def("__repr__", [](const Generator& g) {
        return "<accel.Generator " + g.device().str() +
               " seed=" + std::to_string(g.currentSeed()) +
               " offset=" + std::to_string(g.offset()) + ">";
      });

  py::class_<DeviceProperties>(m, "DeviceProperties",
                               "What a device is: typed fields, not text to parse.")
      .def_readonly("name", &DeviceProperties::name)
      .def_readonly("total_memory", &DeviceProperties::total_memory_bytes,
                    "Device memory capacity in bytes; 0 if unknown.")
      .def_readonly("multi_processor_count", &DeviceProperties::multiprocessor_count)
      .def_readonly("major", &DeviceProperties::compute_capability_major)
      .def_readonly("minor", &DeviceProperties::compute_capability_minor)
      .def_readonly("warp_size", &DeviceProperties::warp_size)
      .def_readonly("max_threads_per_multi_processor",
                    &DeviceProperties::max_threads_per_multiprocessor)
      .def_readonly("L2_cache_size", &DeviceProperties::l2_cache_bytes)
      .def_readonly("is_integrated", &DeviceProperties::is_integrated)
      .def_readonly("uuid", &DeviceProperties::uuid)
      .def("__reduce__", &refusePickle<DeviceProperties>)
      .def("__repr__", [](const DeviceProperties& p) {
        return "DeviceProperties(name='" + p.name +
               "', total_memory=" + std::to_string(p.total_memory_bytes >> 20) +
               "MB, multi_processor_count=" + std::to_string(p.multiprocessor_count) +
               ")";
      });
}

}  // namespace accel::python
