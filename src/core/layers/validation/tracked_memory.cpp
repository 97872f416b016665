#include "layers/validation/tracked_memory.h"

#include <utility>

namespace accel::detail {

const TrackedBlock* TrackedMemory::holding(
    const std::map<std::uintptr_t, TrackedBlock>& blocks, std::uintptr_t ptr) noexcept {
  auto after = blocks.upper_bound(ptr);
  if (after == blocks.begin()) return nullptr;
  const TrackedBlock& block = std::prev(after)->second;
  // A pointer one past the end belongs to no block (an empty range there
  // is not a use).
  return ptr - block.base < block.bytes ? &block : nullptr;
}

void TrackedMemory::allocated(TrackedBlock block) {
  const std::uintptr_t base = block.base;
  live_.insert_or_assign(base, std::move(block));
}

bool TrackedMemory::freed(std::uintptr_t base, CapturedStack where, const void* token,
                          std::vector<const void*>& release) {
  auto found = live_.find(base);
  if (found == live_.end()) return false;
  TrackedBlock block = std::move(found->second);
  live_.erase(found);
  block.freed = std::move(where);
  block.token = token;
  // A quarantine of no blocks or no bytes holds nothing back.
  if (limits_.blocks == 0 || limits_.bytes == 0) {
    release.push_back(token);
    return true;
  }
  quarantine_bytes_ += block.bytes;
  quarantine_order_.push_back(base);
  quarantine_.insert_or_assign(base, std::move(block));
  while (!quarantine_order_.empty() && (quarantine_order_.size() > limits_.blocks ||
                                        quarantine_bytes_ > limits_.bytes)) {
    auto oldest = quarantine_.find(quarantine_order_.front());
    quarantine_order_.pop_front();
    if (oldest == quarantine_.end()) continue;
    quarantine_bytes_ -= oldest->second.bytes;
    release.push_back(oldest->second.token);
    quarantine_.erase(oldest);
  }
  return true;
}

const TrackedBlock* TrackedMemory::quarantinedAt(std::uintptr_t base) const noexcept {
  auto found = quarantine_.find(base);
  return found != quarantine_.end() ? &found->second : nullptr;
}

const TrackedBlock* TrackedMemory::live(std::uintptr_t ptr) const noexcept {
  return holding(live_, ptr);
}

const TrackedBlock* TrackedMemory::quarantined(std::uintptr_t ptr) const noexcept {
  return holding(quarantine_, ptr);
}

void TrackedMemory::drain(std::vector<const void*>& release) {
  for (auto& [base, block] : quarantine_) release.push_back(block.token);
  quarantine_.clear();
  quarantine_order_.clear();
  quarantine_bytes_ = 0;
}

}  // namespace accel::detail
