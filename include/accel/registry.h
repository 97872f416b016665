// Registry<Key, Object, Args...>: named factories with priorities.
//
// A registry maps a key (usually a name) to a creator function that builds an
// Object from Args. Backends register creators when their library loads; the
// host asks for an object by key. Several registrations of one key are
// resolved by priority: Preferred beats Default beats Fallback, and a
// registration at the same priority as the active one is an error the caller
// sees (a DuplicateRegistration exception), never a process exit.
//
// Thread-safety: every member is thread-safe. Lookups are lock-free: the
// entries live in an immutable snapshot published with one release store, and
// a registration copies the snapshot, edits the copy and publishes it. Old
// snapshots are kept until the registry is destroyed, so a reader never sees
// freed memory. Registrations are rare (load time), lookups are hot, which is
// why the costs are split this way.
//
// Lifetime: registries used by the library are created on first use and never
// destroyed, so that static destructors and late-loading plugins may use them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "accel/error.h"
#include "accel/export.h"

namespace accel {

// A new value goes last and is named in src/core/hooks/registry.cpp's table.
enum class RegistryPriority : std::uint8_t { Fallback = 0, Default = 1, Preferred = 2 };

// "fallback", "default", "preferred".
ACCEL_API std::string_view registryPriorityName(RegistryPriority priority) noexcept;

// Thrown by Registry::registerCreator for a same-priority duplicate.
class ACCEL_API DuplicateRegistration : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
  ~DuplicateRegistration() override;
};

template <typename Key, typename Object, typename... Args>
class Registry {
 public:
  using Creator = std::function<std::unique_ptr<Object>(Args...)>;

  // `what` names the registry in messages ("hooks factory", "cuBLAS pool").
  explicit Registry(std::string what) : what_(std::move(what)) {
    publish(std::make_unique<Snapshot>());
  }
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers `creator` under `key`. Returns true if it is now the active
  // creator, false if an entry of higher priority already exists (that entry
  // stays). Throws DuplicateRegistration when the active entry has the same
  // priority, and InvalidArgument for an empty creator.
  bool registerCreator(const Key& key, Creator creator,
                       RegistryPriority priority = RegistryPriority::Default,
                       std::string help = {}) {
    ACCEL_CHECK(static_cast<bool>(creator), InvalidArgument, "cannot register an empty ",
                what_, " creator for '", key, "'");
    std::lock_guard<std::mutex> lock(write_mutex_);
    const Snapshot& old = *current_.load(std::memory_order_relaxed);
    auto next = std::make_unique<Snapshot>(old);
    auto it = lowerBound(next->entries, key);
    if (it != next->entries.end() && it->key == key) {
      if (it->priority > priority) return false;
      if (it->priority == priority) {
        throw DuplicateRegistration(detail::concat(
            what_, " '", key, "' is already registered at priority ",
            registryPriorityName(priority),
            "; register with a higher priority to replace it, or remove the "
            "duplicate registration (two libraries providing the same backend?)"));
      }
      *it = Entry{key, std::move(creator), priority, std::move(help)};
    } else {
      next->entries.insert(it, Entry{key, std::move(creator), priority, std::move(help)});
    }
    publish(std::move(next));
    return true;
  }

  // True if `key` has a creator. Lock-free; never throws.
  template <typename K>
  [[nodiscard]] bool has(const K& key) const noexcept {
    if constexpr (kIndexed<K>) {
      return findIndex(*current_.load(std::memory_order_acquire), key) != kNoEntry;
    } else {
      return find(key) != nullptr;
    }
  }

  // Builds the object registered under `key`, or returns nullptr when there
  // is none. Throws whatever the creator throws.
  template <typename K>
  [[nodiscard]] std::unique_ptr<Object> create(const K& key, Args... args) const {
    const Entry* entry = find(key);
    if (entry == nullptr) return nullptr;
    return entry->creator(std::forward<Args>(args)...);
  }

  // Priority of the active entry, or nullopt-like false return.
  template <typename K>
  [[nodiscard]] bool priorityOf(const K& key, RegistryPriority& out) const noexcept {
    const Entry* entry = find(key);
    if (entry == nullptr) return false;
    out = entry->priority;
    return true;
  }

  // All keys, sorted.
  [[nodiscard]] std::vector<Key> keys() const {
    const Snapshot& snap = *current_.load(std::memory_order_acquire);
    std::vector<Key> out;
    out.reserve(snap.entries.size());
    for (const Entry& e : snap.entries) out.push_back(e.key);
    return out;
  }

  // The help text registered with `key` (empty if none or unknown).
  template <typename K>
  [[nodiscard]] std::string help(const K& key) const {
    const Entry* entry = find(key);
    return entry == nullptr ? std::string() : entry->help;
  }

  // One line per key: "key (priority): help".
  [[nodiscard]] std::string helpMessage() const {
    const Snapshot& snap = *current_.load(std::memory_order_acquire);
    std::ostringstream out;
    for (const Entry& e : snap.entries) {
      out << e.key << " (" << registryPriorityName(e.priority) << ")";
      if (!e.help.empty()) out << ": " << e.help;
      out << '\n';
    }
    return std::move(out).str();
  }

  [[nodiscard]] std::size_t size() const noexcept {
    return current_.load(std::memory_order_acquire)->entries.size();
  }

 private:
  struct Entry {
    Key key;
    Creator creator;
    RegistryPriority priority;
    std::string help;
  };
  // For string keys, a hash index over compact slots makes a hit or a miss
  // one multiply, one slot (usually) and integer compares: a key is read as
  // its length plus two 64-bit words (`head`, `tail`) that together hold
  // every byte of a key of up to 16 bytes, so names of the usual length never
  // reach memcmp, nor the entries. (A binary search over sorted slots cost
  // 8 ns for eight keys; docs/performance.md compares with c10::Registry.)
  // Open addressing, linear probing, at most a quarter full, so that a probe
  // rarely goes past its first slot.
  static constexpr bool kStringKeys = std::is_same_v<Key, std::string>;
  // Lookups by anything that reads as a string_view go through the index.
  template <typename K>
  static constexpr bool kIndexed =
      std::conjunction_v<std::bool_constant<kStringKeys>,
                         std::is_convertible<const K&, std::string_view>>;
  static constexpr std::uint32_t kNoEntry = UINT32_MAX;
  struct Slot {
    std::uint64_t head = 0;
    std::uint64_t tail = 0;
    std::uint32_t length = kNoEntry;  // kNoEntry: an empty slot (no key is that long)
    std::uint32_t entry = kNoEntry;   // index into entries
  };
  struct Snapshot {
    std::vector<Entry> entries;  // sorted by key
    std::vector<Slot> slots;     // string keys only: the hash index, a power of two long
    std::size_t mask = 0;        // slots.size() - 1
    unsigned shift = 64;         // 64 - log2(slots.size())
  };

  static std::uint64_t load64(const char* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static std::uint32_t load32(const char* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  // head and tail hold every byte of a key of up to 16 bytes (overlapping
  // loads, so no loop and no variable-length copy); longer keys keep their
  // first and last eight bytes here and compare the middle with memcmp.
  static Slot slotOf(std::string_view key) noexcept {
    const char* p = key.data();
    const std::size_t n = key.size();
    Slot slot;
    slot.length = static_cast<std::uint32_t>(n);
    if (n >= 8) {
      slot.head = load64(p);
      slot.tail = load64(p + n - 8);
    } else if (n >= 4) {
      slot.head = load32(p) | (std::uint64_t{load32(p + n - 4)} << 32);
    } else if (n > 0) {
      slot.head = static_cast<unsigned char>(p[0]) |
                  (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
                  (std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16);
    }
    return slot;
  }
  static std::size_t bucketOf(const Slot& slot, unsigned shift) noexcept {
    std::uint64_t x = slot.head ^ ((slot.tail << 29) | (slot.tail >> 35)) ^
                      (std::uint64_t{slot.length} * 0x9E3779B97F4A7C15ull);
    x *= 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(x >> shift);
  }

  static void buildSlots(Snapshot& snap) {
    if constexpr (kStringKeys) {
      std::size_t size = 8;
      unsigned shift = 61;
      while (size < 4 * snap.entries.size()) {
        size *= 2;
        --shift;
      }
      snap.slots.assign(size, Slot{});
      snap.mask = size - 1;
      snap.shift = shift;
      for (std::size_t i = 0; i < snap.entries.size(); ++i) {
        Slot slot = slotOf(snap.entries[i].key);
        slot.entry = static_cast<std::uint32_t>(i);
        std::size_t b = bucketOf(slot, shift);
        while (snap.slots[b].entry != kNoEntry) b = (b + 1) & snap.mask;
        snap.slots[b] = slot;
      }
    }
  }

  template <typename Entries, typename K>
  static auto lowerBound(Entries& entries, const K& key) {
    return std::lower_bound(
        entries.begin(), entries.end(), key,
        [](const Entry& e, const K& k) { return std::less<>{}(e.key, k); });
  }

  // The index of `key`'s entry in snap.entries, or kNoEntry.
  static std::uint32_t findIndex(const Snapshot& snap, std::string_view key) noexcept {
    if (key.size() >= kNoEntry) return kNoEntry;
    const Slot probe = slotOf(key);
    const Slot* slots = snap.slots.data();
    for (std::size_t b = bucketOf(probe, snap.shift);; b = (b + 1) & snap.mask) {
      const Slot& slot = slots[b];
      if (slot.head == probe.head && slot.tail == probe.tail &&
          slot.length == probe.length &&
          (key.size() <= 16 || std::memcmp(snap.entries[slot.entry].key.data() + 8,
                                           key.data() + 8, key.size() - 16) == 0)) {
        return slot.entry;
      }
      if (slot.entry == kNoEntry) return kNoEntry;
    }
  }

  template <typename K>
  const Entry* find(const K& key) const noexcept {
    const Snapshot& snap = *current_.load(std::memory_order_acquire);
    if constexpr (kIndexed<K>) {
      const std::uint32_t index = findIndex(snap, key);
      return index == kNoEntry ? nullptr : &snap.entries[index];
    } else {
      auto it = lowerBound(snap.entries, key);
      if (it != snap.entries.end() && it->key == key) return &*it;
      return nullptr;
    }
  }

  void publish(std::unique_ptr<Snapshot> next) {
    buildSlots(*next);
    snapshots_.push_back(std::move(next));
    current_.store(snapshots_.back().get(), std::memory_order_release);
  }

  std::string what_;
  std::mutex write_mutex_;
  std::vector<std::unique_ptr<const Snapshot>> snapshots_;  // guarded by write_mutex_
  std::atomic<const Snapshot*> current_{nullptr};
};

}  // namespace accel
