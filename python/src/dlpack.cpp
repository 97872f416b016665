#include "dlpack.h"

#include <limits>

#include "accel/error.h"

namespace accel::python {
namespace {

constexpr const char* kField = "copy_: the DLPack source's ";

// a * b, or a failure naming `what` when it does not fit in a size_t.
std::size_t checkedProduct(std::size_t a, std::size_t b, const char* what) {
  ACCEL_CHECK(b == 0 || a <= std::numeric_limits<std::size_t>::max() / b, InvalidArgument,
              kField, what,
              " overflows: the tensor would hold more bytes than memory "
              "can address");
  return a * b;
}

// The tensor's size in bytes, after checking every field it is made of.
std::size_t validatedSize(const DLTensor& t) {
  ACCEL_CHECK(t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost,
              NotSupported, kField, "device.device_type is ", t.device.device_type,
              " (not host memory: ", kDLCPU, " kDLCPU or ", kDLCUDAHost,
              " kDLCUDAHost are read); copy it to the host first");
  ACCEL_CHECK(t.dtype.bits != 0 && t.dtype.bits % 8 == 0, InvalidArgument, kField,
              "dtype.bits is ", int(t.dtype.bits),
              "; copy_ reads elements of whole bytes (bits 8, 16, 32, 64...), not "
              "packed sub-byte types such as int4 or 1-bit bool: convert it first");
  ACCEL_CHECK(t.dtype.lanes == 1, InvalidArgument, kField, "dtype.lanes is ",
              t.dtype.lanes, "; copy_ reads scalar elements (lanes 1), not vector types");
  ACCEL_CHECK(t.ndim >= 0, InvalidArgument, kField, "ndim is ", t.ndim,
              "; a tensor has 0 or more dimensions");
  ACCEL_CHECK(t.ndim == 0 || t.shape != nullptr, InvalidArgument, kField,
              "shape is NULL for ndim ", t.ndim);
  std::size_t elements = 1;
  for (std::int32_t i = 0; i < t.ndim; ++i) {
    ACCEL_CHECK(t.shape[i] >= 0, InvalidArgument, kField, "shape[", i, "] is ",
                t.shape[i], "; dimensions are 0 or more");
    elements = checkedProduct(elements, static_cast<std::size_t>(t.shape[i]), "shape");
  }
  // Strides are in elements; NULL means C-contiguous. A dimension of one
  // element may have any stride; an empty tensor has no layout to check.
  if (t.strides != nullptr && elements != 0) {
    std::int64_t expected = 1;
    for (std::int32_t i = t.ndim - 1; i >= 0; --i) {
      ACCEL_CHECK(t.shape[i] <= 1 || t.strides[i] == expected, InvalidArgument, kField,
                  "strides[", i, "] is ", t.strides[i], " where C-contiguous order has ",
                  expected,
                  ": it is not C-contiguous; make it contiguous first (e.g. "
                  "tensor.contiguous())");
      expected *= t.shape[i];  // within `elements`, checked above
    }
  }
  const std::size_t bytes = checkedProduct(elements, t.dtype.bits / 8u, "size");
  ACCEL_CHECK(bytes == 0 || t.data != nullptr, InvalidArgument, kField,
              "data pointer is NULL for ", bytes, " bytes");
  const auto address = reinterpret_cast<std::uintptr_t>(t.data);
  ACCEL_CHECK(t.byte_offset <= std::numeric_limits<std::uintptr_t>::max() - address &&
                  bytes <= std::numeric_limits<std::uintptr_t>::max() - address -
                               static_cast<std::uintptr_t>(t.byte_offset),
              InvalidArgument, kField, "byte_offset ", t.byte_offset,
              " overflows the address space from the data pointer");
  return bytes;
}

}  // namespace

DLPackSource::DLPackSource(const pybind11::handle& src) {
  capsule_ = src.attr("__dlpack__")();
  auto* managed =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule_.ptr(), "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    throw InvalidArgument(
        "copy_: the source's __dlpack__() did not return an unused 'dltensor' capsule");
  }
  // An unusable tensor is not consumed: the capsule keeps its name, and its
  // destructor calls the producer's deleter.
  const DLTensor& t = managed->dl_tensor;
  size_ = validatedSize(t);
  data_ = size_ == 0 ? nullptr : static_cast<const std::byte*>(t.data) + t.byte_offset;
  managed_ = managed;
  PyCapsule_SetName(capsule_.ptr(), "used_dltensor");
}

DLPackSource::~DLPackSource() {
  if (managed_ != nullptr && managed_->deleter != nullptr) managed_->deleter(managed_);
}

}  // namespace accel::python
