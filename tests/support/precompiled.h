// The headers precompiled once for every GoogleTest program of a tree
// (tests/CMakeLists.txt, accel_test_uses_precompiled): GoogleTest,
// GoogleMock and the standard headers most test files include. Parsing them
// was about a quarter of a test file's compile (tests/core/registry_test.cpp
// at -O2: 4.2 s of CPU, 3.1 s with them precompiled; docs/performance.md).
//
// Only headers that no test's meaning depends on belong here: a test file
// still includes what it uses (this header is forced in front of every test
// source, so a missing include would go unnoticed by the compiler). The
// project's own headers stay out, so that a change to one of them does not
// rebuild every test program.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>
