// Reading a snapshot in-process (so that the sanitizer builds see it): the
// size limit, directories, byte sizes, the form told from the first bytes,
// and nesting refused before parsing, counted as the parser would.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accel/error.h"
#include "byte_size.h"
#include "input_file.h"
#include "json_depth.h"
#include "snapshot_document.h"
#include "support/error_of.h"

namespace accel::tool {
namespace {

InputFileOptions options(std::size_t max_bytes) {
  return {"memviz", "a snapshot", max_bytes, {}};
}

TEST(SnapshotInput, ByteSizesParseAndRefuseNonsense) {
  EXPECT_EQ(parseByteSize("512", "--x"), 512u);
  EXPECT_EQ(parseByteSize("3MiB", "--x"), std::size_t{3} << 20);
  EXPECT_EQ(parseByteSize("1TiB", "--x"), std::size_t{1} << 40);
  for (const char* bad : {"", "0", "-1", "1.5GiB", "12 MiB", "1XB", "MiB",
                          "99999999999999999999TiB", "20000000TiB"}) {
    EXPECT_NE(testing::errorOf<InvalidArgument>([&] {
                (void)parseByteSize(bad, "--x");
              }).find("--x '"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(formatByteSize(std::size_t{1} << 30), "1 GiB");
  EXPECT_EQ(formatByteSize(1000), "1000 bytes");
}

TEST(SnapshotInput, FilesBeyondTheLimitDirectoriesAndMissingFilesAreRefused) {
  const std::string path = ::testing::TempDir() + "snapshot_input_small.json";
  std::ofstream(path) << std::string(2000, ' ') << "{}";
  EXPECT_EQ(readInputFile(path, options(4096)).size(), 2002u);
  EXPECT_NE(
      testing::errorOf<InvalidArgument>([&] { (void)readInputFile(path, options(1000)); })
          .find("is larger than the input limit of 1000 bytes; raise it with "
                "--max-input-size"),
      std::string::npos);
  EXPECT_NE(testing::errorOf<InvalidArgument>([&] {
              (void)readInputFile(::testing::TempDir(), options(1000));
            }).find("is a directory; give a snapshot"),
            std::string::npos);
  EXPECT_NE(testing::errorOf<InvalidArgument>([&] {
              (void)readInputFile("/nonexistent/x.json", options(1000));
            }).find("cannot open '/nonexistent/x.json'"),
            std::string::npos);
  // A stream without a size stops at the limit.
  EXPECT_NE(testing::errorOf<InvalidArgument>([&] {
              (void)readInputFile("/dev/zero", options(std::size_t{1} << 20));
            }).find("larger than the input limit of 1 MiB"),
            std::string::npos);
}

TEST(SnapshotInput, TheFirstBytesAreCheckedBeforeTheRest) {
  InputFileOptions refuse = options(std::size_t{1} << 30);
  int calls = 0;
  refuse.check_start = [&](std::string_view first) {
    ++calls;
    EXPECT_EQ(first.substr(0, 1), std::string_view("\0", 1));
    throw InvalidArgument("not a snapshot");
  };
  EXPECT_EQ(testing::errorOf<InvalidArgument>(
                [&] { (void)readInputFile("/dev/zero", refuse); }),
            "not a snapshot");
  EXPECT_EQ(calls, 1);
}

TEST(SnapshotInput, TheFormIsToldFromTheFirstBytes) {
  EXPECT_EQ(snapshotFormOf(" \n{\"segments\": []}"), SnapshotForm::Json);
  EXPECT_EQ(snapshotFormOf("\x80\x04\x95"), SnapshotForm::Pickle);
  EXPECT_EQ(snapshotFormOf("[1]"), SnapshotForm::Other);
  EXPECT_EQ(snapshotFormOf(""), SnapshotForm::Other);
  EXPECT_NE(testing::errorOf<InvalidArgument>([] {
              (void)parseSnapshotDocument(std::string(4, '\0'), "z", "memviz");
            }).find("memviz: z is neither a snapshot's JSON"),
            std::string::npos);
  EXPECT_NE(testing::errorOf<InvalidArgument>([] {
              (void)parseSnapshotDocument("{\"a\": [1,", "t.json", "memviz");
            }).find("memviz: t.json is not valid JSON"),
            std::string::npos);
}

TEST(SnapshotInput, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep =
      "{\"segments\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_NE(testing::errorOf<InvalidArgument>([&] {
              (void)parseSnapshotDocument(deep, "deep.json", "memviz");
            }).find("deep.json nests arrays or objects deeper than 64 levels"),
            std::string::npos);
  // 64 levels are fine.
  const std::string ok = std::string(63, '[') + std::string(63, ']');
  EXPECT_NO_THROW((void)parseSnapshotDocument("{\"a\":" + ok + "}", "ok.json", "memviz"));
}

// The deepest depth nlohmann's parser callback reports for `text`.
int callbackDepth(const std::string& text) {
  int deepest = 0;
  const nlohmann::json parsed = nlohmann::json::parse(
      text,
      [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        deepest = std::max(deepest, depth);
        return true;
      },
      /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << "not JSON: " << text;
  return deepest;
}

TEST(SnapshotInput, TheDepthCountAgreesWithTheParsersCallback) {
  const std::vector<std::string> texts = {
      "1",
      "\"[{\"",
      "[]",
      "{}",
      "[[]]",
      "[1]",
      "{\"a\": 1}",
      "{\"a\": {}}",
      "{\"a\": {\"b\": [true, null, -1.5e3]}}",
      "[[[[]]], [[[[0]]]]]",
      "{\"[[[\": \"{{{\\\"[[\"}",
      "[\"\\\\\", [\"]\"]]",
      " [ [ ] , { } ] ",
      "{\"segments\": [{\"blocks\": [{\"frames\": [{\"name\": \"f\"}]}]}]}"};
  for (const std::string& text : texts) {
    const int deepest = callbackDepth(text);
    for (int limit = 0; limit <= 7; ++limit) {
      EXPECT_EQ(jsonNestsDeeperThan(text, limit), deepest > limit)
          << text << " with at most " << limit
          << " levels (the callback's deepest: " << deepest << ")";
    }
  }
}

}  // namespace
}  // namespace accel::tool
