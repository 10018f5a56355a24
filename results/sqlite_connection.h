// A thin RAII layer over the SQLite C API for the tuning database: one connection, prepared statements and
// transactions, each failure thrown as a DatabaseError naming the file and SQLite's message. Used only inside
// results/ (and its tests); a connection must not be used by two threads at once.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "results/database_error.h"

namespace ingot {

class SqliteConnection {
 public:
  // flags as for sqlite3_open_v2 (SQLITE_OPEN_READONLY, or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE). immutable:
  // read-only without locks or the -shm file WAL readers otherwise make (SQLite's immutable=1), for a file in a
  // folder this process cannot write, which no one else can then be writing either.
  SqliteConnection(std::string path, int flags, bool immutable = false);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  // Runs one or more statements that return no rows.
  void exec(const std::string& sql);
  // Throws DatabaseError: "<doing>: <SQLite's message> (<result code name>)".
  [[noreturn]] void fail(const std::string& doing, int result_code) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(SqliteConnection& connection, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, const std::optional<double>& value);  // nullopt binds NULL
  Statement& bind_null(int index);

  // True when a row is ready to read, false when the statement is done.
  bool step();
  // Runs a statement that returns no rows.
  void run() { step(); }

  // Columns are numbered from 0, as in SQLite.
  bool is_null(int column) const;
  int64_t column_int(int column) const;
  double column_double(int column) const;
  std::optional<double> column_optional_double(int column) const;
  std::string column_text(int column) const;  // "" for NULL

 private:
  SqliteConnection& connection_;
  std::string sql_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN (deferred, for reading a consistent snapshot) or BEGIN IMMEDIATE (for writing: takes the write lock
// first, so two writers wait for each other under busy_timeout instead of failing on lock upgrade). Rolls
// back on destruction unless committed.
class Transaction {
 public:
  enum class Mode { kRead, kWrite };
  Transaction(SqliteConnection& connection, Mode mode);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  SqliteConnection& connection_;
  bool open_ = false;
};

}  // namespace ingot
