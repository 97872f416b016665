#include "accel/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace accel {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Widget {
  explicit Widget(std::string made_by, int size = 0)
      : made_by(std::move(made_by)), size(size) {}
  std::string made_by;
  int size;
};

using WidgetRegistry = Registry<std::string, Widget, int>;

WidgetRegistry::Creator makes(std::string name) {
  return [name](int size) { return std::make_unique<Widget>(name, size); };
}

TEST(RegistryTest, CreatesByKeyPassingArguments) {
  WidgetRegistry registry("widget");
  EXPECT_TRUE(registry.registerCreator("a", makes("a-creator")));
  std::unique_ptr<Widget> widget = registry.create("a", 7);
  ASSERT_NE(widget, nullptr);
  EXPECT_EQ(widget->made_by, "a-creator");
  EXPECT_EQ(widget->size, 7);
}

TEST(RegistryTest, UnknownKeyIsAbsentAndCreatesNull) {
  WidgetRegistry registry("widget");
  registry.registerCreator("a", makes("a"));
  EXPECT_FALSE(registry.has("b"));
  EXPECT_FALSE(registry.has(std::string_view("")));
  EXPECT_EQ(registry.create("b", 0), nullptr);
}

TEST(RegistryTest, LooksUpByStringViewWithoutBuildingAString) {
  WidgetRegistry registry("widget");
  registry.registerCreator("openreg", makes("o"));
  std::string_view key = "openreg";
  EXPECT_TRUE(registry.has(key));
  EXPECT_TRUE(registry.has("openreg"));
}

// Keys of one length that share their first 8 bytes differ only past the
// part the lookup index compares as an integer: the tails decide.
TEST(RegistryTest, KeysSharingTheirFirstEightBytesAreToldApart) {
  WidgetRegistry registry("widget");
  registry.registerCreator("memory_history_a", makes("a"));
  registry.registerCreator("memory_history_b", makes("b"));
  registry.registerCreator("memory_h", makes("short"));
  registry.registerCreator("memory_history_bb", makes("long"));
  EXPECT_EQ(registry.create("memory_history_a", 0)->made_by, "a");
  EXPECT_EQ(registry.create("memory_history_b", 0)->made_by, "b");
  EXPECT_EQ(registry.create("memory_h", 0)->made_by, "short");
  EXPECT_EQ(registry.create("memory_history_bb", 0)->made_by, "long");
  EXPECT_FALSE(registry.has("memory_history_c"));
  EXPECT_FALSE(registry.has("memory_hi"));
  EXPECT_FALSE(registry.has("memory_"));
  EXPECT_FALSE(registry.has(std::string_view("memory_history_a\0", 17)));
}

// Every length class of the index (0, 1-3, 4-7, 8-16, past 16 bytes) with
// keys that differ in one byte only, at the start, the middle or the end, and
// enough keys to grow the table and make probe sequences collide.
TEST(RegistryTest, EveryKeyIsFoundAndNoNearMissIs) {
  WidgetRegistry registry("widget");
  std::vector<std::string> keys{""};
  for (std::size_t length : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 40}) {
    std::string base(length, 'k');
    keys.push_back(base);
    for (std::size_t at : {std::size_t{0}, length / 2, length - 1}) {
      std::string variant = base;
      variant[at] = 'v';
      keys.push_back(variant);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& key : keys) registry.registerCreator(key, makes(key));
  ASSERT_EQ(registry.size(), keys.size());
  for (const std::string& key : keys) {
    ASSERT_TRUE(registry.has(key)) << "'" << key << "'";
    EXPECT_EQ(registry.create(key, 0)->made_by, key);
    // The same key with one byte changed to a byte no key holds is absent.
    for (std::size_t at = 0; at < key.size(); ++at) {
      std::string near_miss = key;
      near_miss[at] = 'x';
      EXPECT_FALSE(registry.has(near_miss)) << "'" << near_miss << "'";
    }
    EXPECT_FALSE(registry.has(key + "x"));
  }
}

TEST(RegistryTest, HigherPriorityReplacesLowerOne) {
  WidgetRegistry registry("widget");
  EXPECT_TRUE(
      registry.registerCreator("k", makes("fallback"), RegistryPriority::Fallback));
  EXPECT_TRUE(registry.registerCreator("k", makes("default"), RegistryPriority::Default));
  EXPECT_EQ(registry.create("k", 0)->made_by, "default");
  EXPECT_TRUE(
      registry.registerCreator("k", makes("preferred"), RegistryPriority::Preferred));
  EXPECT_EQ(registry.create("k", 0)->made_by, "preferred");
  RegistryPriority priority{};
  ASSERT_TRUE(registry.priorityOf("k", priority));
  EXPECT_EQ(priority, RegistryPriority::Preferred);
  EXPECT_EQ(registry.size(), 1u);
}

TEST(RegistryTest, LowerPriorityIsIgnoredAndReported) {
  WidgetRegistry registry("widget");
  registry.registerCreator("k", makes("preferred"), RegistryPriority::Preferred);
  EXPECT_FALSE(
      registry.registerCreator("k", makes("default"), RegistryPriority::Default));
  EXPECT_FALSE(
      registry.registerCreator("k", makes("fallback"), RegistryPriority::Fallback));
  EXPECT_EQ(registry.create("k", 0)->made_by, "preferred");
}

TEST(RegistryTest, DuplicateAtEqualPriorityThrowsAndKeepsTheFirst) {
  WidgetRegistry registry("widget");
  registry.registerCreator("k", makes("first"));
  try {
    registry.registerCreator("k", makes("second"));
    FAIL() << "expected DuplicateRegistration";
  } catch (const DuplicateRegistration& e) {
    EXPECT_THAT(e.message(),
                HasSubstr("widget 'k' is already registered at priority default"));
    EXPECT_THAT(e.message(), HasSubstr("higher priority"));
  }
  EXPECT_EQ(registry.create("k", 0)->made_by, "first");
  // A DuplicateRegistration is an InvalidArgument for callers that catch broadly.
  EXPECT_THROW(registry.registerCreator("k", makes("third")), InvalidArgument);
}

TEST(RegistryTest, EmptyCreatorIsRejected) {
  WidgetRegistry registry("widget");
  EXPECT_THROW(registry.registerCreator("k", WidgetRegistry::Creator()), InvalidArgument);
  EXPECT_FALSE(registry.has("k"));
}

TEST(RegistryTest, KeysAreSortedAndHelpIsKeptPerKey) {
  WidgetRegistry registry("widget");
  registry.registerCreator("zeta", makes("z"), RegistryPriority::Default, "last one");
  registry.registerCreator("alpha", makes("a"), RegistryPriority::Fallback, "first one");
  registry.registerCreator("mid", makes("m"));
  EXPECT_THAT(registry.keys(), ElementsAre("alpha", "mid", "zeta"));
  EXPECT_EQ(registry.help("alpha"), "first one");
  EXPECT_EQ(registry.help("mid"), "");
  EXPECT_EQ(registry.help("nosuch"), "");
  EXPECT_EQ(registry.helpMessage(),
            "alpha (fallback): first one\nmid (default)\nzeta (default): last one\n");
}

TEST(RegistryTest, ReplacementReplacesTheHelpText) {
  WidgetRegistry registry("widget");
  registry.registerCreator("k", makes("a"), RegistryPriority::Fallback, "old");
  registry.registerCreator("k", makes("b"), RegistryPriority::Preferred, "new");
  EXPECT_EQ(registry.help("k"), "new");
}

TEST(RegistryTest, CreatorExceptionsReachTheCaller) {
  WidgetRegistry registry("widget");
  registry.registerCreator(
      "bad", [](int) -> std::unique_ptr<Widget> { throw DeviceError("creator failed"); });
  EXPECT_THROW((void)registry.create("bad", 0), DeviceError);
}

TEST(RegistryTest, PriorityNamesAreSpelledOut) {
  EXPECT_EQ(registryPriorityName(RegistryPriority::Fallback), "fallback");
  EXPECT_EQ(registryPriorityName(RegistryPriority::Default), "default");
  EXPECT_EQ(registryPriorityName(RegistryPriority::Preferred), "preferred");
}

// Writers register while readers look up; under TSan this checks that lookups
// need no lock, and in every build that no registration is lost.
TEST(RegistryTest, ConcurrentRegistrationAndLookupAreSafe) {
  WidgetRegistry registry("widget");
  registry.registerCreator("stable", makes("stable"));
  constexpr int kWriters = 4;
  constexpr int kReaders = 4;
  constexpr int kKeysPerWriter = 50;
  std::atomic<bool> writers_done{false};
  std::atomic<int> lookups{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int k = 0; k < kKeysPerWriter; ++k) {
        std::string key = "w" + std::to_string(w) + "_" + std::to_string(k);
        EXPECT_TRUE(registry.registerCreator(key, makes(key)));
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      do {
        // The pre-registered key is always there, whatever the writers do.
        EXPECT_TRUE(registry.has("stable"));
        std::unique_ptr<Widget> stable = registry.create("stable", r);
        EXPECT_TRUE(stable != nullptr && stable->made_by == "stable");
        // A key being registered is either absent or complete.
        std::string key =
            "w" + std::to_string(r) + "_" + std::to_string(r * 7 % kKeysPerWriter);
        if (std::unique_ptr<Widget> w = registry.create(key, 0)) {
          EXPECT_EQ(w->made_by, key);
        }
        (void)registry.keys();
        lookups.fetch_add(1, std::memory_order_relaxed);
      } while (!writers_done.load(std::memory_order_acquire));
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  writers_done.store(true, std::memory_order_release);
  for (std::size_t i = kWriters; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(registry.size(), 1u + kWriters * kKeysPerWriter);
  for (int w = 0; w < kWriters; ++w) {
    for (int k = 0; k < kKeysPerWriter; ++k) {
      std::string key = "w" + std::to_string(w) + "_" + std::to_string(k);
      ASSERT_TRUE(registry.has(key)) << key;
    }
  }
  EXPECT_GE(lookups.load(), kReaders);
}

TEST(RegistryTest, ConcurrentDuplicateRegistrationHasExactlyOneWinner) {
  WidgetRegistry registry("widget");
  constexpr int kThreads = 8;
  std::atomic<int> wins{0};
  std::atomic<int> duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        if (registry.registerCreator("same", makes(std::to_string(t)))) wins.fetch_add(1);
      } catch (const DuplicateRegistration&) {
        duplicates.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_EQ(duplicates.load(), kThreads - 1);
}

}  // namespace
}  // namespace accel
