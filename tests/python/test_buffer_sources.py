"""Buffer.copy_ takes any host source: the buffer protocol or __dlpack__
(torch CPU tensors, numpy arrays, host accel Buffers)."""

import accel
import pytest


class DLPackOnly:
    """A producer with __dlpack__ but no buffer protocol (as torch tensors)."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, stream=None):
        return self.inner.__dlpack__()


def test_copy_from_a_torch_cpu_tensor():
    torch = pytest.importorskip("torch")
    src = torch.arange(16, dtype=torch.float32)
    dst = accel.empty(64, device="openreg:0")
    dst.copy_(src)
    assert dst.tobytes() == src.numpy().tobytes()


def test_copy_from_a_dlpack_only_producer_runs_its_deleter():
    np = pytest.importorskip("numpy")
    host = accel.empty(32)
    memoryview(host)[:] = bytes(range(32))
    dst = accel.empty(32, device="openreg:0")
    dst.copy_(DLPackOnly(host))
    assert dst.tobytes() == bytes(range(32))
    src = np.arange(8, dtype=np.int32)
    dst2 = accel.empty(32, device="openreg:1")
    dst2.copy_(DLPackOnly(src))
    assert dst2.tobytes() == src.tobytes()


def test_copy_from_a_non_contiguous_dlpack_source_is_refused():
    torch = pytest.importorskip("torch")
    src = torch.arange(16, dtype=torch.uint8).reshape(4, 4).t()
    dst = accel.empty(16, device="openreg:0")
    with pytest.raises(accel.InvalidArgumentError, match="not C-contiguous"):
        dst.copy_(src)


def test_copy_from_a_dlpack_source_of_the_wrong_size_is_refused():
    torch = pytest.importorskip("torch")
    dst = accel.empty(16, device="openreg:0")
    with pytest.raises(accel.InvalidArgumentError, match="sizes must match"):
        dst.copy_(torch.zeros(3, dtype=torch.float32))
