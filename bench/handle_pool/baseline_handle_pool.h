// BASELINE for bench_handle_pool: the classic design of a per-device,
// per-thread handle pool, written here only to be measured against.
//
// One mutex guards two unordered_maps (device -> all created handles, device
// -> idle handles). Each thread keeps a window onto the pool: a thread_local
// unique_ptr to an object holding an unordered_map device -> handle. Every
// call site repeats a static pool plus a thread_local window. Handles are
// created while the pool mutex is held and are only destroyed with the pool.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace accel::bench {

template <typename Handle, Handle (*Create)(int), void (*Destroy)(Handle)>
class BaselineHandlePool
    : public std::enable_shared_from_this<BaselineHandlePool<Handle, Create, Destroy>> {
 public:
  ~BaselineHandlePool() {
    for (auto& [device, handles] : created_) {
      for (Handle handle : handles) Destroy(handle);
    }
  }

  class Window {
   public:
    explicit Window(std::weak_ptr<BaselineHandlePool> pool) : pool_(std::move(pool)) {}
    ~Window() {
      if (auto pool = pool_.lock()) {
        std::lock_guard lock(pool->mutex_);
        for (auto& [device, handle] : mine_) pool->available_[device].push_back(handle);
      }
    }

    Handle reserve(int device) {
      auto it = mine_.find(device);
      if (it != mine_.end()) return it->second;
      auto pool = pool_.lock();
      std::lock_guard lock(pool->mutex_);
      std::vector<Handle>& idle = pool->available_[device];
      Handle handle;
      if (!idle.empty()) {
        handle = idle.back();
        idle.pop_back();
      } else {
        handle = Create(device);  // under the pool mutex, as in the classic design
        pool->created_[device].push_back(handle);
      }
      mine_[device] = handle;
      return handle;
    }

   private:
    std::weak_ptr<BaselineHandlePool> pool_;
    std::unordered_map<int, Handle> mine_;
  };

  std::unique_ptr<Window> newWindow() {
    return std::make_unique<Window>(this->weak_from_this());
  }

 private:
  std::mutex mutex_;
  std::unordered_map<int, std::vector<Handle>> created_;
  std::unordered_map<int, std::vector<Handle>> available_;
};

}  // namespace accel::bench
