// `accel version`: the versions that decide whether a plugin loads: the
// loaded libaccel.so's version and plugin API, the oldest plugin API it
// accepts, and the headers the tool was built with.
#pragma once

namespace accel::tool {

// Prints the versions on stdout; returns 0.
int runVersion();

}  // namespace accel::tool
