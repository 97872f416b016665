// errorOf: the message of the exception a call throws, for tests that check
// what an error says.
//
//   EXPECT_THAT(errorOf<InvalidArgument>([&] { map.deviceOf(p); }),
//               HasSubstr("was freed"));
//
// Thread-safety: as thread-safe as `call`. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace accel::testing {

// The message of the `Error` that `call` throws; a test failure (and an empty
// string) if it throws nothing. Other exceptions propagate.
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

}  // namespace accel::testing
