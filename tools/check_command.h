// `accel check`: runs the conformance suite (accel/conformance.h) in this
// process against registered backends, with GoogleTest.
//
// Which backends: --backend NAME; else the backends the --plugin paths
// registered; else every registered backend. A JUnit XML report is written
// with --junit FILE (GoogleTest's XML output). Exit status: 0 when every
// case passed or was skipped, 1 when any failed, 2 when nothing could be
// checked (unknown backend, a --plugin that did not load, no backends).
#pragma once

#include <string>
#include <vector>

namespace accel::tool {

struct CheckOptions {
  std::string backend;               // empty: see above
  std::vector<std::string> plugins;  // --plugin paths
  std::string junit;                 // empty: no XML report
  bool verbose = false;              // GoogleTest's own output instead of the summary
};

int runCheck(const CheckOptions& options);

}  // namespace accel::tool
