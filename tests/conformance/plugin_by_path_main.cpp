// The runtime form of the conformance suite that docs/conformance.md gives an
// out-of-tree plugin: a test main that loads the plugin by path and runs the
// suite on the device type it registers. Run here on the test backend plugin,
// so the documented form stays a working one.
//
//   conformance_plugin_by_path /path/to/libaccel_testdev_plugin.so testdev
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "accel/conformance.h"
#include "accel/plugin.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " PLUGIN_PATH DEVICE_TYPE\n";
    return 2;
  }
  accel::conformance::SuiteOptions options;
  options.prefix = "ByPath";
  const std::string plugin = argv[1];
  // Runs before the first test; a plugin that does not load fails every test.
  options.setUp = [plugin] { accel::loadBackend(plugin); };
  accel::conformance::registerConformanceTests(std::vector<std::string>{argv[2]},
                                               options);
  return RUN_ALL_TESTS();
}
