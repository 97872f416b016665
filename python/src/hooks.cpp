// accel._C.Hooks (one backend's hooks, by device type) and the context
// functions: the two layers under the Python API.
//
// A Hooks object stores only the device type and looks the hooks up on every
// call (one atomic load), so that it follows a backend registered after it
// was made, as the hooks table does.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "accel/capabilities.h"
#include "accel/context.h"
#include "accel/error.h"
#include "accel/fork.h"
#include "accel/memory/snapshot_json.h"
#include "accel/memory_stats.h"
#include "bindings.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {
namespace {

constexpr HookGroup kAllGroups[] = {
    HookGroup::Low,    HookGroup::High,   HookGroup::Device,        HookGroup::Streams,
    HookGroup::Events, HookGroup::Memory, HookGroup::MemoryHistory, HookGroup::Graphs,
    HookGroup::Copies, HookGroup::Fill};
static_assert(std::size(kAllGroups) == kNumHookGroups, "every group, in order");

HookGroup groupFromName(std::string_view name) {
  for (HookGroup group : kAllGroups) {
    if (hookGroupName(group) == name) return group;
  }
  std::string known;
  for (HookGroup group : kAllGroups) {
    known += known.empty() ? "" : ", ";
    known += hookGroupName(group);
  }
  throw InvalidArgument("unknown hook group '" + std::string(name) + "'; groups are " +
                        known);
}

}  // namespace

void bindHooks(py::module_& m) {
  py::class_<PyHooks>(
      m, "Hooks",
      "One backend's hooks, found by device type name. Methods take device "
      "indices (-1 = current device) and follow docs/hooks.md.")
      .def(py::init([](const Typed<"str">& type) {
             return PyHooks{typeFromName(type, "accel.backend")};
           }),
           py::arg("type"))
      .def("__reduce__", &refusePickle<PyHooks>)
      .def_property_readonly("name",
                             [](const PyHooks& h) { return std::string(h.get().name()); })
      .def_property_readonly("is_registered",
                             [](const PyHooks& h) { return isHooksRegistered(h.type); })
      .def(
          "capabilities",
          [](const PyHooks& h) {
            std::vector<std::string> groups;
            for (HookGroup group : kAllGroups) {
              if (h.get().supports(group)) groups.emplace_back(hookGroupName(group));
            }
            return groups;
          },
          "Names of the hook groups the backend declares.")
      .def(
          "supports",
          [](const PyHooks& h, const std::string& group) {
            return h.get().supports(groupFromName(group));
          },
          py::arg("group"))
      .def("is_built", [](const PyHooks& h) { return h.get().isBuilt(); })
      .def("is_available", [](const PyHooks& h) { return h.get().isAvailable(); })
      .def("device_count", [](const PyHooks& h) { return h.get().deviceCount(); })
      .def("current_device",
           [](const PyHooks& h) { return int(h.get().getCurrentDevice()); })
      .def(
          "set_device",
          [](const PyHooks& h, DeviceIndexArg i) { h.get().setCurrentDevice(i.value); },
          py::arg("index"))
      .def(
          "exchange_device",
          [](const PyHooks& h, DeviceIndexArg i) {
            return int(h.get().exchangeDevice(i.value));
          },
          py::arg("index"))
      .def(
          "maybe_exchange_device",
          [](const PyHooks& h, DeviceIndexArg i) {
            return int(h.get().maybeExchangeDevice(i.value));
          },
          py::arg("index"))
      .def(
          "lazy_init", [](const PyHooks& h) { globalContext().lazyInitDevice(h.type); },
          Release(), "Context::lazyInitDevice: initialises the backend once per process.")
      .def("is_initialized",
           [](const PyHooks& h) { return globalContext().isInitialized(h.type); })
      .def("is_poisoned_by_fork",
           [](const PyHooks& h) { return isPoisonedByFork(h.type); })
      .def(
          "has_primary_context",
          [](const PyHooks& h, DeviceIndexArg i) {
            return h.get().hasPrimaryContext(i.value);
          },
          py::arg("index"))
      .def(
          "default_generator",
          [](const PyHooks& h, DeviceIndexArg i) {
            return h.get().getDefaultGenerator(i.value);
          },
          py::arg("index") = -1,
          "The device's default generator straight from the hooks (no context, no "
          "initialisation).")
      .def(
          "new_generator",
          [](const PyHooks& h, DeviceIndexArg i) {
            return h.get().getNewGenerator(i.value);
          },
          py::arg("index") = -1)
      .def(
          "synchronize",
          [](const PyHooks& h, DeviceIndexArg i) { h.get().deviceSynchronize(i.value); },
          py::arg("index") = -1, Release())
      .def("show_config", [](const PyHooks& h) { return h.get().showConfig(); })
      .def(
          "device_properties",
          [](const PyHooks& h, DeviceIndexArg i) {
            return h.get().getDeviceProperties(i.value);
          },
          py::arg("index") = -1)
      .def("stream_priority_range",
           [](const PyHooks& h) { return h.get().streamPriorityRange(); })
      .def(
          "device_from_ptr",
          [](const PyHooks& h, std::uintptr_t ptr) {
            return h.get().getDeviceFromPtr(reinterpret_cast<const void*>(ptr));
          },
          py::arg("ptr"))
      .def(
          "is_pinned_ptr",
          [](const PyHooks& h, std::uintptr_t ptr) {
            return h.get().isPinnedPtr(reinterpret_cast<const void*>(ptr));
          },
          py::arg("ptr"))
      .def(
          "probes", [](const PyHooks& h) -> Typed<"Dict[str, Callable[[], Any]]"> {
            // Argument-free functions with the type captured: a call costs what
            // a no-op pybind11 call costs, with no `self` to convert.
            const DeviceType t = h.type;
            py::dict out;
            out["is_available"] = py::cpp_function(
                [t] { return getHooks(t).isAvailable(); }, py::name("is_available"),
                py::doc("True if the backend has a usable device. Never raises."));
            out["is_built"] = py::cpp_function(
                [t] { return getHooks(t).isBuilt(); }, py::name("is_built"),
                py::doc("True if the backend was built. Never raises."));
            out["device_count"] = py::cpp_function(
                [t] { return getHooks(t).deviceCount(); }, py::name("device_count"),
                py::doc("Number of devices; 0 on any error."));
            out["current_device"] = py::cpp_function(
                [t] { return int(getHooks(t).getCurrentDevice()); },
                py::name("current_device"),
                py::doc("This thread's current device index (0 until set)."));
            return out;
          },
          "The probes as argument-free functions bound to this type.")
      .def("__repr__", [](const PyHooks& h) {
        return "<accel._C.Hooks '" + std::string(deviceTypeName(h.type)) + "'>";
      });

  // ---- the context ----
  m.def(
      "_get_default_generator",
      [](const std::string& type, DeviceIndexArg index) {
        return globalContext().defaultGenerator(Device(typeFromName(type), index.value));
      },
      py::arg("type"), py::arg("index") = -1, Release(),
      "Context::defaultGenerator(Device(type, index)): initialises the backend first.");
  m.def(
      "_lazy_init",
      [](const std::string& type) { globalContext().lazyInitDevice(typeFromName(type)); },
      py::arg("type"), Release());
  m.def(
      "_is_initialized",
      [](const std::string& type) {
        return globalContext().isInitialized(typeFromName(type));
      },
      py::arg("type"));
  m.def(
      "_manual_seed",
      [](const Typed<"int">& seed) { globalContext().manualSeed(toSeed(seed)); },
      py::arg("seed"), "Context::manualSeed: CPU and every initialised backend.");
  m.def(
      "_current_accelerator",
      []() -> std::optional<std::string> {
        std::optional<DeviceType> type = globalContext().currentAccelerator();
        if (!type) return std::nullopt;
        return std::string(deviceTypeName(*type));
      },
      "The accelerator programs should use, or None.");
  m.def(
      "_set_current_accelerator",
      [](const Typed<"str">& type) {
        globalContext().setCurrentAccelerator(
            typeFromName(type, "accel.set_current_accelerator"));
      },
      py::arg("type"));
  m.def("_clear_current_accelerator", [] { globalContext().clearCurrentAccelerator(); });
  m.def(
      "_registered_types",
      [] {
        std::vector<std::string> names;
        for (DeviceType type : registeredHooksTypes())
          names.emplace_back(deviceTypeName(type));
        return names;
      },
      "Names of the device types with a registered backend, in registration order.");
  m.def(
      "_device_type_names",
      [] {
        std::vector<std::string> names;
        for (DeviceType type : allDeviceTypes()) names.emplace_back(deviceTypeName(type));
        return names;
      },
      "Every known device type name (built in and registered at run time).");
  m.def(
      "_device_type_code",
      [](const std::string& type) { return int(toIndex(typeFromName(type))); },
      py::arg("type"), "The numeric DeviceType (Stream.pack3's third integer).");
  m.def(
      "_hooks_origin",
      [](const std::string& type) { return hooksOrigin(typeFromName(type)); },
      py::arg("type"));
}

}  // namespace accel::python
