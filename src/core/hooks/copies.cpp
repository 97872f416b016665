// The copies group of AcceleratorHooks: the public wrappers, the checks they
// make and the guarantees they keep for every backend, and the defaults of
// the *Impls.
//
// The checks are the part of a copy's contract that a backend would
// otherwise write again: pointers, ranges, the stream, which device each
// side is on, and — read from the core caches a backend's memory comes from
// (coreDeviceCache, corePinnedCache) — whether a device range lies inside
// one live allocation and a pinned host range inside its block. The
// guarantee is that pinned host memory given to an asynchronous copy goes to
// its next owner only once the stream has passed the copy: the stream is
// recorded on a block of the core's pinned cache, and a copy with pinned
// memory the core does not know waits for its stream before it returns. A
// backend's *Impl then sees a copy that is well-formed as far as the core
// can tell, and adds what only its driver knows.
#include <cstdint>
#include <new>
#include <optional>
#include <string>

#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/pinned_caching_allocator.h"

namespace accel {
namespace {

std::string_view nameOf(HookId hook) { return hookInfo(hook).name; }

std::uintptr_t addressOf(const void* ptr) noexcept {
  return reinterpret_cast<std::uintptr_t>(ptr);
}

// [begin, begin + bytes) as integers; false if it wraps the address space.
bool rangeFits(const void* begin, std::size_t bytes) noexcept {
  return addressOf(begin) <= UINTPTR_MAX - (bytes - 1);
}

bool rangesOverlap(const void* a, const void* b, std::size_t bytes) noexcept {
  const auto x = addressOf(a);
  const auto y = addressOf(b);
  return x < y ? y - x < bytes : x - y < bytes;
}

// The bytes of an allocation of `allocated` bytes at `base` left from `ptr`
// (0 when ptr lies past them, in the block's rounding).
std::size_t bytesLeft(const void* base, std::size_t allocated, const void* ptr) noexcept {
  const std::uintptr_t offset = addressOf(ptr) - addressOf(base);
  return offset < allocated ? allocated - offset : 0;
}

// `which` ("dst" or "src") of a copy by `hook` on `backend` is not its device
// memory: `owner` says whose it is when another backend claims it, else
// `why` says what the backend found.
[[noreturn]] void refuseNotDeviceMemory(HookId hook, std::string_view backend,
                                        const char* which, const void* ptr,
                                        std::size_t bytes, const std::string& owner,
                                        std::string_view why) {
  throw InvalidArgument(detail::concat(
      nameOf(hook), "(): the ", which, " range [", ptr, ", +", bytes,
      ") is not device memory of '", backend,
      "': ", owner.empty() ? std::string(why) : detail::concat("it is ", owner),
      ". Pass memory from ", nameOf(HookId::getDeviceAllocator), "() of '", backend,
      "' as the device side"));
}

}  // namespace

memory::CachingAllocator* AcceleratorHooks::coreDeviceCache() const { return nullptr; }

Device AcceleratorHooks::deviceQueryForChecks(const void* ptr) const {
  return getDeviceFromPtrImpl(ptr);
}

bool AcceleratorHooks::pinnedQueryForChecks(const void* ptr) const noexcept {
  return isPinnedPtr(ptr);
}
memory::PinnedCachingAllocator* AcceleratorHooks::corePinnedCache() const {
  return nullptr;
}

std::string AcceleratorHooks::ownerElsewhere(const void* ptr,
                                             bool device_only) const noexcept {
  // The process's table: memory of a backend registered elsewhere (a test's
  // own table) is not looked for. Only initialised backends hold memory;
  // asking another one never initialises it.
  HooksTable& table = processHooksTable();
  try {
    for (int id = 0; id < detail::kHooksTableSize; ++id) {
      const AcceleratorHooks* other = table.installed(static_cast<DeviceType>(id));
      if (other == nullptr || other == this ||
          other->init_state_.load(std::memory_order_acquire) != InitState::Done) {
        continue;
      }
      try {
        memory::CachingAllocator* cache = other->coreDeviceCache();
        std::optional<Device> device;
        if (cache != nullptr) {
          if (const std::optional<DeviceIndex> index = cache->deviceOf(ptr))
            device = Device(other->deviceType(), *index);
        }
        if (!device && other->pinnedQueryForChecks(ptr)) {
          if (device_only) continue;
          return detail::concat("pinned host memory of '", other->name(), "'");
        }
        if (!device && cache == nullptr) {
          const Device resolved = other->deviceQueryForChecks(ptr);
          if (resolved.type() == other->deviceType()) device = resolved;
        }
        if (device)
          return detail::concat("device memory of '", other->name(), "' (", *device, ")");
      } catch (...) {
        // Not that backend's memory, or it cannot say: ask the next one.
      }
    }
  } catch (...) {
    // No memory left to say whose it is: say nothing.
  }
  return {};
}

Device AcceleratorHooks::deviceOfCopyRange(HookId hook, const char* which,
                                           const void* ptr, std::size_t bytes) const {
  // CUDA and others resolve pinned host memory to a device; it is still host
  // memory, and the other direction's hook is the one to call.
  ACCEL_CHECK(!pinnedQueryForChecks(ptr), InvalidArgument, nameOf(hook), "(): ", which,
              " (", ptr, ") is pinned host memory of '", name(),
              "', not device memory; pass it as the host side of ",
              nameOf(HookId::copyHostToDevice), " or ", nameOf(HookId::copyDeviceToHost));
  if (memory::CachingAllocator* cache = coreDeviceCache()) {
    // The backend's device memory is the core cache's: one live block must
    // hold the whole range.
    const std::optional<DeviceIndex> index = cache->deviceOf(ptr);
    if (!index) {
      refuseNotDeviceMemory(hook, name(), which, ptr, bytes,
                            ownerElsewhere(ptr, /*device_only=*/false),
                            "no allocation of its holds it");
    }
    const Device device(deviceType(), *index);
    const std::optional<memory::BlockInfo> block = cache->findBlock(*index, ptr);
    ACCEL_CHECK(block && !block->freed, InvalidArgument, nameOf(hook), "(): the ", which,
                " range [", ptr, ", +", bytes, ") is in freed memory of ", device,
                " (its block was freed, or never handed out); pass memory whose DataPtr "
                "from ",
                nameOf(HookId::getDeviceAllocator), "() is still alive");
    const std::size_t left = bytesLeft(block->base, block->requested, ptr);
    ACCEL_CHECK(bytes <= left, InvalidArgument, nameOf(hook), "(): the ", which,
                " range [", ptr, ", +", bytes,
                ") runs past the end of its allocation on ", device, " (",
                block->requested, " bytes from ", block->base, ", ", left, " left from ",
                ptr, "); copy at most what was allocated");
    return device;
  }
  // Device memory the core does not know: the backend says where its first
  // and last byte are.
  const auto* last = static_cast<const unsigned char*>(ptr) + (bytes - 1);
  Device first_device;
  Device last_device;
  try {
    first_device = deviceQueryForChecks(ptr);
    last_device = deviceQueryForChecks(last);
  } catch (const InvalidArgument& e) {
    refuseNotDeviceMemory(hook, name(), which, ptr, bytes,
                          ownerElsewhere(ptr, /*device_only=*/false), e.what());
  }
  ACCEL_CHECK(first_device == last_device, InvalidArgument, nameOf(hook), "(): the ",
              which, " range [", ptr, ", +", bytes, ") starts on ", first_device,
              " and ends on ", last_device,
              "; a copy's range must lie inside one allocation");
  return first_device;
}

AcceleratorHooks::HostSide AcceleratorHooks::hostSideOf(HookId hook, const char* which,
                                                        const void* ptr,
                                                        std::size_t bytes) const {
  if (memory::PinnedCachingAllocator* pinned = corePinnedCache()) {
    if (const std::optional<memory::PinnedCachingAllocator::BlockInfo> block =
            pinned->findBlock(ptr)) {
      ACCEL_CHECK(block->allocated, InvalidArgument, nameOf(hook), "(): ", which, " (",
                  ptr, ") is in a freed pinned block of '", name(),
                  "'; pass pinned memory whose DataPtr from ",
                  nameOf(HookId::getPinnedMemoryAllocator), "() is still alive");
      const std::size_t left = bytesLeft(block->base, block->requested, ptr);
      ACCEL_CHECK(bytes <= left, InvalidArgument, nameOf(hook), "(): the ", which,
                  " range [", ptr, ", +", bytes,
                  ") runs past the end of its pinned allocation of '", name(), "' (",
                  block->requested, " bytes from ", block->base, ", ", left,
                  " left from ", ptr, "); copy at most what was allocated");
      return HostSide::CorePinned;
    }
  }
  if (pinnedQueryForChecks(ptr)) return HostSide::BackendPinned;
  // A device pointer as the host side would be read or written as if it
  // were host memory: wrong bytes, or a crash where the device's memory is
  // not mapped in the process.
  std::optional<Device> own;
  if (memory::CachingAllocator* cache = coreDeviceCache()) {
    if (const std::optional<DeviceIndex> index = cache->deviceOf(ptr))
      own = Device(deviceType(), *index);
  } else {
    try {
      const Device resolved = deviceQueryForChecks(ptr);
      if (resolved.type() == deviceType()) own = resolved;
    } catch (const Error&) {
      // Not this backend's memory: host memory, as far as it can tell.
    }
  }
  ACCEL_CHECK(!own, InvalidArgument, nameOf(hook), "(): ", which, " (", ptr,
              ") is device memory of ", own.value_or(Device(deviceType())),
              ", not host memory; copy between devices with ",
              nameOf(HookId::copyDeviceToDevice), "()");
  const std::string owner = ownerElsewhere(ptr, /*device_only=*/true);
  ACCEL_CHECK(
      owner.empty(), InvalidArgument, nameOf(hook), "(): ", which, " (", ptr, ") is ",
      owner, ", not host memory; copy it to the host with that backend's ",
      nameOf(HookId::copyDeviceToHost), "() first, then from there with '", name(), "'");
  // Another backend's pinned memory is host memory that this backend copies
  // as pageable: done with when the call returns.
  return HostSide::Pageable;
}

AcceleratorHooks::HostSide AcceleratorHooks::checkCopy(HookId hook, void* dst,
                                                       CopySide dst_side, const void* src,
                                                       CopySide src_side,
                                                       std::size_t bytes,
                                                       Stream stream) const {
  requireGroup(hook);
  requireInit(hook);
  checkStream(stream, hook);
  if (bytes == 0) return HostSide::NoCopy;
  ACCEL_CHECK(dst != nullptr && src != nullptr, InvalidArgument, nameOf(hook),
              "(): null pointer (dst ", dst, ", src ", src, ") for a copy of ", bytes,
              " bytes on '", name(), "'");
  ACCEL_CHECK(rangeFits(dst, bytes) && rangeFits(src, bytes), InvalidArgument,
              nameOf(hook), "(): a range of ", bytes, " bytes from dst ", dst, " or src ",
              src, " wraps around the address space");
  ACCEL_CHECK(!rangesOverlap(dst, src, bytes), InvalidArgument, nameOf(hook),
              "(): the ranges overlap (dst ", dst, ", src ", src, ", ", bytes,
              " bytes); copy through a separate buffer");
  std::optional<Device> dst_device;
  std::optional<Device> src_device;
  if (dst_side == CopySide::Device)
    dst_device = deviceOfCopyRange(hook, "dst", dst, bytes);
  if (src_side == CopySide::Device)
    src_device = deviceOfCopyRange(hook, "src", src, bytes);
  const bool on_involved_device =
      stream.device == dst_device || stream.device == src_device;
  ACCEL_CHECK(on_involved_device, InvalidArgument, nameOf(hook), "(): ", stream,
              " is on a device the copy does not involve (",
              dst_device ? detail::concat("dst on ", *dst_device) : std::string(),
              dst_device && src_device ? ", " : "",
              src_device ? detail::concat("src on ", *src_device) : std::string(),
              "); pass a stream of ",
              dst_device && src_device ? "either device" : "that device", " (",
              nameOf(HookId::getCurrentStream), "(index))");
  if (dst_side == CopySide::Host) return hostSideOf(hook, "dst", dst, bytes);
  if (src_side == CopySide::Host) return hostSideOf(hook, "src", src, bytes);
  return HostSide::NoHost;
}

bool AcceleratorHooks::recordPinnedStreamUse(const void* host, Stream stream) const {
  // The block's free records this backend's event on the stream: it must be
  // one of this backend's.
  ACCEL_CHECK(stream.device.type() == deviceType() && stream.device.index() >= 0 &&
                  stream.device.index() < deviceCount(),
              InvalidArgument, "recordPinnedStreamUse(): ", stream,
              " is not a stream of '", name(), "'; pass one of its own streams");
  memory::PinnedCachingAllocator* cache = corePinnedCache();
  return cache != nullptr && cache->recordStreamAt(host, stream);
}

void AcceleratorHooks::holdHostSide(HostSide side, const void* host,
                                    Stream stream) const {
  // Recorded once the backend has enqueued the copy, before the caller can
  // free the block: a copy the backend refused (a capturing stream, say)
  // leaves no stream on the block, whose free would record an event there.
  if (side != HostSide::CorePinned) return;
  try {
    (void)corePinnedCache()->recordStreamAt(host, stream);
  } catch (const std::bad_alloc&) {
    // The copy is enqueued but its stream could not be recorded (no memory
    // for the block's list of streams): failing now would let the caller
    // free the block while the copy is in flight. Wait for the stream
    // instead, as for pinned memory the core does not know.
    if (!declared().has(HookGroup::Streams)) throw;
    synchronizeStreamImpl(stream);
  }
}

void AcceleratorHooks::finishCopy(HostSide side, Stream stream) const {
  // Pinned memory of the backend's own allocator: the core cannot hold its
  // blocks back, so the copy is done with before the caller may free it.
  if (side == HostSide::BackendPinned && declared().has(HookGroup::Streams))
    synchronizeStreamImpl(stream);
}

void AcceleratorHooks::copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  const HostSide host = checkCopy(HookId::copyHostToDevice, dst, CopySide::Device, src,
                                  CopySide::Host, bytes, stream);
  if (host == HostSide::NoCopy) return;
  copyHostToDeviceImpl(dst, src, bytes, stream);
  holdHostSide(host, src, stream);
  finishCopy(host, stream);
}

void AcceleratorHooks::copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  const HostSide host = checkCopy(HookId::copyDeviceToHost, dst, CopySide::Host, src,
                                  CopySide::Device, bytes, stream);
  if (host == HostSide::NoCopy) return;
  copyDeviceToHostImpl(dst, src, bytes, stream);
  holdHostSide(host, dst, stream);
  finishCopy(host, stream);
}

void AcceleratorHooks::copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                                          Stream stream) {
  if (checkCopy(HookId::copyDeviceToDevice, dst, CopySide::Device, src, CopySide::Device,
                bytes, stream) != HostSide::NoCopy)
    copyDeviceToDeviceImpl(dst, src, bytes, stream);
}

void AcceleratorHooks::copyHostToDeviceImpl(void*, const void*, std::size_t, Stream) {
  raiseUnsupported(HookId::copyHostToDevice);
}
void AcceleratorHooks::copyDeviceToHostImpl(void*, const void*, std::size_t, Stream) {
  raiseUnsupported(HookId::copyDeviceToHost);
}
void AcceleratorHooks::copyDeviceToDeviceImpl(void*, const void*, std::size_t, Stream) {
  raiseUnsupported(HookId::copyDeviceToDevice);
}

}  // namespace accel
