#include "trace_view_page.h"

#include <stdexcept>
#include <string_view>

#include "script_safe_json.h"
#include "trace_view_resources.h"  // generated from tools/traceview/ (embed_resources.cmake)

namespace accel::tool {

std::string renderTraceViewPage(const nlohmann::json& model) {
  // The template names its parts with @@NAME@@, filled in one pass so that
  // nothing inserted is scanned again.
  const std::string_view page = resources::kTraceViewPageHtml;
  std::string out;
  out.reserve(page.size() + resources::kTraceViewPageCss.size() +
              resources::kTraceViewPageJs.size());
  std::size_t at = 0;
  while (true) {
    const std::size_t open = page.find("@@", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = page.find("@@", open + 2);
    if (close == std::string_view::npos)
      throw std::logic_error("trace view: page.html has an unclosed @@ placeholder");
    out.append(page.substr(at, open - at));
    const std::string_view name = page.substr(open + 2, close - open - 2);
    if (name == "STYLE") {
      out.append(resources::kTraceViewPageCss);
    } else if (name == "SCRIPT") {
      out.append(resources::kTraceViewPageJs);
    } else if (name == "DATA") {
      out.append(scriptSafeJson(model));
    } else {
      throw std::logic_error("trace view: page.html names an unknown part @@" +
                             std::string(name) + "@@");
    }
    at = close + 2;
  }
  out.append(page.substr(at));
  return out;
}

}  // namespace accel::tool
