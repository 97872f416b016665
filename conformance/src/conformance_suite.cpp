// Turns the cases of every group into GoogleTest tests, one set per device
// type, and runs each case against the backend registered when it runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "accel/conformance.h"
#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "conformance_case.h"

namespace accel::conformance {
namespace {

using detail::ConformanceCase;

// Every case, group by group: the order tests run in. Low comes first so
// that its check that probes create no device context sees devices that no
// other case has touched yet.
const std::vector<ConformanceCase>& allCases() {
  static const std::vector<ConformanceCase>* cases = [] {
    auto* out = new std::vector<ConformanceCase>();  // never destroyed, like the tests
    for (auto group : {detail::lowCases, detail::highCases, detail::deviceCases,
                       detail::streamsCases, detail::eventsCases, detail::memoryCases,
                       detail::memoryHistoryCases, detail::graphsCases}) {
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
  for (std::string_view hook : c.hooks) info.hooks.emplace_back(hook);
  return info;
}

std::string joinHooks(const ConformanceCase& c) {
  std::string out;
  for (std::string_view hook : c.hooks) {
    if (!out.empty()) out += ", ";
    out += hook;
  }
  return out;
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
        error_ = e.what();
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
    checkHookNames();

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
        why = e.what();
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
        GTEST_SKIP() << "'" << name
                     << "' is not available here (isAvailable() is false); the case "
                        "needs a device";
      }
      try {
        globalContext().lazyInitDevice(type_);
      } catch (const std::exception& e) {
        FAIL() << "init(): Context::lazyInitDevice('" << name << "') threw: " << e.what();
      }
    }
    try {
      case_.body(hooks);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception from one of the hooks " << joinHooks(case_)
                    << ": " << e.what();
    } catch (...) {
      ADD_FAILURE() << "unexpected non-standard exception from one of the hooks "
                    << joinHooks(case_);
    }
  }

 private:
  // A backend that does not declare the group must refuse each of the
  // group's hooks this case uses with NotSupported naming backend and group.
  void checkUndeclaredGroup(AcceleratorHooks& hooks) {
    std::string backend = "'" + std::string(hooks.name()) + "'";
    std::string group = "'" + std::string(hookGroupName(case_.group)) + "'";
    for (std::string_view hook : case_.hooks) {
      // Hooks of other groups that the case also uses are checked by their own cases.
      if (detail::hookGroupOf(hook) != case_.group) continue;
      bool called = true;
      auto result = detail::throwsContaining<NotSupported>(
          [&] { called = detail::callHookWithPlaceholders(hooks, hook); },
          {backend, group, hook});
      if (!called) continue;
      EXPECT_TRUE(result) << hook << "() on " << backend
                          << ", which does not declare the " << group
                          << " group, must throw NotSupported naming the backend "
                          << "and the group";
    }
  }

  // A hook name the suite does not know is a typo in a case: say so rather
  // than skip its undeclared-group check silently.
  void checkHookNames() {
    for (std::string_view hook : case_.hooks) {
      EXPECT_TRUE(detail::hookGroupOf(hook).has_value())
          << "conformance suite bug: case " << case_.name << " lists unknown hook "
          << hook;
    }
  }

  DeviceType type_;
  const ConformanceCase& case_;
  std::shared_ptr<SetUpOnce> setUp_;
};

}  // namespace

void registerConformanceTests(const std::vector<DeviceType>& types,
                              const SuiteOptions& options) {
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
  std::vector<CaseInfo> out;
  for (const ConformanceCase& c : allCases()) out.push_back(infoOf(c));
  return out;
}

std::optional<TestDescription> describeTest(const ::testing::TestInfo& info) {
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
                 prefix, e.what());
    return false;
  }
}

}  // namespace accel::conformance
