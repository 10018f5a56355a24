#include "results/sqlite_connection.h"

#include <utility>

namespace ingot {

namespace {

// path as a file: URI with the query parameter: '%', '?' and '#' escaped, so that they stay part of the name.
std::string uri_of(const std::string& path, const std::string& query) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char* hex = "0123456789ABCDEF";
      uri += '%';
      uri += hex[(unsigned char)c >> 4];
      uri += hex[(unsigned char)c & 15];
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

}  // namespace

SqliteConnection::SqliteConnection(std::string path, int flags, bool immutable) : path_(std::move(path)) {
  const std::string name = immutable ? uri_of(path_, "immutable=1") : path_;
  if (immutable)
    flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  // NOMUTEX: Database serializes use of a connection itself; SQLite's own mutex would only add cost.
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw_database_error(path_, std::string("cannot open: ") + message + " (" + sqlite3_errstr(rc) + ")");
  }
  sqlite3_extended_result_codes(db_, 1);
}

SqliteConnection::~SqliteConnection() {
  // Statements are finalized by their owners first; sqlite3_close_v2 copes with any left over.
  sqlite3_close_v2(db_);
}

void SqliteConnection::exec(const std::string& sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw_database_error(path_, "running '" + sql.substr(0, 80) + "': " + text + " (" + sqlite3_errstr(rc) + ")");
  }
}

void SqliteConnection::fail(const std::string& doing, int result_code) const {
  throw_database_error(path_, doing + ": " + sqlite3_errmsg(db_) + " (" + sqlite3_errstr(result_code) + ")");
}

Statement::Statement(SqliteConnection& connection, const std::string& sql) : connection_(connection), sql_(sql) {
  int rc = sqlite3_prepare_v2(connection_.handle(), sql_.c_str(), -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) connection_.fail("preparing '" + sql_ + "'", rc);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) connection_.fail("binding parameter " + std::to_string(index) + " of '" + sql_ + "'", rc);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) connection_.fail("binding parameter " + std::to_string(index) + " of '" + sql_ + "'", rc);
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) connection_.fail("binding parameter " + std::to_string(index) + " of '" + sql_ + "'", rc);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) connection_.fail("binding parameter " + std::to_string(index) + " of '" + sql_ + "'", rc);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  connection_.fail("running '" + sql_ + "'", rc);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::optional<double> Statement::column_optional_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_double(column);
}

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (!text) return "";
  return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column));
}

Transaction::Transaction(SqliteConnection& connection, Mode mode) : connection_(connection) {
  connection_.exec(mode == Mode::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
  open_ = true;
}

Transaction::~Transaction() {
  // SQLite may already have rolled back by itself after some errors (disk full, I/O); only an open
  // transaction is rolled back here, and a failure to do so cannot be reported from a destructor.
  if (open_ && !sqlite3_get_autocommit(connection_.handle())) {
    sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  connection_.exec("COMMIT");
  open_ = false;
}

}  // namespace ingot
