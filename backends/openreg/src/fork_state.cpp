#include "fork_state.h"

#include <unistd.h>

#include "types.h"

namespace accel::openreg::detail {

void ForkState::throwForkedChild(std::string_view what) {
  throw DeviceError(
      concat(what, ": openreg was initialised before fork(); this child process (pid ",
             ::getpid(),
             ") cannot use it, because the simulated devices' worker threads do not "
             "survive fork. Initialise openreg after forking, or spawn workers with "
             "fork+exec"));
}

}  // namespace accel::openreg::detail
