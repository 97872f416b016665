#include "accel/registry.h"

namespace accel {

std::string_view registryPriorityName(RegistryPriority priority) noexcept {
  switch (priority) {
    case RegistryPriority::Fallback:
      return "fallback";
    case RegistryPriority::Default:
      return "default";
    case RegistryPriority::Preferred:
      return "preferred";
  }
  return "unknown";
}

DuplicateRegistration::~DuplicateRegistration() = default;

}  // namespace accel
