// What the OpenCL backend's tests share: the backend registered, a fixture
// that skips (with the backend's reason) where no OpenCL device is usable,
// one for graphs (skips without the graphs group, captures on a new current
// stream), and a user event that holds a queue until the test releases it, so that
// "work still pending" is a state the test controls, never a race.
#pragma once

#include <gtest/gtest.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <optional>

#include "accel/accel.h"
#include "accel/opencl/opencl.h"
#include "accel/stream_guard.h"

namespace accel::opencl::testing {

inline AcceleratorHooks& openclHooks() { return registerBackend(); }

class OpenClTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hooks_ = &openclHooks();
    if (!hooks_->isAvailable()) {
      GTEST_SKIP() << "no usable OpenCL device here: " << availability().reason;
    }
  }
  [[nodiscard]] AcceleratorHooks& hooks() const { return *hooks_; }
  [[nodiscard]] Device device0() const { return Device(deviceType(), 0); }

 private:
  AcceleratorHooks* hooks_ = nullptr;
};

// Whether device 0 lets a command buffer be pending twice (otherwise a
// replay waits on the host for the previous one, which a held queue would
// never finish).
inline bool simultaneousUse() {
  cl_device_command_buffer_capabilities_khr capabilities = 0;
  EXPECT_EQ(clGetDeviceInfo(nativeDevice(0), CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
                            sizeof capabilities, &capabilities, nullptr),
            CL_SUCCESS);
  return (capabilities & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
}

// An OpenClTest that skips where the graphs group is not declared, and
// captures on a new stream of device 0, current for the test.
class OpenClGraphTest : public OpenClTest {
 protected:
  void SetUp() override {
    OpenClTest::SetUp();
    if (IsSkipped()) return;
    if (!hooks().supports(HookGroup::Graphs)) {
      GTEST_SKIP() << "the graphs group is not declared here: " << hooks().showConfig();
    }
    stream_ = hooks().getNewStream(0);
    guard_.emplace(stream_);
  }
  void TearDown() override { guard_.reset(); }

  Stream stream_;
  std::optional<StreamGuard> guard_;
};

// A user event of device 0's context and a barrier on `queue` waiting for
// it: nothing enqueued on the queue after the constructor runs until
// release() (or the destructor).
class HeldQueue {
 public:
  explicit HeldQueue(cl_command_queue queue) {
    cl_int status = CL_SUCCESS;
    gate_ = clCreateUserEvent(nativeContext(0), &status);
    EXPECT_EQ(status, CL_SUCCESS);
    EXPECT_EQ(clEnqueueBarrierWithWaitList(queue, 1, &gate_, nullptr), CL_SUCCESS);
    EXPECT_EQ(clFlush(queue), CL_SUCCESS);
  }
  HeldQueue(const HeldQueue&) = delete;
  HeldQueue& operator=(const HeldQueue&) = delete;
  ~HeldQueue() { release(); }
  void release() {
    if (gate_ == nullptr) return;
    EXPECT_EQ(clSetUserEventStatus(gate_, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(gate_);
    gate_ = nullptr;
  }

 private:
  cl_event gate_ = nullptr;
};

}  // namespace accel::opencl::testing
