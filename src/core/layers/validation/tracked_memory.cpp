#include "layers/validation/tracked_memory.h"

#include <iterator>
#include <utility>

namespace accel::detail {

namespace {

const TrackedBlock& blockOf(const TrackedBlock& block) noexcept { return block; }
const TrackedBlock& blockOf(const LiveRecord* record) noexcept { return record->block; }

}  // namespace

template <typename Blocks>
const TrackedBlock* TrackedMemory::holding(const Blocks& blocks,
                                           std::uintptr_t ptr) noexcept {
  auto after = blocks.upper_bound(ptr);
  if (after == blocks.begin()) return nullptr;
  const TrackedBlock& block = blockOf(std::prev(after)->second);
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

void TrackedMemory::allocated(LiveRecord& record) noexcept {
  record.books = books_;
  record.indexed = false;
  record.prev = nullptr;
  record.next = waiting_;
  if (waiting_ != nullptr) waiting_->prev = &record;
  waiting_ = &record;
}

void TrackedMemory::fileWaiting() {
  while (LiveRecord* record = waiting_) {
    // A second live block at one address (a backend that handed it out
    // twice) replaces the first in the index, as the last one made.
    index_.insert_or_assign(record->block.base, record);
    waiting_ = record->next;
    if (waiting_ != nullptr) waiting_->prev = nullptr;
    record->indexed = true;
    record->next = nullptr;
  }
}

void TrackedMemory::unlink(LiveRecord& record) noexcept {
  if (record.indexed) {
    auto found = index_.find(record.block.base);
    if (found != index_.end() && found->second == &record) index_.erase(found);
  } else {
    if (record.prev != nullptr) record.prev->next = record.next;
    if (record.next != nullptr) record.next->prev = record.prev;
    if (waiting_ == &record) waiting_ = record.next;
  }
  record.books = 0;
  record.prev = record.next = nullptr;
}

bool TrackedMemory::forgetLive(LiveRecord& record) noexcept {
  if (record.books != books_) return false;
  unlink(record);
  return true;
}

TrackedMemory::Free TrackedMemory::freed(LiveRecord& record, CapturedStack where,
                                         const void* token,
                                         std::vector<const void*>& release) {
  if (record.books != books_) return Free::NotLive;
  unlink(record);
  if (limits_.blocks == 0 || limits_.bytes == 0) return Free::NotHeld;
  const std::uintptr_t base = record.block.base;
  TrackedBlock block = std::move(record.block);
  block.freed = std::move(where);
  block.token = token;
  const std::size_t bytes = block.bytes;
  auto held = freed_.insert_or_assign(base, std::move(block)).first;
  try {
    held_order_.push_back(base);
  } catch (...) {
    freed_.erase(held);  // not held after all: the caller frees it now
    throw;
  }
  ++held_blocks_;
  held_bytes_ += bytes;
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

const TrackedBlock* TrackedMemory::live(std::uintptr_t ptr) {
  fileWaiting();
  return holding(index_, ptr);
}

const TrackedBlock* TrackedMemory::freedBlock(std::uintptr_t ptr) const noexcept {
  return holding(freed_, ptr);
}

void TrackedMemory::clear(std::vector<const void*>& release) {
  for (auto& [base, block] : freed_) letGo(block, release);
  freed_.clear();
  held_order_.clear();
  index_.clear();
  waiting_ = nullptr;
  ++books_;  // the records left in blocks' notes are in no books now
}

}  // namespace accel::detail
