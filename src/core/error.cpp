#include "accel/error.h"

#include <string>

namespace accel {
namespace {

std::string withLocation(const std::string& message, const std::source_location& where) {
  std::string out = message;
  out += " [";
  std::string_view file = where.file_name();
  // Keep the path from the repository's top folders on, not the build machine's prefix.
  for (std::string_view top :
       {"/src/", "/include/", "/backends/", "/tools/", "/tests/"}) {
    if (auto pos = file.rfind(top); pos != std::string_view::npos) {
      file.remove_prefix(pos + 1);
      break;
    }
  }
  out += file;
  out += ':';
  out += std::to_string(where.line());
  out += ']';
  return out;
}

}  // namespace

Error::Error(std::string message, std::source_location where)
    : std::runtime_error(withLocation(message, where)),
      message_(std::move(message)),
      location_(where) {}

// Out-of-line destructors anchor each class's vtable and type_info in
// libaccel.so, so that a catch in a plugin matches a throw in the core.
Error::~Error() = default;
InvalidArgument::~InvalidArgument() = default;
NotSupported::~NotSupported() = default;
NotAvailable::~NotAvailable() = default;
OutOfMemory::~OutOfMemory() = default;
DeviceError::~DeviceError() = default;

}  // namespace accel
