// Symbol visibility for libaccel_openreg.so.
//
// The backend is built with -fvisibility=hidden; ACCEL_OPENREG_API marks the
// openreg C++ API (registration, copies, kernels, fills, fault injection) that
// programs and tests call directly. Everything else stays private to the
// library, so two builds of it can never clash on internal symbols.
#pragma once

#define ACCEL_OPENREG_API __attribute__((visibility("default")))
