// Shared set-up of the openreg tests: a fixed configuration (8 devices of
// 64 MiB, whatever the environment says, so that the tests do not depend on
// the machine), registration and initialisation, a fixture for graphs, and
// helpers to move data, hold a kernel open, and run code in a child process.
//
// Thread-safety: openregHooks() is thread-safe (a function-local static); the
// fixture runs on the test thread.
#pragma once

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"

namespace openreg_test {

inline constexpr int kTestDevices = 8;

inline accel::AcceleratorHooks& openregHooks() {
  static accel::AcceleratorHooks* hooks = [] {
    ::setenv("ACCEL_OPENREG_DEVICES", "8", 1);
    ::setenv("ACCEL_OPENREG_MEMORY", "64MiB", 1);
    for (const char* name :
         {"ACCEL_OPENREG_EXECUTION_UNITS", "ACCEL_OPENREG_FAIL_ALLOC",
          "ACCEL_OPENREG_LOSE_DEVICE", "ACCEL_OPENREG_STREAM_LATENCY_US"}) {
      ::unsetenv(name);
    }
    accel::openreg::registerBackend();
    accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
    return &accel::getHooks(accel::openreg::deviceType());
  }();
  return *hooks;
}

inline accel::Device device(int index) {
  return accel::Device(accel::openreg::deviceType(),
                       static_cast<accel::DeviceIndex>(index));
}

// Each test starts from device 0, default streams, 4 execution units and no
// faults, and leaves every device idle.
class OpenRegTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hooks_ = &openregHooks();
    accel::openreg::clearFaults();
    hooks_->setCurrentDevice(0);
    for (int i = 0; i < kTestDevices; ++i) {
      const auto index = static_cast<accel::DeviceIndex>(i);
      hooks_->setCurrentStream(hooks_->getDefaultStream(index));
      accel::openreg::setExecutionUnits(index, accel::openreg::kDefaultExecutionUnits);
    }
  }
  void TearDown() override {
    accel::openreg::clearFaults();
    for (int i = 0; i < kTestDevices; ++i) {
      try {
        hooks_->deviceSynchronize(static_cast<accel::DeviceIndex>(i));
      } catch (const accel::Error&) {
        // A test that left an error pending has already checked it.
      }
    }
  }
  accel::AcceleratorHooks& hooks() { return *hooks_; }

  accel::AcceleratorHooks* hooks_ = nullptr;
};

// An OpenRegTest for graphs: captures on a new stream of device 1, current
// (with device 1) for the test; the graphs made with newGraph are destroyed
// at the end.
class OpenRegGraphTest : public OpenRegTest {
 protected:
  void SetUp() override {
    OpenRegTest::SetUp();
    stream_ = hooks().getNewStream(1);
    hooks().setCurrentDevice(1);
    hooks().setCurrentStream(stream_);
  }
  void TearDown() override {
    for (accel::GraphId graph : graphs_) {
      try {
        hooks().graphDestroy(graph);
      } catch (const accel::Error&) {
      }
    }
    OpenRegTest::TearDown();
  }
  accel::GraphId newGraph(bool keep_graph = false) {
    graphs_.push_back(hooks().graphCreate(keep_graph));
    return graphs_.back();
  }
  // Enqueues "x[i] = x[i] * 2 + 1" on the current stream.
  void enqueueStep(void* x, std::size_t count) {
    accel::openreg::launchKernel(stream_, "step", {{"x", x, count * sizeof(int)}},
                                 [](const accel::openreg::KernelContext& k) {
                                   for (int& v : k.buffer<int>("x")) v = v * 2 + 1;
                                 });
  }

  accel::Stream stream_;
  std::vector<accel::GraphId> graphs_;
};

template <typename T>
std::vector<T> readBack(const void* device_ptr, std::size_t count) {
  std::vector<T> host(count);
  accel::openreg::copy(host.data(), device_ptr, count * sizeof(T));
  return host;
}

template <typename T>
void upload(void* device_ptr, const std::vector<T>& host) {
  accel::openreg::copy(device_ptr, host.data(), host.size() * sizeof(T));
}

// A gate a kernel waits on, so that a test controls when device work
// finishes. Opens in its destructor, so a failing test never leaves a worker
// blocked for the tests after it.
class Gate {
 public:
  ~Gate() { open(); }
  void open() {
    open_.store(true);
    open_.notify_all();
  }
  void wait() const { open_.wait(false); }
  // Marks that a kernel reached the gate; waitUntilReached blocks for it.
  void arrive() {
    arrived_.fetch_add(1);
    arrived_.notify_all();
  }
  void waitUntilReached(int count = 1) const {
    for (int seen = arrived_.load(); seen < count; seen = arrived_.load()) {
      arrived_.wait(seen);
    }
  }

 private:
  std::atomic<bool> open_{false};
  std::atomic<int> arrived_{0};
};

// Enqueues a kernel that arrives at `gate` and waits for it to open.
inline void launchGatedKernel(accel::Stream stream, Gate& gate) {
  accel::openreg::launchKernel(stream, "gated", {},
                               [&gate](const accel::openreg::KernelContext&) {
                                 gate.arrive();
                                 gate.wait();
                               });
}

// Runs `child` in a fork()ed child with the default SIGSEGV disposition
// (set with the raw system call, so that a sanitizer's handler cannot keep
// it) and returns the wait status. The child may only do async-signal-safe
// things: no openreg calls (openreg is poisoned after fork).
inline int runInChild(const std::function<void()>& child) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    unsigned long default_action[4] = {0, 0, 0, 0};  // SIG_DFL, no flags, empty mask
    ::syscall(SYS_rt_sigaction, SIGSEGV, default_action, nullptr, sizeof(unsigned long));
    child();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// Runs the test `filter` (a --gtest_filter value) of this test binary in a
// fresh process (fork + exec, so openreg initialises again there, reading
// its environment anew) and returns the wait status. The child's
// environment is this one, without the variables whose "NAME=" prefix is in
// `replace`, plus `add` ("NAME=value" entries).
inline int runTestInFreshProcess(const std::string& filter,
                                 const std::vector<std::string>& add,
                                 const std::vector<std::string>& replace) {
  // Everything the child needs is prepared before fork(): between fork and
  // exec only async-signal-safe calls are allowed.
  std::vector<std::string> environment = add;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    bool replaced = false;
    for (const std::string& prefix : replace)
      replaced = replaced || text.starts_with(prefix);
    if (!replaced) environment.emplace_back(text);
  }
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string name = "openreg_test";
  std::string filter_flag = "--gtest_filter=" + filter;
  char* argv[] = {name.data(), filter_flag.data(), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execve("/proc/self/exe", argv, envp.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

inline bool killedBySegv(int status) {
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

}  // namespace openreg_test
