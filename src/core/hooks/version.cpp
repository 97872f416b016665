#include "accel/version.h"

namespace accel {

std::string_view libraryVersion() noexcept { return ACCEL_VERSION_STRING; }

}  // namespace accel
