"""Checked by mypy (ctest python.mypy): the package's stubs and annotations
let a typed program use accel without ignores. Also runs as a script."""

from typing import Dict, Optional

import accel
import accel.openreg


def seed_and_read(seed: int) -> bytes:
    accel.openreg.manual_seed(seed)
    state: bytes = accel.openreg.get_rng_state()
    generator: accel.Generator = accel.openreg.default_generator(0)
    offset: int = generator.get_offset()
    assert offset >= 0
    return state


def copy_round_trip(payload: bytes) -> bytes:
    device: accel.Device = accel.Device("openreg:0")
    index: Optional[int] = device.index
    assert index == 0
    buffer: accel.Buffer = accel.empty(len(payload), device=device)
    buffer.copy_(payload)
    stream: accel.Stream = accel.openreg.current_stream()
    stream.synchronize()
    return buffer.tobytes()


def switch_devices() -> int:
    accel.set_device_index(0)
    accel.set_device_index("openreg:0")
    with accel.device_index(0):
        inner: int = accel.current_device_index()
    with accel.device_index(None):
        pass
    return inner


def stats() -> Dict[str, int]:
    return accel.memory.memory_stats()


def memory_report() -> str:
    free, total = accel.openreg.get_memory_info(0)
    pinned: Dict[str, int] = accel.openreg.host_memory_stats()
    accel.openreg.set_per_process_memory_fraction(1.0, 0)
    accel.openreg.reset_accumulated_memory_stats(0)
    assert free <= total and isinstance(pinned, dict)
    assert isinstance(accel.openreg.memory_snapshot(), list)
    return accel.openreg.memory_summary(0, abbreviated=True)


if __name__ == "__main__":
    seed_and_read(1)
    assert copy_round_trip(b"abcd") == b"abcd"
    assert switch_devices() == 0
    assert "allocated_bytes.all.current" in stats()
    assert "Allocated memory" in memory_report()
