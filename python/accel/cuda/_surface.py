"""The surface of accel.cuda: the backend API (accel._backend.Backend), with
no extras. Works whether or not a CUDA backend is loaded: without one,
is_available() is False, device_count() is 0 and every other call raises
NotAvailableError saying how to load a backend. Importing it touches no
device.
"""

from .._backend import Backend

surface = Backend("cuda", "accel.cuda")
