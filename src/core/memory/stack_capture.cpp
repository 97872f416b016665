#include "memory/stack_capture.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>
#include <cstdlib>

namespace accel::memory::detail {
namespace {

constexpr int kMaxFrames = 48;

}  // namespace

CapturedStack captureStack(int skip) {
  void* frames[kMaxFrames];
  const int count = backtrace(frames, kMaxFrames);
  const int first = skip < count ? skip : count;
  return std::make_shared<const std::vector<void*>>(frames + first, frames + count);
}

std::vector<MemoryFrame> StackSymbolizer::symbolize(const CapturedStack& stack) {
  std::vector<MemoryFrame> out;
  if (!stack) return out;
  out.reserve(stack->size());
  for (void* address : *stack) out.push_back(frameFor(address));
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
