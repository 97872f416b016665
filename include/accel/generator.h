// Generator: a cheap, copyable handle to a random-number generator's state.
//
// A GeneratorImpl owns a seed and an offset into its engine's stream (the
// Philox4x32-10 stream everywhere in accelhooks, see philox.h and
// docs/random.md). Copies of a Generator share one GeneratorImpl: seeding
// through one is seen through all. clone() makes an independent copy.
//
// Default generators (one per device, created on first use and never
// destroyed) are reached through AcceleratorHooks::getDefaultGenerator or
// Context::defaultGenerator, which return a const reference to the stored
// handle; new independent ones through getNewGenerator.
//
// Thread-safety: every GeneratorImpl method is atomic with respect to the
// others (implementations lock mutex()). A caller that needs several calls to
// act as one (read state, then advance) locks mutex() around them; the mutex is
// recursive so that the calls themselves may be made while holding it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/device.h"
#include "accel/export.h"

namespace accel {

class ACCEL_API GeneratorImpl {
 public:
  explicit GeneratorImpl(Device device) : device_(device) {}
  GeneratorImpl(const GeneratorImpl&) = delete;
  GeneratorImpl& operator=(const GeneratorImpl&) = delete;
  virtual ~GeneratorImpl();

  [[nodiscard]] Device device() const noexcept { return device_; }
  // Held by implementations during each call; lock it to group calls.
  [[nodiscard]] std::recursive_mutex& mutex() const noexcept { return mutex_; }

  // Seeds deterministically and rewinds the offset to 0. Implementations
  // must not throw (the engine's state is two integers).
  virtual void setCurrentSeed(std::uint64_t seed) = 0;
  // The seed of the current stream.
  [[nodiscard]] virtual std::uint64_t currentSeed() const = 0;
  // The seed this generator started from or was last (re)seeded with.
  [[nodiscard]] virtual std::uint64_t initialSeed() const = 0;
  // Seeds from a non-deterministic source, rewinds the offset, returns the seed.
  virtual std::uint64_t seed() = 0;
  // Position in the stream, in 32-bit outputs consumed.
  virtual void setOffset(std::uint64_t offset) = 0;
  [[nodiscard]] virtual std::uint64_t offset() const = 0;
  // Serialised state (a versioned byte blob). setState throws InvalidArgument
  // on a blob of the wrong size, magic or version and leaves the state as it was.
  [[nodiscard]] virtual std::vector<std::uint8_t> getState() const = 0;
  virtual void setState(std::span<const std::uint8_t> state) = 0;
  // An independent generator with the same state.
  [[nodiscard]] virtual std::shared_ptr<GeneratorImpl> clone() const = 0;
  // "philox4x32-10"
  [[nodiscard]] virtual std::string_view engineName() const noexcept = 0;

 private:
  Device device_;
  mutable std::recursive_mutex mutex_;
};

// Handle with shared ownership of a GeneratorImpl, or, for an immortal one
// (Generator::immortal: the default generators), a plain pointer to an
// implementation kept for the rest of the process, whose copies count no
// references. A default-constructed
// Generator is undefined; every method but defined(), as() and == then throws
// InvalidArgument. Otherwise each method forwards to the GeneratorImpl and
// throws what it throws (setState: InvalidArgument for a bad blob).
// Thread-safety: a Generator may be copied and used from any thread; the
// calls are atomic one by one (the GeneratorImpl locks its mutex).
// const applies to the handle, not to the shared state (which has its own
// lock): the seeding and state setters are const members, so a caller seeds a
// default generator through the const reference the hooks return without
// copying the handle.
class ACCEL_API Generator {
 public:
  Generator() = default;
  explicit Generator(std::shared_ptr<GeneratorImpl> impl) noexcept
      : impl_(impl.get()), owner_(std::move(impl)) {}
  Generator(const Generator&) = default;
  Generator& operator=(const Generator&) = default;
  // A moved-from Generator is undefined.
  Generator(Generator&& other) noexcept
      : impl_(std::exchange(other.impl_, nullptr)), owner_(std::move(other.owner_)) {}
  Generator& operator=(Generator&& other) noexcept {
    if (this != &other) {
      impl_ = std::exchange(other.impl_, nullptr);
      owner_ = std::move(other.owner_);
    }
    return *this;
  }
  ~Generator() = default;

  // The same generator, kept alive until the process exits: copies of the
  // returned handle (and of their copies) do not count references, so a copy
  // is a few plain loads and stores instead of two atomic read-modify-writes
  // (what a shared or intrusive count costs). For generators that live as
  // long as the process anyway: DefaultGenerators and the context's CPU
  // generator make theirs immortal. An undefined or already immortal
  // generator is returned as it is. Thread-safe; throws std::bad_alloc.
  [[nodiscard]] static Generator immortal(Generator generator);
  // True for a handle from immortal() (or a copy of one). Never throws.
  [[nodiscard]] bool isImmortal() const noexcept {
    return impl_ != nullptr && owner_ == nullptr;
  }

  [[nodiscard]] bool defined() const noexcept { return impl_ != nullptr; }
  [[nodiscard]] Device device() const;
  void manualSeed(std::uint64_t seed) const;
  std::uint64_t seed() const;
  [[nodiscard]] std::uint64_t currentSeed() const;
  [[nodiscard]] std::uint64_t initialSeed() const;
  void setOffset(std::uint64_t offset) const;
  [[nodiscard]] std::uint64_t offset() const;
  [[nodiscard]] std::vector<std::uint8_t> getState() const;
  void setState(std::span<const std::uint8_t> state) const;
  [[nodiscard]] Generator clone() const;

  [[nodiscard]] GeneratorImpl& impl() const;
  // The implementation as T, or nullptr when it is of another type.
  template <typename T>
  [[nodiscard]] T* as() const noexcept {
    return dynamic_cast<T*>(impl_);
  }

  friend bool operator==(const Generator& a, const Generator& b) noexcept {
    return a.impl_ == b.impl_;
  }

 private:
  GeneratorImpl* impl_ = nullptr;
  std::shared_ptr<GeneratorImpl> owner_;  // empty for an immortal handle
};

}  // namespace accel
