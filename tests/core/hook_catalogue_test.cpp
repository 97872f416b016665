// The hook catalogue (hook_catalogue.h) against the class it describes.
#include "accel/hook_catalogue.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "accel/hooks.h"

namespace accel {
namespace {

template <typename T>
struct IsNoexceptMember : std::false_type {};
template <typename R, typename C, typename... A>
struct IsNoexceptMember<R (C::*)(A...) noexcept> : std::true_type {};
template <typename R, typename C, typename... A>
struct IsNoexceptMember<R (C::*)(A...) const noexcept> : std::true_type {};

// Compiles only if every catalogue name is a public member of AcceleratorHooks
// and every implementation name a member a subclass can reach; the probes
// must be exactly the noexcept hooks (destroyEvent is noexcept but, freeing a
// handle, not a probe).
struct CatalogueMatchesTheClass : AcceleratorHooks {
#define ACCEL_CHECK_HOOK_(hook, group, probe, impl)                               \
  static_assert(IsNoexceptMember<decltype(&AcceleratorHooks::hook)>::value ==     \
                    (probe || HookId::hook == HookId::destroyEvent),              \
                "catalogue: probe flag does not match the noexcept of the hook"); \
  static_assert(                                                                  \
      std::is_member_function_pointer_v<decltype(&CatalogueMatchesTheClass::impl)>);
  ACCEL_HOOK_LIST(ACCEL_CHECK_HOOK_)
#undef ACCEL_CHECK_HOOK_
};

TEST(HookCatalogue, EveryNameIsFoundAndMapsBackToItsEntry) {
  for (const HookInfo& info : kHookCatalogue) {
    std::optional<HookId> found = findHook(info.name);
    ASSERT_TRUE(found.has_value()) << info.name;
    EXPECT_EQ(*found, info.id);
    EXPECT_EQ(&hookInfo(info.id), &info);
  }
}

TEST(HookCatalogue, FindHookRejectsTextThatIsNotAHookName) {
  EXPECT_FALSE(findHook("").has_value());
  EXPECT_FALSE(findHook(hookInfo(HookId::getNewStream).impl).has_value())
      << "an implementation name is not a hook name";
  std::string upper(hookInfo(HookId::getNewStream).name);
  upper[0] = 'G';
  EXPECT_FALSE(findHook(upper).has_value()) << "names are case-sensitive";
}

TEST(HookCatalogue, NamesAreUniqueAndImplementationsAreNamedAfterTheirHook) {
  std::set<std::string_view> names;
  for (const HookInfo& info : kHookCatalogue) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
    if (info.id == HookId::maybeExchangeDevice) {
      EXPECT_EQ(info.impl, hookInfo(HookId::exchangeDevice).impl)
          << "the maybe-variant is served by the exchange hook's implementation";
      continue;
    }
    EXPECT_EQ(info.impl, std::string(info.name) + "Impl");
  }
}

TEST(HookCatalogue, GroupsAppearInDeclarationOrderAndEachHasHooks) {
  int previous = 0;
  std::set<HookGroup> seen;
  for (const HookInfo& info : kHookCatalogue) {
    EXPECT_GE(static_cast<int>(info.group), previous)
        << info.name << " is out of group order";
    previous = static_cast<int>(info.group);
    seen.insert(info.group);
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kNumHookGroups));
}

TEST(HookCatalogue, OnlyNonProbeHooksOutsideTheLowGroupInitialise) {
  EXPECT_TRUE(initialisesOnFirstUse(hookInfo(HookId::getNewStream)));
  EXPECT_TRUE(initialisesOnFirstUse(hookInfo(HookId::getDefaultGenerator)));
  EXPECT_TRUE(initialisesOnFirstUse(hookInfo(HookId::init)));
  EXPECT_FALSE(initialisesOnFirstUse(hookInfo(HookId::getCurrentDevice)));
  EXPECT_FALSE(initialisesOnFirstUse(hookInfo(HookId::hasPrimaryContext)));
  EXPECT_FALSE(initialisesOnFirstUse(hookInfo(HookId::isPinnedPtr)));
}

// docs/hooks.md, read from the source tree CMake configured from.
std::string readHooksDoc() {
  std::ifstream in(std::filesystem::path(ACCEL_SOURCE_DIR) / "docs" / "hooks.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string expectedRow(const HookInfo& hook) {
  std::ostringstream row;
  row << "| `" << hook.name << "` | " << hookGroupName(hook.group) << " | "
      << (hook.probe ? "yes" : "no") << " | `" << hook.impl << "` | "
      << (initialisesOnFirstUse(hook) ? "yes" : "no") << " |";
  return row.str();
}

TEST(HookCatalogue, DocsTableIsTheCatalogueRowForRow) {
  const std::string doc = readHooksDoc();
  ASSERT_FALSE(doc.empty()) << "docs/hooks.md not found under " << ACCEL_SOURCE_DIR;
  const std::string begin = "<!-- catalogue table";
  const std::string end = "<!-- end of catalogue table -->";
  std::size_t from = doc.find(begin);
  std::size_t to = doc.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/hooks.md lost its catalogue table marker";
  ASSERT_NE(to, std::string::npos) << "docs/hooks.md lost its catalogue table end marker";
  std::istringstream table(doc.substr(from, to - from));
  std::vector<std::string> rows;
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("| `", 0) == 0) rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), kNumHooks) << "one row per hook, in catalogue order";
  for (std::size_t i = 0; i < kNumHooks; ++i) {
    EXPECT_EQ(rows[i], expectedRow(kHookCatalogue[i]))
        << "docs/hooks.md catalogue row " << i + 1;
  }
}

TEST(HookCatalogue, EveryHookTheDocsContractTablesNameIsInTheCatalogue) {
  const std::string doc = readHooksDoc();
  std::size_t from = doc.find("## The hooks\n");
  std::size_t to = doc.find("## Errors");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  std::istringstream section(doc.substr(from, to - from));
  const std::regex call("`([A-Za-z]+)\\(");
  int named = 0;
  for (std::string line; std::getline(section, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::string first_cell = line.substr(0, line.find(" | "));
    for (std::sregex_iterator it(first_cell.begin(), first_cell.end(), call), last;
         it != last; ++it) {
      EXPECT_TRUE(findHook((*it)[1].str()).has_value())
          << "docs/hooks.md documents `" << (*it)[1] << "(`, which is not a hook";
      ++named;
    }
  }
  EXPECT_GT(named, 30) << "the contract tables were not found";
}

// No fingerprint of the hook table is recorded here any more: it tied the
// table to the number of the retired C++ plugin entry, whose plugins called
// these virtuals directly. A plugin now reaches the core only through the C
// plugin ABI (accel/plugin_abi.h), and that boundary's own checks guard its
// compatibility: tests/abi's layout test (every struct's size and offsets,
// per released version) and its abidiff comparison with the recorded
// baseline. The hook table is the core's own and may change freely.

}  // namespace
}  // namespace accel
