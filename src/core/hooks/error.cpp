#include "accel/error.h"

#include <string>

namespace accel {
namespace {

// The file name is used as the compiler recorded it. Builds of this project
// map the checkout's path away (-fmacro-prefix-map, top-level CMakeLists.txt),
// so files read "src/core/hooks/device.cpp" wherever the checkout lives; a file
// built elsewhere (an out-of-tree plugin) keeps its own build's spelling.
// No guessing from the path's text: a checkout under a folder named src/
// must not lose its top folders.
std::string withLocation(const std::string& message, const std::source_location& where) {
  std::string out = message;
  out += " [";
  out += where.file_name();
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
