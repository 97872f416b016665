// PhiloxGenerator: the GeneratorImpl every accelhooks backend uses.
//
// State is (initial seed, current seed, offset): the generator stands at the
// offset-th 32-bit output of the Philox4x32-10 stream of its current seed
// (subsequence 0; see philox.h). Nothing else is kept, so the state is small,
// serialises to a fixed 32-byte blob and moves between devices: a state saved
// from a CPU generator, loaded into a device generator, gives the same numbers.
//
// A consumer (a host fill, a device kernel) calls reserve(n) to claim the next
// n outputs: it gets the (seed, offset) to draw from and the offset advances
// by n, atomically, so concurrent consumers never share outputs.
//
// Thread-safety: every method is thread-safe (each locks mutex()).
// Lifetime: shared through Generator handles; clone() gives an independent copy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "accel/device.h"
#include "accel/export.h"
#include "accel/generator.h"
#include "accel/philox.h"

namespace accel {

// Seed of a generator nobody has seeded: 0xACCE15EED ("accel seed").
inline constexpr std::uint64_t kDefaultSeed = 0xACCE15EEDull;

// Serialised state: 32 bytes, every field little-endian.
//   [0, 4)   magic   "APHX" (0x41 0x50 0x48 0x58)
//   [4, 6)   version 1
//   [6, 8)   size    32 (the whole blob, in bytes)
//   [8, 16)  initial seed
//   [16, 24) current seed
//   [24, 32) offset
inline constexpr std::uint32_t kPhiloxStateMagic = 0x58485041u;  // "APHX" in memory
inline constexpr std::uint16_t kPhiloxStateVersion = 1;
inline constexpr std::size_t kPhiloxStateSize = 32;

class ACCEL_API PhiloxGenerator final : public GeneratorImpl {
 public:
  // Starts at offset 0 of `seed`'s stream. Never throws.
  explicit PhiloxGenerator(Device device, std::uint64_t seed = kDefaultSeed) noexcept;
  ~PhiloxGenerator() override;

  void setCurrentSeed(std::uint64_t seed) override;
  [[nodiscard]] std::uint64_t currentSeed() const override;
  [[nodiscard]] std::uint64_t initialSeed() const override;
  // Seeds from std::random_device (falling back to a clock-and-counter mix
  // where no entropy source is available). Never throws.
  std::uint64_t seed() override;
  void setOffset(std::uint64_t offset) override;
  [[nodiscard]] std::uint64_t offset() const override;
  // The 32-byte blob described above.
  [[nodiscard]] std::vector<std::uint8_t> getState() const override;
  // Throws InvalidArgument, leaving the generator unchanged, when the blob's
  // length, magic, version or size field is not the one getState writes.
  void setState(std::span<const std::uint8_t> state) override;
  [[nodiscard]] std::shared_ptr<GeneratorImpl> clone() const override;
  [[nodiscard]] std::string_view engineName() const noexcept override;

  // Claims the next `outputs` 32-bit outputs: returns where they start and
  // advances the offset past them. Throws InvalidArgument, claiming nothing,
  // if offset + outputs would exceed 2^64 - 1 (positions never wrap around).
  [[nodiscard]] PhiloxPosition reserve(std::uint64_t outputs);

 private:
  std::uint64_t initialSeed_;
  std::uint64_t currentSeed_;
  std::uint64_t offset_ = 0;
};

// A Generator owning a new PhiloxGenerator for `device`. Throws only
// std::bad_alloc.
[[nodiscard]] ACCEL_API Generator makePhiloxGenerator(Device device,
                                                      std::uint64_t seed = kDefaultSeed);

// Claims `outputs` outputs from any generator: PhiloxGenerator::reserve when
// it is one; otherwise reads currentSeed() and offset() and advances the offset
// under the generator's mutex (which gives the same guarantees). Throws
// InvalidArgument for an undefined generator or when offset + outputs would
// exceed 2^64 - 1.
[[nodiscard]] ACCEL_API PhiloxPosition reservePhilox(const Generator& generator,
                                                     std::uint64_t outputs);

}  // namespace accel
