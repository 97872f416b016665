#include "layers/validation/validation_report.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "accel/error.h"
#include "layers/validation/interned_stacks.h"

namespace accel::detail {

namespace {

// Frames of the layer, the decorator and the core's wrappers are skipped
// by library, not counted: inlining changes their number.
constexpr int kSkipNothing = 0;

std::string hex(const void* ptr) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", ptr);
  return text;
}

struct HostProvider {
  std::mutex mutex;
  std::shared_ptr<const HostStackCapture> capture;
  // Whether `capture` is set, read without the lock: a program with no
  // host (C++ alone) records its stacks without taking it.
  std::atomic<bool> set{false};
};

HostProvider& hostProvider() {
  static HostProvider* provider = new HostProvider();  // used during exit
  return *provider;
}

bool isCoreFrame(const MemoryFrame& frame) noexcept {
  return frame.filename.find("libaccel.so") != std::string::npos;
}

std::string frameText(const MemoryFrame& frame) {
  if (frame.line > 0) return concat(frame.filename, ":", frame.line, " in ", frame.name);
  return concat(frame.name, " (", frame.filename, ")");
}

// The caller's frames of `stack`: the host's, then the C++ frames from the
// first one outside libaccel.so on.
std::vector<MemoryFrame> callerPart(const CapturedStack& stack) {
  std::vector<MemoryFrame> out;
  if (!stack) return out;
  if (stack->host) out = stack->host->frames();
  memory::detail::StackSymbolizer symbolizer;
  std::vector<MemoryFrame> native = symbolizer.symbolize(stack);
  std::size_t first = 0;
  while (first < native.size() &&
         (isCoreFrame(native[first]) || native[first].filename.empty()))
    ++first;
  // Nothing outside the core (a call from the core itself): show it all.
  if (first == native.size()) first = 0;
  out.insert(out.end(), native.begin() + static_cast<std::ptrdiff_t>(first),
             native.end());
  return out;
}

std::atomic<std::uint64_t> g_violations{0};

}  // namespace

std::string hexAddress(std::uintptr_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%" PRIxPTR, address);
  return text;
}

std::uint64_t countedViolations() noexcept {
  return g_violations.load(std::memory_order_relaxed);
}
void resetViolationCount() noexcept { g_violations.store(0, std::memory_order_relaxed); }

std::string describeCall(const HookCall& call) {
  const bool copy = hookInfo(call.hook).group == HookGroup::Copies;
  std::string args;
  auto add = [&](std::string_view name, const std::string& value) {
    if (!args.empty()) args += ", ";
    args += concat(name, "=", value);
  };
  if (call.ptr != nullptr) add(copy ? "dst" : "ptr", hex(call.ptr));
  if (call.ptr2 != nullptr) add(copy ? "src" : "ptr2", hex(call.ptr2));
  if (call.bytes != 0)
    add(call.hook == HookId::fillRandom ? "count" : "bytes", std::to_string(call.bytes));
  if (call.object != 0) {
    const bool graph = hookInfo(call.hook).group == HookGroup::Graphs;
    add(graph ? "graph" : (call.object2 != 0 ? "start" : "event"),
        std::to_string(call.object));
  }
  if (call.object2 != 0) add("end", std::to_string(call.object2));
  if (call.stream >= 0) {
    add("stream", concat(deviceTypeName(call.type), ":", call.device, " #", call.stream));
  } else if (call.device >= 0) {
    add("device", std::to_string(call.device));
  }
  if (call.device2 >= 0)
    add("generator", concat(deviceTypeName(call.type), ":", call.device2));
  std::string text = concat(hookInfo(call.hook).name, "(", args, ") on '",
                            deviceTypeName(call.type), "'");
  if (call.device >= 0) text += concat(" device ", call.device);
  return text;
}

std::string describeMemoryCall(std::string_view what, DeviceType type, Device device,
                               const void* ptr, std::size_t bytes) {
  std::string args = ptr != nullptr ? concat("ptr=", hex(ptr), ", bytes=", bytes)
                                    : concat("bytes=", bytes);
  std::string text = concat(what, "(", args, ") on '", deviceTypeName(type), "'");
  if (device.type() == DeviceType::CPU) return text + " pinned memory";
  return text + concat(" device ", int(device.index()));
}

namespace {

// The host stack here, when a provider is set (null otherwise).
std::shared_ptr<const HostStack> hostStackHere() {
  std::shared_ptr<const HostStackCapture> capture;
  {
    HostProvider& provider = hostProvider();
    if (!provider.set.load(std::memory_order_acquire)) return nullptr;
    std::lock_guard<std::mutex> lock(provider.mutex);
    capture = provider.capture;
  }
  return capture && *capture ? (*capture)() : nullptr;
}

}  // namespace

CapturedStack captureHere() noexcept {
  try {
    return memory::detail::captureStack(kSkipNothing, /*native=*/true, hostStackHere());
  } catch (...) {
    return nullptr;
  }
}

constinit std::atomic<bool> g_recorded_stacks{true};

CapturedStack recordedStack() noexcept {
  if (!recordingStacks()) return nullptr;
  try {
    return internedStack(hostStackHere());
  } catch (...) {
    return nullptr;
  }
}

void setRecordedStacks(bool on) noexcept {
  g_recorded_stacks.store(on, std::memory_order_relaxed);
}

void setHostStackProvider(HostStackCapture capture) {
  auto shared = capture ? std::make_shared<const HostStackCapture>(std::move(capture))
                        : std::shared_ptr<const HostStackCapture>();
  HostProvider& provider = hostProvider();
  std::lock_guard<std::mutex> lock(provider.mutex);
  provider.set.store(shared != nullptr, std::memory_order_release);
  provider.capture = std::move(shared);
}

void lockHostStackProviderForFork() noexcept { hostProvider().mutex.lock(); }

void unlockHostStackProviderAfterFork() noexcept { hostProvider().mutex.unlock(); }

std::string callerFrame(const CapturedStack& stack) {
  try {
    std::vector<MemoryFrame> frames = callerPart(stack);
    if (frames.empty()) return "an unknown place (no stack)";
    return frameText(frames.front());
  } catch (...) {
    return "an unknown place";
  }
}

std::string callerFrames(const CapturedStack& stack, std::string_view indent) {
  std::string out;
  for (const MemoryFrame& frame : callerPart(stack))
    out += concat(indent, frameText(frame), "\n");
  if (out.empty()) out = concat(indent, "(no stack)\n");
  return out;
}

void reportViolation(ValidationMode mode, const std::string& call,
                     const std::string& rule, const CapturedStack& where,
                     bool may_throw) {
  g_violations.fetch_add(1, std::memory_order_relaxed);
  const std::string line =
      concat("accel validation: ", call, ": ", rule, "; called at ", callerFrame(where));
  if (mode == ValidationMode::Throw && may_throw) throw InvalidArgument(line);
  std::fprintf(stderr, "%s\n", line.c_str());
  if (mode == ValidationMode::Abort) std::abort();
}

}  // namespace accel::detail
