// runInChildBounded: runs a function in a forked child process and waits for
// it with a bound, for tests of what a fork child may and may not do.
//
// The bound is a hang detector, not a speed check: a child that has not
// ended after 20 s is killed and reported as 124, so that a test of "the
// child must not hang" fails instead of hanging the suite.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

namespace accel::testing {

// Runs `child` in a forked process. Returns its exit status (what `child`
// returned; 98 if it threw), 100 + the signal that ended it, 124 when it did
// not end within 20 s (it is killed), or -1 when no child could be made.
// Call it with no other thread of the test inside a lock the child needs.
inline int runInChildBounded(const std::function<int()>& child) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == -1) {
    ::close(fds[0]);
    ::close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    ::close(fds[0]);
    int code = 99;
    try {
      code = child();
    } catch (...) {
      code = 98;
    }
    ::_exit(code);  // closes the pipe: the parent's poll wakes
  }
  ::close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&p, 1, 20'000);
  } while (ready < 0 && errno == EINTR);
  ::close(fds[0]);
  int status = 0;
  if (ready == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return 124;
  }
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 100 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace accel::testing
