// The conformance suite on the in-memory test backend (tests/support), which
// declares every group.
#include "accel/conformance.h"
#include "support/test_backend.h"

static const bool kTestBackendRegistered =
    (accel::testing::registerTestBackend("testdev", 2), true);
ACCEL_INSTANTIATE_CONFORMANCE(TestBackend, "testdev");
