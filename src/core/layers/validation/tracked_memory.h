// Internal: the validation layer's view of memory made through the hooks'
// allocators while it is on: the live blocks (for copies' and pointer
// queries' checks and the leak report) and the quarantine of freed ones.
//
// A live block's record (LiveRecord) is kept in the decorator's block, in
// the layer's note on it (layers/block_note.h), so an allocation and its
// free only link and unlink the record: no node is allocated, nothing is
// sorted. The ordered index by address that the rules need (a copy's or a
// pointer query's pointer may point inside a block) is built lazily: a new
// record waits until a rule next looks an address up, which files every
// waiting record in the index then. A block freed before any lookup (most
// of a program's short-lived blocks) never enters the index.
//
// The waiting records are kept per thread: each thread that makes blocks
// has a lane of the books (BooksLane) with a lock of its own, biased to it,
// so threads that make and free blocks at once share no lock and no cache
// line (docs/validation.md, "Books per thread"). A record stays on the lane
// of the thread that made it; a free on another thread takes that lane's
// lock. A lane outlives its thread (its blocks may be freed later): the
// next new thread takes it over.
//
// A freed block's memory is held back in the quarantine, so that its
// address is not handed out again while a late use may come, and such a use
// is caught as a use after free with where it was freed. Each lane has a
// quarantine of its own, of the blocks freed by its thread, in the order
// they were freed; the record stays in the block's note (the block is not
// recycled while its free is held) and is filed in an index of freed
// blocks, as a live one, only when a rule next looks an address up. Each
// lane's quarantine is bounded by a count of blocks and a number of bytes
// (QuarantineLimits); past either, its oldest block goes back to its
// allocator (releaseHeldFree) and is forgotten: once its memory may be
// reused (by any allocator, host memory by anything in the process)
// nothing more can be said of its range.
//
// Thread-safety: allocated(), forgetLive() and hold() take the locks they
// need (lanes'; the books' lock when the record is in an index); every
// other member requires the books' lock (booksLock()), held by the caller,
// and takes the lanes' locks it needs under it. Lock order: the books'
// lock, then the lanes' pool lock, then a lane's lock.
// Lifetime: the layer's books are never destroyed (blocks may be freed
// during the process's exit); books that are (tests) must outlive every
// thread that filed a record in them but the one that destroys them. A
// record lives in its block's note from allocated() until the
// free (hold() or forgetLive()) or clear(), whichever comes first; the
// books never reach a record after that (the block may be recycled).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "accel/device.h"
#include "memory/biased_mutex.h"
#include "memory/stack_capture.h"

namespace accel::detail {

using memory::detail::CapturedStack;

struct QuarantineLimits {
  std::size_t blocks = 1024;
  std::size_t bytes = std::size_t{256} << 20;  // 256 MiB
};

struct TrackedBlock {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  DeviceType type{};
  Device device;  // the allocator's device (CPU for pinned memory)
  bool pinned = false;
  CapturedStack made;   // where it was allocated
  CapturedStack freed;  // where it was freed (held blocks)
};

struct BooksLane;

// A live block as the books keep it, in the block's note.
struct LiveRecord {
  // Member by member: a brace-initialised record is zeroed whole first
  // (a `rep stos`, a third of the layer's allocation callback).
  LiveRecord(std::uintptr_t base, std::size_t bytes, DeviceType type, Device device,
             bool pinned) noexcept {
    block.base = base;
    block.bytes = bytes;
    block.type = type;
    block.device = device;
    block.pinned = pinned;
  }

  // Where the record is. Waiting: on its lane's list of live blocks.
  // Indexed: in the index of live blocks. Held: in its lane's quarantine
  // (and in the index of freed blocks when `filed`). Gone: in no books.
  enum class State : std::uint8_t { Waiting, Indexed, Held, Gone };

  TrackedBlock block;
  // The books it is in (TrackedMemory's generation); 0 once it left them.
  std::uint64_t books = 0;
  // The lane of the thread that made it, or that holds its free.
  BooksLane* lane = nullptr;
  State state = State::Gone;
  bool filed = false;           // held, and in the index of freed blocks
  const void* token = nullptr;  // the free held back, while held
  LiveRecord* prev = nullptr;   // on the lane's list of live blocks
  LiveRecord* next = nullptr;   // that list, or the lane's quarantine
};

// One thread's share of the books: the records of the blocks it made that
// wait to be filed in the index, and its quarantine. Changed under `lock`
// only; `waiting` and `unfiled` are atomic so that a lookup may see a lane
// with nothing to file without taking the lock (and so without withdrawing
// its bias from the thread that owns it). On cache lines of its own, as its
// owner writes it at every allocation and free.
struct alignas(64) BooksLane {
  BiasedMutex lock;
  std::atomic<LiveRecord*> waiting{nullptr};  // live, not filed; newest first
  // The quarantine, oldest first, linked by `next`; `unfiled` is the first
  // of its records not in the index of freed blocks (all after it are not).
  LiveRecord* held_first = nullptr;
  LiveRecord* held_last = nullptr;
  std::atomic<LiveRecord*> unfiled{nullptr};
  std::size_t held_blocks = 0;
  std::size_t held_bytes = 0;
  BooksLane* next = nullptr;       // the books' lanes; set once
  BooksLane* next_free = nullptr;  // no thread has it; pool lock
};

class TrackedMemory;

// The calling thread's lane and the books it belongs to. Initial-exec TLS
// (one %fs-relative load on the allocation's path). A thread that files
// records in two books (the layer makes one) keeps the lane of the last.
struct LaneOfThread {
  TrackedMemory* books = nullptr;
  BooksLane* lane = nullptr;
  bool retired = false;  // its thread_local destructors ran
};
extern constinit thread_local LaneOfThread t_books_lane
    __attribute__((tls_model("initial-exec")));

class TrackedMemory {
 public:
  TrackedMemory() = default;
  ~TrackedMemory();
  TrackedMemory(const TrackedMemory&) = delete;
  TrackedMemory& operator=(const TrackedMemory&) = delete;

  // Guards the index, the quarantine, the limits and the switch.
  [[nodiscard]] BiasedMutex& booksLock() noexcept { return books_lock_; }
  // Whether the books' lock and the lanes' locks may be biased (true at
  // first). Thread-safe.
  void allowBias(bool allowed) noexcept;

  // ---- no lock held by the caller ----

  // A new live block, its record constructed by the caller (who keeps it
  // alive until the free or clear()), filed on this thread's lane. False:
  // the books are switched off (or clear() ran since the switch was read);
  // the record is not kept. Never throws.
  bool allocated(LiveRecord& record) noexcept;
  // The free of the live block of `record`, forgotten at once whatever the
  // quarantine's limits (the caller saw them hold nothing). False: the
  // record is not of a live block of these books; nothing changed. Never
  // throws.
  bool forgetLive(LiveRecord& record) noexcept;

  // The frees the quarantine let go of to make room: give each back
  // (releaseHeldFree) once no lock is held. At most kMost per hold(); a
  // quarantine still over its limits then lets go of more at the next.
  struct LetGo {
    static constexpr std::size_t kMost = 4;
    const void* tokens[kMost] = {};
    std::size_t count = 0;
  };
  // The free of the block of `record`, `where` it was freed, `token` the
  // free held back. Held: it went to this thread's quarantine (and older
  // frees it pushed out are in `let_go`). NotHeld: it went in and out again
  // (limits of 0, or the block alone is past them): it left the books and
  // its free goes on now. HeldAlready: the block's free is held already (a
  // second free of it). NotLive: the record is in no books of now (made
  // before clear(), or when no lane could be had); nothing changed. Never
  // throws.
  enum class Free : std::uint8_t { Held, NotHeld, HeldAlready, NotLive };
  // On HeldAlready, `held_already` is a copy of the block's record as its
  // first free left it.
  Free hold(LiveRecord& record, CapturedStack where, const void* token, LetGo& let_go,
            TrackedBlock& held_already) noexcept;

  // Each lane's quarantine's bounds, applied at its thread's next free.
  // Thread-safe.
  void setLimits(QuarantineLimits limits) noexcept {
    limit_blocks_.store(limits.blocks, std::memory_order_relaxed);
    limit_bytes_.store(limits.bytes, std::memory_order_relaxed);
  }

  // ---- the books' lock held by the caller ----

  // Switches the books on or off; off, allocated() keeps no record.
  void setActive(bool active) noexcept;
  [[nodiscard]] bool active() const noexcept {
    return active_.load(std::memory_order_relaxed);
  }

  // The live block holding address `ptr`, or the quarantined one; null if
  // none. Both file the waiting records in the indexes first (throw
  // std::bad_alloc only; the records not filed then wait on). A block
  // returned stays there until the books' lock is released.
  [[nodiscard]] const TrackedBlock* live(std::uintptr_t ptr);
  [[nodiscard]] const TrackedBlock* freedBlock(std::uintptr_t ptr);

  // Gives every held free back (to `release`) and forgets everything: the
  // records of live blocks leave the books (their frees find them NotLive).
  void clear(std::vector<const void*>& release);

  // Around fork() (the layer's fork callbacks), with no lock of the books
  // held by the caller: lockForFork takes the books' lock, the lanes' pool
  // and every lane's lock (without withdrawing a bias for good), so that
  // the child finds none held by a thread that did not survive;
  // unlockAfterFork releases them (in the child, a lane's bias goes only to
  // the forking thread). Same thread, in that order.
  void lockForFork() noexcept;
  void unlockAfterFork(bool in_child) noexcept;

  // Calls `visit` with each live block (which may change its stacks), in no
  // particular order. Files the waiting records in the index first (throws
  // std::bad_alloc, and what `visit` throws).
  template <typename Visit>
  void forEachLive(Visit&& visit) {
    fileWaiting();
    for (auto& [base, record] : index_) visit(record->block);
  }

 private:
  template <typename Blocks>
  static const TrackedBlock* holding(const Blocks& blocks, std::uintptr_t ptr) noexcept;
  // This thread's lane, made or taken over on first use (takeLane); null
  // when none can be had (no memory for one).
  BooksLane* laneOfThisThread() noexcept {
    const LaneOfThread& mine = t_books_lane;
    if (mine.books == this) [[likely]]
      return mine.lane;
    return takeLane();
  }
  BooksLane* takeLane() noexcept;
  // forgetLive when the record is not waiting on its lane (or clear() came
  // first): it looks again, under the lane's lock.
  bool forgetLiveSlow(LiveRecord& record) noexcept;
  // Takes a waiting record off its lane's list (the lane's lock held).
  static void takeOffLane(LiveRecord& record) noexcept {
    BooksLane& lane = *record.lane;
    if (record.prev != nullptr) record.prev->next = record.next;
    if (record.next != nullptr) record.next->prev = record.prev;
    if (lane.waiting.load(std::memory_order_relaxed) == &record)
      lane.waiting.store(record.next, std::memory_order_relaxed);
    record.prev = record.next = nullptr;
    record.state = LiveRecord::State::Gone;
    record.books = 0;
  }
  friend struct LaneReturn;
  void giveBack(BooksLane& lane) noexcept;
  // Files every lane's waiting records in the index.
  void fileWaiting();
  // Where a free found its record, under the lane's lock of the record
  // (leaveLane): taken off that lane's list of live blocks; in the index of
  // live blocks (leaveIndex takes it out, under the books' lock); in a
  // quarantine (its block copied into `held_copy` when not null, before the
  // record may go); or in no books of now.
  enum class Found : std::uint8_t { TakenOff, Indexed, Held, NotLive };
  Found leaveLane(LiveRecord& record, std::uint64_t& books,
                  TrackedBlock* held_copy) noexcept;
  // False: a clear() of the books of generation `books` came first.
  bool leaveIndex(LiveRecord& record, std::uint64_t books) noexcept;
  // Out of the index of freed blocks, if still there (the books' lock held).
  void unfile(LiveRecord& record) noexcept;
  // Takes the oldest of `lane`'s quarantine out (its lock held).
  static LiveRecord* popHeld(BooksLane& lane) noexcept;

  BiasedMutex books_lock_;
  // Written under the books' lock, read under a lane's lock too (relaxed:
  // the locks order them; see setActive and clear).
  std::atomic<bool> active_{false};
  std::atomic<std::uint64_t> books_{1};  // a record's `books` while it is in these
  std::atomic<std::size_t> limit_blocks_{QuarantineLimits{}.blocks};
  std::atomic<std::size_t> limit_bytes_{QuarantineLimits{}.bytes};
  std::map<std::uintptr_t, LiveRecord*> index_;        // live blocks filed
  std::map<std::uintptr_t, LiveRecord*> freed_index_;  // held blocks filed

  std::atomic<BooksLane*> lanes_{nullptr};  // every lane, newest first; never shrinks
  std::mutex pool_mutex_;                   // the pool of lanes no thread has
  BooksLane* free_lanes_ = nullptr;
  // For a thread past its thread_local destructors, or when no lane could
  // be made: shared by such threads, as any lane may be.
  BooksLane* spare_lane_ = nullptr;
  std::atomic<bool> bias_allowed_{true};
};

// allocated() and forgetLive() are inline: the decorator's allocator calls
// them on every allocation and free (layers/layered_allocator.cpp, through
// the validation layer's callbacks), where a call's frame was a third of
// their cost.
[[gnu::always_inline]] inline bool TrackedMemory::allocated(LiveRecord& record) noexcept {
  BooksLane* lane = laneOfThisThread();
  if (lane == nullptr) return false;
  BiasedMutex::Guard lock(lane->lock);
  // The switch and the generation are written before clear() visits this
  // lane under its lock, so read under it they agree with what the lane
  // holds.
  if (!active_.load(std::memory_order_relaxed)) return false;
  record.books = books_.load(std::memory_order_relaxed);
  record.lane = lane;
  record.state = LiveRecord::State::Waiting;
  record.prev = nullptr;
  LiveRecord* head = lane->waiting.load(std::memory_order_relaxed);
  record.next = head;
  if (head != nullptr) head->prev = &record;
  lane->waiting.store(&record, std::memory_order_relaxed);
  return true;
}

[[gnu::always_inline]] inline bool TrackedMemory::forgetLive(
    LiveRecord& record) noexcept {
  {
    // The common case: still waiting on the lane of the thread that made it.
    BiasedMutex::Guard lock(record.lane->lock);
    if (record.books == books_.load(std::memory_order_relaxed) &&
        record.state == LiveRecord::State::Waiting) [[likely]] {
      takeOffLane(record);
      return true;
    }
  }
  return forgetLiveSlow(record);
}

}  // namespace accel::detail
