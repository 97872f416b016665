// The kit's settings reader: the adapter's (accel/adapter/config.h), with its
// failures thrown as the library's errors.
#include "accel/kit/config.h"

#include "accel/adapter/config.h"
#include "accel/error.h"

namespace accel::kit {
namespace {

// Runs `read`, turning the adapter's InvalidArgument into the library's.
template <typename Read>
auto translated(Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const adapter::Failure& e) {
    throw InvalidArgument(e.what());
  }
}

}  // namespace

std::optional<std::uint64_t> parseUnsigned(std::string_view text) noexcept {
  return adapter::parseUnsigned(text);
}

std::uint64_t parseByteSize(std::string_view text, std::string_view what) {
  return translated([&] { return adapter::parseByteSize(text, what); });
}

std::string formatByteSize(std::uint64_t bytes) { return adapter::formatByteSize(bytes); }

ConfigReader::ConfigReader()
    : ConfigReader([](const char* name) { return std::getenv(name); }) {}
ConfigReader::ConfigReader(Lookup lookup) : lookup_(std::move(lookup)) {}

std::optional<std::string_view> ConfigReader::raw(const char* name) const noexcept {
  return adapter::ConfigReader::rawFrom(lookup_, name);
}

std::uint64_t ConfigReader::count(const char* name, std::uint64_t fallback,
                                  std::uint64_t low, std::uint64_t high,
                                  std::string_view meaning) const {
  return translated([&] {
    return adapter::ConfigReader(lookup_).count(name, fallback, low, high, meaning);
  });
}

std::uint64_t ConfigReader::byteSize(const char* name, std::uint64_t fallback,
                                     std::uint64_t low, std::uint64_t high) const {
  return translated(
      [&] { return adapter::ConfigReader(lookup_).byteSize(name, fallback, low, high); });
}

bool ConfigReader::flag(const char* name, bool fallback) const {
  return translated([&] { return adapter::ConfigReader(lookup_).flag(name, fallback); });
}

}  // namespace accel::kit
