// No hook name is written as a string literal outside the hook catalogue.
//
// A hook's name lives in include/accel/hook_catalogue.h; everything else
// writes hookInfo(HookId::x).name, which the compiler checks. This test reads
// every C/C++ and Python source under the project's source directories and
// fails with file:line for each string literal that contains a hook name as a
// whole word ("getNewStream", "getNewStream(): ...", "broken hook
// getNewStream"). "init" is also an ordinary word ("init failed"), so it
// counts only as the whole literal or written as a call, "init(". Comments
// and Python docstrings are prose, not literals, and are not checked.
//
// The tree is found through ACCEL_SOURCE_DIR, the directory CMake configured
// from, so the test passes wherever the checkout lives; reported paths are
// relative to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "accel/hook_catalogue.h"

namespace accel {
namespace {

namespace fs = std::filesystem;

// Where sources live (DESIGN.md's layout); docs/ is checked by the table test.
constexpr std::string_view kSourceDirs[] = {"include", "src",   "backends", "conformance",
                                            "tools",   "tests", "examples", "python"};

// The one file that writes the names.
constexpr std::string_view kCatalogue = "include/accel/hook_catalogue.h";
// The plugin adapter's headers are compiled into plugins as C++17 and link
// nothing of the core, so they cannot read the catalogue (C++20): their
// messages name the accel::adapter::Backend member a plugin overrides
// ("the backend declared the group of queryStream but does not implement
// it"), whose names are the hooks'.
constexpr std::string_view kPluginAdapterDir = "include/accel/adapter/";

struct Literal {
  int line;
  std::string text;  // the contents, without quotes or prefix
};

bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_';
}

// A position in a source text that keeps count of lines.
struct Cursor {
  std::string_view src;
  std::size_t i = 0;
  int line = 1;

  [[nodiscard]] bool done() const { return i >= src.size(); }
  [[nodiscard]] char at(std::size_t offset = 0) const {
    return i + offset < src.size() ? src[i + offset] : '\0';
  }
  void advanceTo(std::size_t to) {
    for (; i < to && i < src.size(); ++i) line += src[i] == '\n';
  }
  // Moves past the next occurrence of `text`, or to the end.
  void skipPast(std::string_view text) {
    std::size_t end = src.find(text, i);
    advanceTo(end == std::string_view::npos ? src.size() : end + text.size());
  }
  // At an opening quote: the contents up to the closing one (escapes kept,
  // a line end ends it too), moving past it.
  std::string readQuoted() {
    const char quote = at();
    std::string text;
    std::size_t j = i + 1;
    while (j < src.size() && src[j] != quote && src[j] != '\n') {
      if (src[j] == '\\' && j + 1 < src.size()) text += src[j++];
      text += src[j++];
    }
    advanceTo(j + 1);
    return text;
  }
};

// The string literals of C or C++ source: skips comments and character
// literals, understands escapes and raw strings R"delim(...)delim".
std::vector<Literal> cppStringLiterals(std::string_view src) {
  std::vector<Literal> out;
  Cursor cur{src};
  while (!cur.done()) {
    const char c = cur.at();
    const int line = cur.line;
    if (c == '/' && cur.at(1) == '/') {
      cur.skipPast("\n");
    } else if (c == '/' && cur.at(1) == '*') {
      cur.skipPast("*/");
    } else if (c == 'R' && cur.at(1) == '"') {
      // Identifiers are stepped over whole below, so an R here starts a token.
      std::size_t open = src.find('(', cur.i + 2);
      if (open == std::string_view::npos) break;
      const std::string close =
          ")" + std::string(src.substr(cur.i + 2, open - cur.i - 2)) + "\"";
      std::size_t end = src.find(close, open + 1);
      if (end == std::string_view::npos) end = src.size();
      out.push_back({line, std::string(src.substr(open + 1, end - open - 1))});
      cur.advanceTo(std::min(src.size(), end + close.size()));
    } else if (c == '"' || c == '\'') {
      std::string text = cur.readQuoted();
      if (c == '"') out.push_back({line, std::move(text)});
    } else if (isIdentifierChar(c)) {
      // An identifier or a number, whole, so that a digit separator (1'000)
      // is not taken for a character literal. An encoding prefix (u8, L) ends
      // here too, before its quote; "R" alone stays for the raw string above.
      const bool number = c >= '0' && c <= '9';
      std::size_t j = cur.i;
      while (j < src.size() && (isIdentifierChar(src[j]) ||
                                (number && src[j] == '\'' && j + 1 < src.size() &&
                                 isIdentifierChar(src[j + 1])))) {
        const std::string_view prefix = src.substr(cur.i, j - cur.i);
        if (!number && src[j] == 'R' && j + 1 < src.size() && src[j + 1] == '"' &&
            (prefix == "u8" || prefix == "u" || prefix == "U" || prefix == "L")) {
          break;
        }
        ++j;
      }
      cur.advanceTo(j);
    } else {
      cur.advanceTo(cur.i + 1);
    }
  }
  return out;
}

// The string literals of Python source, without comments and triple-quoted
// strings (docstrings are documentation).
std::vector<Literal> pythonStringLiterals(std::string_view src) {
  std::vector<Literal> out;
  Cursor cur{src};
  while (!cur.done()) {
    const char c = cur.at();
    const int line = cur.line;
    if (c == '#') {
      cur.skipPast("\n");
    } else if ((c == '"' || c == '\'') && cur.at(1) == c && cur.at(2) == c) {
      cur.advanceTo(cur.i + 3);
      cur.skipPast(std::string(3, c));
    } else if (c == '"' || c == '\'') {
      out.push_back({line, cur.readQuoted()});
    } else {
      cur.advanceTo(cur.i + 1);
    }
  }
  return out;
}

// The hook a literal names, if any.
std::optional<HookId> hookNamedIn(std::string_view text) {
  for (const HookInfo& hook : kHookCatalogue) {
    for (std::size_t at = text.find(hook.name); at != std::string_view::npos;
         at = text.find(hook.name, at + 1)) {
      std::size_t end = at + hook.name.size();
      bool whole = (at == 0 || !isIdentifierChar(text[at - 1])) &&
                   (end == text.size() || !isIdentifierChar(text[end]));
      if (!whole) continue;
      if (hook.id == HookId::init &&
          !(text == hook.name || (end < text.size() && text[end] == '('))) {
        continue;
      }
      return hook.id;
    }
  }
  return std::nullopt;
}

bool isCppSource(const fs::path& path) {
  static const std::string_view kExtensions[] = {".h",  ".hpp", ".cpp",
                                                 ".cc", ".cu",  ".cuh"};
  std::string ext = path.extension().string();
  return std::find(std::begin(kExtensions), std::end(kExtensions), ext) !=
         std::end(kExtensions);
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

struct Finding {
  std::string file;  // relative to the source dir
  int line;
  std::string literal;
  HookId hook;
};

std::vector<Finding> scanTree(const fs::path& root) {
  std::vector<Finding> out;
  for (std::string_view dir : kSourceDirs) {
    fs::path top = root / dir;
    if (!fs::is_directory(top)) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(top)) {
      if (!entry.is_regular_file()) continue;
      const fs::path& path = entry.path();
      bool python = path.extension() == ".py";
      if (!python && !isCppSource(path)) continue;
      std::string relative = fs::relative(path, root).generic_string();
      if (relative == kCatalogue) continue;
      if (relative.rfind(kPluginAdapterDir, 0) == 0) continue;
      std::string source = readFile(path);
      for (const Literal& literal :
           python ? pythonStringLiterals(source) : cppStringLiterals(source)) {
        if (std::optional<HookId> hook = hookNamedIn(literal.text)) {
          out.push_back({relative, literal.line, literal.text, *hook});
        }
      }
    }
  }
  return out;
}

TEST(HookNameLiterals, ScannerFindsNamesInLiteralsButNotInCommentsOrIdentifiers) {
  const std::string name(hookInfo(HookId::getNewStream).name);
  const std::string source =
      "// " + name + " in a comment\n/* " + name + " */ int " + name +
      "Impl = 1'000;\n"
      "auto a = \"fine\", b = \"see " +
      name +
      "()\";\n"
      "auto c = R\"x(" +
      name + ")x\"; char q = '\"';\n" + "auto d = u8R\"(" + name + ")\"; int Rx = 0;\n";
  std::vector<Literal> literals = cppStringLiterals(source);
  std::vector<std::pair<int, bool>> seen;
  for (const Literal& l : literals)
    seen.emplace_back(l.line, hookNamedIn(l.text).has_value());
  EXPECT_EQ(seen, (std::vector<std::pair<int, bool>>{
                      {3, false}, {3, true}, {4, true}, {5, true}}));
  EXPECT_FALSE(hookNamedIn(name + "Impl").has_value());
  const std::string init(hookInfo(HookId::init).name);
  EXPECT_TRUE(hookNamedIn(init).has_value());
  EXPECT_TRUE(hookNamedIn("openreg " + init + "(): failed").has_value());
  EXPECT_FALSE(hookNamedIn(init + " failed").has_value()) << "the word, not the hook";
  std::vector<Literal> python = pythonStringLiterals("# " + name + "\n\"\"\"" + name +
                                                     "\"\"\"\nx = '" + name + "'\n");
  ASSERT_EQ(python.size(), 1u);
  EXPECT_EQ(python[0].line, 3);
}

TEST(HookNameLiterals, NoHookNameIsWrittenAsAStringLiteralOutsideTheCatalogue) {
  const fs::path root = ACCEL_SOURCE_DIR;
  ASSERT_TRUE(fs::is_regular_file(root / std::string(kCatalogue)))
      << "ACCEL_SOURCE_DIR does not point at the source tree: " << root;
  std::ostringstream report;
  for (const Finding& f : scanTree(root)) {
    report << f.file << ":" << f.line << ": \"" << f.literal << "\" names the hook "
           << hookInfo(f.hook).name
           << "; write hookInfo(HookId::" << hookInfo(f.hook).name << ").name instead\n";
  }
  EXPECT_TRUE(report.str().empty()) << report.str();
}

}  // namespace
}  // namespace accel
