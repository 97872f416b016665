"""Buffer.copy_ takes any host source: the buffer protocol or __dlpack__
(torch CPU tensors, numpy arrays, host accel Buffers)."""

import ctypes
from typing import Any, Dict, Optional, Tuple, Type

import accel
import pytest


class DLPackOnly:
    """A producer with __dlpack__ but no buffer protocol (as torch tensors)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __dlpack__(self, stream: Any = None) -> Any:
        return self.inner.__dlpack__()


def test_copy_from_a_torch_cpu_tensor() -> None:
    torch = pytest.importorskip("torch")
    src = torch.arange(16, dtype=torch.float32)
    dst = accel.empty(64, device="openreg:0")
    dst.copy_(src)
    assert dst.tobytes() == src.numpy().tobytes()


def test_copy_from_a_dlpack_only_producer_runs_its_deleter() -> None:
    np = pytest.importorskip("numpy")
    host = accel.empty(32)
    memoryview(host)[:] = bytes(range(32))  # type: ignore[arg-type]  # buffer protocol
    dst = accel.empty(32, device="openreg:0")
    dst.copy_(DLPackOnly(host))
    assert dst.tobytes() == bytes(range(32))
    src = np.arange(8, dtype=np.int32)
    dst2 = accel.empty(32, device="openreg:1")
    dst2.copy_(DLPackOnly(src))
    assert dst2.tobytes() == src.tobytes()


def test_copy_from_a_non_contiguous_dlpack_source_is_refused() -> None:
    torch = pytest.importorskip("torch")
    src = torch.arange(16, dtype=torch.uint8).reshape(4, 4).t()
    dst = accel.empty(16, device="openreg:0")
    with pytest.raises(accel.InvalidArgumentError, match="not C-contiguous"):
        dst.copy_(src)


def test_copy_from_a_dlpack_source_of_the_wrong_size_is_refused() -> None:
    torch = pytest.importorskip("torch")
    dst = accel.empty(16, device="openreg:0")
    with pytest.raises(accel.InvalidArgumentError, match="sizes must match"):
        dst.copy_(torch.zeros(3, dtype=torch.float32))


# A DLPack producer whose DLTensor fields are written by hand (ctypes), to
# check that copy_ validates each field before reading a byte.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_CAPSULE_NAME = ctypes.create_string_buffer(b"dltensor")  # outlives the capsules
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandWritten:
    """8 bytes of storage 0..7 described by the given fields (uint8, 1-D)."""

    def __init__(self, shape: Tuple[int, ...] = (8,), strides: Optional[Tuple[int, ...]] = None,
                 bits: int = 8, lanes: int = 1, device_type: int = 1, ndim: Optional[int] = None,
                 null_data: bool = False, null_shape: bool = False, byte_offset: int = 0) -> None:
        self.storage = ctypes.create_string_buffer(bytes(range(8)), 8)
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = (ctypes.c_int64 * len(strides))(*strides) if strides else None
        t = _DLTensor()
        t.data = None if null_data else ctypes.addressof(self.storage)
        t.device = _DLDevice(device_type, 0)
        t.ndim = len(shape) if ndim is None else ndim
        t.dtype = _DLDataType(1, bits, lanes)
        t.shape = None if null_shape else ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.managed = _DLManagedTensor(t, None, None)

    def __dlpack__(self, stream: Any = None) -> Any:
        return _capsule_new(ctypes.addressof(self.managed), _CAPSULE_NAME, None)


def test_a_hand_written_dlpack_source_is_read_when_its_fields_are_sound() -> None:
    dst = accel.empty(8, device="openreg:0")
    dst.copy_(HandWritten())
    assert dst.tobytes() == bytes(range(8))
    dst.copy_(HandWritten(shape=(2, 4), strides=(4, 1)))
    assert dst.tobytes() == bytes(range(8))


@pytest.mark.parametrize("fields, error, message", [
    # int4 (16 of them in 8 bytes) was read as 16 bytes, past the storage.
    (dict(shape=(16,), bits=4), accel.InvalidArgumentError, r"dtype\.bits is 4"),
    (dict(shape=(64,), bits=1), accel.InvalidArgumentError, r"dtype\.bits is 1"),
    (dict(shape=(8,), bits=0), accel.InvalidArgumentError, r"dtype\.bits is 0"),
    (dict(shape=(4,), lanes=2), accel.InvalidArgumentError, r"dtype\.lanes is 2"),
    # A NULL data pointer was dereferenced.
    (dict(null_data=True), accel.InvalidArgumentError, r"data pointer is NULL for 8 bytes"),
    (dict(null_shape=True), accel.InvalidArgumentError, r"shape is NULL for ndim 1"),
    (dict(ndim=-1), accel.InvalidArgumentError, r"ndim is -1"),
    (dict(shape=(-8,)), accel.InvalidArgumentError, r"shape\[0\] is -8"),
    (dict(shape=(2**62, 2**62)), accel.InvalidArgumentError, r"shape overflows"),
    (dict(shape=(2, 4), strides=(1, 2)), accel.InvalidArgumentError, r"not C-contiguous"),
    (dict(byte_offset=2**64 - 4), accel.InvalidArgumentError, r"byte_offset .* overflows"),
    (dict(device_type=2), accel.NotSupportedError, r"device\.device_type is 2"),
])
def test_a_dlpack_source_with_unsound_fields_is_refused_naming_the_field(
        fields: Dict[str, Any], error: Type[BaseException], message: str) -> None:
    dst = accel.empty(8, device="openreg:0")
    with pytest.raises(error, match=message):
        dst.copy_(HandWritten(**fields))
