// The hook catalogue (hook_catalogue.h) against the class it describes.
#include "accel/hook_catalogue.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>

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
          << "maybeExchangeDevice is served by exchangeDevice's implementation";
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

}  // namespace
}  // namespace accel
