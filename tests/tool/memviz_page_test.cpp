// The memviz page's HTML in-process: whatever strings a snapshot holds, the
// data element cannot be ended, commented out or turned into a script by
// them, and the data reads back as the model it was written from.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "memviz_page.h"

namespace accel::tool {
namespace {

constexpr std::string_view kDataOpen =
    R"(<script type="application/json" id="memviz-data">)";

std::size_t count(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The text between the data element's tags.
std::string dataOf(const std::string& page) {
  const std::size_t open = page.find(kDataOpen);
  if (open == std::string::npos) return {};
  const std::size_t from = open + kDataOpen.size();
  return page.substr(from, page.find("</script", from) - from);
}

nlohmann::json modelWithStrings(const std::vector<std::string>& strings) {
  return nlohmann::json{{"title", strings.front()},
                        {"device", 0},
                        {"strings", strings},
                        {"frames", nlohmann::json::array()},
                        {"stacks", nlohmann::json::array({nlohmann::json::array()})},
                        {"states", nlohmann::json::array()},
                        {"segments", nlohmann::json::array()},
                        {"actions", nlohmann::json::array()},
                        {"trace", nlohmann::json::object()}};
}

TEST(MemvizPage, HostileStringsCannotEndOrCommentOutTheDataElement) {
  const std::vector<std::string> hostile{
      "<!--<script>",
      "</script><script>document.title='pwned'</script>",
      "</SCRIPT >",
      "<!-- unterminated comment",
      "a & b > c <b>bold</b>",
      "line\xe2\x80\xa8separator and paragraph\xe2\x80\xa9separator",
      "]]> --> <![CDATA["};
  const nlohmann::json model = modelWithStrings(hostile);
  const std::string page = renderMemvizPage(model);

  const std::string data = dataOf(page);
  ASSERT_FALSE(data.empty()) << "no data element";
  // Nothing in the data can start a tag, a comment or an entity.
  for (char c : {'<', '>', '&'}) {
    EXPECT_EQ(data.find(c), std::string::npos) << "raw '" << c << "' in the data";
  }
  EXPECT_EQ(data.find("\xe2\x80\xa8"), std::string::npos) << "raw U+2028 in the data";
  EXPECT_EQ(data.find("\xe2\x80\xa9"), std::string::npos) << "raw U+2029 in the data";
  EXPECT_NE(data.find("\\u2028"), std::string::npos);
  // The page has three script elements (data, layout, drawing) and no comment.
  EXPECT_EQ(count(page, "</script"), 3u);
  EXPECT_EQ(count(page, "<script"), 3u);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  // The escapes are the same JSON value.
  EXPECT_EQ(nlohmann::json::parse(data), model);
}

TEST(MemvizPage, InvalidUtf8BecomesTheReplacementCharacter) {
  const nlohmann::json model = modelWithStrings({"cut \xe2\x80", "bad \xff byte"});
  const std::string data = dataOf(renderMemvizPage(model));
  const nlohmann::json back = nlohmann::json::parse(data);
  EXPECT_EQ(back["strings"][1], "bad \xef\xbf\xbd byte");
}

}  // namespace
}  // namespace accel::tool
