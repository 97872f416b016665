// The memviz model: every field checked and named when wrong, strings,
// frames and stacks stored once, Python frames first.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "accel/error.h"
#include "memviz_model.h"
#include "support/error_of.h"

namespace accel::tool {
namespace {

using nlohmann::json;

const SnapshotFields kFields("memviz: snap.json");

std::string modelErrorOf(const std::string& text, std::int64_t device = 0) {
  return testing::errorOf<InvalidArgument>([&] {
    const json snapshot = json::parse(text);
    (void)snapshotDevices(snapshot, kFields);
    (void)buildMemvizModel(snapshot, device, "title", kFields);
  });
}

json segmentWithBlock(const json& block) {
  return json{
      {"device", 0}, {"address", 4096}, {"total_size", 4096}, {"blocks", {block}}};
}

TEST(MemvizModel, WrongTypesNameTheField) {
  EXPECT_NE(modelErrorOf(R"({"segments":[1,2,"x",null]})")
                .find("memviz: snap.json: segments[0] is 1; expected an object"),
            std::string::npos);
  EXPECT_NE(modelErrorOf(R"({"segments":{"a":1}})")
                .find("segments is an object; expected an array"),
            std::string::npos);
  EXPECT_NE(modelErrorOf(R"([1])").find("the document is an array; expected an object"),
            std::string::npos);
  EXPECT_NE(
      modelErrorOf(R"({"device_traces":[]})").find("the document has no \"segments\""),
      std::string::npos);
  const json block{{"address", 4096}, {"size", 512}, {"state", 7}};
  EXPECT_NE(modelErrorOf(json{{"segments", {segmentWithBlock(block)}}}.dump())
                .find("segments[0].blocks[0].state is 7; expected a string"),
            std::string::npos);
  const json trace{
      {"segments", json::array()},
      {"device_traces", {{{{"action", "alloc"}, {"addr", "x"}, {"size", 1}}}}}};
  EXPECT_NE(
      modelErrorOf(trace.dump())
          .find("device_traces[0][0].addr is the string \"x\"; expected a byte count"),
      std::string::npos);
  const json frames{{"segments", json::array()},
                    {"device_traces",
                     {{{{"action", "alloc"},
                        {"addr", 1},
                        {"size", 1},
                        {"frames", {{{"name", "f"}, {"line", "12"}}}}}}}}};
  EXPECT_NE(
      modelErrorOf(frames.dump())
          .find("device_traces[0][0].frames[0].line is the string \"12\"; expected an "
                "integer"),
      std::string::npos);
}

TEST(MemvizModel, NegativeAndFractionalSizesAreErrors) {
  for (const char* size : {"-5", "1.5", "1e3", "true"}) {
    const std::string text =
        R"({"segments":[{"device":0,"address":4096,"total_size":4096,)"
        R"("blocks":[{"size":)" +
        std::string(size) + R"(,"state":"inactive"}]}]})";
    EXPECT_NE(modelErrorOf(text).find("segments[0].blocks[0].size is "),
              std::string::npos)
        << size;
    EXPECT_NE(modelErrorOf(text).find("expected a byte count (an integer >= 0)"),
              std::string::npos)
        << size;
  }
  EXPECT_NE(modelErrorOf(
                R"({"segments":[{"device":0,"address":-1,"total_size":1,"blocks":[]}]})")
                .find("segments[0].address is -1"),
            std::string::npos);
}

TEST(MemvizModel, BlocksOutsideTheirSegmentAreErrors) {
  const json block{{"address", 8192}, {"size", 512}, {"state", "inactive"}};
  EXPECT_NE(modelErrorOf(json{{"segments", {segmentWithBlock(block)}}}.dump())
                .find("segments[0].blocks[0] lies outside its segment"),
            std::string::npos);
}

TEST(MemvizModel, DevicesAreThoseOfSegmentsAndTraces) {
  const json snapshot =
      json::parse(R"({"segments":[{"device":3,"address":0,"total_size":0,"blocks":[]}],)"
                  R"("device_traces":[[],[]]})");
  EXPECT_EQ(snapshotDevices(snapshot, kFields), (std::set<std::int64_t>{0, 1, 3}));
}

TEST(MemvizModel, StringsFramesAndStacksAreStoredOnceWithPythonFramesFirst) {
  const json native{
      {"name", "at::native::add"}, {"filename", "libtorch.so"}, {"line", 0}};
  const json python{{"name", "forward"}, {"filename", "model.py"}, {"line", 42}};
  const json stack = json::array({native, python, native});
  json trace = json::array();
  for (int i = 0; i < 50; ++i) {
    trace.push_back({{"action", "alloc"},
                     {"addr", 4096 + 512 * i},
                     {"size", 512},
                     {"frames", stack}});
  }
  const json snapshot{{"segments", json::array()}, {"device_traces", {trace}}};
  const json model = buildMemvizModel(snapshot, 0, "title", kFields);
  // Stack 0 is the empty one; the 50 events share stack 1.
  ASSERT_EQ(model["stacks"].size(), 2u);
  EXPECT_EQ(model["trace"]["stack"], json(std::vector<int>(50, 1)));
  // Two distinct frames; the Python one first in the stack.
  ASSERT_EQ(model["frames"].size(), 6u);
  const json& strings = model["strings"];
  const json& frames = model["frames"];
  const int first = model["stacks"][1][0].get<int>();
  EXPECT_EQ(strings[frames[3 * first].get<int>()], "forward");
  EXPECT_EQ(frames[3 * first + 2], 42);
  EXPECT_EQ(model["stacks"][1].size(), 3u);
  // Each string once.
  EXPECT_EQ(strings.size(), 4u);  // the two names, the two file names
  EXPECT_EQ(model["trace"]["action"].size(), 50u);
  EXPECT_FALSE(model["trace"].contains("time_us")) << "no event had a time";
}

TEST(MemvizModel, FramesThatDifferOnlyInALineBeyond32BitsStayApart) {
  const json low{{"name", "f"}, {"filename", "a.py"}, {"line", 1}};
  const json high{{"name", "f"}, {"filename", "a.py"}, {"line", 4294967297LL}};
  const json trace = json::array(
      {{{"action", "alloc"}, {"addr", 4096}, {"size", 1}, {"frames", {low}}},
       {{"action", "alloc"}, {"addr", 8192}, {"size", 1}, {"frames", {high}}}});
  const json snapshot{{"segments", json::array()}, {"device_traces", {trace}}};
  const json model = buildMemvizModel(snapshot, 0, "title", kFields);
  ASSERT_EQ(model["frames"].size(), 6u) << model["frames"];
  EXPECT_EQ(model["frames"][2], 1);
  EXPECT_EQ(model["frames"][5], 4294967297LL);
  EXPECT_NE(model["trace"]["stack"][0], model["trace"]["stack"][1]);
}

TEST(MemvizModel, OlderSnapshotsWithoutBlockAddressesTileTheSegment) {
  const json snapshot = json::parse(
      R"({"segments":[{"device":0,"address":1000,"total_size":300,"blocks":[)"
      R"({"size":100,"state":"active_allocated"},{"size":200,"state":"inactive"}]}]})");
  const json model = buildMemvizModel(snapshot, 0, "t", kFields);
  const json& blocks = model["segments"][0]["blocks"];
  EXPECT_EQ(blocks[0], 1000);
  EXPECT_EQ(blocks[5], 1100);
  EXPECT_EQ(model["segments"][0]["allocated_size"], 100);
}

}  // namespace
}  // namespace accel::tool
