// Runs an external program (the system C++ compiler) as a child process without a shell, capturing its
// combined stdout and stderr, and kills it with its whole process group when it exceeds a time limit.
// Safe to call from several threads at once.
#pragma once

#include <string>
#include <vector>

namespace ingot {

struct ChildProcessResult {
  int exit_code = -1;      // the program's exit status, or -1 when it was killed by a signal
  int signal = 0;          // the signal that ended it, 0 when it exited
  bool timed_out = false;  // it ran past the limit and was killed (exit_code -1, signal SIGKILL)
  std::string output;      // stdout and stderr interleaved as written
  double seconds = 0;      // wall time
};

// argv[0] is looked up on PATH. Throws std::runtime_error when the program cannot be started (naming it);
// a program that runs and fails is reported in the result, not thrown.
ChildProcessResult run_child_process(const std::vector<std::string>& argv, double timeout_seconds);

}  // namespace ingot
