#include "int_args.h"

#include <string>

namespace accel::python::int_args {
namespace {

[[noreturn]] void outOfRange(pybind11::handle number, const char* name, long long min,
                             unsigned long long max) {
  throw InvalidArgument(
      accel::detail::concat(name, " ", std::string(pybind11::str(number)),
                            " is out of range: use an int in [", min, ", ", max, "]"));
}

bool inRange(long long value, long long min, unsigned long long max) noexcept {
  return value >= min && (value < 0 || static_cast<unsigned long long>(value) <= max);
}

}  // namespace

long long checkedSigned(pybind11::handle number, const char* name, long long min,
                        unsigned long long max) {
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (value == -1 && PyErr_Occurred() != nullptr) throw pybind11::error_already_set();
  if (overflow == 0 && inRange(value, min, max)) return value;
  outOfRange(number, name, min, max);
}

unsigned long long checkedUnsigned(pybind11::handle number, const char* name,
                                   long long min, unsigned long long max) {
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (value == -1 && PyErr_Occurred() != nullptr) throw pybind11::error_already_set();
  if (overflow == 0 && inRange(value, min, max))
    return static_cast<unsigned long long>(value);
  if (overflow > 0) {
    const unsigned long long big = PyLong_AsUnsignedLongLong(number.ptr());
    if (PyErr_Occurred() != nullptr) {
      PyErr_Clear();  // above 2**64 - 1
    } else if (big <= max) {
      return big;
    }
  }
  outOfRange(number, name, min, max);
}

void refuseBool(pybind11::handle value, const char* name) {
  throw InvalidArgument(accel::detail::concat(name, " must be an int, not bool (",
                                              value.ptr() == Py_True ? "True" : "False",
                                              ")"));
}

}  // namespace accel::python::int_args

namespace accel::python {

DeviceIndex deviceIndexOfInt(pybind11::handle number) {
  return static_cast<DeviceIndex>(int_args::checkedSigned(
      number, DeviceIndexArg::kName, DeviceIndexArg::kMin, DeviceIndexArg::kMax));
}

}  // namespace accel::python
