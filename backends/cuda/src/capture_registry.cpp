#include "capture_registry.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "capture_deferrals.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

struct Capture {
  unsigned long long id = 0;
  adapter::Stream origin{};
  std::vector<adapter::Stream> joined;  // forked streams that joined its pool
};

struct Registry {
  // Held while the count of captures underway (capture_deferrals.h)
  // changes, so that the diversion changes with it.
  std::mutex mutex;
  std::vector<Capture> captures;
  // The core the captures run under, and its devices (captureBeginning).
  std::optional<adapter::Core> core;
  int device_count = 0;
};

Registry& registry() {
  static auto* const r = new Registry();  // never destroyed
  return *r;
}

void divert(Registry& r, bool on) {
  for (int device = 0; device < r.device_count; ++device)
    r.core->divertAllocations(static_cast<std::int8_t>(device), on);
}

// The lock is held. One capture fewer underway; the last one's end runs
// what was deferred and lets the core's allocations go straight to its cache.
void oneFewer(Registry& r) noexcept {
  if (!captureNoLongerUnderway() || !r.core) return;
  try {
    divert(r, false);
  } catch (...) {
    // Left diverted: each allocation asks checkAllocation, which finds no
    // capture underway and allows it.
  }
}

}  // namespace

void captureBeginning(const adapter::Core& core, int device_count) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.core = core;
  r.device_count = device_count;
  divert(r, true);
  deferWhileCapturing();
}

void captureBegan(unsigned long long capture_id, adapter::Stream origin) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.captures.push_back({capture_id, origin, {}});
}

void captureAbandoned() noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  oneFewer(r);
}

void captureEnded(unsigned long long capture_id) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto found = std::find_if(r.captures.begin(), r.captures.end(),
                            [&](const Capture& c) { return c.id == capture_id; });
  if (found == r.captures.end()) return;
  r.captures.erase(found);
  oneFewer(r);
}

void routeToCapturePool(std::int8_t device, adapter::Stream stream) {
  unsigned long long id = 0;
  if (!capturesUnderway() || !isCapturing(stream, &id)) return;
  Registry& r = registry();
  adapter::Stream origin{};
  std::optional<adapter::Core> core;
  {
    std::lock_guard lock(r.mutex);
    auto found = std::find_if(r.captures.begin(), r.captures.end(),
                              [&](const Capture& c) { return c.id == id; });
    if (found == r.captures.end() || found->origin.device != device ||
        adapter::sameStream(found->origin, stream) ||
        std::any_of(found->joined.begin(), found->joined.end(),
                    [&](adapter::Stream s) { return adapter::sameStream(s, stream); })) {
      return;
    }
    found->joined.push_back(stream);
    origin = found->origin;
    core = r.core;
  }
  // Outside the lock: the core takes its own.
  try {
    core->joinCapture(origin, stream);
  } catch (const adapter::Failure& e) {
    // The capture ended between the query and the join: nothing to route.
    if (e.status() == ACCEL_ERROR_INVALID_ARGUMENT && !isCapturing(stream, &id)) return;
    // Not joined: the stream's next allocation tries again.
    std::lock_guard lock(r.mutex);
    for (Capture& c : r.captures) {
      if (c.id != id) continue;
      c.joined.erase(std::remove_if(c.joined.begin(), c.joined.end(),
                                    [&](adapter::Stream s) {
                                      return adapter::sameStream(s, stream);
                                    }),
                     c.joined.end());
    }
    throw;
  }
}

}  // namespace accel::cuda::detail
