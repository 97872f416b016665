// `accel version`: the versions that decide whether a plugin loads: the
// loaded libaccel.so's version and the range of plugin API versions it
// speaks (accel_core_plugin_abi_range), and the plugin API of the headers
// the tool was built with.
#pragma once

#include <string>

namespace accel::tool {

// The two lines `accel version` and `accel --version` print (no final
// newline). Never throws except std::bad_alloc.
std::string versionText();

// Prints versionText() on stdout; returns 0.
int runVersion();

}  // namespace accel::tool
