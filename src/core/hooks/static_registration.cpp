// Static registrations (ACCEL_REGISTER_HOOKS): committed to the process table
// at once, each in a Registrar of its own whose origin names the library (or
// the program) the registration object lives in.
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include "accel/error.h"
#include "accel/hooks_table.h"

namespace accel {
namespace {

// The errors of static registrations, which cannot throw out of a static
// initialiser: kept for staticRegistrationErrors().
struct StaticRegistrationErrors {
  std::mutex mutex;
  std::vector<std::string> errors;
};

// Leaked: static initialisers of late libraries reach it during exit.
StaticRegistrationErrors& recorded() {
  static auto* s = new StaticRegistrationErrors();
  return *s;
}

// Where the registration object at `anchor` lives, for its origin.
std::string libraryOf(const void* anchor) {
  Dl_info info{};
  if (::dladdr(anchor, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0]) {
    return info.dli_fname;
  }
  return "the program";
}

}  // namespace

HooksRegistration::HooksRegistration(std::string_view type_name, HooksFactory factory,
                                     RegistryPriority priority) noexcept {
  try {
    Registrar registrar("static registration in " + libraryOf(this));
    registrar.registerHooksFactory(type_name, std::move(factory), priority);
    (void)registrar.commitTo(processHooksTable());
  } catch (const std::exception& e) {
    std::string message = detail::concat("accelhooks: static registration of '",
                                         type_name, "' failed: ", e.what());
    std::fprintf(stderr, "%s\n", message.c_str());
    try {
      StaticRegistrationErrors& s = recorded();
      std::lock_guard<std::mutex> lock(s.mutex);
      s.errors.push_back(std::move(message));
    } catch (...) {
    }
  }
}

std::vector<std::string> staticRegistrationErrors() {
  StaticRegistrationErrors& s = recorded();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.errors;
}

}  // namespace accel
