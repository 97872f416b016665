#include "memviz_page.h"

#include <stdexcept>
#include <string_view>

#include "script_safe_json.h"

#include "memviz_resources.h"  // generated from tools/memviz/ by cmake/embed_resources.cmake

namespace accel::tool {

std::string renderMemvizPage(const nlohmann::json& model) {
  // The template names its parts with @@NAME@@; filled in one pass over the
  // template so that nothing inserted is scanned again.
  const std::string_view page = resources::kMemvizPageHtml;
  std::string out;
  out.reserve(page.size() + resources::kMemvizPageCss.size() +
              resources::kMemvizLayoutJs.size() + resources::kMemvizPageJs.size());
  std::size_t at = 0;
  while (true) {
    const std::size_t open = page.find("@@", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = page.find("@@", open + 2);
    if (close == std::string_view::npos) {
      throw std::logic_error("memviz: page.html has an unclosed @@ placeholder");
    }
    out.append(page.substr(at, open - at));
    const std::string_view name = page.substr(open + 2, close - open - 2);
    if (name == "STYLE") {
      out.append(resources::kMemvizPageCss);
    } else if (name == "LAYOUT") {
      out.append(resources::kMemvizLayoutJs);
    } else if (name == "SCRIPT") {
      out.append(resources::kMemvizPageJs);
    } else if (name == "DATA") {
      out.append(scriptSafeJson(model));
    } else {
      throw std::logic_error("memviz: page.html names an unknown part @@" +
                             std::string(name) + "@@");
    }
    at = close + 2;
  }
  out.append(page.substr(at));
  return out;
}

}  // namespace accel::tool
