// Symbol visibility for libaccel.so.
//
// The core is built with -fvisibility=hidden so that only the public API is
// exported; ACCEL_API marks what is. Backends and the host program must share
// one hooks table, one registry and one context, which is why the core is a
// shared library and why these symbols must not be duplicated into plugins.
#pragma once

#if defined(_WIN32)
#define ACCEL_API __declspec(dllexport)
#else
#define ACCEL_API __attribute__((visibility("default")))
#endif
