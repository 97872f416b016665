// Internal: holding back the static registrations (ACCEL_REGISTER_HOOKS) of a
// library that the plugin loader is opening.
//
// A plugin's static initialisers run inside dlopen, before the loader has
// read its entry and checked its API version. While a hold names a file, the
// static registrations of that very file (told apart by the address of the
// registration object, not by which thread runs them) go into the hold's
// Registrar instead of the process table; the loader commits them with the
// plugin's own registrations after the handshake, or drops them. Every other
// library's static registrations are committed at once, as usual.
//
// Thread-safety: one hold at a time (the loader serialises loads); the hold
// is read by static initialisers on any thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "accel/registrar.h"

namespace accel::detail {

class StaticRegistrationHold {
 public:
  // Holds the static registrations of the file with this device and inode.
  StaticRegistrationHold(dev_t device, ino_t inode, std::string origin);
  ~StaticRegistrationHold();
  StaticRegistrationHold(const StaticRegistrationHold&) = delete;
  StaticRegistrationHold& operator=(const StaticRegistrationHold&) = delete;

  // Ends the hold; returns what was held, and the errors of registrations
  // that could not even be recorded (a bad type name, a type twice).
  Registrar& held() noexcept { return registrar_; }
  [[nodiscard]] std::vector<std::string> errors() const;

 private:
  friend struct StaticRegistrationSink;
  dev_t device_;
  ino_t inode_;
  Registrar registrar_;
  std::vector<std::string> errors_;
};

}  // namespace accel::detail
