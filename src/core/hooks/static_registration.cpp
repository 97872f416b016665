// Static registrations (ACCEL_REGISTER_HOOKS): committed to the process table
// at once, or held for the plugin loader (static_registration_hold.h).
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <mutex>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "hooks/static_registration_hold.h"

namespace accel {
namespace detail {

struct StaticRegistrationSink {
  std::mutex mutex;
  StaticRegistrationHold* hold = nullptr;  // at most one: loads are serialised
  std::vector<std::string> errors;

  // The hold that `anchor` (an address inside a library) belongs to, if any.
  // Requires `mutex`.
  StaticRegistrationHold* holdFor(const void* anchor) const noexcept {
    if (hold == nullptr) return nullptr;
    Dl_info info{};
    if (::dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) return nullptr;
    struct stat st {};
    if (::stat(info.dli_fname, &st) != 0) return nullptr;
    return st.st_dev == hold->device_ && st.st_ino == hold->inode_ ? hold : nullptr;
  }

  // Records the registration in the hold its library belongs to; false when
  // it belongs to none.
  bool offerToHold(const void* anchor, std::string_view type_name, HooksFactory& factory,
                   RegistryPriority priority) {
    std::lock_guard<std::mutex> lock(mutex);
    StaticRegistrationHold* target = holdFor(anchor);
    if (target == nullptr) return false;
    try {
      target->registrar_.registerHooksFactory(type_name, std::move(factory), priority);
    } catch (const Error& e) {
      target->errors_.push_back(detail::concat("static registration of '", type_name,
                                               "' failed: ", e.message()));
    }
    return true;
  }
};

namespace {
// Leaked: static initialisers of late libraries reach it during exit.
StaticRegistrationSink& sink() {
  static auto* s = new StaticRegistrationSink();
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

StaticRegistrationHold::StaticRegistrationHold(dev_t device, ino_t inode,
                                               std::string origin)
    : device_(device), inode_(inode), registrar_(std::move(origin)) {
  std::lock_guard<std::mutex> lock(sink().mutex);
  sink().hold = this;
}

StaticRegistrationHold::~StaticRegistrationHold() {
  std::lock_guard<std::mutex> lock(sink().mutex);
  if (sink().hold == this) sink().hold = nullptr;
}

std::vector<std::string> StaticRegistrationHold::errors() const {
  std::lock_guard<std::mutex> lock(sink().mutex);
  return errors_;
}

}  // namespace detail

HooksRegistration::HooksRegistration(std::string_view type_name, HooksFactory factory,
                                     RegistryPriority priority) noexcept {
  detail::StaticRegistrationSink& s = detail::sink();
  try {
    if (s.offerToHold(this, type_name, factory, priority)) return;
    Registrar registrar("static registration in " + detail::libraryOf(this));
    registrar.registerHooksFactory(type_name, std::move(factory), priority);
    (void)registrar.commitTo(processHooksTable());
  } catch (const std::exception& e) {
    std::string message = detail::concat("accelhooks: static registration of '",
                                         type_name, "' failed: ", e.what());
    std::fprintf(stderr, "%s\n", message.c_str());
    try {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.errors.push_back(std::move(message));
    } catch (...) {
    }
  }
}

std::vector<std::string> staticRegistrationErrors() {
  std::lock_guard<std::mutex> lock(detail::sink().mutex);
  return detail::sink().errors;
}

}  // namespace accel
