// What a plugin's backend asks of the core it is loaded into: the services
// of accel/plugin_abi.h as C++ calls. Part of the plugin adapter
// (accel/plugin_adapter.h): compiled into the plugin, C++17.
//
// A backend reaches its core through the Core its Registrar hands it (see
// Backend::core() in accel/adapter/backend.h), never through a process-wide
// table: two plugins, or two cores, never share one.
//
// Thread-safety: every function is thread-safe (the core's services are).
// Each throws the Failure matching the core's status, with its message.
#ifndef ACCEL_ADAPTER_CORE_H
#define ACCEL_ADAPTER_CORE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "accel/adapter/failure.h"
#include "accel/plugin_abi.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter {

// A stream of the backend's device type: its device and the backend's id.
using Stream = accel_stream;

// Whether `a` and `b` name the same stream. Never throws.
[[nodiscard]] constexpr bool sameStream(Stream a, Stream b) noexcept {
  return a.device == b.device && a.id == b.id;
}

// Where draws start in a generator's Philox stream.
struct PhiloxPosition {
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;
};

// A live block of the core's device cache (find_device_block).
struct Block {
  std::int8_t device = 0;
  void* base = nullptr;
  std::size_t bytes = 0;
};

namespace detail {

// A refusal of the core's: it holds the message already, which the
// boundary's guard keeps instead of reporting one of its own.
struct CoreRefusal : Failure {
  explicit CoreRefusal(accel_status status) : Failure(status, "refused by the core") {}
};

// Passes a refusal of the core's on; the core holds its message.
inline void check(accel_status status) {
  if (status != ACCEL_OK) throw CoreRefusal(status);
}

}  // namespace detail

namespace detail {

// A handle the core gave out, released through the services function
// `Release` names when the object goes. Move-only.
template <typename Handle, void (*accel_core_services::*Release)(Handle*)>
class OwnedHandle {
 public:
  OwnedHandle() = default;
  OwnedHandle(const accel_core_services* services, Handle* handle) noexcept
      : services_(services), handle_(handle) {}
  OwnedHandle(OwnedHandle&& other) noexcept
      : services_(other.services_), handle_(std::exchange(other.handle_, nullptr)) {}
  OwnedHandle& operator=(OwnedHandle&& other) noexcept {
    if (this != &other) {
      reset();
      services_ = other.services_;
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  ~OwnedHandle() { reset(); }

  [[nodiscard]] Handle* get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  void reset() noexcept {
    if (handle_ != nullptr) (services_->*Release)(std::exchange(handle_, nullptr));
  }
  const accel_core_services* services_ = nullptr;
  Handle* handle_ = nullptr;
};

}  // namespace detail

// A generator the core keeps alive for as long as this object lives (a
// captured fill's, read again at each replay).
using GeneratorRef =
    detail::OwnedHandle<accel_generator, &accel_core_services::release_generator>;

// A use of a block of the core's device cache (Core::useBlock): while it
// lives, a free of the block waits and the block counts as allocated. The
// use ends when the object goes.
using BlockUse =
    detail::OwnedHandle<accel_block_use, &accel_core_services::release_block_use>;

// What Core::useBlock found: state is ACCEL_BLOCK_LIVE (use and block set),
// ACCEL_BLOCK_FREED (a use after free) or ACCEL_BLOCK_NONE.
struct BlockLookup {
  std::int32_t state = ACCEL_BLOCK_NONE;
  BlockUse use;
  Block block;  // bytes: what the block's owner asked for
};

// The core a backend is registered with, for the backend's device type.
class Core {
 public:
  Core() = default;
  Core(accel_core* core, const accel_core_services* services, std::int32_t type) noexcept
      : core_(core), services_(services), type_(type) {}

  [[nodiscard]] bool linked() const noexcept { return services_ != nullptr; }
  // The device type the core gave the backend.
  [[nodiscard]] std::int32_t deviceType() const noexcept { return type_; }
  // The plugin API version this plugin and the core agreed on (1.0 for a
  // core that cannot say, which is then a 1.0 core).
  [[nodiscard]] std::uint32_t version() const noexcept {
    return has(offsetof(accel_core_services, negotiated_version),
               sizeof(services_->negotiated_version)) &&
                   services_->negotiated_version != nullptr
               ? services_->negotiated_version(core_)
               : ACCEL_PLUGIN_ABI_VERSION(1, 0);
  }

  // The live block of the device cache holding `ptr` (interior pointers
  // count). Throws InvalidArgument when none does.
  [[nodiscard]] Block findBlock(const void* ptr) const {
    Block b;
    detail::check(
        services_->find_device_block(core_, type_, ptr, &b.device, &b.base, &b.bytes));
    return b;
  }
  // The default generator of `device` (lives for the process).
  [[nodiscard]] accel_generator* defaultGenerator(std::int8_t device) const {
    accel_generator* g = nullptr;
    detail::check(services_->default_generator(core_, type_, device, &g));
    return g;
  }
  // Reserves `count` outputs of `generator`'s Philox stream.
  [[nodiscard]] PhiloxPosition reservePhilox(accel_generator* generator,
                                             std::uint64_t count) const {
    PhiloxPosition p;
    detail::check(services_->reserve_philox(generator, count, &p.seed, &p.offset));
    return p;
  }
  // Outputs a fill of `count` elements of `kind` (ACCEL_FILL_*) consumes.
  // Throws NotSupported from a core older than plugin API 1.2.
  [[nodiscard]] std::uint64_t fillOutputs(std::int32_t kind, std::uint64_t count) const {
    require(offsetof(accel_core_services, fill_outputs), sizeof(services_->fill_outputs),
            "fill_outputs");
    return services_->fill_outputs(kind, count);
  }
  // The core's reference fill into host-addressable `data` (count 0 checks
  // a and b). Throws InvalidArgument for bad parameters, NotSupported from
  // a core older than plugin API 1.2.
  void fillHost(std::int32_t kind, void* data, std::uint64_t count, double a, double b,
                PhiloxPosition from) const {
    require(offsetof(accel_core_services, fill_host), sizeof(services_->fill_host),
            "fill_host");
    detail::check(
        services_->fill_host(core_, kind, data, count, a, b, from.seed, from.offset));
  }
  // Keeps `generator` alive until the returned reference goes.
  [[nodiscard]] GeneratorRef retain(accel_generator* generator) const {
    require(offsetof(accel_core_services, release_generator),
            sizeof(services_->release_generator), "retain_generator");
    accel_generator* out = nullptr;
    detail::check(services_->retain_generator(generator, &out));
    return GeneratorRef(services_, out);
  }
  // A use of the live block holding `ptr`, or why there is none. Throws
  // NotSupported from a core older than plugin API 1.2.
  [[nodiscard]] BlockLookup useBlock(const void* ptr) const {
    require(offsetof(accel_core_services, release_block_use),
            sizeof(services_->release_block_use), "use_block");
    BlockLookup found;
    accel_block_use* use = nullptr;
    found.state = services_->use_block(core_, type_, ptr, &use, &found.block.device,
                                       &found.block.base, &found.block.bytes);
    found.use = BlockUse(services_, use);
    return found;
  }
  // The calling thread's current device and its current stream of
  // `device`, as the core keeps them. Throw NotSupported from a core older
  // than plugin API 1.2.
  [[nodiscard]] std::int8_t currentDevice() const {
    require(offsetof(accel_core_services, current_device),
            sizeof(services_->current_device), "current_device");
    std::int8_t device = 0;
    detail::check(services_->current_device(core_, type_, &device));
    return device;
  }
  [[nodiscard]] std::int64_t currentStream(std::int8_t device) const {
    require(offsetof(accel_core_services, current_stream),
            sizeof(services_->current_stream), "current_stream");
    std::int64_t stream = 0;
    detail::check(services_->current_stream(core_, type_, device, &stream));
    return stream;
  }
  // `joined` (a stream of `capturing`'s device that waited on an event
  // recorded during the capture, as CUDA's capture forks) allocates into
  // the private pool of the capture `capturing` is in until that capture
  // ends; joining twice is one join (join_capture). Throws InvalidArgument
  // when `capturing` is not being captured through the core's graphs group
  // or the streams are the same or of different devices; NotSupported from
  // a core older than plugin API 1.3.
  void joinCapture(Stream capturing, Stream joined) const {
    require(offsetof(accel_core_services, join_capture), sizeof(services_->join_capture),
            "join_capture", 3);
    detail::check(services_->join_capture(core_, type_, capturing, joined));
  }
  // While `on`, allocations on `device` ask Memory::checkAllocation first.
  void divertAllocations(std::int8_t device, bool on) const {
    require(offsetof(accel_core_services, divert_allocations),
            sizeof(services_->divert_allocations), "divert_allocations");
    detail::check(services_->divert_allocations(core_, type_, device, on ? 1 : 0));
  }

 private:
  [[nodiscard]] bool has(std::size_t offset, std::size_t size) const noexcept {
    return services_->struct_size >= offset + size;
  }
  // Throws NotSupported unless the core has `service`, which plugin API
  // 1.`since_minor` added.
  void require(std::size_t offset, std::size_t size, const char* service,
               std::uint32_t since_minor = 2) const {
    if (!has(offset, size) ||
        version() < ACCEL_PLUGIN_ABI_VERSION(ACCEL_PLUGIN_ABI_MAJOR, since_minor)) {
      throw NotSupported(concat("the core this plugin is loaded into speaks plugin API ",
                                version() >> 16, ".", version() & 0xffffu,
                                ", which has no ", service, " (since 1.", since_minor,
                                ")"));
    }
  }

  accel_core* core_ = nullptr;
  const accel_core_services* services_ = nullptr;
  std::int32_t type_ = -1;
};

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_CORE_H
