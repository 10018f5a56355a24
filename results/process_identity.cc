#include "results/process_identity.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>

namespace ingot {
namespace {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

struct ProcStat {
  char state = '?';
  int64_t start_ticks = 0;
};

std::optional<ProcStat> read_proc_stat(int64_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!file || !std::getline(file, line)) return std::nullopt;
  // Field 2 is the command name in parentheses and may itself hold spaces and ')'; fields after the last
  // ')' are plain: state is field 3, starttime field 22.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  ProcStat stat;
  std::string skip;
  if (!(fields >> stat.state)) return std::nullopt;
  for (int field = 4; field < 22; ++field) {
    if (!(fields >> skip)) return std::nullopt;
  }
  if (!(fields >> stat.start_ticks)) return std::nullopt;
  return stat;
}

}  // namespace

ProcessIdentity current_process() {
  ProcessIdentity self;
  self.host = host_name();
  self.pid = getpid();
  self.start_ticks = process_start_ticks(self.pid);
  return self;
}

std::optional<int64_t> process_start_ticks(int64_t pid) {
  std::optional<ProcStat> stat = read_proc_stat(pid);
  if (!stat) return std::nullopt;
  return stat->start_ticks;
}

bool is_running(const ProcessIdentity& holder) {
  if (holder.host != host_name()) return false;
  if (holder.pid <= 0 || holder.pid > INT_MAX) return false;
  // EPERM: the process exists but belongs to another user.
  if (kill(static_cast<pid_t>(holder.pid), 0) != 0 && errno != EPERM) return false;
  std::optional<ProcStat> stat = read_proc_stat(holder.pid);
  // Without /proc, kill() is all we know; with it, a missing entry means the process ended just now.
  if (!stat) return !read_proc_stat(getpid());
  // A zombie has ended and can never release its claim; its parent just has not reaped it yet.
  if (stat->state == 'Z' || stat->state == 'X') return false;
  return !holder.start_ticks || *holder.start_ticks == stat->start_ticks;
}

}  // namespace ingot
