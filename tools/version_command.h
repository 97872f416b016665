// `accel version`: the versions that decide whether a plugin loads: the
// loaded libaccel.so's version and plugin API, the oldest plugin API it
// accepts, and the headers the tool was built with.
#pragma once

#include <string>

namespace accel::tool {

// The two lines `accel version` and `accel --version` print (no final
// newline). Never throws except std::bad_alloc.
std::string versionText();

// Prints versionText() on stdout; returns 0.
int runVersion();

}  // namespace accel::tool
