#include "accel/hooks_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "support/error_of.h"
#include "support/test_backend.h"

namespace accel {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::registerTestBackend;
using ::testing::StartsWith;
using testing::TestHooks;

// Built by ACCEL_REGISTER_HOOKS below on the first getHooks of its type.
std::atomic<int> g_factory_constructions{0};

class FactoryHooks final : public TestHooks {
 public:
  FactoryHooks() : TestHooks(registerDeviceType("table_factory"), 1) {
    g_factory_constructions.fetch_add(1);
  }
};

ACCEL_REGISTER_HOOKS(FactoryHooks, "table_factory");

// The NotAvailable message of a call on absent hooks.
template <typename Call>
std::string absentError(Call&& call) {
  return testing::errorOf<NotAvailable>(std::forward<Call>(call));
}

TEST(HooksTableTest, UnregisteredTypeGetsTheAbsentHooks) {
  DeviceType type = registerDeviceType("table_absent");
  AcceleratorHooks& hooks = getHooks(type);
  EXPECT_EQ(&hooks, &absentHooks(type));
  EXPECT_EQ(&getHooks(type), &hooks);  // stable across lookups
  EXPECT_EQ(hooks.deviceType(), type);
  EXPECT_FALSE(isHooksRegistered(type));
  EXPECT_EQ(hooksOrigin(type), "");
}

TEST(HooksTableTest, AbsentProbesAnswerBenignly) {
  AcceleratorHooks& hooks = getHooks(registerDeviceType("table_probes"));
  int local = 0;
  EXPECT_FALSE(hooks.isBuilt());
  EXPECT_FALSE(hooks.isAvailable());
  EXPECT_EQ(hooks.deviceCount(), 0);
  EXPECT_FALSE(hooks.hasPrimaryContext(0));
  EXPECT_FALSE(hooks.isPinnedPtr(&local));
  hooks.destroyEvent(1);  // ignored, never throws
}

TEST(HooksTableTest, AbsentHooksOfAnIdThatWasNeverRegisteredAreSafe) {
  auto type = static_cast<DeviceType>(200);
  AcceleratorHooks& hooks = getHooks(type);
  EXPECT_EQ(hooks.name(), "unknown");
  EXPECT_FALSE(hooks.isAvailable());
  EXPECT_FALSE(isHooksRegistered(type));
  EXPECT_THAT(absentError([&] { hooks.init(); }), HasSubstr("'unknown'"));
}

TEST(HooksTableTest, AbsentCallsNameHookTypeRegisteredBackendsAndHowToLoad) {
  registerTestBackend("table_present", 1);
  DeviceType type = registerDeviceType("table_missing");
  AcceleratorHooks& hooks = getHooks(type);
  int local = 0;
  const std::vector<std::pair<HookId, std::function<void()>>> calls = {
      {HookId::init, [&] { hooks.init(); }},
      {HookId::getCurrentDevice, [&] { (void)hooks.getCurrentDevice(); }},
      {HookId::setCurrentDevice, [&] { hooks.setCurrentDevice(0); }},
      {HookId::exchangeDevice, [&] { (void)hooks.exchangeDevice(0); }},
      {HookId::getDefaultGenerator, [&] { (void)hooks.getDefaultGenerator(); }},
      {HookId::getDefaultGenerator, [&] { (void)hooks.getDefaultGenerator(0); }},
      {HookId::getNewGenerator, [&] { (void)hooks.getNewGenerator(); }},
      {HookId::getDeviceFromPtr, [&] { (void)hooks.getDeviceFromPtr(&local); }},
      {HookId::getPinnedMemoryAllocator, [&] { (void)hooks.getPinnedMemoryAllocator(); }},
      {HookId::getDeviceAllocator, [&] { (void)hooks.getDeviceAllocator(); }},
      {HookId::deviceSynchronize, [&] { hooks.deviceSynchronize(0); }},
      {HookId::showConfig, [&] { (void)hooks.showConfig(); }},
      {HookId::getCurrentStream, [&] { (void)hooks.getCurrentStream(0); }},
      {HookId::streamPriorityRange, [&] { (void)hooks.streamPriorityRange(); }},
      {HookId::createEvent, [&] { (void)hooks.createEvent(0); }},
      {HookId::elapsedTime, [&] { (void)hooks.elapsedTime(1, 2); }},
      {HookId::memoryStats, [&] { (void)hooks.memoryStats(0); }},
      {HookId::emptyCache, [&] { hooks.emptyCache(); }},
      {HookId::recordMemoryHistory, [&] { hooks.recordMemoryHistory({}); }},
      {HookId::attachOutOfMemoryObserver,
       [&] { hooks.attachOutOfMemoryObserver([](const OutOfMemoryEvent&) {}); }},
      {HookId::graphCreate, [&] { (void)hooks.graphCreate(); }},
      {HookId::graphReplay, [&] { hooks.graphReplay(1); }},
  };
  for (const auto& [hook, call] : calls) {
    const std::string name(hookInfo(hook).name);
    SCOPED_TRACE(name);
    std::string message = absentError(call);
    EXPECT_THAT(message, StartsWith(name + "(): no backend is registered for device type "
                                           "'table_missing'"));
    EXPECT_THAT(message, HasSubstr("registered backends: "));
    EXPECT_THAT(message, HasSubstr("table_present"));
    EXPECT_THAT(message,
                HasSubstr("accel::loadBackend(\"/path/to/libaccel_table_missing.so\")"));
    EXPECT_THAT(message, HasSubstr("ACCEL_PLUGINS"));
  }
}

TEST(HooksTableTest, AbsenceExplainerOfATableIsAppended) {
  DeviceType type = registerDeviceType("table_hinted");
  HooksTable hinted([](DeviceType t) noexcept {
    return std::string("plugin for ") + std::string(deviceTypeName(t)) + " did not load";
  });
  EXPECT_THAT(absentError([&] { hinted.get(type).init(); }),
              HasSubstr("plugin for table_hinted did not load"));
  HooksTable plain;
  EXPECT_THAT(absentError([&] { plain.get(type).init(); }),
              Not(HasSubstr("did not load")));
}

TEST(HooksTableTest, ATableOfItsOwnIsIndependentOfTheProcessTable) {
  DeviceType type = registerDeviceType("table_own");
  {
    HooksTable table;
    EXPECT_EQ(&table.get(type), &table.absent(type));
    AcceleratorHooks& hooks =
        table.registerHooks(std::make_unique<TestHooks>(type, 2), "own table");
    EXPECT_EQ(&table.get(type), &hooks);
    EXPECT_TRUE(table.isRegistered(type));
    EXPECT_EQ(table.origin(type), "own table");
    EXPECT_EQ(table.registeredTypes(), std::vector<DeviceType>{type});
    // The process table never saw it.
    EXPECT_EQ(&getHooks(type), &absentHooks(type));
    EXPECT_FALSE(isHooksRegistered(type));
  }  // the table destroys the hooks it owns
  HooksTable fresh;
  EXPECT_FALSE(fresh.isRegistered(type));
}

TEST(HooksTableTest, RegistrarCommitIsAllOrNothing) {
  HooksTable table;
  DeviceType taken = registerDeviceType("table_taken");
  table.registerHooks(std::make_unique<TestHooks>(taken, 1), "first lib");
  Registrar registrar("second lib");
  DeviceType fresh = registrar.registerDeviceType("table_fresh");
  registrar.registerHooks(std::make_unique<TestHooks>(fresh, 1));
  registrar.registerHooks(std::make_unique<TestHooks>(taken, 1));
  EXPECT_EQ(registrar.types(), (std::vector<DeviceType>{fresh, taken}));
  try {
    (void)registrar.commitTo(table);
    FAIL() << "expected DuplicateRegistration";
  } catch (const DuplicateRegistration& e) {
    EXPECT_THAT(e.message(), HasSubstr("'table_taken'"));
    EXPECT_THAT(e.message(), HasSubstr("from second lib"));
    EXPECT_THAT(e.message(), HasSubstr("first lib"));
  }
  EXPECT_FALSE(table.isRegistered(fresh));  // nothing of the registrar went in
  EXPECT_EQ(table.origin(taken), "first lib");
}

TEST(HooksTableTest, RegistrarCommitsHooksAndFactoriesWithItsOrigin) {
  HooksTable table;
  Registrar registrar("plugin /x/libaccel_table_reg.so");
  DeviceType now = registrar.registerDeviceType("table_reg_now");
  registrar.registerHooks(std::make_unique<TestHooks>(now, 1));
  registrar.registerHooksFactory("table_reg_lazy", [] {
    return std::make_unique<TestHooks>(*findDeviceType("table_reg_lazy"), 3);
  });
  DeviceType lazy = *findDeviceType("table_reg_lazy");
  EXPECT_FALSE(table.isRegistered(now));  // held until committed
  EXPECT_EQ(registrar.commitTo(table), (std::vector<DeviceType>{now, lazy}));
  EXPECT_EQ(table.origin(now), "plugin /x/libaccel_table_reg.so");
  EXPECT_EQ(table.origin(lazy), "plugin /x/libaccel_table_reg.so (not created yet)");
  EXPECT_EQ(table.get(lazy).deviceCount(), 3);
  EXPECT_EQ(table.origin(lazy), "plugin /x/libaccel_table_reg.so");
  // Committed means closed.
  EXPECT_THROW(registrar.registerDeviceType("table_reg_more"), InvalidArgument);
}

TEST(HooksTableTest, RegistrarRefusesATypeTwiceAndUseAfterClose) {
  Registrar registrar("the test");
  DeviceType type = registrar.registerDeviceType("table_reg_twice");
  registrar.registerHooks(std::make_unique<TestHooks>(type, 1));
  try {
    registrar.registerHooks(std::make_unique<TestHooks>(type, 1));
    FAIL() << "expected DuplicateRegistration";
  } catch (const DuplicateRegistration& e) {
    EXPECT_THAT(e.message(), HasSubstr("the test registers 'table_reg_twice' twice"));
  }
  registrar.close("its register function returned");
  try {
    registrar.registerHooksFactory("table_reg_closed", [] { return nullptr; });
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("used after its register function returned"));
  }
  registrar.drop();
  EXPECT_TRUE(registrar.empty());
}

// The host belongs to the core: no registrar takes a backend for "cpu",
// whichever way it asks; the accelerator kinds built in (cuda...) stay open.
TEST(HooksTableTest, RegistrarRefusesTheHostTypeCpu) {
  Registrar registrar("plugin /x/libaccel_cpu.so");
  const auto refusal = [](auto&& call) {
    return testing::errorOf<InvalidArgument>(std::forward<decltype(call)>(call));
  };
  EXPECT_THAT(refusal([&] { (void)registrar.registerDeviceType("cpu"); }),
              HasSubstr("plugin /x/libaccel_cpu.so registers the device type 'cpu', "
                        "which is the host and belongs to the core"));
  EXPECT_THAT(refusal([&] {
                registrar.registerHooks(std::make_unique<TestHooks>(DeviceType::CPU, 1));
              }),
              HasSubstr("registerHooks(): plugin /x/libaccel_cpu.so registers the "
                        "device type 'cpu'"));
  EXPECT_THAT(
      refusal([&] { registrar.registerHooksFactory("cpu", [] { return nullptr; }); }),
      HasSubstr("registers the device type 'cpu'"));
  EXPECT_TRUE(registrar.empty());
  EXPECT_EQ(registrar.registerDeviceType("hpu"), DeviceType::HPU);
}

// The same rule for a program that registers directly, without a plugin's
// registrar: the process table and a table of its own refuse "cpu" too.
TEST(HooksTableTest, DirectRegistrationRefusesTheHostTypeCpu) {
  const auto refusal = [](auto&& call) {
    return testing::errorOf<InvalidArgument>(std::forward<decltype(call)>(call));
  };
  EXPECT_THAT(refusal([] {
                registerHooks(std::make_unique<TestHooks>(DeviceType::CPU, 1),
                              "a program");
              }),
              HasSubstr("registerHooks(): a program registers the device type 'cpu', "
                        "which is the host and belongs to the core"));
  EXPECT_THAT(refusal([] {
                registerHooksFactory(
                    "cpu", [] { return nullptr; }, RegistryPriority::Default,
                    "a program");
              }),
              HasSubstr("registerHooksFactory('cpu'): a program registers the device "
                        "type 'cpu'"));
  HooksTable table;
  EXPECT_THAT(refusal([&] {
                table.registerHooks(std::make_unique<TestHooks>(DeviceType::CPU, 1),
                                    "test");
              }),
              HasSubstr("registers the device type 'cpu'"));
  EXPECT_FALSE(isHooksRegistered(DeviceType::CPU));
  EXPECT_FALSE(table.isRegistered(DeviceType::CPU));
}

TEST(HooksTableTest, ForkStandInsReplaceOnlyStartedBackends) {
  HooksTable table;
  DeviceType started = registerDeviceType("table_fork_started");
  DeviceType idle = registerDeviceType("table_fork_idle");
  AcceleratorHooks& real_started =
      table.registerHooks(std::make_unique<TestHooks>(started, 2), "test");
  AcceleratorHooks& real_idle =
      table.registerHooks(std::make_unique<TestHooks>(idle, 1), "test");
  static DeviceType s_started;
  s_started = started;
  InitStartedProbe probe = [](const AcceleratorHooks& h) noexcept {
    return h.deviceType() == s_started;
  };
  // The stand-in answers the count the probes last gave (preparing it never
  // asks the backend, whose discovery may be running on another thread).
  EXPECT_EQ(real_started.deviceCount(), 2);
  table.prepareForkStandIns(probe);
  EXPECT_EQ(&table.get(started), &real_started);  // preparing changes nothing
  table.poisonStartedBackends(probe);
  EXPECT_TRUE(table.isPoisoned(started));
  EXPECT_FALSE(table.isPoisoned(idle));
  EXPECT_EQ(&table.get(idle), &real_idle);
  AcceleratorHooks& stand_in = table.get(started);
  EXPECT_NE(&stand_in, &real_started);
  EXPECT_TRUE(stand_in.isBuilt());
  EXPECT_FALSE(stand_in.isAvailable());
  EXPECT_EQ(stand_in.deviceCount(), 2);
  try {
    (void)stand_in.getCurrentDevice();
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.message(),
                HasSubstr("'table_fork_started' was initialised before fork()"));
  }
}

TEST(HooksTableTest, RegistrationAfterTheFirstLookupTakesEffect) {
  DeviceType type = registerDeviceType("table_late");
  AcceleratorHooks& before = getHooks(type);
  EXPECT_EQ(&before, &absentHooks(type));
  EXPECT_FALSE(before.isAvailable());

  AcceleratorHooks& registered =
      registerHooks(std::make_unique<TestHooks>(type, 2), "table test");
  EXPECT_EQ(&getHooks(type), &registered);
  EXPECT_NE(&getHooks(type), &before);
  EXPECT_TRUE(getHooks(type).isAvailable());
  EXPECT_EQ(getHooks(type).deviceCount(), 2);
  EXPECT_TRUE(isHooksRegistered(type));
  EXPECT_EQ(hooksOrigin(type), "table test");
  std::vector<DeviceType> types = registeredHooksTypes();
  EXPECT_NE(std::find(types.begin(), types.end(), type), types.end());
}

TEST(HooksTableTest, LookupsRacingARegistrationSeeAbsentOrRegisteredNeverNull) {
  HooksTable table;
  DeviceType type = registerDeviceType("table_race");
  std::atomic<AcceleratorHooks*> registered{nullptr};
  std::atomic<bool> saw_registered{false};
  std::thread reader([&] {
    for (;;) {
      // Once registerHooks has returned, every later lookup sees its object.
      AcceleratorHooks* expected = registered.load(std::memory_order_acquire);
      AcceleratorHooks* hooks = &table.get(type);
      if (expected != nullptr) {
        EXPECT_EQ(hooks, expected);
      }
      if (hooks != &table.absent(type)) {
        EXPECT_EQ(hooks->deviceType(), type);
        EXPECT_EQ(hooks->deviceCount(), 3);  // fully constructed when seen
        saw_registered = true;
        return;
      }
    }
  });
  registered.store(&table.registerHooks(std::make_unique<TestHooks>(type, 3), "race"),
                   std::memory_order_release);
  reader.join();
  EXPECT_TRUE(saw_registered);
}

TEST(HooksTableTest, DuplicateRegisterHooksThrowsNamingTypeAndFirstOrigin) {
  HooksTable table;
  DeviceType type = registerDeviceType("table_dup");
  AcceleratorHooks& first =
      table.registerHooks(std::make_unique<TestHooks>(type, 1), "first lib");
  try {
    table.registerHooks(std::make_unique<TestHooks>(type, 1), "second lib");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("hooks for 'table_dup' are already registered"));
    EXPECT_THAT(e.message(), HasSubstr("from first lib"));
  }
  EXPECT_EQ(&table.get(type), &first);
  EXPECT_EQ(table.origin(type), "first lib");
}

TEST(HooksTableTest, RegisterHooksRejectsNullAndUnregisteredTypes) {
  EXPECT_THROW(registerHooks(nullptr), InvalidArgument);
  try {
    registerHooks(
        std::make_unique<TestHooks>(static_cast<DeviceType>(kMaxDeviceTypes - 2), 1));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("was never registered"));
  }
}

// Runs `look_up` on `threads` threads released at once; returns what each got.
std::vector<AcceleratorHooks*> lookUpAtOnce(
    int threads, const std::function<AcceleratorHooks&()>& look_up) {
  std::atomic<int> ready{0};
  std::vector<AcceleratorHooks*> seen(static_cast<std::size_t>(threads), nullptr);
  std::vector<std::thread> running;
  for (int i = 0; i < threads; ++i) {
    running.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      seen[static_cast<std::size_t>(i)] = &look_up();
    });
  }
  for (std::thread& t : running) t.join();
  return seen;
}

TEST(HooksTableTest, FactoryHooksAreCreatedLazilyOnceAcrossThreads) {
  DeviceType type = *findDeviceType("table_factory");
  EXPECT_TRUE(isHooksRegistered(type));
  EXPECT_THAT(hooksOrigin(type), HasSubstr("not created yet"));
  EXPECT_EQ(g_factory_constructions.load(), 0);

  const std::vector<AcceleratorHooks*> seen =
      lookUpAtOnce(8, [&]() -> AcceleratorHooks& { return getHooks(type); });
  EXPECT_EQ(g_factory_constructions.load(), 1);
  for (AcceleratorHooks* hooks : seen) EXPECT_EQ(hooks, seen[0]);
  EXPECT_NE(dynamic_cast<FactoryHooks*>(seen[0]), nullptr);
  EXPECT_THAT(hooksOrigin(type), StartsWith("static registration in "));
  EXPECT_THAT(hooksOrigin(type), Not(HasSubstr("not created yet")));
  // A registered factory's type cannot also take a direct registration.
  EXPECT_THROW(registerHooks(std::make_unique<TestHooks>(type, 1)), InvalidArgument);
  for (const std::string& error : staticRegistrationErrors()) {
    EXPECT_THAT(error, Not(HasSubstr("table_factory")));
  }
}

// A thread that found the slot empty and reached the table's lock just after
// another thread's factory run installed the hooks (and cleared the factory)
// once got the absent hooks. Many fresh tables make that window likely.
TEST(HooksTableTest, ThreadsRacingAFactoryRunNeverSeeTheAbsentHooks) {
  constexpr int kRounds = 300;
  constexpr int kThreads = 4;
  for (int round = 0; round < kRounds; ++round) {
    HooksTable table;
    table.registerHooksFactory(
        "table_race",
        [] { return std::make_unique<TestHooks>(*findDeviceType("table_race"), 1); },
        "race test");
    const DeviceType type = *findDeviceType("table_race");
    const std::vector<AcceleratorHooks*> seen =
        lookUpAtOnce(kThreads, [&]() -> AcceleratorHooks& { return table.get(type); });
    for (AcceleratorHooks* hooks : seen) {
      ASSERT_NE(hooks, &table.absent(type)) << "round " << round;
      ASSERT_EQ(hooks, seen[0]) << "round " << round;
    }
  }
}

TEST(HooksTableTest, FailingFactoryLeavesAbsentHooksThatExplainAndRetries) {
  HooksTable table;
  static std::atomic<int> attempts{0};
  static std::atomic<bool> fail{true};
  table.registerHooksFactory(
      "table_flaky",
      []() -> std::unique_ptr<AcceleratorHooks> {
        attempts.fetch_add(1);
        if (fail.load()) throw DeviceError("driver exploded");
        return std::make_unique<TestHooks>(*findDeviceType("table_flaky"), 1);
      },
      "flaky driver");
  DeviceType type = *findDeviceType("table_flaky");
  AcceleratorHooks& hooks = table.get(type);
  EXPECT_EQ(&hooks, &table.absent(type));
  EXPECT_EQ(attempts.load(), 1);
  std::string message = absentError([&] { hooks.init(); });
  EXPECT_THAT(message, HasSubstr("'table_flaky' is registered (from flaky driver)"));
  EXPECT_EQ(table.creationError(type), "driver exploded");
  EXPECT_THAT(message, HasSubstr("creating its hooks failed: driver exploded"));
  EXPECT_THAT(message, Not(HasSubstr("loadBackend")));

  fail = false;
  AcceleratorHooks& retried = table.get(type);
  EXPECT_EQ(attempts.load(), 2);
  EXPECT_NE(&retried, &table.absent(type));
  EXPECT_TRUE(retried.isAvailable());
}

TEST(HooksTableTest, FactoryReturningNullOrAnotherTypeIsReported) {
  HooksTable table;
  table.registerHooksFactory(
      "table_null_factory", [] { return std::unique_ptr<AcceleratorHooks>(); }, "test");
  DeviceType null_type = *findDeviceType("table_null_factory");
  EXPECT_EQ(&table.get(null_type), &table.absent(null_type));
  EXPECT_THAT(absentError([&] { table.get(null_type).init(); }),
              HasSubstr("the factory returned null"));

  table.registerHooksFactory(
      "table_wrong_factory",
      [] {
        return std::unique_ptr<AcceleratorHooks>(
            std::make_unique<TestHooks>(registerDeviceType("table_other"), 1));
      },
      "test");
  DeviceType wrong_type = *findDeviceType("table_wrong_factory");
  EXPECT_EQ(&table.get(wrong_type), &table.absent(wrong_type));
  EXPECT_THAT(absentError([&] { table.get(wrong_type).init(); }),
              HasSubstr("built hooks for 'table_other' instead"));
}

TEST(HooksTableTest, DuplicateFactoryAtEqualPriorityThrows) {
  auto factory = [] { return std::unique_ptr<AcceleratorHooks>(); };
  registerHooksFactory("table_dup_factory", factory, RegistryPriority::Default, "first");
  EXPECT_THROW(registerHooksFactory("table_dup_factory", factory), DuplicateRegistration);
  EXPECT_NO_THROW(
      registerHooksFactory("table_dup_factory", factory, RegistryPriority::Preferred));
  EXPECT_TRUE(isHooksRegistered(*findDeviceType("table_dup_factory")));
}

TEST(HooksTableTest, StaticRegistrationErrorsAreKeptNotFatal) {
  auto factory = [] { return std::unique_ptr<AcceleratorHooks>(); };
  ::testing::internal::CaptureStderr();
  { HooksRegistration bad_name("Bad Name", factory); }
  { HooksRegistration first("table_static_dup", factory); }
  { HooksRegistration second("table_static_dup", factory); }
  std::string printed = ::testing::internal::GetCapturedStderr();
  std::vector<std::string> errors = staticRegistrationErrors();
  ASSERT_GE(errors.size(), 2u);
  const std::string& bad = errors[errors.size() - 2];
  const std::string& dup = errors[errors.size() - 1];
  EXPECT_THAT(bad, HasSubstr("static registration of 'Bad Name' failed"));
  EXPECT_THAT(dup, HasSubstr("static registration of 'table_static_dup' failed"));
  EXPECT_THAT(dup, HasSubstr("already has a hooks factory"));
  EXPECT_THAT(printed, HasSubstr("static registration of 'Bad Name' failed"));
}

}  // namespace
}  // namespace accel
