#include "memory/stack_capture.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

#include "memory/frame_walk.h"

namespace accel::memory::detail {
namespace {

constexpr int kMaxFrames = 48;

}  // namespace

CapturedStack captureStack(int skip, bool native, std::shared_ptr<const HostStack> host) {
  if (!native && !host) return nullptr;
  auto record = std::make_shared<StackRecord>();
  record->host = std::move(host);
  if (native) {
    void* frames[kMaxFrames];
    if (skip == 0) {
      // This function's own frame too: backtrace() reports it first.
      const int count = backtrace(frames, kMaxFrames);
      record->addresses.assign(frames, frames + count);
    } else {
      // backtrace()'s frames but its first (this function's): walkFrames
      // starts at its caller's return address, with cached unwind rules
      // (frame_walk.h; a recording pair with stacks 6.18 us -> 335 ns,
      // docs/validation.md "Stacks from cached unwind rules").
      const int count = walkFrames(frames, kMaxFrames - 1);
      const int first = skip - 1 < count ? skip - 1 : count;
      record->addresses.assign(frames + first, frames + count);
    }
  }
  return record;
}

namespace {

void prependHostFrames(std::shared_ptr<const HostStack>& host,
                       std::vector<MemoryFrame>& frames) {
  if (!host) return;
  std::vector<MemoryFrame> resolved = host->frames();
  frames.insert(frames.begin(), std::make_move_iterator(resolved.begin()),
                std::make_move_iterator(resolved.end()));
  host.reset();
}

}  // namespace

void resolveHostStacks(MemorySnapshot& snapshot) {
  for (MemorySegment& segment : snapshot.segments) {
    for (MemoryBlock& block : segment.blocks)
      prependHostFrames(block.host_stack, block.frames);
  }
  for (auto& trace : snapshot.device_traces) {
    for (MemoryTraceEntry& entry : trace) {
      if (!entry.host_stack) continue;
      const std::size_t before = entry.frame_details.size();
      prependHostFrames(entry.host_stack, entry.frame_details);
      const std::size_t added = entry.frame_details.size() - before;
      std::vector<std::string> names;
      names.reserve(added);
      for (std::size_t i = 0; i < added; ++i) {
        const MemoryFrame& frame = entry.frame_details[i];
        names.push_back(frame.name + " (" + frame.filename + ":" +
                        std::to_string(frame.line) + ")");
      }
      entry.frames.insert(entry.frames.begin(), names.begin(), names.end());
    }
  }
}

std::vector<MemoryFrame> StackSymbolizer::symbolize(const CapturedStack& stack) {
  std::vector<MemoryFrame> out;
  if (!stack) return out;
  out.reserve(stack->addresses.size());
  for (void* address : stack->addresses) out.push_back(frameFor(address));
  return out;
}

const MemoryFrame& StackSymbolizer::frameFor(void* address) {
  auto found = cache_.find(address);
  if (found != cache_.end()) return found->second;
  MemoryFrame frame;
  Dl_info info{};
  if (dladdr(address, &info) != 0) {
    if (info.dli_fname != nullptr) frame.filename = info.dli_fname;
    if (info.dli_sname != nullptr) {
      int status = 0;
      char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
      frame.name = (status == 0 && demangled != nullptr) ? demangled : info.dli_sname;
      std::free(demangled);
    }
  }
  if (frame.name.empty()) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", address);
    frame.name = text;
  }
  return cache_.emplace(address, std::move(frame)).first->second;
}

}  // namespace accel::memory::detail
