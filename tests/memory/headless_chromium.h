// Headless Chromium for the tests of the memviz page: the page is loaded from
// disk as a user would open it, and what the browser made of it is read back
// as its DOM after the scripts ran (--dump-dom), its console log, and a
// screenshot.
//
// Thread-safety: each call runs its own browser with its own profile
// directory under `work`; calls with different `tag`s may run concurrently.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "memory/run_command.h"

namespace accel::memory::testing {

inline std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// The browser to run: $ACCEL_CHROMIUM, else chromium or chromium-browser on
// PATH; empty when there is none (tests then skip, saying so).
inline std::string findChromium() {
  if (const char* path = std::getenv("ACCEL_CHROMIUM")) return path;
  int status = -1;
  std::string found =
      runCommand("command -v chromium || command -v chromium-browser", status);
  while (!found.empty() && (found.back() == '\n' || found.back() == ' '))
    found.pop_back();
  return status == 0 ? found : std::string();
}

struct ChromiumRun {
  int status = -1;
  std::string output;   // the DOM with --dump-dom; empty for a screenshot
  std::string console;  // Chromium's log: console messages and uncaught errors
};

// Loads file://`page` and either dumps its DOM (screenshot empty) or writes a
// PNG of a `width` x `height` window to `screenshot`.
inline ChromiumRun runChromium(const std::string& browser, const std::string& page,
                               const std::string& work, const std::string& tag,
                               const std::string& screenshot = {}, int width = 1140,
                               int height = 1300) {
  const std::string log = work + "chromium_" + tag + ".log";
  const std::string what =
      screenshot.empty()
          ? std::string(" --dump-dom")
          : " --hide-scrollbars --force-device-scale-factor=1 --window-size=" +
                std::to_string(width) + "," + std::to_string(height) +
                " --screenshot=" + screenshot;
  ChromiumRun run;
  run.output =
      runCommand("timeout 120 " + browser +
                     " --headless --disable-gpu --no-sandbox --no-first-run "
                     "--disable-dev-shm-usage --user-data-dir=" +
                     work + "chromium_profile_" + tag + " --enable-logging=stderr --v=0" +
                     what + " file://" + page + " 2>" + log,
                 run.status);
  run.console = readWholeFile(log);
  return run;
}

// Whether Chromium reported a console message or an uncaught error.
inline bool consoleHasErrors(const std::string& console) {
  return console.find("Uncaught") != std::string::npos ||
         console.find(":CONSOLE") != std::string::npos;
}

}  // namespace accel::memory::testing
