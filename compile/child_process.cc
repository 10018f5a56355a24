#include "compile/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "compile/file_descriptor.h"

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

// Where the program is: argv0 itself when it has a slash, else the first executable of that name on PATH (as
// execvp would look). Empty, with error set (ENOENT or EACCES), when there is none.
std::string find_program(const std::string& name, int& error) {
  error = ENOENT;
  auto runnable = [&](const std::string& path) {
    struct stat info;
    if (::stat(path.c_str(), &info) != 0 || S_ISDIR(info.st_mode)) return false;
    if (::access(path.c_str(), X_OK) == 0) return true;
    error = EACCES;
    return false;
  };
  if (name.find('/') != std::string::npos) return runnable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = end == at ? "." : dirs.substr(at, end - at);
    if (runnable(dir + "/" + name)) return dir + "/" + name;
    at = end + 1;
  }
  return "";
}

void kill_own_group(int) { ::kill(0, SIGKILL); }

void close_descriptors_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  rlimit limit{};
  int last = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? int(limit.rlim_cur) : 65536;
  for (int fd = first; fd < last; ++fd) ::close(fd);
}

// The child of run_child_process: leads a process group, starts the program in it and waits for it, then ends as
// the program ended (its exit status, or its signal). A tuner killed with SIGKILL cannot stop its compilers, and
// posix_spawn cannot ask for a signal at the parent's death; this guard asks for SIGTERM at it (Linux) and then kills
// its whole group: the compiler driver and the compilers it started (they ran on for up to build_timeout_s, 900 s
// for the paper LSTM, and left temporary files). Only async-signal-safe calls: the parent may have other threads.
[[noreturn]] void guard_and_run(const char* program, char* const* args, int output_fd, pid_t parent) {
  ::setpgid(0, 0);
  int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, 0);
  ::dup2(output_fd, 1);
  ::dup2(output_fd, 2);
  // Not exec'ed, the guard would keep every descriptor of the tuner open, close-on-exec or not: another thread's
  // compile pipe would then not end when its compiler does.
  close_descriptors_from(3);
  struct sigaction on_parent_death {};
  on_parent_death.sa_handler = kill_own_group;
  ::sigaction(SIGTERM, &on_parent_death, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (::getppid() != parent) kill_own_group(0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGTERM, SIG_DFL);
    ::execv(program, args);
    ::_exit(127);
  }
  int status = 0;
  if (child > 0)
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  if (child < 0 || WIFEXITED(status)) ::_exit(child < 0 ? 127 : WEXITSTATUS(status));
  ::signal(WTERMSIG(status), SIG_DFL);
  ::kill(::getpid(), WTERMSIG(status));
  ::_exit(128 + WTERMSIG(status));
}

}  // namespace

ChildProcessResult run_child_process(const std::vector<std::string>& argv, double timeout_seconds) {
  if (argv.empty()) throw std::invalid_argument("run_child_process: empty command");
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));

  int error = 0;
  const std::string program = find_program(argv[0], error);
  if (program.empty()) throw std::runtime_error("cannot start '" + quoted_command(argv) + "': " + std::strerror(error));

  int fds[2];
  // Close-on-exec keeps this pipe out of children that other threads spawn at the same time; otherwise their
  // copies of the write end would hold our read end open past our child's exit.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2 failed: ") + std::strerror(errno));
  FileDescriptor read_end(fds[0]), write_end(fds[1]);

  // Everything the child needs, made before fork: after it, a child of a threaded process may not allocate.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(read_end.get());
    guard_and_run(program.c_str(), args.data(), write_end.get(), parent);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first, a timeout then kills the whole group
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
