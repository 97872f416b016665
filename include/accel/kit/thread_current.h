// ThreadCurrent: a backend's per-thread current device and, per device, the
// per-thread current stream.
//
// Every backend has to answer getCurrentDevice() and getCurrentStream(i) per
// calling thread; a backend keeps one ThreadCurrent (normally a member of its
// hooks object) and forwards to it:
//
//   accel::kit::ThreadCurrent current_;
//   DeviceIndex getCurrentDeviceImpl() const override { return current_.device(); }
//   void setCurrentDeviceImpl(DeviceIndex i) override { current_.setDevice(i); }
//
// Each object has its own state: two hooks objects (two backends, or a test's
// private TestHooks beside the registered one) never see each other's
// settings, and an object created where an earlier one was destroyed starts
// again at device 0 and the default streams in every thread.
//
// Why not a `thread_local std::unordered_map`: thread_local objects with
// destructors are destroyed before static objects, so a guard restoring the
// device during static destruction would touch a dead map. The device table
// and the streams live in per-thread blocks (out of the library's static
// TLS, of which a library loaded by dlopen has little) that are freed when
// the thread exits, after which reads answer the defaults and a write
// allocates a block that is never freed (only code running after its
// thread's thread_local destructors gets there).
//
// Thread-safety: every member may be called from any thread; each thread sees
// only its own values. The setters take no lock.
// Lifetime: at most kMaxLive objects may exist at once (the constructor throws
// beyond that). Values are forgotten when the object is destroyed.
#pragma once

#include <cstdint>

#include "accel/device.h"
#include "accel/export.h"
#include "accel/stream.h"

namespace accel::kit {

namespace tls {
// A current device of one object (`uid`; uids start at 1).
struct CurrentDeviceEntry {
  std::uint32_t uid = 0;
  DeviceIndex index = 0;
};
inline constexpr int kMaxLiveThreadCurrents = 128;
// The calling thread's most recently used entry, exposed only so that
// device(), read on every getCurrentDevice(), inlines to one initial-exec TLS
// load and a compare (8 bytes of static TLS; the full per-object table behind
// it is a heap block of the thread's). Trivially destructible, so it is
// readable at any point of a thread's or the process's exit.
ACCEL_API extern constinit thread_local CurrentDeviceEntry t_last_current_device
    __attribute__((tls_model("initial-exec")));
// The thread's stream settings (thread_current.cpp); null until the thread
// sets a stream, so that stream() of a thread on default streams is one
// %fs-relative load in the caller, with no call (a backend asks for it on
// every allocation).
struct ThreadStreams;
ACCEL_API extern constinit thread_local ThreadStreams* t_streams
    __attribute__((tls_model("initial-exec")));
}  // namespace tls

class ACCEL_API ThreadCurrent {
 public:
  // Objects alive at once in the process (every backend has one or two).
  static constexpr int kMaxLive = tls::kMaxLiveThreadCurrents;

  // Throws InvalidArgument when kMaxLive objects are alive already.
  ThreadCurrent();
  ~ThreadCurrent();
  ThreadCurrent(const ThreadCurrent&) = delete;
  ThreadCurrent& operator=(const ThreadCurrent&) = delete;

  // The calling thread's current device: 0 until set. The index is stored as
  // given; callers (the hooks base) validate it first.
  [[nodiscard]] DeviceIndex device() const noexcept {
    const tls::CurrentDeviceEntry last = tls::t_last_current_device;
    if (last.uid == uid_) [[likely]]
      return last.index;
    return deviceFromTable();
  }
  // The thread's first setting allocates its table (1 KiB); the process
  // terminates if that fails (noexcept: device guards restore in
  // destructors).
  void setDevice(DeviceIndex index) noexcept;
  // Sets `index` and returns the previous device. Allocates as setDevice.
  DeviceIndex exchangeDevice(DeviceIndex index) noexcept;

  // The calling thread's current stream id on device `index`:
  // kDefaultStreamId until set.
  [[nodiscard]] StreamId stream(DeviceIndex index) const noexcept {
    if (tls::t_streams == nullptr) [[likely]]
      return kDefaultStreamId;
    return streamFromTable(index);
  }
  // Throws only std::bad_alloc (the thread's first stream setting allocates).
  void setStream(DeviceIndex index, StreamId id);
  // Sets `id` and returns the previous id. Throws only std::bad_alloc.
  StreamId exchangeStream(DeviceIndex index, StreamId id);

 private:
  // device() when another object was used last on this thread.
  [[nodiscard]] DeviceIndex deviceFromTable() const noexcept;
  // stream() once the thread has set a stream.
  [[nodiscard]] StreamId streamFromTable(DeviceIndex index) const noexcept;

  std::uint32_t uid_;   // unique per object over the process's life
  std::uint16_t slot_;  // this object's entry in the thread tables
};

}  // namespace accel::kit
