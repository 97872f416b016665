#include "accel/memory/allocator_settings.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <string_view>

#include "accel/error.h"
#include "support/error_of.h"

namespace accel::memory {
namespace {

// The message of the InvalidArgument that parsing `text` throws.
std::string parseErrorOf(std::string_view text) {
  return accel::testing::errorOf<InvalidArgument>(
      [&] { (void)parseAllocatorSettings(text); });
}

TEST(AllocatorSettings, ParsesEveryKey) {
  const AllocatorSettings settings = parseAllocatorSettings(
      "max_split_size_mb:64, garbage_collection_threshold:0.6,"
      "roundup_power2_divisions:4,expandable_segments:true");
  EXPECT_EQ(settings.max_split_size, std::size_t{64} << 20);
  EXPECT_DOUBLE_EQ(settings.garbage_collection_threshold, 0.6);
  EXPECT_EQ(settings.roundup_power2_divisions, 4u);
  EXPECT_TRUE(settings.expandable_segments);
  EXPECT_EQ(parseAllocatorSettings(formatAllocatorSettings(settings)), settings);
}

TEST(AllocatorSettings, FormattedThresholdParsesBackToTheSameDouble) {
  // More digits than a default stream's six, and values a parse can give.
  for (double threshold :
       {0.1234567891, 1.0 / 3.0, 0.6, 0.999999999999, 1e-9, 0.30000000000000004}) {
    AllocatorSettings settings;
    settings.garbage_collection_threshold = threshold;
    const std::string text = formatAllocatorSettings(settings);
    EXPECT_EQ(parseAllocatorSettings(text).garbage_collection_threshold, threshold)
        << text;
  }
}

TEST(AllocatorSettings, TheConcurrencySwitchesAreOnByDefaultAndRoundTripWhenOff) {
  EXPECT_TRUE(AllocatorSettings{}.thread_caches);
  EXPECT_TRUE(AllocatorSettings{}.biased_lock);
  const AllocatorSettings off =
      parseAllocatorSettings("thread_caches:false, biased_lock:false");
  EXPECT_FALSE(off.thread_caches);
  EXPECT_FALSE(off.biased_lock);
  EXPECT_EQ(formatAllocatorSettings(off), "thread_caches:false,biased_lock:false");
  EXPECT_EQ(parseAllocatorSettings(formatAllocatorSettings(off)), off);
  EXPECT_NE(parseErrorOf("thread_caches:off").find("true or false"), std::string::npos);
}

TEST(AllocatorSettings, EmptyTextGivesDefaults) {
  EXPECT_EQ(parseAllocatorSettings(""), AllocatorSettings{});
  EXPECT_EQ(formatAllocatorSettings({}), "");
}

TEST(AllocatorSettings, UnknownKeyIsNamedWithTheKnownOnes) {
  const std::string message = parseErrorOf("max_split_size:64");
  EXPECT_NE(message.find("unknown allocator setting 'max_split_size'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("max_split_size_mb"), std::string::npos) << message;
}

TEST(AllocatorSettings, BadValuesNameKeyValueAndWhatIsAccepted) {
  for (const char* text : {"max_split_size_mb:abc", "max_split_size_mb:10",
                           "garbage_collection_threshold:1.5",
                           "roundup_power2_divisions:3", "expandable_segments:yes"}) {
    const std::string message = parseErrorOf(text);
    const std::string_view item(text);
    const std::string key(item.substr(0, item.find(':')));
    const std::string value(item.substr(item.find(':') + 1));
    EXPECT_NE(message.find("'" + key + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("'" + value + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("expected"), std::string::npos) << message;
  }
  EXPECT_NE(parseErrorOf("expandable_segments").find("has no value"), std::string::npos);
}

TEST(AllocatorSettings, EnvironmentErrorNamesTheVariable) {
  ::setenv("ACCEL_TEST_ALLOC_CONF", "bogus:1", 1);
  const std::string message = accel::testing::errorOf<InvalidArgument>(
      [] { (void)allocatorSettingsFromEnvironment("ACCEL_TEST_ALLOC_CONF"); });
  EXPECT_NE(message.find("ACCEL_TEST_ALLOC_CONF"), std::string::npos) << message;
  EXPECT_NE(message.find("'bogus'"), std::string::npos) << message;
  ::setenv("ACCEL_TEST_ALLOC_CONF", "expandable_segments:true", 1);
  EXPECT_TRUE(
      allocatorSettingsFromEnvironment("ACCEL_TEST_ALLOC_CONF").expandable_segments);
  ::unsetenv("ACCEL_TEST_ALLOC_CONF");
  EXPECT_EQ(allocatorSettingsFromEnvironment("ACCEL_TEST_ALLOC_CONF"),
            AllocatorSettings{});
}

}  // namespace
}  // namespace accel::memory
