// Turns the cases of every group into GoogleTest tests, one set per device
// type, and runs each case against the backend registered when it runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <typeinfo>

#include "accel/conformance.h"
#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "conformance_case.h"

namespace accel::conformance {
namespace conformance_suite {
namespace {

using detail::ConformanceCase;
using detail::hookName;
using detail::thrownText;

// Every case, group by group: the order tests run in. The fork discovery
// cases come first, so that they see a backend discovered but not yet
// initialised (they create no context in this process: only their children
// try to use the backend). Low comes next so that its check that probes
// create no device context sees devices that no other case has touched yet.
// The fork cases that need an initialised device come last.
const std::vector<ConformanceCase>& allCases() {
  static const std::vector<ConformanceCase>* cases = [] {
    auto* out = new std::vector<ConformanceCase>();  // never destroyed, like the tests
    for (auto group :
         {detail::forkDiscoveryCases, detail::lowCases, detail::highCases,
          detail::deviceCases, detail::streamsCases, detail::eventsCases,
          detail::memoryCases, detail::memoryHistoryCases, detail::graphsCases,
          detail::copiesCases, detail::fillCases, detail::forkDeviceCases}) {
      for (ConformanceCase& c : group()) out->push_back(std::move(c));
    }
    return out;
  }();
  return *cases;
}

CaseInfo infoOf(const ConformanceCase& c) {
  CaseInfo info;
  info.group = c.group;
  info.name = c.name;
  info.needsDevice = c.needsDevice;
  info.hooks = c.hooks;
  return info;
}

std::string joinHooks(const ConformanceCase& c) {
  std::string out;
  for (HookId hook : c.hooks) {
    if (!out.empty()) out += ", ";
    out += hookName(hook);
  }
  return out;
}

// "streams.QueryIsTrueAfterSynchronize": how reports name a case.
std::string caseLabel(const ConformanceCase& c) {
  return std::string(hookGroupName(c.group)) + "." + c.name;
}

// Runs a registration's setUp once; every test of the registration sees the
// same outcome.
class SetUpOnce {
 public:
  explicit SetUpOnce(std::function<void()> fn) : fn_(std::move(fn)) {}
  // The error text of the set-up, empty when it succeeded.
  const std::string& run() {
    std::call_once(once_, [this] {
      try {
        fn_();
      } catch (const std::exception& e) {
        error_ = thrownText(e);
      } catch (...) {
        error_ = "a non-standard exception";
      }
    });
    return error_;
  }

 private:
  std::function<void()> fn_;
  std::once_flag once_;
  std::string error_;
};

struct Registrations {
  std::mutex mutex;
  std::set<std::string> suites;                         // "<prefix>/<type>"
  std::map<std::string, TestDescription> descriptions;  // "<suite>.<test>"
};

Registrations& registrations() {
  static auto* r = new Registrations();  // tests may be described until exit
  return *r;
}

class ConformanceTest : public ::testing::Test {
 public:
  ConformanceTest(DeviceType type, const ConformanceCase& testCase,
                  std::shared_ptr<SetUpOnce> setUp)
      : type_(type), case_(testCase), setUp_(std::move(setUp)) {}

  void TestBody() override {
    std::string name(deviceTypeName(type_));
    RecordProperty("backend", name);
    RecordProperty("group", std::string(hookGroupName(case_.group)));
    RecordProperty("hooks", joinHooks(case_));
    // Every failure of this case names it, on this thread and (through
    // inNewThread) on the threads the case starts.
    detail::runningCaseLabel() = "conformance case " + caseLabel(case_) + " on '" + name +
                                 "' (hooks: " + joinHooks(case_) + ")";
    SCOPED_TRACE(detail::runningCaseLabel());
    runCase(name);
    detail::runningCaseLabel().clear();
  }

 private:
  void runCase(const std::string& name) {
    if (setUp_ != nullptr) {
      const std::string& error = setUp_->run();
      ASSERT_TRUE(error.empty())
          << "the set-up of the conformance tests for '" << name << "' failed: " << error;
    }
    AcceleratorHooks& hooks = getHooks(type_);
    if (&hooks == &absentHooks(type_)) {
      std::string why;
      try {
        (void)hooks.getCurrentDevice();
      } catch (const std::exception& e) {
        why = thrownText(e);
      }
      FAIL() << "no backend is registered for '" << name
             << "' when its conformance tests run; register or load it first. " << why;
    }
    if (!hooks.supports(case_.group)) {
      checkUndeclaredGroup(hooks);
      return;
    }
    if (case_.needsDevice) {
      if (!hooks.isAvailable()) {
        GTEST_SKIP() << "'" << name << "' is not available here ("
                     << hookName(HookId::isAvailable)
                     << "() is false); the case needs a device";
      }
      try {
        globalContext().lazyInitDevice(type_);
      } catch (const std::exception& e) {
        detail::blame(HookId::init);
        FAIL() << "expected the backend to initialise (Context::lazyInitDevice('" << name
               << "') runs " << hookInfo(HookId::init).impl
               << "); it threw: " << thrownText(e);
      }
    }
    try {
      case_.body(hooks);
    } catch (const HookNotImplemented& e) {
      // The backend declares the group but left a hook out: blame that hook,
      // whichever hook the case is about.
      const HookInfo& missing = hookInfo(e.hook());
      detail::blame(e.hook());
      ADD_FAILURE() << "expected " << missing.name << "() to work on '" << name
                    << "', which declares the '" << hookGroupName(missing.group)
                    << "' group; it is not implemented: override " << missing.impl
                    << ". The hook threw: " << thrownText(e);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected the hooks " << joinHooks(case_)
                    << " to succeed here; one of them threw " << typeid(e).name() << ": "
                    << thrownText(e);
    } catch (...) {
      ADD_FAILURE() << "expected the hooks " << joinHooks(case_)
                    << " to succeed here; one of them threw a non-standard exception";
    }
  }

  // A backend that does not declare the group must refuse each of the
  // group's hooks this case uses with NotSupported naming backend and group.
  void checkUndeclaredGroup(AcceleratorHooks& hooks) {
    std::string backend = "'" + std::string(hooks.name()) + "'";
    std::string group = "'" + std::string(hookGroupName(case_.group)) + "'";
    for (HookId hook : case_.hooks) {
      const HookInfo& info = hookInfo(hook);
      // Hooks of other groups that the case also uses are checked by their own cases.
      if (info.group != case_.group) continue;
      bool called = true;
      auto result = detail::throwsContaining<NotSupported>(
          [&] { called = detail::callHookWithPlaceholders(hooks, hook); },
          {backend, group, info.name});
      if (!called) continue;
      if (!result) detail::blame(hook);
      EXPECT_TRUE(result) << "expected " << info.name << "() on " << backend
                          << ", which does not declare the " << group
                          << " group, to throw NotSupported naming the backend and the "
                             "group (the base class does this unless the backend "
                             "overrides "
                          << info.impl << " or failUnsupported); it " << result.message();
    }
  }

  DeviceType type_;
  const ConformanceCase& case_;
  std::shared_ptr<SetUpOnce> setUp_;
};

}  // namespace
}  // namespace conformance_suite

std::string& detail::runningCaseLabel() {
  static auto* label = new std::string();  // tests run one at a time
  return *label;
}

void registerConformanceTests(const std::vector<DeviceType>& types,
                              const SuiteOptions& options) {
  using namespace conformance_suite;
  ACCEL_CHECK(!options.prefix.empty(), InvalidArgument,
              "registerConformanceTests(): the prefix is empty; pass a name such as "
              "\"Conformance\"");
  auto setUp = options.setUp ? std::make_shared<SetUpOnce>(options.setUp) : nullptr;
  Registrations& r = registrations();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (DeviceType type : types) {
    std::string typeName(deviceTypeName(type));
    ACCEL_CHECK(
        isValidDeviceType(type), InvalidArgument,
        "registerConformanceTests(): device type id ", toIndex(type),
        " was never registered; register it (registerDeviceType) or pass its name");
    std::string base = options.prefix + "/" + typeName;
    ACCEL_CHECK(r.suites.insert(base).second, InvalidArgument,
                "registerConformanceTests(): the tests for '", typeName,
                "' with prefix '", options.prefix,
                "' are already registered; use another prefix");
    for (const ConformanceCase& c : allCases()) {
      std::string suite = base + "/" + std::string(hookGroupName(c.group));
      ::testing::RegisterTest(suite.c_str(), c.name, nullptr, typeName.c_str(), __FILE__,
                              __LINE__, [type, &c, setUp]() -> ConformanceTest* {
                                return new ConformanceTest(type, c, setUp);
                              });
      r.descriptions.emplace(suite + "." + c.name, TestDescription{type, infoOf(c)});
    }
  }
}

void registerConformanceTests(const std::vector<std::string>& typeNames,
                              const SuiteOptions& options) {
  std::vector<DeviceType> types;
  types.reserve(typeNames.size());
  for (const std::string& name : typeNames) types.push_back(registerDeviceType(name));
  registerConformanceTests(types, options);
}

std::string testFilterFor(DeviceType type, std::string_view prefix) {
  return std::string(prefix) + "/" + std::string(deviceTypeName(type)) + "/*";
}

std::vector<CaseInfo> conformanceCases() {
  using namespace conformance_suite;
  std::vector<CaseInfo> out;
  for (const ConformanceCase& c : allCases()) out.push_back(infoOf(c));
  return out;
}

std::optional<TestDescription> describeTest(const ::testing::TestInfo& info) {
  using namespace conformance_suite;
  Registrations& r = registrations();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.descriptions.find(std::string(info.test_suite_name()) + "." + info.name());
  if (it == r.descriptions.end()) return std::nullopt;
  return it->second;
}

bool detail::registerStatically(const char* prefix,
                                std::vector<std::string> typeNames) noexcept {
  try {
    SuiteOptions options;
    options.prefix = prefix;
    registerConformanceTests(typeNames, options);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accelhooks: ACCEL_INSTANTIATE_CONFORMANCE(%s) failed: %s\n",
                 prefix, thrownText(e).c_str());
    return false;
  }
}

}  // namespace accel::conformance
