// Helpers for the tuning-database tests: a temporary directory per test, raw sqlite3 access that bypasses
// Database (to check what a user of the sqlite3 shell would see, or to plant states), and small records.
#pragma once

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "results/database.h"

namespace ingot::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ingot_db_test_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string hash_of(uint64_t n) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(n));
  return text;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary);
  file << bytes;
}

// Rows of a query through a separate plain connection, every value as text ("NULL" for NULL).
using Rows = std::vector<std::vector<std::string>>;
inline Rows sql_rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + path);
  }
  sqlite3_busy_timeout(db, 10000);
  Rows rows;
  char* error = nullptr;
  auto collect = [](void* out, int n, char** values, char**) {
    std::vector<std::string> row;
    for (int i = 0; i < n; ++i) row.push_back(values[i] ? values[i] : "NULL");
    static_cast<Rows*>(out)->push_back(std::move(row));
    return 0;
  };
  int rc = sqlite3_exec(db, sql.c_str(), collect, &rows, &error);
  std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("sql '" + sql + "' failed: " + message);
  return rows;
}

inline std::string sql_value(const std::string& path, const std::string& sql) {
  Rows rows = sql_rows(path, sql);
  if (rows.size() != 1 || rows[0].size() != 1) throw std::runtime_error("sql '" + sql + "' is not one value");
  return rows[0][0];
}

inline WorkloadRecord workload(uint64_t n, const std::string& name) {
  return {hash_of(n), name, "program " + name + " #" + std::to_string(n), ""};
}

inline CandidateRecord candidate(uint64_t n, const std::string& workload_hash, const std::string& target = "cpu") {
  return {hash_of(n), workload_hash, target, "{\"decisions\":[],\"n\":" + std::to_string(n) + "}", ""};
}

inline MeasurementRecord measurement(const std::string& candidate_hash, int64_t run_id, std::vector<double> seconds,
                                     ErrorClass error = ErrorClass::kNone, const std::string& message = "") {
  MeasurementRecord m;
  m.candidate_hash = candidate_hash;
  m.run_id = run_id;
  m.target_description = "cpu test target";
  m.error_class = error;
  m.error_message = message;
  m.run_seconds = std::move(seconds);
  m.compile_seconds = 0.25;
  return m;
}

inline RunInfo run_info(uint64_t seed = 7) {
  RunInfo info;
  info.config_text = "workload: test\n";
  info.config_path = "configs/test.yaml";
  info.machine = "test machine";
  info.compiler = "test compiler";
  info.seed = seed;
  return info;
}

// Runs body in a forked child, which exits with body's result (1 when it throws) and never returns into the
// test. The parent must not hold an open Database across the fork: SQLite forbids using one connection in
// two processes, and even an idle one confuses the child's locking.
inline pid_t fork_child(const std::function<int()>& body) {
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  int code = 1;
  try {
    code = body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", getpid(), e.what());
  }
  _exit(code);
}

// The child's exit code, or 128 + signal when a signal ended it.
inline int wait_child(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) throw std::runtime_error("waitpid failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A pipe for a child to tell the parent what it has done; closed on destruction.
class Pipe {
 public:
  Pipe() {
    if (pipe(fds_) != 0) throw std::runtime_error("pipe failed");
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() { close_fd(fds_[0]); }
  void close_write() { close_fd(fds_[1]); }
  void write_value(int64_t value) {
    if (write(fds_[1], &value, sizeof(value)) != sizeof(value)) throw std::runtime_error("pipe write failed");
  }
  // False at end of file (every writer closed or gone).
  bool read_value(int64_t& value) {
    size_t got = 0;
    char* bytes = reinterpret_cast<char*>(&value);
    while (got < sizeof(value)) {
      ssize_t n = read(fds_[0], bytes + got, sizeof(value) - got);
      if (n <= 0) return false;
      got += static_cast<size_t>(n);
    }
    return true;
  }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  int fds_[2] = {-1, -1};
};

}  // namespace ingot::testing
