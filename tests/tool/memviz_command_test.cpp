// `accel memviz` and `accel memreplay` on hostile input, run as a user would:
// each case exits with status 2 and a message that says what was wrong,
// instead of crashing, exhausting memory or writing a broken page.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "memory/run_command.h"
#include "tool_run.h"

namespace accel::tool {
namespace {

std::string run(const std::string& arguments, int& status) {
  return memory::testing::runCommand(
      std::string(ACCEL_TOOL_PATH) + " " + arguments + " 2>&1", status);
}

using tooltest::writeTempFile;

const char* const kSmallSnapshot =
    R"({"segments":[{"device":0,"address":4096,"total_size":4096,"blocks":[)"
    R"({"address":4096,"size":4096,"state":"inactive"}]}],"device_traces":[[)"
    R"({"action":"alloc","addr":4096,"size":512,"stream":0}]]})";

TEST(MemvizCommand, DeeplyNestedJsonIsRefusedInsteadOfOverflowingTheStack) {
  const std::string path =
      writeTempFile("memviz_deep.json", "{\"segments\":" + std::string(100000, '[') +
                                            std::string(100000, ']') + "}");
  int status = -1;
  const std::string out = run("memviz " + path + " -o /dev/null", status);
  EXPECT_EQ(status, 2) << out;  // not a signal (runCommand gives -1 for one)
  EXPECT_NE(out.find("nests arrays or objects deeper than 64 levels"), std::string::npos)
      << out;
}

TEST(MemvizCommand, WhatIsNeitherJsonNorAPickleIsRefusedAtItsFirstByte) {
  int status = -1;
  const std::string out = run("memviz /dev/zero -o /dev/null", status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("its first byte is 0x00"), std::string::npos) << out;
}

TEST(MemreplayCommand, WhatIsNeitherTextNorASnapshotIsRefusedAtItsFirstBytes) {
  int status = -1;
  const std::string out = run("memreplay /dev/zero", status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("'/dev/zero' is not a trace: byte 0 is NUL"), std::string::npos)
      << out;
}

// pickle.dumps({"a": 1}, protocol=0) and protocol=1: no PROTO opcode, but
// pickles all the same; read as text, they were malformed trace lines.
TEST(MemreplayCommand, PicklesOfProtocols0And1AreRefusedAsPicklesNotReadAsText) {
  const std::string protocol0 =
      writeTempFile("memreplay_p0.pickle", "(dp0\nVa\np1\nI1\ns.");
  const std::string protocol1 = writeTempFile(
      "memreplay_p1.pickle", std::string("}q\x00X\x01\x00\x00\x00aq\x01K\x01s.", 15));
  for (const std::string& path : {protocol0, protocol1}) {
    for (const std::string& command :
         {"memreplay " + path, "memviz -o /dev/null " + path}) {
      int status = -1;
      const std::string out = run(command, status);
      EXPECT_EQ(status, 2) << command << ": " << out;
      EXPECT_NE(
          out.find("is of protocol 0 or 1, which is not read; protocols 2 to 5 are"),
          std::string::npos)
          << command << ": " << out;
    }
  }
}

// A pickle cut after its PROTO opcode is still a pickle: refused as
// truncated, not read as a text trace ("missing ADDRESS") or as "neither".
TEST(MemvizCommand, APickleCutAfterItsFirstByteIsRefusedAsTruncated) {
  const std::string path = writeTempFile("memreplay_cut1.pickle", std::string("\x80", 1));
  for (const std::string& command :
       {"memreplay " + path, "memviz -o /dev/null " + path}) {
    int status = -1;
    const std::string out = run(command, status);
    EXPECT_EQ(status, 2) << command << ": " << out;
    EXPECT_NE(out.find("pickle offset 0: the pickle is truncated"), std::string::npos)
        << command << ": " << out;
  }
}

// Opening a FIFO for reading waits for a writer; the commands open without
// waiting and refuse a pipe that nothing was written to. (`timeout` only turns
// a hang into a failure; it measures nothing.)
TEST(MemvizCommand, AFifoWithoutAWriterIsRefusedWithoutBlocking) {
  const std::string fifo = ::testing::TempDir() + "memviz_no_writer.fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& command :
       {"memreplay " + fifo, "memviz -o /dev/null " + fifo}) {
    int status = -1;
    const std::string out = memory::testing::runCommand(
        "timeout 60 " + std::string(ACCEL_TOOL_PATH) + " " + command + " 2>&1", status);
    EXPECT_EQ(status, 2) << command << ": " << out;
    EXPECT_NE(out.find("is a pipe with nothing written to it"), std::string::npos)
        << command << ": " << out;
  }
  std::remove(fifo.c_str());
}

// A Unix socket cannot be opened; the commands say it is a socket rather
// than passing on open()'s "No such device or address".
TEST(MemvizCommand, ASocketIsRefusedByKind) {
  const std::string path = ::testing::TempDir() + "memviz_input.sock";
  std::remove(path.c_str());
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof address.sun_path);
  std::copy(path.begin(), path.end(), address.sun_path);
  ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address),
            0);
  for (const std::string& command :
       {"memreplay " + path, "memviz -o /dev/null " + path}) {
    int status = -1;
    const std::string out = memory::testing::runCommand(
        "timeout 60 " + std::string(ACCEL_TOOL_PATH) + " " + command + " 2>&1", status);
    EXPECT_EQ(status, 2) << command << ": " << out;
    EXPECT_NE(out.find("' is a socket, not a file"), std::string::npos)
        << command << ": " << out;
  }
  ::close(listener);
  std::remove(path.c_str());
}

TEST(MemvizCommand, InputSizeIsLimitedAndTheLimitCanBeRaised) {
  const std::string path = writeTempFile("memviz_limit.json", kSmallSnapshot);
  int status = -1;
  std::string out = run("memviz --max-input-size 100B " + path + " -o /dev/null", status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("is larger than the input limit of 100 bytes; raise it with "
                     "--max-input-size"),
            std::string::npos)
      << out;
  out = run("memviz --max-input-size 1MiB " + path + " -o /dev/null", status);
  EXPECT_EQ(status, 0) << out;
  out = run("memviz --max-input-size lots " + path + " -o /dev/null", status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--max-input-size 'lots' is not a size"), std::string::npos) << out;
  // An endless stream stops at the limit too (a pipe has no size to check
  // first): endless text, since memreplay refuses binary at its first bytes.
  out =
      memory::testing::runCommand("yes | " + std::string(ACCEL_TOOL_PATH) +
                                      " memreplay --max-input-size 1MiB /dev/stdin 2>&1",
                                  status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("larger than the input limit of 1 MiB"), std::string::npos) << out;
}

TEST(MemvizCommand, WrongTypesAreAnErrorNamingTheFieldNotAPage) {
  const std::string path =
      writeTempFile("memviz_types.json", R"({"segments":[1,2,"x",null]})");
  const std::string page = ::testing::TempDir() + "memviz_types.html";
  std::remove(page.c_str());
  int status = -1;
  const std::string out = run("memviz " + path + " -o " + page, status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("segments[0] is 1; expected an object"), std::string::npos) << out;
  EXPECT_FALSE(std::ifstream(page).good()) << "a page was written";
}

TEST(MemvizCommand, ADeviceNotInTheSnapshotIsAnError) {
  const std::string path = writeTempFile("memviz_device.json", kSmallSnapshot);
  int status = -1;
  const std::string out = run("memviz --device 5 " + path + " -o /dev/null", status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--device 5 is not in " + path + ", which describes device(s) 0"),
            std::string::npos)
      << out;
}

TEST(MemvizCommand, ADirectoryIsAnErrorForBothCommands) {
  const std::string dir = ::testing::TempDir();
  int status = -1;
  std::string out = run("memviz " + dir + " -o /dev/null", status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("is a directory"), std::string::npos) << out;
  out = run("memreplay " + dir, status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("is a directory"), std::string::npos) << out;
}

TEST(MemvizCommand, APickleGivesTheSamePageAsTheJson) {
  int status = -1;
  std::string python = memory::testing::runCommand(
      "command -v /usr/bin/python3 || command -v python3", status);
  while (!python.empty() && python.back() == '\n') python.pop_back();
  if (status != 0 || python.empty()) GTEST_SKIP() << "no python3 to write the pickle";
  const std::string dir = ::testing::TempDir();
  const std::string json_dir = dir + "memviz_json/";
  const std::string pickle_dir = dir + "memviz_pickle/";
  memory::testing::runCommand("mkdir -p " + json_dir + " " + pickle_dir, status);
  const std::string json = writeTempFile("memviz_json/snapshot", kSmallSnapshot);
  // What accel.memory._dump_snapshot does: pickle.dump of the dict.
  std::string out = memory::testing::runCommand(
      python +
          " -c \"import json, pickle, sys; pickle.dump(json.load(open(sys.argv[1])), "
          "open(sys.argv[2], 'wb'))\" " +
          json + " " + pickle_dir + "snapshot 2>&1",
      status);
  ASSERT_EQ(status, 0) << out;
  out = run("memviz " + json + " -o " + dir + "memviz_from_json.html", status);
  ASSERT_EQ(status, 0) << out;
  out = run("memviz " + pickle_dir + "snapshot -o " + dir + "memviz_from_pickle.html",
            status);
  ASSERT_EQ(status, 0) << out;
  std::ifstream a(dir + "memviz_from_json.html"), b(dir + "memviz_from_pickle.html");
  const std::string from_json((std::istreambuf_iterator<char>(a)), {});
  const std::string from_pickle((std::istreambuf_iterator<char>(b)), {});
  EXPECT_FALSE(from_json.empty());
  EXPECT_EQ(from_json, from_pickle);
}

TEST(MemreplayCommand, WrongTypesInASnapshotNameTheField) {
  const std::string path = writeTempFile(
      "memreplay_types.json",
      R"({"segments":[],"device_traces":[[{"action":"alloc","addr":16,"size":"big"}]]})");
  int status = -1;
  std::string out = run("memreplay " + path, status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(
      out.find("memreplay: " + path +
               ": device_traces[0][0].size is the string \"big\"; expected a byte count"),
      std::string::npos)
      << out;
  const std::string negative = writeTempFile(
      "memreplay_negative.json",
      R"({"segments":[],"device_traces":[[{"action":"alloc","addr":16,"size":-4096}]]})");
  out = run("memreplay " + negative, status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("device_traces[0][0].size is -4096"), std::string::npos) << out;
  const std::string fraction = writeTempFile(
      "memreplay_fraction.json",
      R"({"segments":[],"device_traces":[[{"action":"alloc","addr":16.5,"size":1}]]})");
  out = run("memreplay " + fraction, status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("device_traces[0][0].addr is 16.5"), std::string::npos) << out;
  const std::string not_list =
      writeTempFile("memreplay_not_list.json", R"({"segments":[],"device_traces":[7]})");
  out = run("memreplay " + not_list, status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("device_traces[0] is 7; expected an array"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace accel::tool
