#include "accel/registry.h"

#include "hooks/enum_names.h"

namespace accel {

namespace {

constexpr detail::EnumNames<RegistryPriority::Preferred> kRegistryPriorityNames{
    "fallback", "default", "preferred"};

}  // namespace

std::string_view registryPriorityName(RegistryPriority priority) noexcept {
  return kRegistryPriorityNames[priority];
}

DuplicateRegistration::~DuplicateRegistration() = default;

}  // namespace accel
