// Who holds a claim on a candidate in the tuning database: host name, pid, and the pid's start time, which
// tells the original process from a later one that reuses its pid (common after a container restarts).
// Used by Database::claim to decide whether a claim's holder still runs or its claim may be taken over.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ingot {

struct ProcessIdentity {
  std::string host;
  int64_t pid = 0;
  // Clock ticks after boot at which the process started (field 22 of /proc/<pid>/stat); nullopt where
  // /proc is not available.
  std::optional<int64_t> start_ticks;
};

ProcessIdentity current_process();

// The start time of a running process, or nullopt if it does not run (or /proc cannot tell).
std::optional<int64_t> process_start_ticks(int64_t pid);

// True when the process runs now on this host (kill(pid, 0)), is not a zombie, and started when the
// identity says. A process on another host counts as gone: the database's WAL mode needs shared memory, so
// processes on two hosts cannot use one database file at the same time.
bool is_running(const ProcessIdentity& holder);

}  // namespace ingot
