// The tracing layer on openreg (accel/trace.h): what a trace holds (hook
// spans with their arguments, device work on its stream timed by openreg's
// events, graph captures and replays, the allocator's counters and
// instants), and what it does with bad paths, a full disk, many threads,
// fork, and stop.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"
#include "accel/trace.h"
#include "layers/hook_layer.h"

// LeakSanitizer asks this when a process exits. The fork case's child exits
// through exit() on purpose (the exit write is what it checks), and would
// be blamed for what the parent's threads still hold, which the child
// cannot free; the parent's leaks are checked as usual.
namespace {
bool g_in_fork_child = false;
}  // namespace
extern "C" __attribute__((visibility("default"))) int __lsan_is_turned_off() {
  return g_in_fork_child ? 1 : 0;
}

namespace accel {
namespace {

std::string hookName(HookId id) { return std::string(hookInfo(id).name); }

using nlohmann::json;

DeviceType openregType() {
  static const DeviceType type = [] {
    ::setenv("ACCEL_OPENREG_DEVICES", "2", 1);
    ::setenv("ACCEL_OPENREG_MEMORY", "64MiB", 1);
    openreg::registerBackend();
    globalContext().lazyInitDevice(openreg::deviceType());
    return openreg::deviceType();
  }();
  return type;
}

std::string tempPath(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  std::filesystem::remove(path);
  return path;
}

json readJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<json> eventsNamed(const json& trace, const std::string& name,
                              const std::string& category = "") {
  std::vector<json> found;
  for (const json& e : trace["traceEvents"]) {
    if (e.value("name", "") == name &&
        (category.empty() || e.value("cat", "") == category))
      found.push_back(e);
  }
  return found;
}

std::string metadataName(const json& trace, const char* what, int pid, int tid) {
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == what && e["pid"] == pid && e["tid"] == tid)
      return e["args"]["name"];
  return "<none>";
}

// Stops a trace a test left running, so the next one can start.
class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override { type_ = openregType(); }
  void TearDown() override { trace::stop(); }
  AcceleratorHooks& hooks() { return getHooks(type_); }  // the decorator while tracing
  DeviceType type_{};
};

TEST_F(TraceTest, ATraceOfOpenregHoldsHooksStreamWorkGraphsAndTheAllocator) {
  const std::string path = tempPath("trace_openreg.json");
  trace::start({.path = path});
  AcceleratorHooks& h = hooks();
  ASSERT_NE(detail::unlayeredHooks(type_), &h) << "tracing puts the layers in the path";
  const Stream stream = h.getNewStream(0);
  DataPtr device = h.getDeviceAllocator(0).allocate(1 << 16);
  std::vector<float> host(1024, 1.0f);
  h.copyHostToDevice(device.get(), host.data(), host.size() * sizeof(float), stream);
  h.fillRandom(stream, DeviceFill::UniformFloat, device.get(), 1024, 0.0, 1.0);
  h.copyDeviceToHost(host.data(), device.get(), host.size() * sizeof(float), stream);
  h.synchronizeStream(stream);
  // A graph captured on the current stream and replayed.
  h.setCurrentStream(stream);
  const GraphId graph = h.graphCreate();
  h.graphCaptureBegin(graph);
  h.fillRandom(stream, DeviceFill::UniformFloat, device.get(), 1024, 0.0, 1.0);
  h.graphCaptureEnd(graph);
  h.graphReplay(graph);
  h.synchronizeStream(stream);
  h.graphDestroy(graph);
  device = DataPtr();
  h.emptyCache();
  const trace::TraceWriteResult written = trace::write();
  EXPECT_EQ(written.path, path);
  EXPECT_EQ(written.dropped, 0u);
  const json trace = readJson(path);

  const std::vector<json> copies =
      eventsNamed(trace, hookName(HookId::copyHostToDevice), "hook");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["ph"], "X");
  EXPECT_EQ(copies[0]["args"]["backend"], std::string(deviceTypeName(type_)));
  EXPECT_EQ(copies[0]["args"]["bytes"], 4096);
  EXPECT_EQ(copies[0]["args"]["stream"], stream.id);
  EXPECT_EQ(metadataName(trace, "thread_name", 1, copies[0]["tid"]), "main thread");

  const std::vector<json> work =
      eventsNamed(trace, hookName(HookId::copyHostToDevice), "device");
  ASSERT_EQ(work.size(), 1u);
  EXPECT_EQ(work[0]["args"]["timing"], "events");  // openreg's events time it
  EXPECT_EQ(metadataName(trace, "process_name", work[0]["pid"], 0),
            std::string(deviceTypeName(type_)) + ":0");
  EXPECT_EQ(metadataName(trace, "thread_name", work[0]["pid"], work[0]["tid"]),
            "stream " + std::to_string(stream.id));
  EXPECT_EQ(eventsNamed(trace, hookName(HookId::fillRandom), "device").size(), 1u)
      << "the captured fill is in the replay, not device work of its own";
  EXPECT_EQ(eventsNamed(trace, hookName(HookId::synchronizeStream), "device").size(), 2u);
  EXPECT_EQ(eventsNamed(trace, "capture graph " + std::to_string(graph), "graph").size(),
            1u);
  EXPECT_EQ(eventsNamed(trace, "replay graph " + std::to_string(graph), "device").size(),
            1u);

  // The allocator: the 64 KiB allocation and its free in the counter, a
  // segment, and the flush.
  const std::vector<json> allocated = eventsNamed(trace, "allocated bytes");
  ASSERT_FALSE(allocated.empty());
  std::int64_t peak = 0;
  for (const json& e : allocated) peak = std::max<std::int64_t>(peak, e["args"]["bytes"]);
  EXPECT_GE(peak, 1 << 16);
  EXPECT_EQ(allocated.back()["args"]["bytes"], 0);
  EXPECT_FALSE(eventsNamed(trace, "segment_alloc").empty());
  EXPECT_FALSE(eventsNamed(trace, "reserved bytes").empty());
  EXPECT_FALSE(eventsNamed(trace, "empty_cache").empty());
  EXPECT_EQ(trace["otherData"]["dropped_events"], 0);
}

TEST_F(TraceTest, StopTakesTheLayerOutOfThePathAndRecordsNothingMore) {
  trace::start({});
  EXPECT_TRUE(trace::isTracing());
  (void)hooks().getCurrentStream(0);
  trace::stop();
  EXPECT_FALSE(trace::isTracing());
  EXPECT_EQ(detail::unlayeredHooks(type_), &hooks());
  (void)hooks().getNewStream(0);
  const json trace = json::parse(trace::toJson());
  EXPECT_EQ(eventsNamed(trace, hookName(HookId::getCurrentStream), "hook").size(), 1u);
  EXPECT_TRUE(eventsNamed(trace, hookName(HookId::getNewStream), "hook").empty());
}

std::int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The ring keeps the time-stamp counter's ticks and the trace converts them
// (trace_event.h): a hook's span must lie where the steady clock saw the
// call, and a sleep between two calls must separate them by its length.
TEST_F(TraceTest, HookSpansLieOnTheSteadyClockWhereTheCallsRan) {
  trace::start({});
  const std::int64_t before = steadyNowNs();
  (void)hooks().getNewStream(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  (void)hooks().getCurrentStream(0);
  const std::int64_t after = steadyNowNs();
  trace::stop();
  const json trace = json::parse(trace::toJson());
  const auto origin = trace["otherData"]["origin_steady_ns"].get<std::int64_t>();
  const auto first = eventsNamed(trace, hookName(HookId::getNewStream), "hook");
  const auto second = eventsNamed(trace, hookName(HookId::getCurrentStream), "hook");
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  auto nsOf = [&](const json& e, const char* field) {
    return origin + static_cast<std::int64_t>(e[field].get<double>() * 1000.0);
  };
  // 50 us of slack: the microseconds' rounding and the rate's measurement.
  constexpr std::int64_t kSlackNs = 50'000;
  EXPECT_GE(nsOf(first[0], "ts"), before - kSlackNs);
  EXPECT_LE(nsOf(second[0], "ts") + nsOf(second[0], "dur") - origin, after + kSlackNs);
  EXPECT_GE(nsOf(second[0], "ts") - nsOf(first[0], "ts"), 20'000'000 - kSlackNs);
  EXPECT_LE(nsOf(second[0], "ts") - nsOf(first[0], "ts"), after - before + kSlackNs);
}

TEST_F(TraceTest, AnUnusablePathIsRefusedNamingItAndTracingStaysOff) {
  const std::string directory = ::testing::TempDir();
  struct Case {
    std::string path;
    const char* reason;
  };
  for (const Case& c : {Case{directory, "it is a directory"},
                        Case{directory + "no_such_dir/trace.json", "does not exist"}}) {
    try {
      trace::start({.path = c.path});
      ADD_FAILURE() << "started with " << c.path;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(c.path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos) << e.what();
    }
    EXPECT_FALSE(trace::isTracing());
    EXPECT_EQ(detail::unlayeredHooks(type_), &hooks());
  }
  trace::start({});
  EXPECT_THROW(trace::start({}), InvalidArgument);  // one trace at a time
  EXPECT_THROW(trace::write(), InvalidArgument);    // no path to write to
}

// A full disk, as the file size limit makes it: the write fails naming the
// file and the reason, leaves no partial file, and the trace can be written
// again once there is room.
TEST_F(TraceTest, AFailedWriteNamesTheFileAndTheTraceCanBeWrittenAgain) {
  const std::string path = tempPath("trace_full_disk.json");
  trace::start({.path = path});
  for (int i = 0; i < 200; ++i) (void)hooks().getCurrentStream(0);
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit tiny = saved;
  tiny.rlim_cur = 512;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
  try {
    (void)trace::write();
    ADD_FAILURE() << "the write should have failed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("File too large"), std::string::npos)
        << e.what();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  std::signal(SIGXFSZ, SIG_DFL);
  EXPECT_FALSE(std::filesystem::exists(path));
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir()))
    EXPECT_EQ(entry.path().filename().string().find("trace_full_disk.json.tmp"),
              std::string::npos);
  EXPECT_GE(trace::write().events, 200u);
  EXPECT_EQ(eventsNamed(readJson(path), hookName(HookId::getCurrentStream)).size(), 200u);
}

// A fork child neither traces nor writes the parent's file, at exit or
// otherwise; the parent's trace goes on.
TEST_F(TraceTest, AForkChildStopsTracingAndNeverWritesTheParentsFile) {
  const std::string path = tempPath("trace_fork.json");
  trace::start({.path = path});
  (void)hooks().getCurrentStream(0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    g_in_fork_child = true;
    const bool tracing = trace::isTracing();
    bool write_refused = false;
    try {
      (void)trace::write();
    } catch (const InvalidArgument&) {
      write_refused = true;  // no path: the parent's is not the child's
    }
    std::exit(!tracing && write_refused ? 0 : 1);  // runs the exit write: must do nothing
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(std::filesystem::exists(path)) << "the child wrote the parent's trace";
  EXPECT_TRUE(trace::isTracing());
  (void)trace::write();
  EXPECT_EQ(eventsNamed(readJson(path), hookName(HookId::getCurrentStream)).size(), 1u);
}

// Threads calling hooks at once, while another writes: every call is in the
// trace, each thread named once.
TEST_F(TraceTest, ManyThreadsAreTracedTogetherEachOnItsOwnTrack) {
  trace::start({});
  AcceleratorHooks& h = hooks();
  constexpr int kThreads = 4;
  constexpr int kCalls = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h] {
      for (int i = 0; i < kCalls; ++i) (void)h.getCurrentStream(1);
    });
  }
  const std::string during = trace::toJson();  // a write while they run
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(json::accept(during)) << "a write while threads call hooks is not JSON";
  const json trace = json::parse(trace::toJson());
  const std::vector<json> calls =
      eventsNamed(trace, hookName(HookId::getCurrentStream), "hook");
  EXPECT_EQ(calls.size(), static_cast<std::size_t>(kThreads * kCalls));
  std::set<int> tids;
  for (const json& call : calls) tids.insert(call["tid"].get<int>());
  EXPECT_EQ(tids.size(), static_cast<std::size_t>(kThreads));
  for (int tid : tids) EXPECT_NE(metadataName(trace, "thread_name", 1, tid), "<none>");
}

TEST_F(TraceTest, ARingSmallerThanTheTraceKeepsTheNewestAndCountsTheRest) {
  trace::start({.path = {}, .capacity = 1024});
  for (int i = 0; i < 3000; ++i) (void)hooks().getCurrentStream(0);
  const json trace = json::parse(trace::toJson());
  const std::size_t kept = eventsNamed(trace, hookName(HookId::getCurrentStream)).size();
  EXPECT_LE(kept, 1024u);
  EXPECT_EQ(kept + trace["otherData"]["dropped_events"].get<std::size_t>(), 3000u);
}

}  // namespace
}  // namespace accel
