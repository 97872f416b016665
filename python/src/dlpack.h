// DLPack for accel._C.Buffer: the ABI of dlpack.h v0.x (written out: no
// header ships it) and the import of a host producer's bytes (a torch CPU
// tensor, a numpy array, a host accel.Buffer) for Buffer.copy_.
//
// A producer's DLTensor is foreign memory described by fields nobody checked:
// every field is validated before a byte is read (the data pointer, the
// device type, ndim, shape and strides, the dtype's bits and lanes, the byte
// offset and the total size), so a wrong or hostile producer gets an error
// naming the field instead of an over-read or a crash.
//
// Thread-safety: needs the GIL (it calls the producer's __dlpack__).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>

namespace accel::python {

struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
inline constexpr std::int32_t kDLCPU = 1;
inline constexpr std::int32_t kDLCUDAHost = 3;
inline constexpr std::int32_t kDLExtDev = 12;
inline constexpr std::uint8_t kDLUInt = 1;

// The bytes of a host DLPack producer, consumed as the protocol says: the
// capsule is renamed "used_dltensor" and the producer's deleter runs when the
// view ends. The constructor throws InvalidArgument (accel.InvalidArgumentError,
// a ValueError) naming the field for a capsule that is not an unused
// "dltensor", a NULL data pointer under a non-empty tensor, a negative ndim,
// a NULL shape, a negative dimension, a tensor that is not C-contiguous, a
// dtype that is not whole bytes (bits not a multiple of 8: int4, bool of 1
// bit) or not scalar (lanes != 1), and a size or byte offset that overflows;
// NotSupported (accel.NotSupportedError) for memory that is not the host's.
class DLPackSource {
 public:
  explicit DLPackSource(const pybind11::handle& src);
  DLPackSource(const DLPackSource&) = delete;
  DLPackSource& operator=(const DLPackSource&) = delete;
  ~DLPackSource();
  [[nodiscard]] const void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  pybind11::object capsule_;
  DLManagedTensor* managed_ = nullptr;
  const void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace accel::python
