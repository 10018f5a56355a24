#include "compile/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "compile/file_descriptor.h"

extern char** environ;

namespace ingot {

namespace {

using Clock = std::chrono::steady_clock;

std::string quoted_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Reaps the child; when it has not exited by the deadline, kills its process group first.
void wait_for_exit(pid_t pid, Clock::time_point deadline, ChildProcessResult& result) {
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    if (Clock::now() >= deadline && !result.timed_out) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
}

}  // namespace

ChildProcessResult run_child_process(const std::vector<std::string>& argv, double timeout_seconds) {
  if (argv.empty()) throw std::invalid_argument("run_child_process: empty command");
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));

  int fds[2];
  // Close-on-exec keeps this pipe out of children that other threads spawn at the same time; otherwise their
  // copies of the write end would hold our read end open past our child's exit.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2 failed: ") + std::strerror(errno));
  FileDescriptor read_end(fds[0]), write_end(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group, so that a timeout kills the compiler driver and the compilers it started.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int err = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (err != 0) throw std::runtime_error("cannot start '" + quoted_command(argv) + "': " + std::strerror(err));
  write_end.reset();

  ChildProcessResult result;
  char buffer[4096];
  for (;;) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (remaining <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, int(std::min<long long>(remaining, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    }
    if (ready == 0) continue;
    ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of output: every process holding the pipe has exited or closed it
    result.output.append(buffer, size_t(n));
  }
  wait_for_exit(pid, deadline, result);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace ingot
