// The validation layer's public switch (include/accel/validation.h): one
// ValidationLayer for the process, added to the hook layers while on, and
// the leak report at exit.
#include "accel/validation.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "accel/fork.h"
#include "accel/memory/allocator_settings.h"
#include "layers/hook_layer.h"
#include "layers/layer_settings.h"
#include "layers/validation/interned_stacks.h"
#include "layers/validation/validation_layer.h"
#include "layers/validation/validation_report.h"

namespace accel {

namespace {

struct Validation {
  std::mutex mutex;  // serialises mode changes
  detail::ValidationLayer layer;
  bool added = false;
  bool exit_report_registered = false;
};

// The process's one Validation, for the fork callbacks (null until made).
std::atomic<Validation*> g_validation{nullptr};

// Around fork(): every lock of the layer is taken, so that a child forked
// while another thread held one can switch the layer, free what it
// inherited and print its leak report at exit. Order: the mode's lock, the
// layer's (its own, then the books'), then the interned stacks' shards and
// the host stack provider's lock (a stack is recorded under no lock of the
// layer's, and those two are never held together).
void lockValidationForFork() noexcept {
  Validation* v = g_validation.load(std::memory_order_acquire);
  if (v == nullptr) return;
  v->mutex.lock();
  v->layer.lockForFork();
  detail::lockInternedStacksForFork();
  detail::lockHostStackProviderForFork();
}

void unlockValidationAfterFork(bool in_child) noexcept {
  Validation* v = g_validation.load(std::memory_order_acquire);
  if (v == nullptr) return;
  detail::unlockHostStackProviderAfterFork();
  detail::unlockInternedStacksAfterFork();
  v->layer.unlockAfterFork(in_child);
  v->mutex.unlock();
}

Validation& validation() {
  static Validation* v = [] {
    auto* made = new Validation();  // never destroyed: hooks run during exit
    const detail::LayerSettings& settings = detail::layerSettings();
    made->layer.setQuarantineLimits(
        detail::QuarantineLimits{settings.quarantine_blocks, settings.quarantine_bytes});
    detail::setRecordedStacks(settings.validate_stacks);
    try {
      made->layer.allowBiasedBooks(
          memory::allocatorSettingsFromEnvironment().biased_lock);
    } catch (...) {
      // Malformed: the caching allocator reports it; the books' lock keeps
      // its default.
    }
    g_validation.store(made, std::memory_order_release);
    try {
      registerForkCallbacks({&lockValidationForFork,
                             []() noexcept { unlockValidationAfterFork(false); },
                             []() noexcept { unlockValidationAfterFork(true); }});
    } catch (...) {
      // Out of memory: a child forked while a thread held one of the
      // layer's locks could then wait on it, as on any lock held at fork.
    }
    return made;
  }();
  return *v;
}

void printLeaksAtExit() noexcept {
  try {
    if (validationMode() == ValidationMode::Off) return;
    const std::string report = validationLeakReport();
    if (!report.empty()) std::fputs(report.c_str(), stderr);
  } catch (...) {
    // No memory at exit: nothing more to say.
  }
}

}  // namespace

std::string_view validationModeName(ValidationMode mode) noexcept {
  switch (mode) {
    case ValidationMode::Off:
      return "off";
    case ValidationMode::Log:
      return "log";
    case ValidationMode::Throw:
      return "throw";
    case ValidationMode::Abort:
      return "abort";
  }
  return "off";
}

std::optional<ValidationMode> parseValidationMode(std::string_view text) noexcept {
  if (text.empty() || text == "0" || text == "off") return ValidationMode::Off;
  if (text == "1" || text == "log") return ValidationMode::Log;
  if (text == "throw") return ValidationMode::Throw;
  if (text == "abort") return ValidationMode::Abort;
  return std::nullopt;
}

void setValidationMode(ValidationMode mode) {
  Validation& v = validation();
  // The frees the quarantine held, given back once no lock of the layer is
  // held: a backend's free takes its device's lock, which no lock of the
  // layer may be held around (the fork callbacks take the layer's locks
  // and the devices' in either order).
  std::vector<const void*> held;
  {
    std::lock_guard<std::mutex> lock(v.mutex);
    if (mode == ValidationMode::Off) {
      if (!v.added) return;
      // The books let go of the records in live blocks before the layer
      // leaves the path (ValidationLayer::forgetAll).
      held = v.layer.forgetAll();
      detail::removeHookLayer(v.layer);
      v.added = false;
    } else {
      v.layer.setMode(mode);
      if (v.added) return;
      if (!v.exit_report_registered) {
        v.exit_report_registered = std::atexit(&printLeaksAtExit) == 0;
      }
      detail::resetViolationCount();
      v.layer.activate();
      detail::addHookLayer(v.layer);
      v.added = true;
    }
  }
  detail::ValidationLayer::giveBack(held);
}

void setValidationQuarantine(std::size_t blocks, std::size_t bytes) noexcept {
  validation().layer.setQuarantineLimits(detail::QuarantineLimits{blocks, bytes});
}

ValidationMode validationMode() noexcept {
  Validation& v = validation();
  std::lock_guard<std::mutex> lock(v.mutex);
  return v.added ? v.layer.mode() : ValidationMode::Off;
}

std::uint64_t validationViolations() noexcept { return detail::countedViolations(); }

std::string validationLeakReport() { return validation().layer.leakReport(); }

void setValidationStacks(bool on) noexcept { detail::setRecordedStacks(on); }

void resolveValidationHostStacks() noexcept { validation().layer.resolveHostStacks(); }

void setValidationHostStack(HostStackCapture capture) {
  detail::setHostStackProvider(std::move(capture));
}

}  // namespace accel
