#include "isolated_discovery.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "accel/discovery_limit.h"

extern char** environ;

namespace accel::tool {
namespace {

using Clock = std::chrono::steady_clock;

// Beyond the discovery bound: starting the child, loading its plugins,
// initialising a backend that discovered and reading its device properties.
constexpr double kChildGraceSeconds = 5;
// What a failed separate discovery advises, after what happened.
constexpr const char* kBrokenAdvice =
    ". Its driver or plugin is broken: check the driver install (the library it "
    "loads, its ICD vendors directory) or leave its plugin out";
// How much of the child's stderr is kept while it runs (its end).
constexpr std::size_t kStderrWindow = 64 * 1024;
// What is kept of the child's stderr for the reason (a driver's last words).
constexpr std::size_t kStderrKept = 400;

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

// "SIGSEGV" for 11, or "signal 42".
std::string signalName(int signal) {
  if (const char* abbrev = sigabbrev_np(signal); abbrev != nullptr)
    return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signal);
}

// A file descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Reads what is there now from a non-blocking pipe into `into`; false at end
// of file (or an error).
bool drain(int fd, std::string& into) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

// The last non-empty line of the child's stderr, shortened: what a driver
// said before it aborted.
std::string lastWords(const std::string& err) {
  std::size_t end = err.find_last_not_of("\n\r ");
  if (end == std::string::npos) return {};
  std::size_t start = err.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  std::string line = err.substr(start, end + 1 - start);
  if (line.size() > kStderrKept) line = line.substr(0, kStderrKept) + "...";
  return line;
}

struct ChildRun {
  bool started = false;
  int start_errno = 0;
  bool timed_out = false;
  int wait_status = 0;
  std::string out;
  std::string err;
};

ChildRun runChild(std::vector<std::string> args, double limit_s) {
  ChildRun run;
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    run.start_errno = errno;
    return run;
  }
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    run.start_errno = errno;
    return run;
  }
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_write.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.fd, STDERR_FILENO);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  // This very executable: the child must be the same build as the parent.
  const int spawned =
      ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    run.start_errno = spawned;
    return run;
  }
  run.started = true;
  out_write.reset();
  err_write.reset();
  ::fcntl(out_read.fd, F_SETFL, O_NONBLOCK);
  ::fcntl(err_read.fd, F_SETFL, O_NONBLOCK);
  // The child's end, as a descriptor to poll (Linux 5.3 and later): a
  // process that inherited the pipes from the child must not keep the parent
  // waiting once the child itself is gone.
  Fd child_end(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));

  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(limit_s));
  bool out_open = true;
  bool err_open = true;
  bool exited = false;
  bool poll_failed = false;
  while ((out_open || err_open) && !exited) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      break;
    }
    pollfd fds[3] = {{out_open ? out_read.fd : -1, POLLIN, 0},
                     {err_open ? err_read.fd : -1, POLLIN, 0},
                     {child_end.fd, POLLIN, 0}};
    const int ready =
        ::poll(fds, 3,
               static_cast<int>(std::min<long long>(left.count() + 1, 1000LL * 60 * 60)));
    if (ready < 0 && errno != EINTR) {
      poll_failed = true;
      break;
    }
    if (ready <= 0) continue;
    if (fds[0].revents != 0) out_open = drain(out_read.fd, run.out);
    if (fds[1].revents != 0) err_open = drain(err_read.fd, run.err);
    // Only the end of stderr is reported: a chatty child must not fill memory.
    if (run.err.size() > kStderrWindow) run.err.erase(0, run.err.size() - kStderrWindow);
    if (fds[2].revents != 0) exited = true;
  }
  if (exited) {  // what the child wrote before it ended
    drain(out_read.fd, run.out);
    drain(err_read.fd, run.err);
  }
  if (run.timed_out || poll_failed) {
    run.timed_out = true;
    ::kill(pid, SIGKILL);
  }
  // The child has exited, closed both pipes (it is exiting) or been killed.
  while (::waitpid(pid, &run.wait_status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

// Runs `args` (after the executable's name) in the child and judges how it
// ended; `what` names the work for the reason ("discovery of 'opencl'").
// `consequence` says what the caller does not do ("did not ask it").
IsolatedDiscovery runIsolated(const std::string& what, const std::string& consequence,
                              std::vector<std::string> args) {
  IsolatedDiscovery result;
  args.insert(args.begin(), "accel");
  const double discovery_s = discoveryLimitSeconds();
  const ChildRun run = runChild(std::move(args), discovery_s + kChildGraceSeconds);
  if (!run.started) {
    result.not_run = true;
    result.problem =
        "no separate process for the " + what + ": " + std::strerror(run.start_errno);
    return result;
  }
  const std::string words = lastWords(run.err);
  const std::string said = words.empty() ? "" : " (its last words: " + words + ")";
  if (run.timed_out) {
    result.problem =
        what + " did not finish within " + secondsText(discovery_s + kChildGraceSeconds) +
        " s in a separate process (ACCEL_DISCOVERY_TIMEOUT " + secondsText(discovery_s) +
        " s, plus " + secondsText(kChildGraceSeconds) +
        " s to start it), which was killed" + said + "; " + consequence + kBrokenAdvice;
    return result;
  }
  if (WIFSIGNALED(run.wait_status)) {
    result.problem = what + " crashed (" + signalName(WTERMSIG(run.wait_status)) +
                     ") in a separate process" + said + "; " + consequence +
                     kBrokenAdvice;
    return result;
  }
  const int status = WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status) : -1;
  nlohmann::ordered_json report =
      nlohmann::ordered_json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  if (status != 0 || !report.is_object()) {
    result.problem = what + " in a separate process ended with exit status " +
                     std::to_string(status) + " and no report" + said + "; " +
                     consequence + kBrokenAdvice;
    return result;
  }
  result.report = std::move(report);
  result.safe = true;
  return result;
}

}  // namespace

IsolatedDiscovery discoverInChild(std::string_view backend,
                                  const std::vector<std::string>& plugins) {
  const std::string name(backend);
  std::vector<std::string> args = {"info", kDiscoverBackendOption, name};
  for (const std::string& plugin : plugins) {
    args.push_back("--plugin");
    args.push_back(plugin);
  }
  IsolatedDiscovery result = runIsolated(
      "discovery of '" + name + "'",
      "this process did not ask it, and reports it as not available", std::move(args));
  // The child's discovery gave up waiting (the library's bound): asking again
  // here would wait as long again, for the same answer.
  if (result.safe && result.report.contains("discovery_problem")) {
    result.safe = false;
    result.problem = result.report["discovery_problem"].get<std::string>() +
                     " (found in a separate process; this process did not ask it)";
  }
  return result;
}

IsolatedDiscovery loadPluginInChild(const std::string& path) {
  return runIsolated("loading plugin " + path + " (which discovers its backends)",
                     "this process did not load it", {"info", kLoadPluginOption, path});
}

void finishDiscoveryChild(const nlohmann::ordered_json& report, int status) {
  const std::string text = report.dump() + "\n";
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n =
        ::write(STDOUT_FILENO, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  std::fflush(stderr);
  ::_exit(status);
}

void prepareDiscoveryChild() noexcept {
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
}

}  // namespace accel::tool
