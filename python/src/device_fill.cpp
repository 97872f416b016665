// _C.fill_uniform, fill_normal, fill_bernoulli, fill_bits: random fills of a
// device Buffer of any backend that declares the fill group, through the
// core's one fill API (accel/device_fill.h). The backends' Python surfaces
// (accel.openreg.fill_uniform, ...) are these functions.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <tuple>

#include "accel/device_fill.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "bindings.h"
#include "typed_object.h"

namespace accel::python {
namespace {

// The dtypes a fill of each distribution writes, and the kind for each.
struct DtypeKind {
  std::string_view dtype;
  DeviceFill kind;
};
constexpr DtypeKind kUniform[] = {{"float32", DeviceFill::UniformFloat},
                                  {"float64", DeviceFill::UniformDouble}};
constexpr DtypeKind kNormal[] = {{"float32", DeviceFill::NormalFloat},
                                 {"float64", DeviceFill::NormalDouble}};
constexpr DtypeKind kBernoulli[] = {{"uint8", DeviceFill::BernoulliU8},
                                    {"float32", DeviceFill::BernoulliFloat}};
constexpr DtypeKind kBits[] = {{"uint32", DeviceFill::Bits32},
                               {"uint64", DeviceFill::Bits64}};

template <std::size_t N>
DeviceFill kindOf(const DtypeKind (&table)[N], const std::string& dtype,
                  const char* what) {
  std::string known;
  for (const DtypeKind& entry : table) {
    if (entry.dtype == dtype) return entry.kind;
    known += known.empty() ? "'" : ", '";
    known += entry.dtype;
    known += "'";
  }
  throw InvalidArgument(std::string(what) + "(): dtype '" + dtype + "': use " + known);
}

// The buffer's stream: `stream`, or the current stream of the buffer's device.
Stream fillStream(const BufferView& view, const py::object& stream, const char* what) {
  if (stream.is_none())
    return getHooks(view.device.type()).getCurrentStream(view.device.index());
  const auto packed =
      stream.attr("pack3")().cast<std::tuple<long long, long long, long long>>();
  const Stream s =
      Stream::unpack3(std::get<0>(packed), std::get<1>(packed), std::get<2>(packed));
  ACCEL_CHECK(s.device == view.device, InvalidArgument, what, "(): the stream is on ",
              s.device.str(), " but the buffer on ", view.device.str());
  return s;
}

void fill(const py::handle& buffer, DeviceFill kind, double a, double b,
          const std::optional<Generator>& generator, const py::object& stream,
          const char* what) {
  const BufferView view = bufferView(buffer, what);
  ACCEL_CHECK(view.device.type() != DeviceType::CPU, InvalidArgument, what,
              "(): the buffer is host memory; a device fill needs a device buffer "
              "(accel.empty(n, device='openreg:0'))");
  const std::size_t element = deviceFillElementBytes(kind);
  ACCEL_CHECK(view.nbytes % element == 0, InvalidArgument, what, "(): ", view.nbytes,
              " bytes is not a whole number of ", element, "-byte elements");
  const Stream s = fillStream(view, stream, what);
  GilRelease release;
  getHooks(s.device.type())
      .fillRandom(s, kind, view.data, view.nbytes / element, a, b,
                  generator.value_or(Generator{}));
}

// The two keyword-only arguments every fill takes.
auto generatorArg() { return py::arg("generator") = py::none(); }
auto streamArg() { return py::arg("stream") = py::none(); }

}  // namespace

void bindDeviceFills(py::module_& m) {
  using BufferArg = Typed<"accel._C.Buffer">;
  using StreamArg = Typed<"Optional[accel._C.Stream]">;
  m.def(
      "fill_uniform",
      [](const BufferArg& buffer, double low, double high, const std::string& dtype,
         const std::optional<Generator>& generator, const StreamArg& stream) {
        fill(buffer, kindOf(kUniform, dtype, "fill_uniform"), low, high, generator,
             stream, "fill_uniform");
      },
      py::arg("buffer"), py::arg("low") = 0.0, py::arg("high") = 1.0, py::kw_only(),
      py::arg("dtype") = "float32", generatorArg(), streamArg(),
      "Enqueues on `stream` (default: the current stream of the buffer's device) a "
      "fill of the device buffer with uniform numbers in [low, high) of `dtype` "
      "('float32' or 'float64'), from `generator` (default: the device's default "
      "generator): the host fill's numbers for the same seed and offset. The "
      "generator moves at once. Raises ValueError for bad parameters or a buffer the "
      "backend does not hold, NotImplementedError when its backend has no fills.");
  m.def(
      "fill_normal",
      [](const BufferArg& buffer, double mean, double std, const std::string& dtype,
         const std::optional<Generator>& generator, const StreamArg& stream) {
        fill(buffer, kindOf(kNormal, dtype, "fill_normal"), mean, std, generator, stream,
             "fill_normal");
      },
      py::arg("buffer"), py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(),
      py::arg("dtype") = "float32", generatorArg(), streamArg(),
      "Like fill_uniform, normal(mean, std) ('float32' or 'float64').");
  m.def(
      "fill_bernoulli",
      [](const BufferArg& buffer, double p, const std::string& dtype,
         const std::optional<Generator>& generator, const StreamArg& stream) {
        fill(buffer, kindOf(kBernoulli, dtype, "fill_bernoulli"), p, 0, generator, stream,
             "fill_bernoulli");
      },
      py::arg("buffer"), py::arg("p") = 0.5, py::kw_only(), py::arg("dtype") = "uint8",
      generatorArg(), streamArg(),
      "Like fill_uniform, 1 with probability p, else 0 ('uint8' or 'float32').");
  m.def(
      "fill_bits",
      [](const BufferArg& buffer, const std::string& dtype,
         const std::optional<Generator>& generator, const StreamArg& stream) {
        fill(buffer, kindOf(kBits, dtype, "fill_bits"), 0, 0, generator, stream,
             "fill_bits");
      },
      py::arg("buffer"), py::kw_only(), py::arg("dtype") = "uint32", generatorArg(),
      streamArg(), "Like fill_uniform, every bit random ('uint32' or 'uint64').");
}

}  // namespace accel::python
