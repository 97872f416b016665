#include "accel/capabilities.h"

namespace accel {

std::string_view hookGroupName(HookGroup group) noexcept {
  switch (group) {
    case HookGroup::Low:
      return "low";
    case HookGroup::High:
      return "high";
    case HookGroup::Device:
      return "device";
    case HookGroup::Streams:
      return "streams";
    case HookGroup::Events:
      return "events";
    case HookGroup::Memory:
      return "memory";
    case HookGroup::MemoryHistory:
      return "memory_history";
    case HookGroup::Graphs:
      return "graphs";
  }
  return "unknown";
}

std::string Capabilities::str() const {
  std::string out;
  for (int i = 0; i < kNumHookGroups; ++i) {
    auto group = static_cast<HookGroup>(i);
    if (!has(group)) continue;
    if (!out.empty()) out += ", ";
    out += hookGroupName(group);
  }
  return out;
}

}  // namespace accel
