#include "layers/validation/tracked_memory.h"

#include <iterator>
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

void TrackedMemory::letGo(TrackedBlock& block,
                          std::vector<const void*>& release) noexcept {
  if (block.token == nullptr) return;
  release.push_back(block.token);
  block.token = nullptr;
  --held_blocks_;
  held_bytes_ -= block.bytes;
}

void TrackedMemory::forget(std::map<std::uintptr_t, TrackedBlock>::iterator it,
                           std::vector<const void*>& release) {
  letGo(it->second, release);
  freed_.erase(it);
}

void TrackedMemory::allocated(TrackedBlock block) {
  const std::uintptr_t base = block.base;
  live_.insert_or_assign(base, std::move(block));
}

TrackedMemory::Free TrackedMemory::freed(std::uintptr_t base, CapturedStack where,
                                         const void* token,
                                         std::vector<const void*>& release) {
  auto found = live_.find(base);
  if (found == live_.end()) return Free::NotLive;
  if (limits_.blocks == 0 || limits_.bytes == 0) {
    live_.erase(found);
    return Free::NotHeld;
  }
  TrackedBlock block = std::move(found->second);
  live_.erase(found);
  block.freed = std::move(where);
  block.token = token;
  ++held_blocks_;
  held_bytes_ += block.bytes;
  freed_.insert_or_assign(base, std::move(block));
  held_order_.push_back(base);
  // The quarantine's bounds: the oldest blocks go back first.
  while (!held_order_.empty() &&
         (held_blocks_ > limits_.blocks || held_bytes_ > limits_.bytes)) {
    auto oldest = freed_.find(held_order_.front());
    held_order_.pop_front();
    if (oldest != freed_.end()) forget(oldest, release);
  }
  return Free::Held;
}

const TrackedBlock* TrackedMemory::heldAt(std::uintptr_t base) const noexcept {
  auto found = freed_.find(base);
  return found != freed_.end() && found->second.token != nullptr ? &found->second
                                                                 : nullptr;
}

const TrackedBlock* TrackedMemory::live(std::uintptr_t ptr) const noexcept {
  return holding(live_, ptr);
}

const TrackedBlock* TrackedMemory::freedBlock(std::uintptr_t ptr) const noexcept {
  return holding(freed_, ptr);
}

void TrackedMemory::clear(std::vector<const void*>& release) {
  for (auto& [base, block] : freed_) letGo(block, release);
  freed_.clear();
  held_order_.clear();
  live_.clear();
}

}  // namespace accel::detail
