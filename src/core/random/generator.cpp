#include "accel/generator.h"

#include <mutex>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"

namespace accel {

GeneratorImpl::~GeneratorImpl() = default;

GeneratorImpl& Generator::impl() const {
  ACCEL_CHECK(impl_ != nullptr, InvalidArgument,
              "use of an undefined (default-constructed) Generator; obtain one from ",
              hookInfo(HookId::getDefaultGenerator).name, "(), ",
              hookInfo(HookId::getNewGenerator).name, "() or makePhiloxGenerator()");
  return *impl_;
}

Device Generator::device() const { return impl().device(); }

void Generator::manualSeed(std::uint64_t seed) const { impl().setCurrentSeed(seed); }

std::uint64_t Generator::seed() const { return impl().seed(); }

std::uint64_t Generator::currentSeed() const { return impl().currentSeed(); }

std::uint64_t Generator::initialSeed() const { return impl().initialSeed(); }

void Generator::setOffset(std::uint64_t offset) const { impl().setOffset(offset); }

std::uint64_t Generator::offset() const { return impl().offset(); }

std::vector<std::uint8_t> Generator::getState() const { return impl().getState(); }

void Generator::setState(std::span<const std::uint8_t> state) const {
  impl().setState(state);
}

Generator Generator::clone() const { return Generator(impl().clone()); }

Generator Generator::immortal(Generator generator) {
  if (generator.owner_ == nullptr) return generator;
  // Never destroyed, and reachable from here (so leak checkers do not report
  // the implementations): code that runs during static destruction may still
  // hold an immortal handle.
  static std::mutex* const kept_mutex = new std::mutex();
  static auto* const kept = new std::vector<std::shared_ptr<GeneratorImpl>>();
  {
    std::lock_guard<std::mutex> lock(*kept_mutex);
    kept->push_back(std::move(generator.owner_));
  }
  generator.owner_ = nullptr;
  return generator;
}

}  // namespace accel
