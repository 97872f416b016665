#include "accel/capabilities.h"

#include "hooks/enum_names.h"

namespace accel {

namespace {

constexpr detail::EnumNames<HookGroup::Fill> kHookGroupNames{
    "low",    "high",           "device", "streams", "events",
    "memory", "memory_history", "graphs", "copies",  "fill"};
static_assert(kHookGroupNames.kCount == kNumHookGroups);

}  // namespace

std::string_view hookGroupName(HookGroup group) noexcept {
  return kHookGroupNames[group];
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
