#include "accel/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

#include "accel/device_type.h"
#include "accel/registry.h"

namespace accel {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

static_assert(std::is_base_of_v<std::runtime_error, Error>);
static_assert(std::is_base_of_v<Error, InvalidArgument>);
static_assert(std::is_base_of_v<Error, NotSupported>);
static_assert(std::is_base_of_v<Error, NotAvailable>);
static_assert(std::is_base_of_v<Error, OutOfMemory>);
static_assert(std::is_base_of_v<Error, DeviceError>);
static_assert(std::is_base_of_v<InvalidArgument, DuplicateRegistration>);

TEST(ErrorTest, WhatAppendsTheLocationToTheMessage) {
  const int line = __LINE__ + 1;
  Error error("something failed");
  EXPECT_EQ(error.message(), "something failed");
  EXPECT_EQ(error.location().line(), static_cast<std::uint_least32_t>(line));
  EXPECT_THAT(error.what(), StartsWith("something failed ["));
  EXPECT_THAT(error.what(),
              EndsWith("tests/core/error_test.cpp:" + std::to_string(line) + "]"));
}

// The build maps the checkout's path away (-fmacro-prefix-map), so a location
// reads from the repository root wherever the checkout lives, including under
// a folder that is itself named src/ or tests/ (~/src/accelhooks).
TEST(ErrorTest, LocationIsShortenedToTheRepositoryPath) {
  const int line = __LINE__ + 1;
  Error error("x");
  EXPECT_STREQ(error.location().file_name(), "tests/core/error_test.cpp");
  EXPECT_EQ(std::string(error.what()),
            "x [tests/core/error_test.cpp:" + std::to_string(line) + "]");
}

TEST(ErrorTest, LocationsRaisedInsideTheCoreAreRepositoryRelative) {
  try {
    (void)registerDeviceType("Not A Valid Name!");
    FAIL() << "registerDeviceType accepted an invalid name";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.location().file_name(), "src/core/hooks/device_type.cpp");
    EXPECT_THAT(e.what(), HasSubstr(" [src/core/hooks/device_type.cpp:"));
  }
}

TEST(ErrorTest, LocationsRaisedInPublicHeadersAreRepositoryRelative) {
  Registry<std::string, int> registry("test registry");
  auto creator = [] { return std::make_unique<int>(1); };
  ASSERT_TRUE(registry.registerCreator("key", creator));
  try {
    registry.registerCreator("key", creator);
    FAIL() << "a same-priority duplicate was accepted";
  } catch (const DuplicateRegistration& e) {
    EXPECT_STREQ(e.location().file_name(), "include/accel/registry.h");
  }
}

TEST(ErrorTest, CheckThrowsTheGivenTypeWithConcatenatedPartsAndItsLocation) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    ACCEL_CHECK(1 + 1 == 3, NotSupported, "asked for ", 3, " got ", 2.5, '!');
    FAIL() << "ACCEL_CHECK did not throw";
  } catch (const NotSupported& e) {
    EXPECT_EQ(e.message(), "asked for 3 got 2.5!");
    EXPECT_EQ(e.location().line(), static_cast<std::uint_least32_t>(line));
    EXPECT_THAT(e.location().file_name(), EndsWith("error_test.cpp"));
    EXPECT_THAT(e.what(), EndsWith(":" + std::to_string(line) + "]"));
  }
}

TEST(ErrorTest, CheckEvaluatesNeitherThrowNorPartsWhenTheConditionHolds) {
  int evaluated = 0;
  auto part = [&] {
    ++evaluated;
    return "part";
  };
  EXPECT_NO_THROW(ACCEL_CHECK(true, InvalidArgument, part()));
  EXPECT_EQ(evaluated, 0);
  EXPECT_THROW(ACCEL_CHECK(false, InvalidArgument, part()), InvalidArgument);
  EXPECT_EQ(evaluated, 1);
}

TEST(ErrorTest, CheckEvaluatesTheConditionOnce) {
  int calls = 0;
  auto condition = [&] { return ++calls > 0; };
  ACCEL_CHECK(condition(), DeviceError, "never");
  EXPECT_EQ(calls, 1);
}

TEST(ErrorTest, CheckWorksAsASingleStatement) {
  // The macro must pair with an unbraced if/else like a function call does.
  bool else_taken = false;
  if (false)
    ACCEL_CHECK(false, OutOfMemory, "never reached");
  else
    else_taken = true;
  EXPECT_TRUE(else_taken);
}

TEST(ErrorTest, EverySubclassIsCaughtAsError) {
  auto caught = [](auto&& thrower) {
    try {
      thrower();
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("not caught");
  };
  EXPECT_EQ(caught([] { throw InvalidArgument("a"); }), "a");
  EXPECT_EQ(caught([] { throw NotSupported("b"); }), "b");
  EXPECT_EQ(caught([] { throw NotAvailable("c"); }), "c");
  EXPECT_EQ(caught([] { throw OutOfMemory("d"); }), "d");
  EXPECT_EQ(caught([] { throw DeviceError("e"); }), "e");
  EXPECT_EQ(caught([] { throw DuplicateRegistration("f"); }), "f");
}

TEST(ErrorTest, ConcatOfNoPartsIsEmpty) {
  EXPECT_EQ(detail::concat(), "");
  EXPECT_EQ(detail::concat("a", 1, std::string("b"), std::string_view("c")), "a1bc");
}

}  // namespace
}  // namespace accel
