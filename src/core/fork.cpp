#include "accel/fork.h"

#include <pthread.h>

#include <mutex>
#include <vector>

namespace accel {
namespace {

// Leaked: fork() may happen during static destruction.
struct ForkRegistry {
  std::mutex mutex;
  std::vector<ForkCallbacks> callbacks;
};

ForkRegistry& forkRegistry() {
  static ForkRegistry* registry = new ForkRegistry();
  return *registry;
}

void runBefore() {
  ForkRegistry& r = forkRegistry();
  r.mutex.lock();  // released by the two after-handlers
  for (auto it = r.callbacks.rbegin(); it != r.callbacks.rend(); ++it) {
    if (it->before) it->before();
  }
}

void runAfterInParent() {
  ForkRegistry& r = forkRegistry();
  for (const ForkCallbacks& c : r.callbacks) {
    if (c.after_in_parent) c.after_in_parent();
  }
  r.mutex.unlock();
}

void runAfterInChild() {
  ForkRegistry& r = forkRegistry();
  for (const ForkCallbacks& c : r.callbacks) {
    if (c.after_in_child) c.after_in_child();
  }
  r.mutex.unlock();
}

}  // namespace

void registerForkCallbacks(ForkCallbacks callbacks) {
  static std::once_flag installed;
  std::call_once(installed,
                 [] { ::pthread_atfork(&runBefore, &runAfterInParent, &runAfterInChild); });
  ForkRegistry& r = forkRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.callbacks.push_back(callbacks);
}

}  // namespace accel
