"""The Python demo of `scripts/dev.sh main`: the seeds' flow from Python down
to an openreg device, and a buffer shared with numpy without a copy."""

import accel

print(f"accel: backends {accel.registered_backends()}, accelerator {accel.current_accelerator()}, "
      f"{accel.device_count()} devices; openreg initialised: {accel.openreg.is_initialized()}")
accel.openreg.manual_seed(42)  # queued: openreg is not initialised yet
device_buffer = accel.empty(4 * 8, device="openreg:0")  # initialises openreg, applies the seed
accel.openreg.fill_uniform(device_buffer)
host = accel.empty(device_buffer.nbytes, device="openreg", pinned=True)
host.copy_(device_buffer)
values = memoryview(host).cast("f").tolist()  # type: ignore[arg-type]  # buffer protocol
print("openreg:0 uniform(42):", " ".join(f"{v:.4f}" for v in values))
expected = bytearray(host.nbytes)
accel._C._host_fill_uniform(expected, 42, 0)
print("equals the host fill for (42, 0):", bytes(expected) == host.tobytes())
with accel.openreg.Stream(1) as stream:
    done = stream.record_event()
    done.synchronize()
print(f"stream on {stream.device} idle: {stream.query()}")
