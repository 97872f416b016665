// The core's side of the C plugin boundary: the services a plugin calls, the
// statuses its functions return turned into the library's errors, and the
// version negotiation with its entry (accel/plugin_abi.h, docs/plugin-abi.md).
#include "plugins/c_plugin_link.h"

#include <cstring>
#include <exception>
#include <memory>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/philox_generator.h"
#include "accel/plugin_status.h"
#include "accel/registrar.h"
#include "accel/registry.h"
#include "accel/version.h"
#include "plugins/c_plugin_hooks.h"
#include "random/device_fill_host.h"

namespace accel::detail {
namespace {

// The message a plugin gave for the status it is about to return. Per
// thread: a plugin reports and returns on the thread the core called it on.
struct PendingError {
  bool set = false;
  accel_status code = ACCEL_OK;
  std::string message;
};
thread_local PendingError t_pending;

}  // namespace

thread_local bool t_plugin_message_pending = false;

namespace {

std::string_view statusName(accel_status status) noexcept {
  switch (status) {
    case ACCEL_OK:
      return "ACCEL_OK";
    case ACCEL_ERROR_INVALID_ARGUMENT:
      return "ACCEL_ERROR_INVALID_ARGUMENT";
    case ACCEL_ERROR_NOT_SUPPORTED:
      return "ACCEL_ERROR_NOT_SUPPORTED";
    case ACCEL_ERROR_NOT_AVAILABLE:
      return "ACCEL_ERROR_NOT_AVAILABLE";
    case ACCEL_ERROR_OUT_OF_MEMORY:
      return "ACCEL_ERROR_OUT_OF_MEMORY";
    case ACCEL_ERROR_DEVICE:
      return "ACCEL_ERROR_DEVICE";
    case ACCEL_ERROR_VERSION:
      return "ACCEL_ERROR_VERSION";
    case ACCEL_ERROR_DUPLICATE:
      return "ACCEL_ERROR_DUPLICATE";
    case ACCEL_ERROR_INTERNAL:
      return "ACCEL_ERROR_INTERNAL";
    case ACCEL_ERROR_NOT_IMPLEMENTED:
      return "ACCEL_ERROR_NOT_IMPLEMENTED";
    default:
      return "an unknown status";
  }
}

// The pending message for `status`, taken (empty when the plugin gave none
// for this status).
std::string takeMessage(accel_status status) {
  std::string message;
  if (t_pending.set && t_pending.code == status) message = std::move(t_pending.message);
  t_pending = PendingError{};
  t_plugin_message_pending = false;
  return message;
}

// A service's failure, reported to the plugin as its pending message (the
// plugin usually returns the status on, and the core then shows the message).
accel_status report(accel_status code, std::string message) noexcept {
  try {
    t_pending.set = true;
    t_pending.code = code;
    t_pending.message = std::move(message);
    t_plugin_message_pending = true;
  } catch (...) {
    t_pending = PendingError{};
    t_plugin_message_pending = false;
  }
  return code;
}

// Runs a service body, turning what it throws into a status and a message.
template <typename Body>
accel_status serve(const char* service, Body&& body) noexcept {
  try {
    body();
    return ACCEL_OK;
  } catch (const DuplicateRegistration& e) {
    return report(ACCEL_ERROR_DUPLICATE, e.message());
  } catch (const InvalidArgument& e) {
    return report(ACCEL_ERROR_INVALID_ARGUMENT, e.message());
  } catch (const NotSupported& e) {
    return report(ACCEL_ERROR_NOT_SUPPORTED, e.message());
  } catch (const NotAvailable& e) {
    return report(ACCEL_ERROR_NOT_AVAILABLE, e.message());
  } catch (const OutOfMemory& e) {
    return report(ACCEL_ERROR_OUT_OF_MEMORY, e.message());
  } catch (const Error& e) {
    return report(ACCEL_ERROR_DEVICE, e.message());
  } catch (const std::bad_alloc&) {
    return report(ACCEL_ERROR_OUT_OF_MEMORY, concat(service, ": out of host memory"));
  } catch (const std::exception& e) {
    return report(ACCEL_ERROR_INTERNAL, concat(service, ": ", e.what()));
  } catch (...) {
    return report(ACCEL_ERROR_INTERNAL, concat(service, ": unknown exception"));
  }
}

void requireArgument(bool ok, const char* service, const char* what) {
  ACCEL_CHECK(ok, InvalidArgument, service, ": ", what,
              " is null; pass the pointer the plugin ABI asks for (accel/plugin_abi.h)");
}

accel::Registrar& registeringRegistrar(accel_core* core, const char* service) {
  requireArgument(core != nullptr, service, "the core handle");
  // The thread first: only the loading thread, during register_backends,
  // may see a registrar.
  const bool registering = core->registering_thread.load(std::memory_order_acquire) ==
                           std::this_thread::get_id();
  accel::Registrar* registrar =
      registering ? core->registrar.load(std::memory_order_acquire) : nullptr;
  ACCEL_CHECK(registrar != nullptr, InvalidArgument, service,
              ": a plugin may register only from its register_backends, on the thread "
              "the core called it on");
  return *registrar;
}

// Called from C: nothing may escape (an allocation failure drops the message).
void setError(accel_core* /*core*/, accel_status code, const char* message) noexcept {
  try {
    report(code, message != nullptr ? std::string(message) : std::string());
  } catch (...) {
    clearPluginError();
  }
}

accel_status registerDeviceTypeService(accel_core* core, const char* name,
                                       int32_t* type) {
  return serve("register_device_type", [&] {
    accel::Registrar& registrar = registeringRegistrar(core, "register_device_type");
    requireArgument(name != nullptr, "register_device_type", "the name");
    requireArgument(type != nullptr, "register_device_type", "the type out-pointer");
    *type = toIndex(registrar.registerDeviceType(name));
  });
}

accel_status registerBackendService(accel_core* core, const accel_backend* backend) {
  return serve("register_backend", [&] {
    accel::Registrar& registrar = registeringRegistrar(core, "register_backend");
    requireArgument(backend != nullptr, "register_backend", "the backend");
    registrar.registerHooks(makeCPluginHooks(*core, *backend));
  });
}

accel_status findDeviceBlockService(accel_core* core, int32_t device_type,
                                    const void* ptr, int8_t* device, void** base,
                                    size_t* bytes) {
  return serve("find_device_block", [&] {
    requireArgument(core != nullptr, "find_device_block", "the core handle");
    requireArgument(device != nullptr && base != nullptr && bytes != nullptr,
                    "find_device_block", "an out-pointer");
    const CDeviceBlock block = findCPluginBlock(device_type, ptr);
    *device = block.device;
    *base = block.base;
    *bytes = block.bytes;
  });
}

accel_status defaultGeneratorService(accel_core* core, int32_t device_type, int8_t device,
                                     accel_generator** out) {
  return serve("default_generator", [&] {
    requireArgument(core != nullptr, "default_generator", "the core handle");
    requireArgument(out != nullptr, "default_generator", "the out-pointer");
    ACCEL_CHECK(device_type >= 0 && device_type < kMaxDeviceTypes &&
                    isValidDeviceType(static_cast<DeviceType>(device_type)),
                InvalidArgument, "default_generator: ", device_type,
                " is not a registered device type");
    const Generator& generator =
        getHooks(static_cast<DeviceType>(device_type)).getDefaultGenerator(device);
    // The default generators live as long as their hooks: for the process.
    *out = reinterpret_cast<accel_generator*>(const_cast<Generator*>(&generator));
  });
}

accel_status reservePhiloxService(accel_generator* generator, uint64_t count,
                                  uint64_t* seed, uint64_t* offset) {
  return serve("reserve_philox", [&] {
    requireArgument(generator != nullptr, "reserve_philox", "the generator");
    requireArgument(seed != nullptr && offset != nullptr, "reserve_philox",
                    "an out-pointer");
    const PhiloxPosition position =
        reservePhilox(*reinterpret_cast<const Generator*>(generator), count);
    *seed = position.seed;
    *offset = position.offset;
  });
}

uint32_t negotiatedVersionService(accel_core* core) {
  return core != nullptr ? core->negotiated : 0;
}

uint64_t fillOutputsService(int32_t kind, uint64_t count) {
  return philoxOutputsOfFill(kind, count);
}

accel_status fillHostService(accel_core* core, int32_t kind, void* data, uint64_t count,
                             double a, double b, uint64_t seed, uint64_t offset) {
  return serve("fill_host", [&] {
    requireArgument(core != nullptr, "fill_host", "the core handle");
    requireArgument(data != nullptr || count == 0, "fill_host", "the data pointer");
    fillHostByKind(kind, data, count, a, b, PhiloxPosition{seed, offset});
  });
}

accel_status retainGeneratorService(accel_generator* generator, accel_generator** out) {
  return serve("retain_generator", [&] {
    requireArgument(generator != nullptr, "retain_generator", "the generator");
    requireArgument(out != nullptr, "retain_generator", "the out-pointer");
    // A copy shares the generator's state: draws reserved through it move
    // the original.
    *out = reinterpret_cast<accel_generator*>(
        new Generator(*reinterpret_cast<const Generator*>(generator)));
  });
}

void releaseGeneratorService(accel_generator* generator) {
  delete reinterpret_cast<Generator*>(generator);
}

accel_status divertAllocationsService(accel_core* core, int32_t device_type,
                                      int8_t device, int32_t on) {
  return serve("divert_allocations", [&] {
    requireArgument(core != nullptr, "divert_allocations", "the core handle");
    divertCPluginAllocations(device_type, device, on != 0);
  });
}

int32_t useBlockService(accel_core* core, int32_t device_type, const void* ptr,
                        accel_block_use** use, int8_t* device, void** base,
                        size_t* requested) {
  if (use != nullptr) *use = nullptr;  // nothing taken unless a use is
  if (core == nullptr || use == nullptr || device == nullptr || base == nullptr ||
      requested == nullptr) {
    return ACCEL_BLOCK_NONE;
  }
  try {
    return useCPluginBlock(device_type, ptr, *use, *device, *base, *requested);
  } catch (...) {
    clearPluginError();
    return ACCEL_BLOCK_NONE;
  }
}

void releaseBlockUseService(accel_block_use* use) { releaseCPluginBlockUse(use); }

accel_status currentDeviceService(accel_core* core, int32_t device_type, int8_t* device) {
  return serve("current_device", [&] {
    requireArgument(core != nullptr, "current_device", "the core handle");
    requireArgument(device != nullptr, "current_device", "the out-pointer");
    *device = cPluginCurrentDevice(device_type);
  });
}

accel_status currentStreamService(accel_core* core, int32_t device_type, int8_t device,
                                  int64_t* stream) {
  return serve("current_stream", [&] {
    requireArgument(core != nullptr, "current_stream", "the core handle");
    requireArgument(stream != nullptr, "current_stream", "the out-pointer");
    *stream = cPluginCurrentStream(device_type, device);
  });
}

accel_status joinCaptureService(accel_core* core, int32_t device_type,
                                accel_stream capturing, accel_stream joined) {
  return serve("join_capture", [&] {
    requireArgument(core != nullptr, "join_capture", "the core handle");
    joinCPluginCapture(device_type, capturing, joined);
  });
}

constexpr accel_core_services kServices{
    sizeof(accel_core_services), setError,
    registerDeviceTypeService,   registerBackendService,
    findDeviceBlockService,      defaultGeneratorService,
    reservePhiloxService,        negotiatedVersionService,
    fillOutputsService,          fillHostService,
    retainGeneratorService,      releaseGeneratorService,
    divertAllocationsService,    useBlockService,
    releaseBlockUseService,      currentDeviceService,
    currentStreamService,        joinCaptureService,
};

// Text the plugin handed over (name, version): at most 256 bytes, up to the
// first NUL.
std::string pluginText(const char* text) {
  if (text == nullptr) return {};
  return std::string(text, ::strnlen(text, 256));
}

std::string coreRange() {
  return concat("this libaccel.so (", libraryVersion(), ") speaks plugin API ",
                abiVersionText(kOldestPluginAbi), " to ",
                abiVersionText(kNewestPluginAbi));
}

bool failRecord(PluginRecord& r, PluginStatus status, std::string detail) {
  r.status = status;
  r.detail = std::move(detail);
  return false;
}

// Calls a plugin function that may be C++ and throw, whatever the ABI says.
template <typename Call>
accel_status callGuarded(Call&& call, std::string& thrown) noexcept {
  try {
    return call();
  } catch (const std::exception& e) {
    thrown = e.what();
  } catch (...) {
    // Not derived from std::exception, or foreign: a C++ plugin built on
    // another standard library (libc++) throws exceptions this core cannot
    // read even when they are std::exceptions to the plugin.
    thrown =
        "an exception the core cannot read (not a std::exception of this core's "
        "standard library)";
  }
  return ACCEL_ERROR_INTERNAL;
}

}  // namespace

std::string abiVersionText(std::uint32_t version) {
  return concat(ACCEL_PLUGIN_ABI_MAJOR_OF(version), ".",
                ACCEL_PLUGIN_ABI_MINOR_OF(version));
}

const accel_core_services& coreServices() noexcept { return kServices; }

namespace {

[[noreturn]] void throwOfKind(accel_status status, std::string message,
                              std::source_location where) {
  switch (status) {
    case ACCEL_ERROR_INVALID_ARGUMENT:
      throw InvalidArgument(std::move(message), where);
    case ACCEL_ERROR_NOT_SUPPORTED:
    case ACCEL_ERROR_NOT_IMPLEMENTED:  // a hook's caller knows which (CPluginHooks)
      throw NotSupported(std::move(message), where);
    case ACCEL_ERROR_NOT_AVAILABLE:
      throw NotAvailable(std::move(message), where);
    case ACCEL_ERROR_OUT_OF_MEMORY:
      throw OutOfMemory(std::move(message), where);
    default:
      throw DeviceError(std::move(message), where);
  }
}

}  // namespace

[[noreturn]] void throwPluginStatus(accel_status status, std::string_view backend,
                                    std::string_view function,
                                    std::source_location where) {
  std::string message = takeMessage(status);
  if (message.empty()) {
    message = concat("'", backend, "' failed in ", function, " with ", statusName(status),
                     " (", status, ") and gave no message");
  }
  throwOfKind(status, std::move(message), where);
}

}  // namespace accel::detail

namespace accel {

void throwPluginFailure(accel_status status, std::string_view backend,
                        std::string_view function, std::string_view message,
                        std::source_location where) {
  if (message.empty()) detail::throwPluginStatus(status, backend, function, where);
  detail::clearPluginError();
  detail::throwOfKind(status, std::string(message), where);
}

accel_stream pluginStreamOf(Stream stream, DeviceType type, std::string_view what) {
  ACCEL_CHECK(stream.device.type() == type, InvalidArgument, what, ": ", stream,
              " is not a stream of '", deviceTypeName(type),
              "'; pass one of its streams");
  accel_stream s{};
  s.id = stream.id;
  s.device = stream.device.index();
  return s;
}

}  // namespace accel

namespace accel::detail {

void clearPluginError() noexcept {
  t_pending = PendingError{};
  t_plugin_message_pending = false;
}

std::string takePluginMessage(accel_status status) { return takeMessage(status); }

bool loadCEntry(accel_plugin_negotiate_fn entry, accel_core& link, Registrar& registrar,
                PluginRecord& r) {
  accel_core* core = &link;
  const std::string core_version(libraryVersion());
  const accel_core_offer offer{sizeof(accel_core_offer),
                               kNewestPluginAbi,
                               kOldestPluginAbi,
                               core_version.c_str(),
                               core,
                               &kServices};
  accel_plugin_answer answer{};
  answer.struct_size = sizeof(accel_plugin_answer);
  clearPluginError();
  std::string thrown;
  const accel_status status = callGuarded([&] { return entry(&offer, &answer); }, thrown);
  r.plugin_name = pluginText(answer.name);
  r.plugin_version = pluginText(answer.version_text);
  r.abi_newest = answer.plugin_newest_version;
  r.abi_oldest = answer.plugin_oldest_version;
  core->plugin = r.plugin_name.empty() ? r.path : r.plugin_name;
  const std::string who = concat("the plugin '", core->plugin, "'");
  if (!thrown.empty()) {
    return failRecord(r, PluginStatus::InitFailed,
                      concat("its ", ACCEL_PLUGIN_ENTRY_NAME, "() threw: ", thrown));
  }
  if (status != ACCEL_OK) {
    std::string message = takeMessage(status);
    if (status == ACCEL_ERROR_VERSION) {
      const std::string speaks =
          r.abi_newest == 0 ? std::string(" refused the core's range")
                            : concat(" speaks plugin API ", abiVersionText(r.abi_oldest),
                                     " to ", abiVersionText(r.abi_newest));
      return failRecord(
          r, PluginStatus::VersionMismatch,
          concat(who, speaks, ", but ", coreRange(), message.empty() ? "" : ": ", message,
                 "; rebuild the plugin or use an accelhooks whose range meets it"));
    }
    return failRecord(r, PluginStatus::InitFailed,
                      concat("its ", ACCEL_PLUGIN_ENTRY_NAME, "() failed with ",
                             statusName(status), message.empty() ? "" : ": ", message));
  }
  const std::uint32_t version = answer.version;
  if (version < kOldestPluginAbi || version > kNewestPluginAbi) {
    return failRecord(
        r, PluginStatus::VersionMismatch,
        concat(who, " answered plugin API ", abiVersionText(version),
               " (its headers know ", abiVersionText(r.abi_newest), "), but ",
               coreRange(),
               "; a plugin answers the lower of the core's newest and its own"));
  }
  if (answer.register_backends == nullptr) {
    return failRecord(r, PluginStatus::InitFailed,
                      concat(who, " answered without a register_backends function"));
  }
  r.abi_negotiated = version;
  core->negotiated = version;
  core->registrar.store(&registrar, std::memory_order_release);
  core->registering_thread.store(std::this_thread::get_id(), std::memory_order_release);
  clearPluginError();
  const accel_status registered =
      callGuarded([&] { return answer.register_backends(core); }, thrown);
  core->registering_thread.store(std::thread::id(), std::memory_order_release);
  core->registrar.store(nullptr, std::memory_order_release);
  if (registered == ACCEL_OK) return true;
  if (!thrown.empty()) {
    return failRecord(r, PluginStatus::InitFailed,
                      concat("its register_backends threw: ", thrown));
  }
  std::string message = takeMessage(registered);
  return failRecord(r,
                    registered == ACCEL_ERROR_DUPLICATE ? PluginStatus::Duplicate
                                                        : PluginStatus::InitFailed,
                    concat("its register_backends failed with ", statusName(registered),
                           message.empty() ? "" : ": ", message));
}

}  // namespace accel::detail

// ---- what the core exports in C ----

extern "C" ACCEL_API void accel_core_plugin_abi_range(uint32_t* oldest,
                                                      uint32_t* newest) {
  if (oldest != nullptr) *oldest = accel::detail::kOldestPluginAbi;
  if (newest != nullptr) *newest = accel::detail::kNewestPluginAbi;
}
