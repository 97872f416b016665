// The validation layer's reports (validation_layer.h): each violation as
// its line, and the leak table with the stacks of what was never released.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accel/error.h"
#include "layers/validation/validation_layer.h"
#include "layers/validation/validation_report.h"

namespace accel::detail {

namespace {

// A host stack resolved once, kept as its frames.
class ResolvedHostStack final : public HostStack {
 public:
  explicit ResolvedHostStack(std::vector<MemoryFrame> frames)
      : frames_(std::move(frames)) {}
  [[nodiscard]] std::vector<MemoryFrame> frames() const override { return frames_; }

 private:
  std::vector<MemoryFrame> frames_;
};

// `stack` with its host part resolved (`stack` itself when it has none).
CapturedStack resolvedHost(const CapturedStack& stack) {
  if (!stack || !stack->host) return stack;
  auto record = std::make_shared<memory::detail::StackRecord>();
  record->host = std::make_shared<const ResolvedHostStack>(stack->host->frames());
  record->addresses = stack->addresses;
  return record;
}

}  // namespace

void ValidationLayer::resolveHostStacks() noexcept {
  try {
    // Resolved without the lock (resolving takes the host's lock), then
    // put back where the same stack still is.
    std::vector<CapturedStack> stacks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      BiasedMutex::Guard books(memory_.booksLock());
      memory_.forEachLive(
          [&](const TrackedBlock& block) { stacks.push_back(block.made); });
      for (const auto& [key, event] : events_) stacks.push_back(event.made);
      for (const auto& [key, made] : graphs_) stacks.push_back(made);
    }
    std::map<const memory::detail::StackRecord*, CapturedStack> resolved;
    for (const CapturedStack& stack : stacks) {
      if (stack && stack->host) resolved.emplace(stack.get(), resolvedHost(stack));
    }
    auto replace = [&](CapturedStack& stack) {
      auto found = resolved.find(stack.get());
      if (found != resolved.end()) stack = found->second;
    };
    std::lock_guard<std::mutex> lock(mutex_);
    BiasedMutex::Guard books(memory_.booksLock());
    memory_.forEachLive([&](TrackedBlock& block) { replace(block.made); });
    for (auto& [key, event] : events_) replace(event.made);
    for (auto& [key, made] : graphs_) replace(made);
  } catch (...) {
    // No memory: the report names C++ frames only.
  }
}

void ValidationLayer::report(const std::string& call, std::vector<Violation>& found,
                             bool may_throw) const {
  // Every violation but the last is printed; the last decides what follows
  // (so that throw mode names them all before the exception).
  for (std::size_t i = 0; i < found.size(); ++i) {
    Violation& v = found[i];
    std::string rule = v.rule;
    if (v.freed) rule += concat(" (freed at ", callerFrame(v.freed), ")");
    if (v.made) rule += concat(" (made at ", callerFrame(v.made), ")");
    const bool last = i + 1 == found.size();
    reportViolation(last ? mode() : ValidationMode::Log, call, rule, captureHere(),
                    may_throw && last);
  }
}

std::string ValidationLayer::leakReport() {
  struct Leak {
    std::string what;
    CapturedStack made;
  };
  std::vector<Leak> leaks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    BiasedMutex::Guard books(memory_.booksLock());
    // Blocks by address, as they always were listed (the books keep them
    // in no order).
    std::vector<const TrackedBlock*> blocks;
    memory_.forEachLive([&](const TrackedBlock& block) { blocks.push_back(&block); });
    std::sort(
        blocks.begin(), blocks.end(),
        [](const TrackedBlock* a, const TrackedBlock* b) { return a->base < b->base; });
    for (const TrackedBlock* block : blocks) {
      leaks.push_back(
          {concat(block->pinned ? "pinned block " : "block ", hexAddress(block->base),
                  " of ", block->bytes, " bytes, '", deviceTypeName(block->type), "'",
                  block->pinned ? std::string()
                                : concat(" device ", int(block->device.index()))),
           block->made});
    }
    for (const auto& [key, event] : events_) {
      leaks.push_back({concat("event ", key.second, ", '", deviceTypeName(key.first),
                              "' device ", event.device),
                       event.made});
    }
    for (const auto& [key, made] : graphs_) {
      leaks.push_back(
          {concat("graph ", key.second, ", '", deviceTypeName(key.first), "'"), made});
    }
  }
  if (leaks.empty()) return {};
  std::string out = concat("accel validation: ", leaks.size(),
                           " object(s) made while validating were never released:\n");
  for (const Leak& leak : leaks) {
    out += concat("  ", leak.what, ", made at:\n");
    out += callerFrames(leak.made, "      ");
  }
  return out;
}

}  // namespace accel::detail
