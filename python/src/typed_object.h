// Python objects whose type the binding states for the stubs.
//
// pybind11 writes a binding's signature as the first line of its docstring,
// and python/tools/generate_stubs.py makes accel/_C.pyi (and each backend's
// _native.pyi) from those lines: the binding is the one declaration of the
// native API. A parameter or result that the binding handles as a plain
// py::object (it accepts several types, or checks the type itself to give a
// better error) would read `handle` or `object` there, which says nothing;
// Typed<"..."> is that py::object with the Python type written out:
//
//   m.def("_empty", [](IntArg<std::size_t, "nbytes"> n, const DeviceLike& device) {...});
//   // _empty(nbytes: int, device: Union[None, int, str, Device]) -> Buffer
//
// The text is a type as a stub writes it; names of accel._C's classes may be
// bare in accel._C's own bindings and are written accel._C.X elsewhere.
// Typed<"...", Base> accepts what Base accepts (by default py::object: any
// object; py::buffer, py::function: what those accept): the type is a
// declaration, the binding's own checks stay where they were.
//
// Thread-safety: conversions run with the GIL held, as every binding's.
#pragma once

#include <pybind11/pybind11.h>

#include <type_traits>
#include <utility>

#include "int_args.h"

namespace accel::python {

template <ArgName PythonType, typename Base = pybind11::object>
class Typed : public Base {
 public:
  using Base::Base;
  Typed() = default;
  Typed(Base object) : Base(std::move(object)) {}  // NOLINT: results convert implicitly
  // What pybind11's caster asks before taking an argument: what Base takes.
  static bool check_(pybind11::handle h) {
    if constexpr (std::is_same_v<Base, pybind11::object>) {
      return h.ptr() != nullptr;
    } else {
      return Base::check_(h);
    }
  }
};

// What a device argument takes: None (the current device), an index, text
// ("openreg:1") or an accel.Device.
using DeviceLike = Typed<"Union[None, int, str, Device]">;
// A C-contiguous buffer: bytes, bytearray, memoryview, a NumPy array...
using BufferLike = Typed<"Any">;

}  // namespace accel::python

namespace pybind11::detail {

template <accel::python::ArgName PythonType, typename Base>
struct handle_type_name<accel::python::Typed<PythonType, Base>> {
  static constexpr auto name = const_name(PythonType.chars);
};

}  // namespace pybind11::detail
