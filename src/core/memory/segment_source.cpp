#include "accel/memory/segment_source.h"

namespace accel::memory {

SegmentSource::~SegmentSource() = default;

SegmentSource::DeviceMemoryInfo SegmentSource::memoryInfo(DeviceIndex) const noexcept {
  return {};
}

std::size_t SegmentSource::pageSize() const noexcept { return 0; }
void* SegmentSource::reserveAddressRange(DeviceIndex, std::size_t) { return nullptr; }
void SegmentSource::releaseAddressRange(DeviceIndex, void*, std::size_t) noexcept {}
bool SegmentSource::mapPages(DeviceIndex, void*, std::size_t) { return false; }
void SegmentSource::unmapPages(DeviceIndex, void*, std::size_t) noexcept {}

bool SegmentSource::hasEvents() const noexcept { return false; }
EventId SegmentSource::recordEvent(Stream) { return kNoEvent; }
bool SegmentSource::eventCompleted(EventId) noexcept { return true; }
void SegmentSource::streamWaitEvent(Stream, EventId) {}
void SegmentSource::releaseEvent(EventId) noexcept {}
void SegmentSource::synchronizeEvent(EventId) {}

}  // namespace accel::memory
