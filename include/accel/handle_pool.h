// DeviceThreadHandlePool: per-device, per-thread pools of library handles.
//
// Libraries such as cuBLAS, cuDNN, cuSOLVER and cuDSS hand out handles that
// take milliseconds to create (a cuSOLVER handle can hold hundreds of MB of
// device memory) and must not be shared by threads that work on different
// streams. One pool per library keeps one handle per (thread, device): a
// thread's first reserve on a device takes an idle handle or creates one, its
// later reserves return the same handle, and when the thread exits its
// handles go back to the pool for the next thread. The number of handles a
// device ever needs is the peak number of threads that held one at once.
//
// A pool is described by a traits type (see HandlePoolTraits below):
//
//   struct CublasPool {
//     using Handle = cublasHandle_t;
//     static constexpr accel::DeviceType kDeviceType = accel::DeviceType::CUDA;
//     static constexpr std::string_view kName = "cublas";          // optional
//     static Handle create(accel::DeviceIndex device);  // runs with `device` current
//     static void destroy(Handle handle) noexcept;
//     static void bind(Handle handle, accel::DeviceIndex device);  // optional
//   };
//
//   cublasHandle_t handle = accel::reserveHandle<CublasPool>(device);
//
// The call site is one line: the pool (a process-wide singleton) and the
// thread's window onto it are hidden behind reserveHandle.
//
// Performance: the fast path (this thread already holds a handle for the
// device) reads one slot of a thread_local array indexed by device and the
// process-wide exit flag; no lock, no hash map, no call (but bind, if the
// traits have one). The slow path takes a pool-wide mutex only to pop an
// idle handle or update the counters; create(), destroy() and bind() always
// run without it, so one slow create never stalls other threads.
//
// Thread-safety: every function is thread-safe.
//
// Lifetime (docs/handle-pools.md):
//  - A pool is created on first use and never destroyed, so threads that exit
//    late and static destructors can still reach it.
//  - A thread's handles return to the pool when the thread exits.
//  - Once the process has begun to exit, the pool calls neither create nor
//    destroy: the library behind the handles may already have been torn down
//    by its own exit handlers (the CUDA runtime's, for one), and destroying a
//    handle then crashes or hangs. Handles still held or pooled at exit are
//    left to the operating system. Reserving during exit throws NotAvailable.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <limits>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <vector>

#include "accel/device.h"
#include "accel/device_guard.h"
#include "accel/device_type.h"
#include "accel/export.h"

namespace accel {

// What a pool's traits type must provide:
//  - Handle (HandlePoolHandle): trivially copyable, where the value-initialised Handle{}
//  (a null
//    pointer for C library handles) never names a live handle; the pool uses
//    it to mean "this thread holds none".
//  - kDeviceType: the device type whose devices the handles belong to.
//  - create(device): a new handle for `device`. Runs with `device` current on
//    this thread (a DeviceGuard over getHooks(kDeviceType)), without any pool
//    lock held. May throw; the error reaches the reserving caller.
//  - destroy(handle) noexcept: frees a handle create() returned.
// Optional members, detected when present:
//  - bind(handle, device): runs on every reserve, fast path included, with the
//    handle about to be returned (for example to set the handle's stream to
//    the current stream). May throw.
//  - kMaxIdleHandles (std::size_t): the initial cap on idle handles kept per
//    device (see setMaxIdleHandles); unlimited when absent.
//  - kSwitchDevice (bool): false when create() needs no current device (the
//    handle type is not tied to one); then no hooks are consulted.
//  - kName (std::string_view): the pool's name in error messages.
template <typename H>
concept HandlePoolHandle = std::is_trivially_copyable_v<H> &&
    std::is_default_constructible_v<H> && std::equality_comparable<H>;

template <typename T>
concept HandlePoolTraits = HandlePoolHandle<typename T::Handle> &&
    requires(DeviceIndex device, typename T::Handle handle) {
  { T::kDeviceType } -> std::convertible_to<DeviceType>;
  { T::create(device) } -> std::same_as<typename T::Handle>;
  requires noexcept(T::destroy(handle));
};

// Counters of one device's handles in one pool. Live handles are
// in_use + available = created - destroyed.
struct HandlePoolStats {
  std::size_t created = 0;    // create() calls that succeeded, since the pool began
  std::size_t destroyed = 0;  // handles destroyed by trim or the idle cap
  std::size_t in_use = 0;     // held by threads
  std::size_t available = 0;  // idle, kept for the next thread

  friend bool operator==(const HandlePoolStats&, const HandlePoolStats&) = default;
};

// True once the process has begun to exit as far as handle pools are
// concerned: from the moment the pools' exit handler ran (see
// docs/handle-pools.md for when that is). Never throws.
ACCEL_API bool handlePoolsExiting() noexcept;

namespace detail {

// Set by the exit handler; read on every reserve. Never reset.
ACCEL_API extern std::atomic<bool> g_handle_pools_exiting;

// Registers the exit handler (std::atexit) that sets g_handle_pools_exiting.
// Pools call it right after their first successful create(): atexit handlers
// run in reverse order of registration, so it runs before any teardown the
// library registered while its first handle was being created.
ACCEL_API void installHandlePoolExitHandler() noexcept;

// True on the thread that runs main(). Its thread_local destructors run only
// inside exit(), so handles it returns are pooled, never destroyed.
ACCEL_API bool isMainThread() noexcept;

[[noreturn]] ACCEL_API void throwHandlePoolBadDevice(std::string_view pool, int device);
[[noreturn]] ACCEL_API void throwHandlePoolExiting(std::string_view pool, int device);
[[noreturn]] ACCEL_API void throwHandlePoolNullHandle(std::string_view pool, int device);

template <typename T>
concept HandlePoolHasBind = requires(typename T::Handle handle, DeviceIndex device) {
  T::bind(handle, device);
};

template <typename T>
consteval bool handlePoolSwitchesDevice() {
  if constexpr (requires { T::kSwitchDevice; }) {
    return static_cast<bool>(T::kSwitchDevice);
  } else {
    return true;
  }
}

template <typename T>
consteval std::size_t handlePoolDefaultMaxIdle() {
  if constexpr (requires { T::kMaxIdleHandles; }) {
    return static_cast<std::size_t>(T::kMaxIdleHandles);
  } else {
    return std::numeric_limits<std::size_t>::max();
  }
}

template <typename T>
consteval std::string_view handlePoolName() {
  if constexpr (requires { T::kName; }) {
    return std::string_view(T::kName);
  } else {
    return "handle";
  }
}

}  // namespace detail

template <HandlePoolTraits Traits>
class DeviceThreadHandlePool {
 public:
  using Handle = typename Traits::Handle;
  static constexpr std::string_view kName = detail::handlePoolName<Traits>();

  DeviceThreadHandlePool(const DeviceThreadHandlePool&) = delete;
  DeviceThreadHandlePool& operator=(const DeviceThreadHandlePool&) = delete;

  // The process-wide pool of this traits type, created on first use.
  // Deliberately leaked (a `new` never deleted): threads that exit after
  // static destruction has begun still return their handles to it, and a
  // destructor here would have to call destroy() during exit, which is
  // exactly what must not happen. Thread-safe.
  static DeviceThreadHandlePool& instance() {
    static DeviceThreadHandlePool* const pool = new DeviceThreadHandlePool();
    return *pool;
  }

  // This thread's handle for `device`: the one it already holds, else an idle
  // one from the pool, else a new one from Traits::create. Then Traits::bind,
  // if the traits have one. The handle stays this thread's until the thread
  // exits; do not destroy it or hand it to another thread.
  // Static because the fast path touches only thread_local state.
  // Throws InvalidArgument for a device outside [0, kMaxDevicesPerType);
  // NotAvailable once the process has begun to exit; DeviceError if create()
  // returns a null handle; and whatever create() or the device switch throws
  // (the pool is left as it was, the next reserve tries again) or bind()
  // throws (the thread keeps the handle). Thread-safe.
  [[nodiscard]] static Handle reserve(int device) {
    if (static_cast<unsigned>(device) < static_cast<unsigned>(kMaxDevicesPerType) &&
        !detail::g_handle_pools_exiting.load(std::memory_order_relaxed)) [[likely]] {
      const Handle handle = t_handles_[device];
      if (handle != Handle{}) [[likely]] {
        if constexpr (detail::HandlePoolHasBind<Traits>) {
          Traits::bind(handle, static_cast<DeviceIndex>(device));
        }
        return handle;
      }
    }
    return reserveSlow(device);
  }

  // Counters for `device`. Throws InvalidArgument for a bad index. Thread-safe.
  [[nodiscard]] HandlePoolStats stats(int device) const {
    checkDevice(device);
    std::lock_guard lock(mutex_);
    return devices_[device].stats();
  }

  // Destroys the idle handles of `device` (handles held by threads are kept)
  // and returns how many. During exit destroys nothing and returns 0.
  // Throws InvalidArgument for a bad index; bad_alloc. Thread-safe.
  std::size_t trim(int device) {
    checkDevice(device);
    return trimDevices(device, device + 1, 0);
  }

  // trim() for every device. Thread-safe.
  std::size_t trimAll() { return trimDevices(0, kMaxDevicesPerType, 0); }

  // Caps the idle handles kept per device: a handle returned by an exiting
  // thread beyond the cap is destroyed rather than pooled, and idle handles
  // beyond a lowered cap are destroyed now (outside the lock). The initial cap
  // is Traits::kMaxIdleHandles, or unlimited. Returns how many were destroyed.
  // Throws bad_alloc. Thread-safe.
  std::size_t setMaxIdleHandles(std::size_t cap) {
    {
      std::lock_guard lock(mutex_);
      max_idle_ = cap;
    }
    return trimDevices(0, kMaxDevicesPerType, cap);
  }

  [[nodiscard]] std::size_t maxIdleHandles() const {
    std::lock_guard lock(mutex_);
    return max_idle_;
  }

 private:
  struct DeviceHandles {
    // Idle handles. Its capacity is kept >= the live handles, so returning a
    // handle at thread exit never allocates (and cannot throw there).
    std::vector<Handle> available;
    std::size_t created = 0;
    std::size_t destroyed = 0;
    std::size_t in_use = 0;
    std::size_t creating = 0;  // create() calls running now

    [[nodiscard]] HandlePoolStats stats() const {
      return {created, destroyed, in_use, available.size()};
    }
  };

  // Whether this thread's exit hook is armed. A thread_local destructor that
  // runs after ours (Released) may still reserve; such a handle cannot be
  // returned any more and stays counted as in use.
  enum class ThreadState : unsigned char { Unarmed, Armed, Released };

  // Its destructor returns this thread's handles. Kept apart from t_handles_
  // so the fast path reads a constant-initialised, trivially destructible
  // thread_local directly, without the init check a destructor would add.
  struct ThreadExit {
    bool armed = false;
    ~ThreadExit() {
      if (armed) releaseThisThread();
    }
  };

  DeviceThreadHandlePool() = default;
  ~DeviceThreadHandlePool() = delete;  // never destroyed, see instance()

  static void checkDevice(int device) {
    if (static_cast<unsigned>(device) >= static_cast<unsigned>(kMaxDevicesPerType)) {
      detail::throwHandlePoolBadDevice(kName, device);
    }
  }

  static bool exiting() noexcept {
    return detail::g_handle_pools_exiting.load(std::memory_order_relaxed);
  }

  [[gnu::noinline]] static Handle reserveSlow(int device) {
    checkDevice(device);
    if (exiting()) detail::throwHandlePoolExiting(kName, device);
    Handle handle = t_handles_[device];
    if (handle == Handle{}) {
      if (t_state_ == ThreadState::Unarmed) {
        t_exit_.armed = true;  // first use registers ThreadExit's destructor
        t_state_ = ThreadState::Armed;
      }
      handle = instance().acquire(device);
      t_handles_[device] = handle;
    }
    if constexpr (detail::HandlePoolHasBind<Traits>) {
      Traits::bind(handle, static_cast<DeviceIndex>(device));
    }
    return handle;
  }

  // An idle handle, or a new one; counted as in use.
  Handle acquire(int device) {
    DeviceHandles& slot = devices_[device];
    {
      std::lock_guard lock(mutex_);
      if (!slot.available.empty()) {
        const Handle handle = slot.available.back();
        slot.available.pop_back();
        ++slot.in_use;
        return handle;
      }
      // Room for every live handle, and every one being created, to be idle
      // at once. May throw bad_alloc; nothing has changed yet.
      slot.available.reserve(slot.in_use + slot.creating + 1);
      ++slot.creating;
    }
    Handle handle{};
    try {
      handle = createOnDevice(device);  // no lock: may take milliseconds
      if (handle == Handle{}) detail::throwHandlePoolNullHandle(kName, device);
    } catch (...) {
      std::lock_guard lock(mutex_);
      --slot.creating;
      throw;
    }
    {
      std::lock_guard lock(mutex_);
      --slot.creating;
      ++slot.created;
      ++slot.in_use;
    }
    if (!exit_handler_installed_.exchange(true, std::memory_order_acq_rel)) {
      detail::installHandlePoolExitHandler();
    }
    return handle;
  }

  static Handle createOnDevice(int device) {
    const auto index = static_cast<DeviceIndex>(device);
    if constexpr (detail::handlePoolSwitchesDevice<Traits>()) {
      DeviceGuard guard(Device(Traits::kDeviceType, index));
      return Traits::create(index);
    } else {
      return Traits::create(index);
    }
  }

  // Runs in ThreadExit's destructor: pools this thread's handles, and
  // destroys those beyond the idle cap unless the process is exiting or this
  // is the main thread (whose thread_locals die inside exit()).
  static void releaseThisThread() noexcept {
    t_state_ = ThreadState::Released;
    DeviceThreadHandlePool& pool = instance();
    // During exit every handle is pooled, cap or not (there is capacity), so
    // the counters stay true; nothing is destroyed.
    const bool may_destroy = !exiting() && !detail::isMainThread();
    std::array<Handle, kMaxDevicesPerType> surplus;
    std::size_t surplus_count = 0;
    {
      std::lock_guard lock(pool.mutex_);
      for (int device = 0; device < kMaxDevicesPerType; ++device) {
        const Handle handle = t_handles_[device];
        if (handle == Handle{}) continue;
        t_handles_[device] = Handle{};
        DeviceHandles& slot = pool.devices_[device];
        --slot.in_use;
        if (!may_destroy || slot.available.size() < pool.max_idle_) {
          slot.available.push_back(handle);  // within capacity: no allocation
        } else {
          ++slot.destroyed;
          surplus[surplus_count++] = handle;
        }
      }
    }
    for (std::size_t i = 0; i < surplus_count; ++i) Traits::destroy(surplus[i]);
  }

  // Destroys idle handles of devices [first, last) beyond `keep` each.
  std::size_t trimDevices(int first, int last, std::size_t keep) {
    if (exiting()) return 0;
    std::vector<Handle> idle;
    {
      std::lock_guard lock(mutex_);
      std::size_t excess = 0;
      for (int device = first; device < last; ++device) {
        excess += devices_[device].available.size() -
                  std::min(keep, devices_[device].available.size());
      }
      idle.reserve(excess);  // may throw bad_alloc; nothing has changed yet
      for (int device = first; device < last; ++device) {
        DeviceHandles& slot = devices_[device];
        while (slot.available.size() > keep) {
          idle.push_back(slot.available.back());
          slot.available.pop_back();
          ++slot.destroyed;
        }
      }
    }
    for (const Handle handle : idle) Traits::destroy(handle);
    return idle.size();
  }

  mutable std::mutex mutex_;
  std::size_t max_idle_ = detail::handlePoolDefaultMaxIdle<Traits>();
  std::array<DeviceHandles, kMaxDevicesPerType> devices_{};
  std::atomic<bool> exit_handler_installed_{false};

  // This thread's handles, indexed by device; Handle{} where it holds none.
  static constinit inline thread_local Handle t_handles_[kMaxDevicesPerType] = {};
  static constinit inline thread_local ThreadState t_state_ = ThreadState::Unarmed;
  static inline thread_local ThreadExit t_exit_;
};

// The pool of a traits type (the process-wide singleton). Thread-safe.
template <HandlePoolTraits Traits>
[[nodiscard]] DeviceThreadHandlePool<Traits>& handlePool() {
  return DeviceThreadHandlePool<Traits>::instance();
}

// This thread's handle for `device` from the pool of `Traits`: the one-line
// call site, e.g. `auto h = accel::reserveHandle<CublasPool>(device);`.
// Same promises and errors as DeviceThreadHandlePool::reserve.
template <HandlePoolTraits Traits>
[[nodiscard]] inline typename Traits::Handle reserveHandle(int device) {
  return DeviceThreadHandlePool<Traits>::reserve(device);
}

}  // namespace accel
