// ExpandableSegments: a device's growing segments (expandable_segments:true)
// — one address range per stream, reserved once for everything the device
// could hold, with pages mapped at its end as requests need them and
// unmapped from its end when its tail is free.
//
// A stream's segment grows by whole steps (the source's page, at least
// kRoundLarge) and only at its end, so its blocks stay one address-ordered
// run and a free tail can be extended in place instead of leaving a gap. It
// shrinks the same way, down to the step that holds its last used byte; a
// segment with nothing mapped gives its address range back and is
// forgotten, so that a later growth reserves a fresh one.
//
// This type owns the ranges and the mapping (what the source is asked);
// the device cache owns the segments' blocks, its figures and its limit,
// and calls these around them (device_segments.cpp).
//
// Invariant: for every segment here, size <= reserved, size is a whole
// number of steps, and it is the one growing segment of its stream.
//
// Thread-safety: none; the owning DeviceCache's lock guards it. Lifetime: the
// SegmentSource must outlive it.
#pragma once

#include <cstddef>
#include <map>

#include "accel/memory/segment_source.h"
#include "memory/block.h"
#include "memory/device_cache/reserve_cap.h"

namespace accel::memory::detail {

class ExpandableSegments {
 public:
  // The growing segments of device `index` of `source`.
  ExpandableSegments(SegmentSource& source, DeviceIndex index) noexcept
      : source_(source), index_(index) {}
  ExpandableSegments(const ExpandableSegments&) = delete;
  ExpandableSegments& operator=(const ExpandableSegments&) = delete;

  // What segments grow and shrink by.
  [[nodiscard]] std::size_t step() const noexcept;
  // The growing segment of `stream`, or null.
  [[nodiscard]] Segment* of(StreamId stream) const noexcept;

  // Reserves the address range of a new segment that can hold `rounded`:
  // the whole capacity (the cap when `cap` is set, else the source's total,
  // 64 GiB when the source cannot tell), at least `rounded`, in whole steps.
  // Returns its base (its size in `range`), or null when the source has no
  // range to give. Throws what the source throws.
  [[nodiscard]] void* reserveRange(std::size_t rounded, const ReserveCap& cap,
                                   std::size_t& range);
  // Gives back a range reserveRange returned that never became a segment.
  void abandonRange(void* base, std::size_t range) noexcept;
  // Makes `segment` (over a range from reserveRange, of `range` bytes, with
  // nothing mapped) its stream's growing segment. Throws std::bad_alloc.
  void adopt(Segment& segment, std::size_t range);

  // The bytes `segment` must grow by to hold `rounded` at its end, where a
  // free tail of `tail_free` bytes already lies: whole steps.
  [[nodiscard]] std::size_t growthFor(std::size_t rounded,
                                      std::size_t tail_free) const noexcept;
  // Maps `grow` more bytes at the end of `segment`. False, with nothing
  // mapped, past the segment's range or when the source refuses. Throws
  // what the source's mapPages throws.
  [[nodiscard]] bool map(Segment& segment, std::size_t grow);
  // The bytes that can be unmapped from the end of `segment` whose last
  // block `tail` is free: all past the step holding the tail's first byte.
  // 0 when none.
  [[nodiscard]] std::size_t unmappable(const Segment& segment,
                                       const Block& tail) const noexcept;
  // Unmaps `bytes` from the end of `segment`.
  void unmap(Segment& segment, std::size_t bytes) noexcept;
  // Gives back the range of `segment`, which has nothing mapped, and
  // forgets it (the caller destroys it).
  void releaseRange(Segment& segment) noexcept;
  // As the device goes: unmaps what `segment` has mapped and gives back its
  // range, whether or not it is a growing one.
  void giveBack(Segment& segment) noexcept;
  // Forgets the growing segments `forget(segment)` names, asking the source
  // nothing (a fork child's inherited ones: they stop growing).
  template <typename Forget>
  void forgetIf(Forget&& forget) noexcept {
    std::erase_if(growing_, [&](const auto& entry) { return forget(entry.second); });
  }

  // The last block of `segment`, or null when it has none.
  [[nodiscard]] static Block* tailOf(const Segment& segment) noexcept;

 private:
  SegmentSource& source_;
  const DeviceIndex index_;
  std::map<StreamId, Segment*> growing_;  // one growing segment per stream
};

}  // namespace accel::memory::detail
