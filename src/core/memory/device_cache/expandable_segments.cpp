// ExpandableSegments: ranges, mapping and unmapping of growing segments
// (expandable_segments.h).
#include "memory/device_cache/expandable_segments.h"

#include <algorithm>

#include "accel/memory/size_rules.h"

namespace accel::memory::detail {

std::size_t ExpandableSegments::step() const noexcept {
  return std::max(source_.pageSize(), kRoundLarge);
}

Segment* ExpandableSegments::of(StreamId stream) const noexcept {
  auto found = growing_.find(stream);
  return found != growing_.end() ? found->second : nullptr;
}

void* ExpandableSegments::reserveRange(std::size_t rounded, const ReserveCap& cap,
                                       std::size_t& range) {
  // Address space for everything the device could hold; mapping decides
  // what is really used.
  range = cap.capped ? cap.bytes : source_.memoryInfo(index_).total_bytes;
  if (range == 0 && !cap.capped) range = std::size_t{64} << 30;
  range = roundUpTo(std::max(range, rounded), step());
  return source_.reserveAddressRange(index_, range);
}

void ExpandableSegments::abandonRange(void* base, std::size_t range) noexcept {
  source_.releaseAddressRange(index_, base, range);
}

void ExpandableSegments::adopt(Segment& segment, std::size_t range) {
  segment.reserved = range;
  segment.expandable = true;
  growing_.emplace(segment.stream, &segment);
}

std::size_t ExpandableSegments::growthFor(std::size_t rounded,
                                          std::size_t tail_free) const noexcept {
  return roundUpTo(rounded - std::min(rounded, tail_free), step());
}

bool ExpandableSegments::map(Segment& segment, std::size_t grow) {
  if (segment.size + grow > segment.reserved ||
      !source_.mapPages(index_, segment.base + segment.size, grow)) {
    return false;
  }
  segment.size += grow;
  return true;
}

std::size_t ExpandableSegments::unmappable(const Segment& segment,
                                           const Block& tail) const noexcept {
  const std::size_t tail_offset = static_cast<std::size_t>(tail.ptr - segment.base);
  const std::size_t keep_until = roundUpTo(tail_offset, step());
  return keep_until >= segment.size ? 0 : segment.size - keep_until;
}

void ExpandableSegments::unmap(Segment& segment, std::size_t bytes) noexcept {
  source_.unmapPages(index_, segment.base + segment.size - bytes, bytes);
  segment.size -= bytes;
}

void ExpandableSegments::releaseRange(Segment& segment) noexcept {
  source_.releaseAddressRange(index_, segment.base, segment.reserved);
  growing_.erase(segment.stream);
}

void ExpandableSegments::giveBack(Segment& segment) noexcept {
  if (segment.size > 0) source_.unmapPages(index_, segment.base, segment.size);
  source_.releaseAddressRange(index_, segment.base, segment.reserved);
}

Block* ExpandableSegments::tailOf(const Segment& segment) noexcept {
  Block* tail = segment.head;
  while (tail != nullptr && tail->next != nullptr) tail = tail->next;
  return tail;
}

}  // namespace accel::memory::detail
