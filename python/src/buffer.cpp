// accel._C.Buffer: bytes on a device or in (pinned) host memory.
//
// Host-accessible buffers (CPU and pinned) export their memory through the
// buffer protocol and DLPack, so numpy and torch see the very same bytes
// without a copy. Device buffers export nothing; copy them with copy_() or
// tobytes(). The memory lives in a shared BufferStorage that DLPack
// consumers keep alive without the GIL.
#include <Python.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/memory/record_stream.h"
#include "accel/random_fill.h"
#include "bindings.h"
#include "dlpack.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {
namespace {

struct BufferStorage {
  DataPtr data;
  std::size_t nbytes = 0;
  Device device;
  bool pinned = false;
  [[nodiscard]] bool hostAccessible() const noexcept { return device.isCpu(); }
  [[nodiscard]] void* ptr() const noexcept { return data.get(); }
};

struct PyBuffer {
  std::shared_ptr<BufferStorage> storage;
};

void freeHost(void* context) noexcept { std::free(context); }

std::size_t toByteCount(long long nbytes) {
  ACCEL_CHECK(nbytes >= 0, InvalidArgument, "empty: nbytes=", nbytes,
              " is negative; ask for 0 or more bytes");
  return static_cast<std::size_t>(nbytes);
}

PyBuffer makeBuffer(std::size_t nbytes, const py::handle& device, bool pinned) {
  auto storage = std::make_shared<BufferStorage>();
  storage->nbytes = nbytes;
  storage->pinned = pinned;
  if (pinned) {
    std::optional<DeviceType> type;
    if (!device.is_none()) {
      const Device d = toDevice(device);
      ACCEL_CHECK(
          !d.isCpu(), InvalidArgument,
          "empty(pinned=True, device=...): name the accelerator whose pinned memory "
          "to use (e.g. 'openreg'), not cpu");
      type = d.type();
    }
    Allocator* allocator = nullptr;
    {
      GilRelease release;  // may initialise the backend
      allocator = &globalContext().getPinnedMemoryAllocator(type);
      storage->data = allocator->allocate(nbytes);
    }
    storage->device = Device(DeviceType::CPU);
    return PyBuffer{std::move(storage)};
  }
  const Device d = device.is_none() ? Device(DeviceType::CPU) : toDevice(device);
  if (d.isCpu()) {
    // 64-byte aligned (cache line, AVX-512), at least one byte so that the
    // pointer is unique; zero-filled neither here nor on devices.
    const std::size_t rounded = ((nbytes == 0 ? 1 : nbytes) + 63) / 64 * 64;
    void* ptr = std::aligned_alloc(64, rounded);
    if (ptr == nullptr)
      throw OutOfMemory("empty: cannot allocate " + std::to_string(nbytes) +
                        " host bytes");
    storage->data = DataPtr(ptr, ptr, &freeHost, Device(DeviceType::CPU));
    storage->device = Device(DeviceType::CPU);
    return PyBuffer{std::move(storage)};
  }
  {
    GilRelease release;
    globalContext().lazyInitDevice(d.type());
    AcceleratorHooks& hooks = getHooks(d.type());
    storage->data = hooks.getDeviceAllocator(d.index()).allocate(nbytes);
  }
  storage->device = storage->data.device();
  return PyBuffer{std::move(storage)};
}

// A contiguous view of any Python buffer (bytes, bytearray, numpy arrays).
class HostView {
 public:
  HostView(const py::handle& object, bool writable) {
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) {
      PyErr_Clear();
      throw InvalidArgument(refusal(object, writable));
    }
  }
  HostView(const HostView&) = delete;
  HostView& operator=(const HostView&) = delete;
  ~HostView() { PyBuffer_Release(&view_); }
  [[nodiscard]] void* data() const noexcept { return view_.buf; }
  [[nodiscard]] std::size_t size() const noexcept {
    return static_cast<std::size_t>(view_.len);
  }

 private:
  Py_buffer view_{};

  // Why `object` gave no view: asked again without the contiguity (then
  // without the writability), the buffer protocol tells which was missing.
  static std::string refusal(const py::handle& object, bool writable) {
    const std::string type(py::str(py::type::handle_of(object).attr("__name__")));
    Py_buffer probe{};
    if (PyObject_GetBuffer(object.ptr(), &probe, PyBUF_FULL_RO) == 0) {
      const bool readonly = probe.readonly != 0;
      const bool contiguous = PyBuffer_IsContiguous(&probe, 'C') != 0;
      PyBuffer_Release(&probe);
      if (!contiguous) {
        return "the " + type +
               " is not C-contiguous (a strided view, e.g. a slice or a transpose); "
               "copy it into contiguous memory first, e.g. numpy.ascontiguousarray(a)";
      }
      if (writable && readonly) {
        return "the " + type +
               " is read-only; pass a writable buffer (a bytearray, or a numpy array "
               "that owns its memory)";
      }
    }
    PyErr_Clear();
    return std::string("expected an accel.Buffer or a ") + (writable ? "writable " : "") +
           "C-contiguous Python buffer (bytes, bytearray, numpy array), got " + type;
  }
};

void checkSameSize(const char* what, std::size_t dst, std::size_t src) {
  ACCEL_CHECK(dst == src, InvalidArgument, what, ": the source has ", src,
              " bytes and the destination ", dst, "; sizes must match");
}

// ---- the buffer protocol, by hand: pybind11's def_buffer cannot refuse ----
int getBuffer(PyObject* self, Py_buffer* view, int flags) {
  PyBuffer* buffer = nullptr;
  try {
    buffer = &py::handle(self).cast<PyBuffer&>();
  } catch (...) {
    PyErr_SetString(PyExc_BufferError, "accel.Buffer: not a Buffer");
    return -1;
  }
  if (!buffer->storage->hostAccessible()) {
    const std::string message =
        "accel.Buffer on " + buffer->storage->device.str() +
        " is device memory the host cannot read; copy it to the host "
        "first (tobytes(), or copy_ into a host buffer)";
    PyErr_SetString(PyExc_BufferError, message.c_str());
    return -1;
  }
  return PyBuffer_FillInfo(view, self, buffer->storage->ptr(),
                           static_cast<Py_ssize_t>(buffer->storage->nbytes), 0, flags);
}

PyBufferProcs g_buffer_procs = {getBuffer, nullptr};

// ---- DLPack export (the ABI and the import: dlpack.h) ----
struct DLPackExport {
  DLManagedTensor managed{};
  std::shared_ptr<BufferStorage> keep;
  std::int64_t shape[1]{};
  std::int64_t strides[1]{1};
};

void deleteExport(DLManagedTensor* managed) {
  delete static_cast<DLPackExport*>(managed->manager_ctx);  // no GIL needed
}

void capsuleDestructor(PyObject* capsule) {
  // Only a capsule nobody consumed still carries the name "dltensor".
  if (PyCapsule_IsValid(capsule, "dltensor") == 0) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  PyErr_Restore(type, value, traceback);
}

py::object toDLPack(const PyBuffer& buffer) {
  const BufferStorage& s = *buffer.storage;
  if (!s.hostAccessible()) {
    throw py::buffer_error(
        "accel.Buffer on " + s.device.str() +
        " is device memory no DLPack consumer here can read; copy it to "
        "a host buffer first");
  }
  auto exported = std::make_unique<DLPackExport>();
  exported->keep = buffer.storage;
  exported->shape[0] = static_cast<std::int64_t>(s.nbytes);
  DLTensor& t = exported->managed.dl_tensor;
  t.data = s.ptr();
  t.device = {kDLCPU, 0};  // pinned memory is host memory: CPU for every consumer
  t.ndim = 1;
  t.dtype = {kDLUInt, 8, 1};
  t.shape = exported->shape;
  t.strides = exported->strides;
  t.byte_offset = 0;
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = &deleteExport;
  PyObject* capsule = PyCapsule_New(&exported->managed, "dltensor", &capsuleDestructor);
  if (capsule == nullptr) throw py::error_already_set();
  exported.release();
  return py::reinterpret_steal<py::object>(capsule);
}

void copyInto(const PyBuffer& dst, const py::handle& src) {
  const BufferStorage& d = *dst.storage;
  if (py::isinstance<PyBuffer>(src)) {
    const BufferStorage& s = *src.cast<const PyBuffer&>().storage;
    checkSameSize("copy_", d.nbytes, s.nbytes);
    copyBetween(d.ptr(), d.device, d.hostAccessible(), s.ptr(), s.device,
                s.hostAccessible(), d.nbytes);
    return;
  }
  if (PyObject_CheckBuffer(src.ptr()) == 0 && py::hasattr(src, "__dlpack__")) {
    DLPackSource source(src);
    checkSameSize("copy_", d.nbytes, source.size());
    copyBetween(d.ptr(), d.device, d.hostAccessible(), source.data(),
                Device(DeviceType::CPU), true, d.nbytes);
    return;
  }
  HostView view(src, /*writable=*/false);
  checkSameSize("copy_", d.nbytes, view.size());
  copyBetween(d.ptr(), d.device, d.hostAccessible(), view.data(), Device(DeviceType::CPU),
              true, d.nbytes);
}

template <typename T>
std::span<T> typedSpan(void* data, std::size_t bytes, const char* what) {
  ACCEL_CHECK(bytes % sizeof(T) == 0, InvalidArgument, what, ": ", bytes,
              " bytes is not a whole number of ", sizeof(T), "-byte elements");
  return {static_cast<T*>(data), bytes / sizeof(T)};
}

// The core's host fill of any writable Python buffer from an explicit
// (seed, offset): what a device fill must reproduce bit for bit.
template <bool kNormal>
void hostFill(const BufferLike& out, const Typed<"int">& seed,
              IntArg<std::uint64_t, "offset"> offset, double a, double b,
              const std::string& dtype) {
  const char* what = kNormal ? "_host_fill_normal" : "_host_fill_uniform";
  HostView view(out, /*writable=*/true);
  const PhiloxPosition from{toSeed(seed), offset.value};
  auto run = [&]<typename T>(std::span<T> values) {
    GilRelease release;
    if constexpr (kNormal) {
      fillNormal(values, static_cast<T>(a), static_cast<T>(b), from);
    } else {
      fillUniform(values, static_cast<T>(a), static_cast<T>(b), from);
    }
  };
  if (dtype == "float32") {
    run(typedSpan<float>(view.data(), view.size(), what));
  } else if (dtype == "float64") {
    run(typedSpan<double>(view.data(), view.size(), what));
  } else {
    throw InvalidArgument(std::string(what) + ": dtype '" + dtype +
                          "': use 'float32' or 'float64'");
  }
}

// Buffer.record_stream: the core caching allocator's stream uses
// (accel/memory/record_stream.h); other memory says why it cannot.
void recordStream(const PyBuffer& buffer, const py::handle& stream) {
  const py::object stream_class = py::module_::import("accel._C").attr("Stream");
  if (!py::isinstance(stream, stream_class)) {
    throw py::type_error(
        "Buffer.record_stream(stream: accel.Stream): got " +
        std::string(py::str(py::type::handle_of(stream).attr("__name__"))));
  }
  const BufferStorage& s = *buffer.storage;
  const Stream used(stream.attr("device").cast<Device>(),
                    stream.attr("stream_id").cast<StreamId>());
  ACCEL_CHECK(!s.hostAccessible(), InvalidArgument,
              "Buffer.record_stream: the buffer is ", s.pinned ? "pinned " : "",
              "host memory; record_stream is for device "
              "buffers (a copy from pinned memory already keeps it until its stream "
              "passed the copy)");
  ACCEL_CHECK(used.device == s.device, InvalidArgument,
              "Buffer.record_stream: the buffer is on ", s.device.str(),
              " but the stream is on ", used.device.str(), "; pass a stream of ",
              s.device.str());
  if (s.nbytes == 0) return;  // no memory to hold back
  if (!memory::recordStreamUse(s.data, used)) {
    throw NotSupported(accel::detail::concat(
        "Buffer.record_stream: the '", deviceTypeName(s.device.type()),
        "' backend's device memory does not come from the core's caching allocator, "
        "which keeps the streams that use a block; synchronize the stream before "
        "freeing the buffer instead"));
  }
}

}  // namespace

BufferView bufferView(const py::handle& buffer, const char* what) {
  ACCEL_CHECK(py::isinstance<PyBuffer>(buffer), InvalidArgument, what,
              ": expected an accel.Buffer, got ",
              std::string(py::str(py::type::handle_of(buffer).attr("__name__"))));
  const BufferStorage& s = *buffer.cast<const PyBuffer&>().storage;
  return {s.ptr(), s.nbytes, s.device, s.hostAccessible()};
}

namespace {

// One copy through `device`'s copies hooks on its current stream, waited for
// (the hook returns early for pinned memory). The GIL is released.
void copyOnDevice(void* dst, bool dst_host, const void* src, bool src_host, Device device,
                  std::size_t bytes) {
  AcceleratorHooks& hooks = getHooks(device.type());
  const Stream stream = hooks.getCurrentStream(device.index());
  if (dst_host) {
    hooks.copyDeviceToHost(dst, src, bytes, stream);
  } else if (src_host) {
    hooks.copyHostToDevice(dst, src, bytes, stream);
  } else {
    hooks.copyDeviceToDevice(dst, src, bytes, stream);
  }
  hooks.synchronizeStream(stream);
}

}  // namespace

void copyBetween(void* dst, Device dst_device, bool dst_host, const void* src,
                 Device src_device, bool src_host, std::size_t bytes) {
  if (bytes == 0) return;
  GilRelease release;
  if (dst_host && src_host) {
    std::memcpy(dst, src, bytes);
    return;
  }
  if (dst_host || src_host || dst_device.type() == src_device.type()) {
    copyOnDevice(dst, dst_host, src, src_host, src_host ? dst_device : src_device, bytes);
    return;
  }
  // Two device types: no backend knows the other's memory, so through the host.
  std::unique_ptr<unsigned char[]> staging(new unsigned char[bytes]);
  copyOnDevice(staging.get(), true, src, false, src_device, bytes);
  copyOnDevice(dst, false, staging.get(), true, dst_device, bytes);
}

void bindBuffer(py::module_& m) {
  py::class_<PyBuffer> cls(m, "Buffer",
                           "Bytes on a device, or in host memory (pinned or not). Host "
                           "buffers support the buffer protocol and DLPack.");
  cls.def_property_readonly(
         "device", [](const PyBuffer& b) { return b.storage->device; },
         "Where the bytes are; pinned buffers are on cpu.")
      .def_property_readonly("nbytes",
                             [](const PyBuffer& b) { return b.storage->nbytes; })
      .def_property_readonly("is_pinned",
                             [](const PyBuffer& b) { return b.storage->pinned; })
      .def_property_readonly(
          "is_host_accessible",
          [](const PyBuffer& b) { return b.storage->hostAccessible(); })
      .def(
          "data_ptr",
          [](const PyBuffer& b) {
            return reinterpret_cast<std::uintptr_t>(b.storage->ptr());
          },
          "The address of the first byte, as an int.")
      .def("__len__", [](const PyBuffer& b) { return b.storage->nbytes; })
      .def(
          "copy_",
          [](const PyBuffer& b, const BufferLike& src) -> const PyBuffer& {
            copyInto(b, src);
            return b;
          },
          py::arg("src"), py::return_value_policy::reference_internal,
          "Copies all of `src` (a Buffer on any device, any C-contiguous Python buffer, "
          "or any host object with __dlpack__, torch CPU tensors included, of the same "
          "size in bytes) into this buffer and waits until done. Returns self.")
      .def(
          "copy_to",
          [](const PyBuffer& b, const BufferLike& dst) {
            if (py::isinstance<PyBuffer>(dst)) {
              copyInto(dst.cast<const PyBuffer&>(), py::cast(b));
              return;
            }
            HostView view(dst, /*writable=*/true);
            checkSameSize("copy_to", view.size(), b.storage->nbytes);
            copyBetween(view.data(), Device(DeviceType::CPU), true, b.storage->ptr(),
                        b.storage->device, b.storage->hostAccessible(),
                        b.storage->nbytes);
          },
          py::arg("dst"),
          "Copies this buffer into `dst` (a Buffer or a writable Python buffer).")
      .def(
          "tobytes",
          [](const PyBuffer& b) {
            std::string out(b.storage->nbytes, '\0');
            copyBetween(out.data(), Device(DeviceType::CPU), true, b.storage->ptr(),
                        b.storage->device, b.storage->hostAccessible(),
                        b.storage->nbytes);
            return py::bytes(out);
          },
          "The contents as bytes (a copy).")
      .def(
          "to",
          [](const PyBuffer& b, const Typed<"Union[Device, str]">& device) {
            PyBuffer out = makeBuffer(b.storage->nbytes, device, false);
            copyInto(out, py::cast(b));
            return out;
          },
          py::arg("device"), "A copy of this buffer on `device`.")
      .def(
          "__dlpack__",
          [](const PyBuffer& b, const py::object& /*stream*/,
             const py::kwargs& /*extra*/) { return toDLPack(b); },
          py::arg("stream") = py::none(),
          "A DLPack capsule of the bytes (1-D uint8) for host buffers; the capsule keeps "
          "the memory alive. Device buffers raise BufferError.")
      .def(
          "__dlpack_device__", [](const PyBuffer& b) -> Typed<"Tuple[int, int]"> {
            const BufferStorage& s = *b.storage;
            if (s.hostAccessible()) return py::make_tuple(kDLCPU, 0);
            return py::make_tuple(kDLExtDev, int(s.device.index()));
          },
          "(kDLCPU, 0) for host buffers; (kDLExtDev, index) for device buffers.")
      .def(
          "__array__",
          [](const PyBuffer& b, const py::args&, const py::kwargs&) -> py::object {
            // numpy asks for __array__ after the buffer protocol refused a
            // device buffer; without it np.asarray makes a 0-d object array.
            if (!b.storage->hostAccessible()) {
              throw py::buffer_error(
                  "numpy cannot read accel.Buffer on " + b.storage->device.str() +
                  " (device memory); copy it to the host first: "
                  "numpy.frombuffer(buf.tobytes(), dtype) or buf.to('cpu')");
            }
            return py::module_::import("numpy").attr("frombuffer")(
                py::cast(b), py::arg("dtype") = "uint8");
          },
          "Host buffers: a uint8 numpy array over the same memory. Device buffers raise "
          "BufferError.")
      .def(
          "record_stream",
          [](const PyBuffer& b, const Typed<"Stream">& stream) {
            recordStream(b, stream);
          },
          py::arg("stream"),
          "Marks this device buffer as used by `stream` (torch's Tensor.record_stream): "
          "once freed, its memory is handed out again only after the work `stream` had "
          "then has completed.")
      .def("__reduce__", &refusePickle<PyBuffer>)
      .def("__repr__", [](const PyBuffer& b) {
        return "<accel.Buffer " + std::to_string(b.storage->nbytes) + " bytes on " +
               b.storage->device.str() + (b.storage->pinned ? " (pinned)" : "") + ">";
      });
  reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_as_buffer = &g_buffer_procs;

  m.def(
      "_empty",
      [](IntArg<long long, "nbytes"> nbytes,
         const Typed<"Union[None, str, Device]">& device,
         bool pinned) { return makeBuffer(toByteCount(nbytes.value), device, pinned); },
      py::arg("nbytes"), py::arg("device") = py::none(), py::arg("pinned") = false);

  m.def("_host_fill_uniform", &hostFill<false>, py::arg("out"), py::arg("seed"),
        py::arg("offset") = 0, py::arg("low") = 0.0, py::arg("high") = 1.0,
        py::arg("dtype") = "float32");
  m.def("_host_fill_normal", &hostFill<true>, py::arg("out"), py::arg("seed"),
        py::arg("offset") = 0, py::arg("mean") = 0.0, py::arg("stddev") = 1.0,
        py::arg("dtype") = "float32");
}

}  // namespace accel::python
