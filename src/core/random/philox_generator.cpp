#include "accel/philox_generator.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>
#include <random>

#include "accel/error.h"

namespace accel {
namespace {

using Lock = std::lock_guard<std::recursive_mutex>;

// SplitMix64's finaliser: spreads the fallback seed's few varying bits over
// all 64.
std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t nondeterministicSeed() noexcept {
  try {
    std::random_device device;
    const std::uint64_t high = device();
    return (high << 32) | device();
  } catch (...) {
    // No entropy source (std::random_device may throw where none exists):
    // a clock reading plus a process-wide counter still differs per call.
    static std::atomic<std::uint64_t> calls{0};
    const auto now = static_cast<std::uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch().count());
    return mix64(now ^ mix64(calls.fetch_add(1, std::memory_order_relaxed)));
  }
}

void storeLittleEndian(std::uint8_t* out, std::uint64_t value, int bytes) noexcept {
  for (int i = 0; i < bytes; ++i) {
    out[i] = static_cast<std::uint8_t>(value >> (8 * i));
  }
}

std::uint64_t loadLittleEndian(const std::uint8_t* in, int bytes) noexcept {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  }
  return value;
}

}  // namespace

PhiloxGenerator::PhiloxGenerator(Device device, std::uint64_t seed) noexcept
    : GeneratorImpl(device), initialSeed_(seed), currentSeed_(seed) {}

PhiloxGenerator::~PhiloxGenerator() = default;

void PhiloxGenerator::setCurrentSeed(std::uint64_t seed) {
  Lock lock(mutex());
  initialSeed_ = seed;
  currentSeed_ = seed;
  offset_ = 0;
}

std::uint64_t PhiloxGenerator::currentSeed() const {
  Lock lock(mutex());
  return currentSeed_;
}

std::uint64_t PhiloxGenerator::initialSeed() const {
  Lock lock(mutex());
  return initialSeed_;
}

std::uint64_t PhiloxGenerator::seed() {
  // Drawn before locking: random_device may block briefly on some systems.
  const std::uint64_t seed = nondeterministicSeed();
  setCurrentSeed(seed);
  return seed;
}

void PhiloxGenerator::setOffset(std::uint64_t offset) {
  Lock lock(mutex());
  offset_ = offset;
}

std::uint64_t PhiloxGenerator::offset() const {
  Lock lock(mutex());
  return offset_;
}

std::vector<std::uint8_t> PhiloxGenerator::getState() const {
  std::vector<std::uint8_t> state(kPhiloxStateSize);
  Lock lock(mutex());
  storeLittleEndian(state.data(), kPhiloxStateMagic, 4);
  storeLittleEndian(state.data() + 4, kPhiloxStateVersion, 2);
  storeLittleEndian(state.data() + 6, kPhiloxStateSize, 2);
  storeLittleEndian(state.data() + 8, initialSeed_, 8);
  storeLittleEndian(state.data() + 16, currentSeed_, 8);
  storeLittleEndian(state.data() + 24, offset_, 8);
  return state;
}

void PhiloxGenerator::setState(std::span<const std::uint8_t> state) {
  // Everything is validated before anything is assigned, so a rejected blob
  // leaves the generator as it was.
  ACCEL_CHECK(state.size() == kPhiloxStateSize, InvalidArgument,
              "PhiloxGenerator::setState on ", device(), ": the state is ", state.size(),
              " bytes, expected ", kPhiloxStateSize,
              "; pass a blob returned by getState() of a philox4x32-10 generator");
  const std::uint64_t magic = loadLittleEndian(state.data(), 4);
  ACCEL_CHECK(magic == kPhiloxStateMagic, InvalidArgument,
              "PhiloxGenerator::setState on ", device(), ": bad magic 0x", std::hex,
              magic, " (expected 0x", kPhiloxStateMagic, std::dec,
              "); the blob is not a philox4x32-10 generator state");
  const std::uint64_t version = loadLittleEndian(state.data() + 4, 2);
  ACCEL_CHECK(version == kPhiloxStateVersion, InvalidArgument,
              "PhiloxGenerator::setState on ", device(), ": state version ", version,
              " is not supported (this build reads version ", kPhiloxStateVersion,
              "); save the state with a matching accelhooks version");
  const std::uint64_t size = loadLittleEndian(state.data() + 6, 2);
  ACCEL_CHECK(size == kPhiloxStateSize, InvalidArgument, "PhiloxGenerator::setState on ",
              device(), ": the blob's size field says ", size, " bytes, expected ",
              kPhiloxStateSize, "; the blob is corrupt");
  Lock lock(mutex());
  initialSeed_ = loadLittleEndian(state.data() + 8, 8);
  currentSeed_ = loadLittleEndian(state.data() + 16, 8);
  offset_ = loadLittleEndian(state.data() + 24, 8);
}

std::shared_ptr<GeneratorImpl> PhiloxGenerator::clone() const {
  Lock lock(mutex());
  auto copy = std::make_shared<PhiloxGenerator>(device(), currentSeed_);
  copy->initialSeed_ = initialSeed_;
  copy->offset_ = offset_;
  return copy;
}

std::string_view PhiloxGenerator::engineName() const noexcept { return "philox4x32-10"; }

PhiloxPosition PhiloxGenerator::reserve(std::uint64_t outputs) {
  Lock lock(mutex());
  ACCEL_CHECK(
      outputs <= std::numeric_limits<std::uint64_t>::max() - offset_, InvalidArgument,
      "PhiloxGenerator::reserve(", outputs, ") on ", device(), ": the offset ", offset_,
      " would pass 2^64 - 1 and positions never wrap; reseed the generator or set a "
      "smaller offset");
  const PhiloxPosition start{currentSeed_, offset_};
  offset_ += outputs;
  return start;
}

Generator makePhiloxGenerator(Device device, std::uint64_t seed) {
  return Generator(std::make_shared<PhiloxGenerator>(device, seed));
}

PhiloxPosition reservePhilox(const Generator& generator, std::uint64_t outputs) {
  GeneratorImpl& impl = generator.impl();
  if (auto* philox = generator.as<PhiloxGenerator>()) {
    return philox->reserve(outputs);
  }
  Lock lock(impl.mutex());
  const std::uint64_t offset = impl.offset();
  ACCEL_CHECK(
      outputs <= std::numeric_limits<std::uint64_t>::max() - offset, InvalidArgument,
      "reservePhilox(", outputs, ") on ", impl.device(), ": the offset ", offset,
      " would pass 2^64 - 1 and positions never wrap; reseed the generator or set a "
      "smaller offset");
  const PhiloxPosition start{impl.currentSeed(), offset};
  impl.setOffset(offset + outputs);
  return start;
}

}  // namespace accel
