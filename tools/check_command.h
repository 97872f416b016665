// `accel check`: runs the conformance suite (accel/conformance.h) in this
// process against registered backends, with GoogleTest.
//
// Which backends: --backend NAME; else the backends the --plugin paths
// registered; else every registered backend. A JUnit XML report is written
// with --junit FILE (GoogleTest's XML output; a FILE that cannot be written
// is refused, status 2, before anything runs). Exit status: 0 when every
// case passed or was skipped, 1 when any failed or a backend did not
// initialise, 2 when nothing could be checked (unknown backend, a --plugin
// that did not load, no backends), 3 when nothing failed but a backend has
// no device (its device cases could not run). The last line printed names
// the backends that passed, failed and were not checked on a device, and
// the exit status.
// With --validate the validation layer (accel/validation.h) checks every
// call in throw mode; violations it reported are counted in the last lines.
// With --list it loads nothing and prints the groups and their cases instead.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace accel::tool {

struct CheckOptions {
  std::string backend;               // empty: see above
  std::vector<std::string> plugins;  // --plugin paths
  std::string junit;                 // empty: no XML report
  bool verbose = false;              // GoogleTest's own output instead of the summary
  bool list = false;                 // print groups and cases, run nothing
  // --in-process: no first discovery of each backend in a separate process
  // (isolated_discovery.h); a driver that crashes takes the check down.
  bool in_process = false;
  // --validate: the validation layer on (throw mode) before any plugin
  // loads; the check fails, without running, when the layer cannot start.
  bool validate = false;
};

int runCheck(const CheckOptions& options);

// The suite's groups, each with its hooks and its cases (the hooks each case
// exercises; whether it needs a device), as `accel check --list` prints them.
void printCaseList(std::ostream& out);

}  // namespace accel::tool
