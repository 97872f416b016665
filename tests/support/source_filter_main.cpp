// The main of a test group (tests/CMakeLists.txt, accel_add_test_group): one
// program compiled from several test files in unity batches, where each file
// was a program of its own. GoogleTest's main, plus two flags:
//
//   --accel_sources=a_test.cpp,b_test.cpp
//       runs only the cases written in these files (their base names), and
//       of those only what --gtest_filter (or GTEST_FILTER) lets through; so
//       a file's cases still run in a process of their own, as when the file
//       was a program. A named file with no case in the program is an error.
//   --accel_expect_sources=a_test.cpp,b_test.cpp,...
//       runs nothing; fails, naming each case, when a case of the program was
//       written in a file not in the list (a case no per-file run would run).
//
// Without either flag the program runs as GoogleTest's main would.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kSourcesFlag = "--accel_sources=";
constexpr std::string_view kExpectFlag = "--accel_expect_sources=";

std::string_view baseName(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::set<std::string, std::less<>> splitList(std::string_view list, char separator) {
  std::set<std::string, std::less<>> items;
  while (!list.empty()) {
    const auto end = list.find(separator);
    const auto item = list.substr(0, end);
    if (!item.empty()) {
      items.emplace(item);
    }
    if (end == std::string_view::npos) {
      break;
    }
    list.remove_prefix(end + 1);
  }
  return items;
}

// GoogleTest's pattern: '*' any run of characters, '?' one character.
bool globMatches(std::string_view pattern, std::string_view name) {
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_name = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_name = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++star_name;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

bool anyMatches(const std::set<std::string, std::less<>>& patterns,
                std::string_view name) {
  for (const auto& pattern : patterns) {
    if (globMatches(pattern, name)) {
      return true;
    }
  }
  return false;
}

// GoogleTest's filter, split once: positive patterns, then '-' and negative
// ones; no positive pattern means every case.
class GtestFilter {
 public:
  explicit GtestFilter(std::string_view filter) {
    const auto dash = filter.find('-');
    positive_ = splitList(filter.substr(0, dash), ':');
    if (dash != std::string_view::npos)
      negative_ = splitList(filter.substr(dash + 1), ':');
  }

  bool letsThrough(std::string_view name) const {
    return (positive_.empty() || anyMatches(positive_, name)) &&
           !anyMatches(negative_, name);
  }

 private:
  std::set<std::string, std::less<>> positive_;
  std::set<std::string, std::less<>> negative_;
};

template <typename Visit>
void forEachCase(Visit&& visit) {
  const auto* unit = ::testing::UnitTest::GetInstance();
  for (int s = 0; s < unit->total_test_suite_count(); ++s) {
    const auto* suite = unit->GetTestSuite(s);
    for (int t = 0; t < suite->total_test_count(); ++t) {
      const auto* info = suite->GetTestInfo(t);
      visit(std::string(info->test_suite_name()) + "." + info->name(),
            baseName(info->file()));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string sources_flag;
  std::string expect_flag;
  bool has_sources = false;
  bool has_expect = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, kSourcesFlag.size()) == kSourcesFlag) {
      sources_flag = arg.substr(kSourcesFlag.size());
      has_sources = true;
    } else if (arg.substr(0, kExpectFlag.size()) == kExpectFlag) {
      expect_flag = arg.substr(kExpectFlag.size());
      has_expect = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;

  if (has_expect) {
    const auto expected = splitList(expect_flag, ',');
    int outside = 0;
    forEachCase([&](const std::string& name, std::string_view file) {
      if (expected.find(file) == expected.end()) {
        std::fprintf(stderr,
                     "%s is written in %.*s, which no run of this program names\n",
                     name.c_str(), static_cast<int>(file.size()), file.data());
        ++outside;
      }
    });
    if (outside > 0) {
      std::fprintf(stderr,
                   "%d case(s) would not run: add their files to the group's TESTS "
                   "(tests/CMakeLists.txt, accel_add_test_group)\n",
                   outside);
      return 1;
    }
    std::printf("every case of this program is written in one of its %zu test files\n",
                expected.size());
    return 0;
  }

  if (has_sources) {
    const auto sources = splitList(sources_flag, ',');
    if (sources.empty()) {
      std::fprintf(
          stderr,
          "--accel_sources names no file: give test files, as a_test.cpp,b_test.cpp\n");
      return 1;
    }
    const GtestFilter filter(GTEST_FLAG_GET(filter));
    std::set<std::string, std::less<>> files_with_cases;
    std::string selected;
    forEachCase([&](const std::string& name, std::string_view file) {
      if (sources.find(file) == sources.end()) {
        return;
      }
      files_with_cases.emplace(file);
      if (filter.letsThrough(name)) {
        selected += name;
        selected += ':';
      }
    });
    for (const auto& source : sources) {
      if (files_with_cases.find(source) == files_with_cases.end()) {
        std::fprintf(stderr,
                     "--accel_sources: no case of this program is written in %s\n",
                     source.c_str());
        return 1;
      }
    }
    // Nothing let through: a filter that matches no case, as GoogleTest
    // takes it (runs nothing, passes).
    GTEST_FLAG_SET(filter, selected.empty() ? std::string("-*") : selected);
  }
  return RUN_ALL_TESTS();
}
