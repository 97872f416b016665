// `accel trace summary` and `accel trace view`, run as a user would: a trace
// gives its tables and its page; what is not a trace, a trace with a broken
// event, and an output that cannot be written each end with status 2 and a
// message naming the file and what is wrong.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "memory/headless_chromium.h"
#include "tool_run.h"

namespace accel::tool {
namespace {

using tooltest::writeTempFile;

// Two hook spans and two overlapping spans on one stream (busy 15 us of 20
// us total), an allocated counter peaking at 3000 bytes, one OOM, and 5
// events dropped.
const char* const kTrace = R"trace({"traceEvents":[
 {"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"host (pid 7)"}},
 {"name":"thread_name","ph":"M","pid":1,"tid":9,"args":{"name":"main thread"}},
 {"name":"process_name","ph":"M","pid":2,"tid":0,"args":{"name":"openreg:0"}},
 {"name":"thread_name","ph":"M","pid":2,"tid":1,"args":{"name":"stream 0"}},
 {"name":"upload","cat":"hook","ph":"X","ts":0,"dur":4,"pid":1,"tid":9,"args":{"bytes":64}},
 {"name":"upload","cat":"hook","ph":"X","ts":10,"dur":8,"pid":1,"tid":9},
 {"name":"upload","cat":"device","ph":"X","ts":1,"dur":10,"pid":2,"tid":1},
 {"name":"upload","cat":"device","ph":"X","ts":6,"dur":10,"pid":2,"tid":1},
 {"name":"allocated bytes","cat":"allocator","ph":"C","ts":2,"pid":2,"tid":0,"args":{"bytes":3000}},
 {"name":"allocated bytes","cat":"allocator","ph":"C","ts":3,"pid":2,"tid":0,"args":{"bytes":1000}},
 {"name":"oom","cat":"allocator","ph":"i","s":"t","ts":4,"pid":2,"tid":0}
],"otherData":{"dropped_events":5}})trace";

TEST(TraceCommand, SummaryPrintsHooksStreamsMemoryAndTheDroppedCount) {
  const std::string path = writeTempFile("trace_summary.json", kTrace);
  const tooltest::ToolRun run = tooltest::runTool("trace summary " + path);
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string& out = run.output;
  // upload: 2 calls, total 12 us, mean 6 us, max 8 us.
  EXPECT_NE(out.find("upload         2     12.000 us      6.000 us      8.000 us"),
            std::string::npos)
      << out;
  // The stream: 2 spans, 20 us in all, busy 15 us (they overlap).
  EXPECT_NE(out.find("openreg:0 · stream 0"), std::string::npos) << out;
  EXPECT_NE(out.find("20.000 us"), std::string::npos) << out;
  EXPECT_NE(out.find("15.000 us"), std::string::npos) << out;
  EXPECT_NE(out.find("2.93 KiB"), std::string::npos) << out;  // the peak, 3000 bytes
  EXPECT_NE(out.find("events dropped by the recorder's ring: 5"), std::string::npos)
      << out;
}

TEST(TraceCommand, WhatIsNotATraceIsRefusedNamingTheFile) {
  struct Case {
    const char* name;
    std::string content;
    const char* expected;
  };
  const Case cases[] = {
      {"trace_empty.json", "", "is empty: not a trace"},
      {"trace_binary.json",
       std::string("\x7f"
                   "ELF",
                   4),
       "does not begin with '{' or '['"},
      {"trace_object.json", R"({"segments":[]})", "without a \"traceEvents\" array"},
      {"trace_broken.json", R"({"traceEvents":[)", "is not valid JSON"},
      {"trace_no_ts.json",
       R"({"traceEvents":[{"name":"a","ph":"X","pid":1,"tid":1,"dur":1}]})",
       "event 0 (\"a\") has no numeric \"ts\""},
      {"trace_no_dur.json", R"([{"name":"b","ph":"X","pid":1,"tid":1,"ts":1}])",
       "is a complete event (\"X\") without a \"dur\""},
      {"trace_no_ph.json", R"([{"name":"c","pid":1,"tid":1,"ts":1}])", "has no \"ph\""},
      {"trace_deep.json", std::string(1000, '[') + std::string(1000, ']'),
       "deeper than 32 levels"},
  };
  for (const Case& c : cases) {
    const std::string path = writeTempFile(c.name, c.content);
    for (const std::string& command :
         {"summary " + path, "view " + path + " -o /dev/null"}) {
      const tooltest::ToolRun run = tooltest::runTool("trace " + command);
      const std::string& out = run.output;
      EXPECT_EQ(run.status, 2) << c.name << ": " << out;
      EXPECT_NE(
          out.find("accel trace " + command.substr(0, command.find(' ')) + ": " + path),
          std::string::npos)
          << out;
      EXPECT_NE(out.find(c.expected), std::string::npos) << c.name << ": " << out;
    }
  }
}

TEST(TraceCommand, AMissingFileAndAnUnwritablePageAreClearErrors) {
  tooltest::ToolRun run =
      tooltest::runTool("trace summary " + ::testing::TempDir() + "no_such_trace.json");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("no_such_trace.json"), std::string::npos) << run.output;
  const std::string path = writeTempFile("trace_ok.json", kTrace);
  run = tooltest::runTool("trace view " + path + " -o /nonexistent_dir/page.html");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("cannot write '/nonexistent_dir/page.html'"),
            std::string::npos)
      << run.output;
}

// The page in headless Chromium: it draws every span and the memory chart,
// with no script error.
TEST(TraceCommand, ViewPageDrawsInChromiumWithoutErrors) {
  const std::string browser = memory::testing::findChromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (Debian 'chromium')";
  const std::string path = writeTempFile("trace_view.json", kTrace);
  const std::string page = ::testing::TempDir() + "trace_view.html";
  const tooltest::ToolRun run = tooltest::runTool("trace view " + path + " -o " + page);
  ASSERT_EQ(run.status, 0) << run.output;
  const memory::testing::ChromiumRun dom =
      memory::testing::runChromium(browser, page, ::testing::TempDir(), "trace_view");
  ASSERT_EQ(dom.status, 0) << dom.console;
  EXPECT_FALSE(memory::testing::consoleHasErrors(dom.console)) << dom.console;
  EXPECT_NE(dom.output.find("Drew 4 spans on 2 tracks and 1 memory charts"),
            std::string::npos)
      << dom.output;
  EXPECT_NE(dom.output.find("events dropped by the recorder: 5"), std::string::npos);
  EXPECT_NE(dom.output.find("<td>upload</td><td>2</td>"), std::string::npos)
      << dom.output;
  EXPECT_EQ(dom.output.find("id=\"error\" hidden=\"\"") == std::string::npos, false)
      << "the page reported an error";
}

}  // namespace
}  // namespace accel::tool
