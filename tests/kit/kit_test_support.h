// Helpers shared by the kit's tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace accel::kit::testing {

// The message of the `Error` that `call` throws; a test failure if it throws
// nothing.
template <typename Error, typename Call>
std::string errorOf(Call&& call) {
  try {
    call();
    ADD_FAILURE() << "expected an exception";
  } catch (const Error& e) {
    return e.message();
  }
  return {};
}

}  // namespace accel::kit::testing
