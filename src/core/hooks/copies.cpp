// The copies group of AcceleratorHooks: the public wrappers, the checks they
// make for every backend, and the defaults of the *Impls.
//
// The checks are the part of a copy's contract that needs no knowledge of
// the device: pointers, ranges, the stream, which device each side is on.
// A backend's *Impl then sees a copy that is well-formed as far as the core
// can tell, and adds what only it knows (allocation bounds, freed memory,
// whether its own device memory was passed as the host side).
#include <cstdint>
#include <optional>
#include <string>

#include "accel/error.h"
#include "accel/hooks.h"

namespace accel {
namespace {

std::string_view nameOf(HookId hook) { return hookInfo(hook).name; }

// [begin, begin + bytes) as integers; false if it wraps the address space.
bool rangeFits(const void* begin, std::size_t bytes) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(begin);
  return address <= UINTPTR_MAX - (bytes - 1);
}

bool rangesOverlap(const void* a, const void* b, std::size_t bytes) noexcept {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y ? y - x < bytes : x - y < bytes;
}

}  // namespace

Device AcceleratorHooks::deviceOfCopyRange(HookId hook, const char* which,
                                           const void* ptr, std::size_t bytes) const {
  // CUDA and others resolve pinned host memory to a device; it is still host
  // memory, and the other direction's hook is the one to call.
  ACCEL_CHECK(!isPinnedPtr(ptr), InvalidArgument, nameOf(hook), "(): ", which, " (", ptr,
              ") is pinned host memory of '", name(),
              "', not device memory; pass it as the host side of ",
              nameOf(HookId::copyHostToDevice), " or ", nameOf(HookId::copyDeviceToHost));
  const auto* last = static_cast<const unsigned char*>(ptr) + (bytes - 1);
  Device first_device;
  Device last_device;
  try {
    first_device = getDeviceFromPtrImpl(ptr);
    last_device = getDeviceFromPtrImpl(last);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(detail::concat(
        nameOf(hook), "(): the ", which, " range [", ptr, ", +", bytes,
        ") is not device memory of '", name(), "': ", e.what(), ". Pass memory from ",
        nameOf(HookId::getDeviceAllocator), "() as the device side"));
  }
  ACCEL_CHECK(first_device == last_device, InvalidArgument, nameOf(hook), "(): the ",
              which, " range [", ptr, ", +", bytes, ") starts on ", first_device,
              " and ends on ", last_device,
              "; a copy's range must lie inside one allocation");
  return first_device;
}

bool AcceleratorHooks::checkCopy(HookId hook, void* dst, CopySide dst_side,
                                 const void* src, CopySide src_side, std::size_t bytes,
                                 Stream stream) const {
  requireGroup(hook);
  requireInit(hook);
  checkStream(stream, hook);
  if (bytes == 0) return false;
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
  return true;
}

void AcceleratorHooks::copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  if (checkCopy(HookId::copyHostToDevice, dst, CopySide::Device, src, CopySide::Host,
                bytes, stream))
    copyHostToDeviceImpl(dst, src, bytes, stream);
}

void AcceleratorHooks::copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  if (checkCopy(HookId::copyDeviceToHost, dst, CopySide::Host, src, CopySide::Device,
                bytes, stream))
    copyDeviceToHostImpl(dst, src, bytes, stream);
}

void AcceleratorHooks::copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                                          Stream stream) {
  if (checkCopy(HookId::copyDeviceToDevice, dst, CopySide::Device, src, CopySide::Device,
                bytes, stream))
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
