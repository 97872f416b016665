#include "accel/kit/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "accel/error.h"
#include "support/error_of.h"

namespace accel::kit {
namespace {

using accel::testing::errorOf;
using ::testing::AllOf;
using ::testing::HasSubstr;

ConfigReader readerOf(std::map<std::string, std::string> values) {
  return ConfigReader([values = std::move(values)](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  });
}

TEST(ConfigTest, ParseUnsignedAcceptsDigitsOnly) {
  EXPECT_EQ(parseUnsigned("0"), 0u);
  EXPECT_EQ(parseUnsigned("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parseUnsigned("18446744073709551616"), std::nullopt);  // overflow
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1.0", "0x10", "abc"}) {
    EXPECT_EQ(parseUnsigned(bad), std::nullopt) << bad;
  }
}

TEST(ConfigTest, ByteSizesTakeBinaryAndDecimalUnitsInAnyCase) {
  EXPECT_EQ(parseByteSize("4096"), 4096u);
  EXPECT_EQ(parseByteSize("7B"), 7u);
  EXPECT_EQ(parseByteSize("2KiB"), 2048u);
  EXPECT_EQ(parseByteSize("512MiB"), std::uint64_t{512} << 20);
  EXPECT_EQ(parseByteSize("512mib"), std::uint64_t{512} << 20);
  EXPECT_EQ(parseByteSize("2GiB"), std::uint64_t{2} << 30);
  EXPECT_EQ(parseByteSize("1TiB"), std::uint64_t{1} << 40);
  EXPECT_EQ(parseByteSize("1kB"), 1000u);
  EXPECT_EQ(parseByteSize("2MB"), 2000000u);
  EXPECT_EQ(parseByteSize("3GB"), 3000000000u);
}

TEST(ConfigTest, MalformedByteSizesNameTheSourceAndTheForms) {
  for (const char* bad : {"", "MiB", "1.5GiB", "-1", "12 MiB", "1XB", "99999999999TiB"}) {
    EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)parseByteSize(bad, "MY_VAR"); }),
                AllOf(HasSubstr(std::string("MY_VAR='") + bad + "' is not a size"),
                      HasSubstr("\"512MiB\"")))
        << bad;
  }
}

TEST(ConfigTest, FormatByteSizePicksTheLargestWholeUnit) {
  EXPECT_EQ(formatByteSize(0), "0 B");
  EXPECT_EQ(formatByteSize(100), "100 B");
  EXPECT_EQ(formatByteSize(1024), "1 KiB");
  EXPECT_EQ(formatByteSize(std::uint64_t{512} << 20), "512 MiB");
  EXPECT_EQ(formatByteSize(std::uint64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(formatByteSize(1023), "1023 B");
  EXPECT_EQ(formatByteSize(UINT64_MAX), "15.9 EiB");
}

TEST(ConfigTest, UnsetVariablesGiveTheFallback) {
  ConfigReader env = readerOf({});
  EXPECT_EQ(env.count("X_COUNT", 7, 0, 10), 7u);
  EXPECT_EQ(env.byteSize("X_SIZE", 1024), 1024u);
  EXPECT_TRUE(env.flag("X_FLAG", true));
  EXPECT_EQ(env.raw("X_COUNT"), std::nullopt);
  EXPECT_EQ(ConfigReader(ConfigReader::Lookup{}).count("X", 3, 0, 5), 3u);
}

TEST(ConfigTest, CountsAreCheckedAgainstTheirRange) {
  ConfigReader env = readerOf({{"DEVS", "4"}, {"BAD", "abc"}, {"BIG", "129"}});
  EXPECT_EQ(env.count("DEVS", 2, 0, 128, "a device count"), 4u);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { (void)env.count("BAD", 2, 0, 128, "a device count"); }),
              HasSubstr("BAD='abc' is not a device count: use an integer from 0 to 128, "
                        "or unset the variable for the default (2)"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)env.count("BIG", 2, 0, 128); }),
              HasSubstr("BIG='129' is not a count: use an integer from 0 to 128"));
}

TEST(ConfigTest, ByteSizesAreCheckedAgainstTheirRange) {
  ConfigReader env = readerOf({{"MEM", "2GiB"}, {"TINY", "1KiB"}, {"JUNK", "lots"}});
  EXPECT_EQ(env.byteSize("MEM", 0), std::uint64_t{2} << 30);
  EXPECT_THAT(errorOf<InvalidArgument>(
                  [&] { (void)env.byteSize("TINY", 1 << 20, 1 << 20, 1 << 30); }),
              HasSubstr("TINY='1KiB' is 1 KiB: use a size from 1 MiB to 1 GiB"));
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)env.byteSize("JUNK", 0); }),
              HasSubstr("JUNK='lots' is not a size"));
}

TEST(ConfigTest, FlagsTakeTheUsualWords) {
  ConfigReader env = readerOf({{"A", "1"},
                               {"B", "TRUE"},
                               {"C", "yes"},
                               {"D", "On"},
                               {"E", "0"},
                               {"F", "off"},
                               {"G", "2"}});
  for (const char* name : {"A", "B", "C", "D"})
    EXPECT_TRUE(env.flag(name, false)) << name;
  for (const char* name : {"E", "F"}) EXPECT_FALSE(env.flag(name, true)) << name;
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)env.flag("G", false); }),
              HasSubstr("G='2' is not a switch: use 1/0, true/false, yes/no or on/off"));
}

TEST(ConfigTest, DefaultReaderReadsTheProcessEnvironment) {
  ::setenv("ACCEL_KIT_TEST_COUNT", "5", 1);
  EXPECT_EQ(ConfigReader().count("ACCEL_KIT_TEST_COUNT", 1, 0, 9), 5u);
  ::unsetenv("ACCEL_KIT_TEST_COUNT");
  EXPECT_EQ(ConfigReader().count("ACCEL_KIT_TEST_COUNT", 1, 0, 9), 1u);
}

}  // namespace
}  // namespace accel::kit
