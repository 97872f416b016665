// Integer arguments of the bindings, taken as any Python int and checked
// here. pybind11's own int casters refuse an int outside the C++ type's
// range by failing the overload, which reads as "incompatible function
// arguments" and a dump of the signatures; these name the argument and the
// accepted range instead:
//
//   m.def("f", [](DeviceIndexArg index, IntArg<std::uint64_t, "operations"> n) {
//     use(index.value, n.value);
//   }, py::arg("index"), py::arg("operations"));
//
//   f(300, 1)      -> InvalidArgumentError: device index 300 is out of range: ...
//   f(0, 2**70)    -> InvalidArgumentError: operations 1180591620717411303424 is
//                     out of range: use an int in [0, 18446744073709551615]
//
// What is not an int at all (a str, a float) still fails the overload as
// before, so that overloads keep being chosen by type. A bool is an int to
// Python but never a count, size or index here: it is refused naming the
// argument ('nbytes must be an int, not bool (True)'), as seeds and device
// arguments refuse it.
//
// Thread-safety: conversions run with the GIL held, as every binding's.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include "accel/device.h"
#include "accel/error.h"

namespace accel::python {

// A string literal as a template argument: the name of an argument.
template <std::size_t N>
struct ArgName {
  constexpr ArgName(const char (&text)[N]) { std::copy_n(text, N, chars); }  // NOLINT
  char chars[N];
};

// An integer in [Min, Max] (by default T's whole range).
template <typename T, ArgName Name,
          long long Min = static_cast<long long>(std::numeric_limits<T>::min()),
          unsigned long long Max = std::numeric_limits<T>::max()>
struct IntArg {
  static_assert(std::is_integral_v<T>);
  static constexpr const char* kName = Name.chars;
  static constexpr long long kMin = Min;
  static constexpr unsigned long long kMax = Max;
  T value{};
};

// A device index: -1 (the current device) or 0 to kMaxDevicesPerType - 1;
// the backend checks its own count afterwards.
using DeviceIndexArg = IntArg<DeviceIndex, "device index", -1, kMaxDevicesPerType - 1>;

// The device index a Python int names (DeviceIndexArg's range), for an
// argument that takes other things too (None, text, accel.Device). Throws
// InvalidArgument naming the range.
DeviceIndex deviceIndexOfInt(pybind11::handle number);

namespace int_args {
// The value of Python int `number` when it lies in [min, max]. Throws
// InvalidArgument naming `name`, the value and the range otherwise.
long long checkedSigned(pybind11::handle number, const char* name, long long min,
                        unsigned long long max);
unsigned long long checkedUnsigned(pybind11::handle number, const char* name,
                                   long long min, unsigned long long max);
// Throws InvalidArgument: `name` must be an int, not the bool `value`.
[[noreturn]] void refuseBool(pybind11::handle value, const char* name);
}  // namespace int_args

}  // namespace accel::python

namespace pybind11::detail {

template <typename T, accel::python::ArgName Name, long long Min, unsigned long long Max>
struct type_caster<accel::python::IntArg<T, Name, Min, Max>> {
  using Arg = accel::python::IntArg<T, Name, Min, Max>;
  PYBIND11_TYPE_CASTER(Arg, const_name("int"));

  bool load(handle src, bool convert) {
    if (!src || PyFloat_Check(src.ptr())) return false;
    if (PyBool_Check(src.ptr())) accel::python::int_args::refuseBool(src, Arg::kName);
    object number;
    if (PyLong_Check(src.ptr())) {
      number = reinterpret_borrow<object>(src);
    } else if (convert && PyIndex_Check(src.ptr())) {  // numpy integers
      number = reinterpret_steal<object>(PyNumber_Index(src.ptr()));
      if (!number) {
        PyErr_Clear();
        return false;
      }
    } else {
      return false;
    }
    if constexpr (std::is_signed_v<T>) {
      value.value = static_cast<T>(
          accel::python::int_args::checkedSigned(number, Arg::kName, Min, Max));
    } else {
      value.value = static_cast<T>(
          accel::python::int_args::checkedUnsigned(number, Arg::kName, Min, Max));
    }
    return true;
  }

  static handle cast(const Arg& arg, return_value_policy, handle) {
    return pybind11::int_(arg.value).release();
  }
};

}  // namespace pybind11::detail
