#include "layers/validation/tracked_memory.h"

#include <iterator>
#include <new>
#include <utility>

namespace accel::detail {

constinit thread_local LaneOfThread t_books_lane
    __attribute__((tls_model("initial-exec"))) = {};

namespace {

// Takes the lock of a lane that another thread owns, for a whole-books
// visit (a switch, a report): the owner keeps its bias.
class VisitLane {
 public:
  explicit VisitLane(BooksLane& lane) noexcept : lane_(lane) {
    lane_.lock.lockKeepingBias();
  }
  ~VisitLane() { lane_.lock.unlockKeepingBias(); }
  VisitLane(const VisitLane&) = delete;
  VisitLane& operator=(const VisitLane&) = delete;

 private:
  BooksLane& lane_;
};

}  // namespace

// Gives the thread's lane back to its books' pool when the thread exits.
// Made when the thread first takes a lane.
struct LaneReturn {
  LaneReturn() = default;
  LaneReturn(const LaneReturn&) = delete;
  LaneReturn& operator=(const LaneReturn&) = delete;
  ~LaneReturn() {
    LaneOfThread& mine = t_books_lane;
    if (mine.books != nullptr && mine.lane != nullptr) mine.books->giveBack(*mine.lane);
    mine = LaneOfThread{nullptr, nullptr, true};
  }
};

TrackedMemory::~TrackedMemory() {
  // The destroying thread's lane goes with the books (other threads that
  // filed records here have exited, giving theirs back: see the header).
  if (t_books_lane.books == this) t_books_lane.books = nullptr;
  BooksLane* lane = lanes_.load(std::memory_order_acquire);
  while (lane != nullptr) {
    BooksLane* next = lane->next;
    delete lane;
    lane = next;
  }
}

void TrackedMemory::allowBias(bool allowed) noexcept {
  bias_allowed_.store(allowed, std::memory_order_relaxed);
  books_lock_.allowBias(allowed);
  for (BooksLane* lane = lanes_.load(std::memory_order_acquire); lane != nullptr;
       lane = lane->next)
    lane->lock.allowBias(allowed);
}

BooksLane* TrackedMemory::takeLane() noexcept {
  LaneOfThread& mine = t_books_lane;
  std::lock_guard<std::mutex> pool(pool_mutex_);
  BooksLane* lane = nullptr;
  if (!mine.retired) {
    lane = free_lanes_;
    if (lane != nullptr) {
      free_lanes_ = lane->next_free;
      lane->next_free = nullptr;
    }
  } else {
    lane = spare_lane_;  // past its thread_local destructors: nothing gives it back
  }
  if (lane == nullptr) {
    lane = new (std::nothrow) BooksLane();
    if (lane == nullptr) return nullptr;
    lane->lock.allowBias(bias_allowed_.load(std::memory_order_relaxed));
    lane->next = lanes_.load(std::memory_order_relaxed);
    lanes_.store(lane, std::memory_order_release);
    if (mine.retired) spare_lane_ = lane;
  }
  if (mine.retired) return lane;  // not kept: the thread is ending
  mine.books = this;
  mine.lane = lane;
  static thread_local LaneReturn give_back_at_exit;
  (void)give_back_at_exit;
  return lane;
}

void TrackedMemory::giveBack(BooksLane& lane) noexcept {
  std::lock_guard<std::mutex> pool(pool_mutex_);
  lane.next_free = free_lanes_;
  free_lanes_ = &lane;
}

template <typename Blocks>
const TrackedBlock* TrackedMemory::holding(const Blocks& blocks,
                                           std::uintptr_t ptr) noexcept {
  auto after = blocks.upper_bound(ptr);
  if (after == blocks.begin()) return nullptr;
  const TrackedBlock& block = std::prev(after)->second->block;
  // A pointer one past the end belongs to no block (an empty range there
  // is not a use).
  return ptr - block.base < block.bytes ? &block : nullptr;
}

TrackedMemory::Found TrackedMemory::leaveLane(LiveRecord& record, std::uint64_t& books,
                                              TrackedBlock* held_copy) noexcept {
  BiasedMutex::Guard lock(record.lane->lock);
  books = books_.load(std::memory_order_relaxed);
  if (record.books != books) return Found::NotLive;
  switch (record.state) {
    case LiveRecord::State::Waiting:
      takeOffLane(record);
      return Found::TakenOff;
    case LiveRecord::State::Indexed:
      return Found::Indexed;
    case LiveRecord::State::Held:
      if (held_copy != nullptr) *held_copy = record.block;
      return Found::Held;
    case LiveRecord::State::Gone:
      break;
  }
  return Found::NotLive;
}

bool TrackedMemory::leaveIndex(LiveRecord& record, std::uint64_t books) noexcept {
  // A record never goes back from the index to its lane, so once seen filed
  // it is the index's; a clear() meanwhile shows in the generation.
  BiasedMutex::Guard lock(books_lock_);
  if (record.books != books || books_.load(std::memory_order_relaxed) != books ||
      record.state != LiveRecord::State::Indexed)
    return false;
  auto found = index_.find(record.block.base);
  if (found != index_.end() && found->second == &record) index_.erase(found);
  record.state = LiveRecord::State::Gone;
  record.books = 0;
  return true;
}

bool TrackedMemory::forgetLiveSlow(LiveRecord& record) noexcept {
  std::uint64_t books = 0;
  switch (leaveLane(record, books, nullptr)) {
    case Found::TakenOff:
      return true;
    case Found::Indexed:
      return leaveIndex(record, books);
    case Found::Held:
    case Found::NotLive:
      break;
  }
  return false;
}

LiveRecord* TrackedMemory::popHeld(BooksLane& lane) noexcept {
  LiveRecord* oldest = lane.held_first;
  lane.held_first = oldest->next;
  if (lane.held_first == nullptr) lane.held_last = nullptr;
  if (lane.unfiled.load(std::memory_order_relaxed) == oldest)
    lane.unfiled.store(oldest->next, std::memory_order_relaxed);
  --lane.held_blocks;
  lane.held_bytes -= oldest->block.bytes;
  oldest->next = nullptr;
  oldest->state = LiveRecord::State::Gone;
  oldest->books = 0;
  return oldest;
}

void TrackedMemory::unfile(LiveRecord& record) noexcept {
  auto found = freed_index_.find(record.block.base);
  if (found != freed_index_.end() && found->second == &record) freed_index_.erase(found);
  record.filed = false;
}

TrackedMemory::Free TrackedMemory::hold(LiveRecord& record, CapturedStack where,
                                        const void* token, LetGo& let_go,
                                        TrackedBlock& held_already) noexcept {
  std::uint64_t books = 0;
  switch (leaveLane(record, books, &held_already)) {
    case Found::TakenOff:
      break;
    case Found::Indexed:
      if (!leaveIndex(record, books)) return Free::NotLive;
      break;
    case Found::Held:
      return Free::HeldAlready;
    case Found::NotLive:
      return Free::NotLive;
  }
  BooksLane* lane = laneOfThisThread();
  if (lane == nullptr) return Free::NotHeld;
  // The oldest frees pushed out (at most LetGo::kMost), perhaps this one.
  LiveRecord* out[LetGo::kMost];
  std::size_t outs = 0;
  {
    BiasedMutex::Guard lock(lane->lock);
    // Switched off, or cleared, since the record left: not held.
    if (!active_.load(std::memory_order_relaxed) ||
        books_.load(std::memory_order_relaxed) != books)
      return Free::NotHeld;
    record.block.freed = std::move(where);
    record.token = token;
    record.books = books;
    record.lane = lane;
    record.state = LiveRecord::State::Held;
    record.filed = false;
    record.next = nullptr;
    if (lane->held_last != nullptr) {
      lane->held_last->next = &record;
    } else {
      lane->held_first = &record;
    }
    lane->held_last = &record;
    if (lane->unfiled.load(std::memory_order_relaxed) == nullptr)
      lane->unfiled.store(&record, std::memory_order_relaxed);
    ++lane->held_blocks;
    lane->held_bytes += record.block.bytes;
    const std::size_t most_blocks = limit_blocks_.load(std::memory_order_relaxed);
    const std::size_t most_bytes = limit_bytes_.load(std::memory_order_relaxed);
    while (outs < LetGo::kMost && lane->held_first != nullptr &&
           (lane->held_blocks > most_blocks || lane->held_bytes > most_bytes))
      out[outs++] = popHeld(*lane);
  }
  // Those filed in the index of freed blocks leave it before their memory
  // goes back (a lookup may be reading them until then).
  bool any_filed = false;
  for (std::size_t i = 0; i < outs; ++i) any_filed = any_filed || out[i]->filed;
  if (any_filed) {
    BiasedMutex::Guard lock(books_lock_);
    for (std::size_t i = 0; i < outs; ++i)
      if (out[i]->filed) unfile(*out[i]);
  }
  Free result = Free::Held;
  for (std::size_t i = 0; i < outs; ++i) {
    if (out[i] == &record) {
      result = Free::NotHeld;  // pushed out at once: the caller frees it now
    } else {
      let_go.tokens[let_go.count++] = out[i]->token;
    }
  }
  return result;
}

void TrackedMemory::setActive(bool active) noexcept {
  active_.store(active, std::memory_order_relaxed);
  if (active) return;
  // Each lane's lock taken and released once: an allocation that read the
  // switch on before it took the lane's lock filed its record before, which
  // clear() then forgets; one after reads it off.
  for (BooksLane* lane = lanes_.load(std::memory_order_acquire); lane != nullptr;
       lane = lane->next)
    VisitLane visit(*lane);
}

void TrackedMemory::lockForFork() noexcept {
  books_lock_.lockKeepingBias();
  pool_mutex_.lock();  // no lane is made meanwhile
  for (BooksLane* lane = lanes_.load(std::memory_order_acquire); lane != nullptr;
       lane = lane->next)
    lane->lock.lockKeepingBias();
}

void TrackedMemory::unlockAfterFork(bool in_child) noexcept {
  for (BooksLane* lane = lanes_.load(std::memory_order_acquire); lane != nullptr;
       lane = lane->next)
    lane->lock.unlockKeepingBias(in_child);
  pool_mutex_.unlock();
  books_lock_.unlockKeepingBias(in_child);
}

void TrackedMemory::fileWaiting() {
  for (BooksLane* lane = lanes_.load(std::memory_order_acquire); lane != nullptr;
       lane = lane->next) {
    // A lane with nothing to file is passed over without its lock: a record
    // filed on it by a thread this lookup is not ordered after may be
    // missed, as it would be had that allocation or free come after it.
    if (lane->waiting.load(std::memory_order_acquire) == nullptr &&
        lane->unfiled.load(std::memory_order_acquire) == nullptr)
      continue;
    BiasedMutex::Guard lock(lane->lock);
    while (LiveRecord* record = lane->waiting.load(std::memory_order_relaxed)) {
      // A second live block at one address (a backend that handed it out
      // twice) replaces the first in the index, as the last one made.
      index_.insert_or_assign(record->block.base, record);
      lane->waiting.store(record->next, std::memory_order_relaxed);
      if (record->next != nullptr) record->next->prev = nullptr;
      record->state = LiveRecord::State::Indexed;
      record->next = nullptr;
    }
    while (LiveRecord* record = lane->unfiled.load(std::memory_order_relaxed)) {
      freed_index_.insert_or_assign(record->block.base, record);
      record->filed = true;
      lane->unfiled.store(record->next, std::memory_order_relaxed);
    }
  }
}

const TrackedBlock* TrackedMemory::live(std::uintptr_t ptr) {
  fileWaiting();
  return holding(index_, ptr);
}

const TrackedBlock* TrackedMemory::freedBlock(std::uintptr_t ptr) {
  fileWaiting();
  return holding(freed_index_, ptr);
}

void TrackedMemory::clear(std::vector<const void*>& release) {
  index_.clear();
  freed_index_.clear();
  // The records left in blocks' notes are in no books now; the lanes let
  // go of theirs under their locks, after the generation moved on.
  books_.fetch_add(1, std::memory_order_relaxed);
  for (BooksLane* lane = lanes_.load(std::memory_order_acquire); lane != nullptr;
       lane = lane->next) {
    VisitLane visit(*lane);
    lane->waiting.store(nullptr, std::memory_order_relaxed);
    while (lane->held_first != nullptr) {
      LiveRecord* held = popHeld(*lane);
      held->filed = false;
      release.push_back(held->token);
    }
  }
}

}  // namespace accel::detail
