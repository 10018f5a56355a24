#include "results/database.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>

#include "results/process_identity.h"
#include "results/run_statistics.h"
#include "results/schema.h"
#include "results/sqlite_connection.h"

namespace ingot {
namespace {

constexpr int kBusyTimeoutMs = 10000;

std::string now_utc() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof(text) - n, ".%03dZ", static_cast<int>(millis));
  return text;
}

bool is_hash(const std::string& text) {
  return text.size() == 16 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

void require_hash(const std::string& path, const std::string& what, const std::string& hash) {
  if (!is_hash(hash)) throw_database_error(path, what + " '" + hash + "' is not 16 lowercase hex digits");
}

// Shortest text that reads back as the same double.
std::string run_seconds_to_json(const std::vector<double>& seconds) {
  std::string json = "[";
  char number[32];
  for (size_t i = 0; i < seconds.size(); ++i) {
    if (i) json += ',';
    auto [end, error] = std::to_chars(number, number + sizeof(number), seconds[i]);
    json.append(number, end);
  }
  return json + "]";
}

std::optional<std::vector<double>> run_seconds_from_json(const std::string& json) {
  std::vector<double> seconds;
  const char* p = json.data();
  const char* end = p + json.size();
  auto skip_space = [&] {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) ++p;
  };
  skip_space();
  if (p == end || *p++ != '[') return std::nullopt;
  skip_space();
  if (p < end && *p == ']') return seconds;
  while (true) {
    double value = 0;
    auto [next, error] = std::from_chars(p, end, value);
    if (error != std::errc()) return std::nullopt;
    seconds.push_back(value);
    p = next;
    skip_space();
    if (p == end) return std::nullopt;
    if (*p == ']') return seconds;
    if (*p++ != ',') return std::nullopt;
    skip_space();
  }
}

bool file_starts_like_sqlite(const std::string& path) {
  static const char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  std::ifstream file(path, std::ios::binary);
  char header[16] = {};
  file.read(header, sizeof(header));
  return file.gcount() == sizeof(header) && std::equal(header, header + 16, kMagic);
}

// Everything that can be learned without writing: open() refuses a file here before any pragma (WAL mode
// rewrites the header) touches it. The read-only connection cannot even checkpoint another application's WAL
// into its file on close.
// "" when SQLite's quick_check finds the file sound; otherwise its first finding (or the error that stopped it).
std::string quick_check_problem(SqliteConnection& connection) {
  try {
    Statement check(connection, "PRAGMA quick_check");
    if (check.step() && check.column_text(0) == "ok") return "";
    return "quick_check: " + check.column_text(0);
  } catch (const DatabaseError& e) {
    return e.what();
  }
}

// A transaction cut off by SIGKILL while the file was in rollback-journal mode (a new file, before ingot turns WAL
// on) leaves a hot journal beside it. SQLite rolls that back at the first read of a connection that may write, as
// any open of the file would; a read-only one cannot, and calls the file read-only (every later open failed so, and
// `db check` called it corrupt). Rolled back here, the file is its last committed state again; where this process
// cannot write, the read-only probe that follows says what it finds.
void roll_back_an_interrupted_transaction(const std::string& path) {
  std::error_code error;
  if (std::filesystem::file_size(path + "-journal", error) == 0 || error) return;
  try {
    SqliteConnection writer(path, SQLITE_OPEN_READWRITE);
    sqlite3_busy_timeout(writer.handle(), kBusyTimeoutMs);
    sqlite3_exec(writer.handle(), "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  } catch (const std::exception&) {
  }
}

// Whether this process may create files beside path (SQLite's journal, or a WAL reader's -shm file), and the file
// has no write-ahead log to read: then it is read as it is, without them (SqliteConnection's immutable).
bool read_as_it_is(const std::string& path) {
  std::error_code error;
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  return ::access(folder.c_str(), W_OK) != 0 && !std::filesystem::exists(path + "-wal", error);
}

// Refuses what ingot must not open (and must not change); else the file's schema (kEmpty for no file or 0 bytes).
SchemaState check_existing_file(const std::string& path, bool immutable = false) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) return {};
  if (!fs::is_regular_file(status)) throw_database_error(path, "is not a regular file");
  if (fs::file_size(path, error) == 0 && !error) return {};  // empty: becomes a new database
  if (!file_starts_like_sqlite(path)) {
    throw_database_error(path, "is not an SQLite database (its header is not 'SQLite format 3'); it was not modified");
  }
  if (!immutable) roll_back_an_interrupted_transaction(path);
  SqliteConnection probe(path, SQLITE_OPEN_READONLY, immutable);
  sqlite3_busy_timeout(probe.handle(), kBusyTimeoutMs);
  SchemaState state = inspect_schema(probe);
  if (state.kind == SchemaKind::kForeign) throw_database_error(path, state.reason + "; it was not modified");
  if (state.kind == SchemaKind::kIngot && state.version > kSchemaVersion) {
    throw_database_error(path, "schema version " + std::to_string(state.version) +
                                   " is newer than this ingot supports (" + std::to_string(kSchemaVersion) +
                                   "); use a newer ingot. The file was not modified");
  }
  // Before anything writes to it: a damaged file must stay as it was, for repair or recovery.
  std::string damage = quick_check_problem(probe);
  if (!damage.empty()) {
    throw_database_error(path, "is corrupt (" + damage + "); it was not modified. `ingot db check --db " + path +
                                   "` reports what it can read");
  }
  return state;
}

// Switching to WAL needs a moment of exclusive access, which SQLite does not wait for under busy_timeout
// when another connection is just creating the same new file.
void enable_wal(SqliteConnection& connection) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  while (true) {
    int rc = sqlite3_exec(connection.handle(), "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline) {
      connection.fail("enabling WAL mode", rc);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The run times of a measurement or a side-by-side round are checked and summed up alike: a time that is negative
// or not finite is refused (it would not read back from the JSON column); nullopt when there are none.
std::optional<RunStatistics> checked_statistics(const std::string& path, const std::string& what,
                                                const std::vector<double>& seconds) {
  for (double s : seconds) {
    if (!std::isfinite(s) || s < 0)
      throw_database_error(path, what + ": run time " + std::to_string(s) + " is invalid");
  }
  if (seconds.empty()) return std::nullopt;
  return run_statistics(seconds);
}

// Binds min_s, median_s, mean_s and stddev_s at parameters first .. first + 3: all four, or all NULL.
Statement& bind_statistics(Statement& statement, int first, const std::optional<RunStatistics>& stats) {
  auto stat = [&](double RunStatistics::*field) {
    return stats ? std::optional<double>((*stats).*field) : std::nullopt;
  };
  return statement.bind(first, stat(&RunStatistics::min))
      .bind(first + 1, stat(&RunStatistics::median))
      .bind(first + 2, stat(&RunStatistics::mean))
      .bind(first + 3, stat(&RunStatistics::stddev));
}

// The workload and candidate columns that begin kMeasuredCandidateColumns and kSideBySideColumns.
void read_candidate(const Statement& row, std::string& workload_name, CandidateRecord& candidate) {
  workload_name = row.column_text(0);
  candidate.workload_hash = row.column_text(1);
  candidate.hash = row.column_text(2);
  candidate.target = row.column_text(3);
  candidate.schedule_json = row.column_text(4);
}

// The outcome columns measurements and side_by_side share, from column `first` on: error_class, error_message,
// run_seconds, min_s, median_s, mean_s, stddev_s. Record is MeasurementRecord or SideBySideRecord; `row_name`
// ("measurement 12") names the row in errors, as a row written by another tool may hold anything.
template <class Record>
void read_outcome(const std::string& path, const std::string& row_name, const Statement& row, int first,
                  Record& record) {
  std::string error_class = row.column_text(first);
  try {
    record.error_class = error_class_from_string(error_class);
  } catch (const std::invalid_argument& e) {
    throw_database_error(path, row_name + ": " + e.what());
  }
  record.error_message = row.column_text(first + 1);
  std::string json = row.column_text(first + 2);
  std::optional<std::vector<double>> seconds = run_seconds_from_json(json);
  if (!seconds) throw_database_error(path, row_name + ": run_seconds '" + json + "' is not a JSON array of numbers");
  record.run_seconds = std::move(*seconds);
  std::optional<double> min = row.column_optional_double(first + 3), median = row.column_optional_double(first + 4),
                        mean = row.column_optional_double(first + 5), stddev = row.column_optional_double(first + 6);
  if (min && median && mean && stddev)
    record.statistics = RunStatistics{*min, *median, *mean, *stddev};
  else if (min || median || mean || stddev)  // bind_statistics writes all four or none: not a row of ours
    throw_database_error(path, row_name + ": min_s, median_s, mean_s and stddev_s must be all set or all NULL");
}

const char* const kMeasuredCandidateColumns =
    "workload_name, workload_hash, candidate_hash, target, schedule_json, measurement_id, run_id, trial_index, "
    "target_description, error_class, error_message, run_seconds, min_s, median_s, mean_s, stddev_s, "
    "compile_seconds, measured_at";

MeasuredCandidate read_measured_candidate(const std::string& path, const Statement& row) {
  MeasuredCandidate r;
  read_candidate(row, r.workload_name, r.candidate);
  MeasurementRecord& m = r.measurement;
  m.id = row.column_int(5);
  m.candidate_hash = r.candidate.hash;
  m.run_id = row.column_int(6);
  m.trial_index = row.column_int(7);
  m.target_description = row.column_text(8);
  read_outcome(path, "measurement " + std::to_string(m.id), row, 9, m);
  m.compile_seconds = row.column_optional_double(16);
  m.measured_at = row.column_text(17);
  return r;
}

const char* const kSideBySideColumns =
    "workload_name, workload_hash, candidate_hash, target, schedule_json, side_by_side_id, run_id, round, "
    "is_reference, target_description, error_class, error_message, run_seconds, min_s, median_s, mean_s, stddev_s, "
    "measured_at";

SideBySideRow read_side_by_side(const std::string& path, const Statement& row) {
  SideBySideRow r;
  read_candidate(row, r.workload_name, r.candidate);
  SideBySideRecord& s = r.record;
  s.id = row.column_int(5);
  s.candidate_hash = r.candidate.hash;
  s.run_id = row.column_int(6);
  s.round = row.column_int(7);
  s.is_reference = row.column_int(8) != 0;
  s.target_description = row.column_text(9);
  read_outcome(path, "side-by-side round " + std::to_string(s.id), row, 10, s);
  s.measured_at = row.column_text(17);
  return r;
}

int64_t count_rows(SqliteConnection& connection, const std::string& sql) {
  Statement s(connection, sql);
  s.step();
  return s.column_int(0);
}

// The one workload whose hash or name is `workload`. A name can be shared (other sizes of a model, or another
// model), and guessing among them would mix their results; `instead` tells the caller what to give.
std::string resolve_workload(SqliteConnection& db, const std::string& path, const std::string& what,
                             const std::string& workload, const std::string& instead) {
  Statement matches(db, "SELECT hash FROM workloads WHERE hash = ?1 OR name = ?1 ORDER BY hash");
  matches.bind(1, workload);
  std::vector<std::string> hashes;
  while (matches.step()) hashes.push_back(matches.column_text(0));
  if (hashes.empty()) throw_database_error(path, what + ": no workload has the hash or name '" + workload + "'");
  if (hashes.size() > 1) {
    std::string list;
    for (const std::string& h : hashes) list += (list.empty() ? "" : ", ") + h;
    throw_database_error(path, what + ": " + std::to_string(hashes.size()) + " workloads are named '" + workload +
                                   "' (" + list + "), of different sizes or models; " + instead);
  }
  return hashes[0];
}

const char* const kCostModelColumns =
    "id, target, feature_set_version, sample_count, params_json, model_json, metrics_json, trained_on, created_at";

CostModelRecord read_cost_model(const std::string& path, const Statement& row) {
  CostModelRecord model;
  model.id = row.column_int(0);
  model.target = row.column_text(1);
  int64_t feature_set_version = row.column_int(2);
  // The schema allows any SQL integer; a version too large for an int was not written by add_cost_model.
  if (feature_set_version > std::numeric_limits<int>::max()) {
    throw_database_error(path, "cost model " + std::to_string(model.id) + ": feature_set_version " +
                                   std::to_string(feature_set_version) + " does not fit an int");
  }
  model.feature_set_version = static_cast<int>(feature_set_version);
  model.sample_count = row.column_int(3);
  model.params_json = row.column_text(4);
  model.model_json = row.column_text(5);
  model.metrics_json = row.column_text(6);
  model.trained_on = row.column_text(7);
  model.created_at = row.column_text(8);
  return model;
}

}  // namespace

struct Database::Impl {
  std::string path;
  std::unique_ptr<SqliteConnection> connection;
  ProcessIdentity self = current_process();
  std::mutex mutex;  // one connection serves every thread of the process, one transaction at a time

  SqliteConnection& db() { return *connection; }
  bool run_exists(int64_t run_id) {
    Statement s(db(), "SELECT 1 FROM runs WHERE id = ?1");
    s.bind(1, run_id);
    return s.step();
  }
};

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

const std::string& Database::path() const { return impl_->path; }

Database Database::open(const std::string& path) {
  check_existing_file(path);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->connection = std::make_unique<SqliteConnection>(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  SqliteConnection& db = *impl->connection;
  sqlite3_busy_timeout(db.handle(), kBusyTimeoutMs);
  db.exec("PRAGMA foreign_keys = ON");
  enable_wal(db);
  // FULL: a measurement survives a power loss too once add_measurement returns, at one fsync per commit.
  db.exec("PRAGMA synchronous = FULL");
  upgrade_schema(db, schema_migrations());
  return Database(std::move(impl));
}

Database Database::open_existing(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw_database_error(path, "no database at this path (ingot tune creates one; --db names another)");
  if (!read_as_it_is(path)) return open(path);
  // A folder this process cannot write (a read-only mount, another user's results): SQLite could make neither a
  // journal nor the -shm file a WAL reader needs there, so the file is read as it is, and nothing can be written.
  SchemaState state = check_existing_file(path, true);
  if (state.kind != SchemaKind::kIngot || state.version != kSchemaVersion)
    throw_database_error(path, "has schema version " + std::to_string(state.version) + ", not this ingot's " +
                                   std::to_string(kSchemaVersion) +
                                   ", and its folder cannot be written to upgrade it; open it once where it can");
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->connection = std::make_unique<SqliteConnection>(path, SQLITE_OPEN_READONLY, true);
  return Database(std::move(impl));
}

int64_t Database::begin_run(const RunInfo& info) {
  std::lock_guard lock(impl_->mutex);
  Statement insert(impl_->db(),
                   "INSERT INTO runs (config_text, config_path, started_at, machine, compiler, seed) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  insert.bind(1, info.config_text)
      .bind(2, info.config_path)
      .bind(3, now_utc())
      .bind(4, info.machine)
      .bind(5, info.compiler)
      .bind(6, static_cast<int64_t>(info.seed));
  insert.run();
  return sqlite3_last_insert_rowid(impl_->db().handle());
}

void Database::end_run(int64_t run_id) {
  std::lock_guard lock(impl_->mutex);
  Statement update(impl_->db(), "UPDATE runs SET ended_at = ?1 WHERE id = ?2");
  update.bind(1, now_utc()).bind(2, run_id).run();
  if (sqlite3_changes(impl_->db().handle()) == 0) {
    throw_database_error(impl_->path, "end_run: there is no run " + std::to_string(run_id));
  }
}

std::optional<RunInfo> Database::run(int64_t run_id) const {
  std::lock_guard lock(impl_->mutex);
  Statement select(impl_->db(),
                   "SELECT id, config_text, config_path, started_at, ended_at, machine, compiler, seed "
                   "FROM runs WHERE id = ?1");
  select.bind(1, run_id);
  if (!select.step()) return std::nullopt;
  RunInfo info;
  info.id = select.column_int(0);
  info.config_text = select.column_text(1);
  info.config_path = select.column_text(2);
  info.started_at = select.column_text(3);
  info.ended_at = select.column_text(4);
  info.machine = select.column_text(5);
  info.compiler = select.column_text(6);
  info.seed = static_cast<uint64_t>(select.column_int(7));
  return info;
}

bool Database::add_workload(const WorkloadRecord& workload) {
  require_hash(impl_->path, "add_workload: hash", workload.hash);
  std::lock_guard lock(impl_->mutex);
  Transaction transaction(impl_->db(), Transaction::Mode::kWrite);
  Statement existing(impl_->db(), "SELECT program_text FROM workloads WHERE hash = ?1");
  existing.bind(1, workload.hash);
  if (existing.step()) {
    if (existing.column_text(0) != workload.program_text) {
      throw_database_error(impl_->path, "add_workload: workload " + workload.hash + " ('" + workload.name +
                                            "') is stored with a different program text (a hash collision?)");
    }
    return false;
  }
  Statement insert(impl_->db(), "INSERT INTO workloads (hash, name, program_text, created_at) VALUES (?1, ?2, ?3, ?4)");
  insert.bind(1, workload.hash).bind(2, workload.name).bind(3, workload.program_text).bind(4, now_utc()).run();
  transaction.commit();
  return true;
}

bool Database::add_candidate(const CandidateRecord& candidate) {
  require_hash(impl_->path, "add_candidate: hash", candidate.hash);
  require_hash(impl_->path, "add_candidate: workload hash", candidate.workload_hash);
  std::lock_guard lock(impl_->mutex);
  Transaction transaction(impl_->db(), Transaction::Mode::kWrite);
  Statement existing(impl_->db(), "SELECT workload_hash, target, schedule_json FROM candidates WHERE hash = ?1");
  existing.bind(1, candidate.hash);
  if (existing.step()) {
    if (existing.column_text(0) != candidate.workload_hash || existing.column_text(1) != candidate.target ||
        existing.column_text(2) != candidate.schedule_json) {
      throw_database_error(impl_->path, "add_candidate: candidate " + candidate.hash +
                                            " is stored with a different workload, target or schedule "
                                            "(a hash collision?)");
    }
    return false;
  }
  Statement workload(impl_->db(), "SELECT 1 FROM workloads WHERE hash = ?1");
  workload.bind(1, candidate.workload_hash);
  if (!workload.step()) {
    throw_database_error(impl_->path, "add_candidate: candidate " + candidate.hash + " refers to workload " +
                                          candidate.workload_hash + ", which is not stored; add_workload first");
  }
  Statement insert(impl_->db(),
                   "INSERT INTO candidates (hash, workload_hash, target, schedule_json, created_at) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)");
  insert.bind(1, candidate.hash)
      .bind(2, candidate.workload_hash)
      .bind(3, candidate.target)
      .bind(4, candidate.schedule_json)
      .bind(5, now_utc())
      .run();
  transaction.commit();
  return true;
}

int64_t Database::add_measurement(const MeasurementRecord& m) {
  const std::string& path = impl_->path;
  const std::string what = "add_measurement of candidate " + m.candidate_hash;
  require_hash(path, what + ": candidate hash", m.candidate_hash);
  std::optional<RunStatistics> stats = checked_statistics(path, what, m.run_seconds);
  if (m.compile_seconds && (!std::isfinite(*m.compile_seconds) || *m.compile_seconds < 0)) {
    throw_database_error(path, what + ": compile time " + std::to_string(*m.compile_seconds) + " is invalid");
  }

  std::lock_guard lock(impl_->mutex);
  SqliteConnection& db = impl_->db();
  Transaction transaction(db, Transaction::Mode::kWrite);
  Statement candidate(db, "SELECT target FROM candidates WHERE hash = ?1");
  candidate.bind(1, m.candidate_hash);
  if (!candidate.step()) throw_database_error(path, what + ": the candidate is not stored; add_candidate first");
  std::string target = candidate.column_text(0);
  if (!impl_->run_exists(m.run_id)) throw_database_error(path, what + ": there is no run " + std::to_string(m.run_id));

  Statement insert(db,
                   "INSERT INTO measurements (candidate_hash, run_id, trial_index, target_description, error_class, "
                   "error_message, run_seconds, min_s, median_s, mean_s, stddev_s, compile_seconds, measured_at) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  insert.bind(1, m.candidate_hash)
      .bind(2, m.run_id)
      .bind(3, m.trial_index)
      .bind(4, m.target_description)
      .bind(5, to_string(m.error_class))
      .bind(6, m.error_message)
      .bind(7, run_seconds_to_json(m.run_seconds));
  bind_statistics(insert, 8, stats).bind(12, m.compile_seconds).bind(13, now_utc()).run();
  int64_t id = sqlite3_last_insert_rowid(db.handle());
  Statement release(db, "DELETE FROM claims WHERE candidate_hash = ?1 AND target = ?2 AND pid = ?3 AND host = ?4");
  release.bind(1, m.candidate_hash).bind(2, target).bind(3, impl_->self.pid).bind(4, impl_->self.host).run();
  transaction.commit();
  return id;
}

bool Database::has_measurement(const std::string& candidate_hash, const std::string& target) const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db(),
              "SELECT 1 FROM measurements m JOIN candidates c ON c.hash = m.candidate_hash "
              "WHERE m.candidate_hash = ?1 AND c.target = ?2 LIMIT 1");
  s.bind(1, candidate_hash).bind(2, target);
  return s.step();
}

std::optional<Database::StoredOutcome> Database::first_outcome(const std::string& candidate_hash,
                                                               const std::string& target) const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db(),
              "SELECT m.error_class, m.median_s IS NOT NULL, m.median_s FROM measurements m "
              "JOIN candidates c ON c.hash = m.candidate_hash "
              "WHERE m.candidate_hash = ?1 AND c.target = ?2 ORDER BY m.id LIMIT 1");
  s.bind(1, candidate_hash).bind(2, target);
  if (!s.step()) return std::nullopt;
  StoredOutcome outcome;
  outcome.error_class = error_class_from_string(s.column_text(0));
  if (outcome.error_class == ErrorClass::kNone && s.column_int(1) != 0) outcome.median_seconds = s.column_double(2);
  return outcome;
}

bool Database::claim(const std::string& candidate_hash, const std::string& target, int64_t run_id, bool retry_failed) {
  std::lock_guard lock(impl_->mutex);
  SqliteConnection& db = impl_->db();
  // Under the write lock, so the check and the insert are one step for every process.
  Transaction transaction(db, Transaction::Mode::kWrite);
  Statement measured(db,
                     "SELECT 1 FROM measurements m JOIN candidates c ON c.hash = m.candidate_hash "
                     "WHERE m.candidate_hash = ?1 AND c.target = ?2 AND (?3 = 0 OR m.error_class = 'none') LIMIT 1");
  measured.bind(1, candidate_hash).bind(2, target).bind(3, int64_t(retry_failed ? 1 : 0));
  if (measured.step()) return false;

  Statement holder(db, "SELECT host, pid, process_start FROM claims WHERE candidate_hash = ?1 AND target = ?2");
  holder.bind(1, candidate_hash).bind(2, target);
  if (holder.step()) {
    ProcessIdentity h;
    h.host = holder.column_text(0);
    h.pid = holder.column_int(1);
    if (!holder.is_null(2)) h.start_ticks = holder.column_int(2);
    if (is_running(h)) return false;
  }
  if (!impl_->run_exists(run_id)) {
    throw_database_error(impl_->path,
                         "claim of candidate " + candidate_hash + ": there is no run " + std::to_string(run_id));
  }
  Statement insert(db,
                   "INSERT OR REPLACE INTO claims (candidate_hash, target, run_id, pid, host, process_start, "
                   "claimed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  insert.bind(1, candidate_hash).bind(2, target).bind(3, run_id).bind(4, impl_->self.pid).bind(5, impl_->self.host);
  if (impl_->self.start_ticks) {
    insert.bind(6, *impl_->self.start_ticks);
  } else {
    insert.bind_null(6);
  }
  insert.bind(7, now_utc()).run();
  transaction.commit();
  return true;
}

bool Database::release_claim(const std::string& candidate_hash, const std::string& target) {
  std::lock_guard lock(impl_->mutex);
  Statement release(impl_->db(),
                    "DELETE FROM claims WHERE candidate_hash = ?1 AND target = ?2 AND pid = ?3 AND host = ?4");
  release.bind(1, candidate_hash).bind(2, target).bind(3, impl_->self.pid).bind(4, impl_->self.host).run();
  return sqlite3_changes(impl_->db().handle()) > 0;
}

std::optional<MeasuredCandidate> Database::best(const std::string& workload, const std::string& target) const {
  std::lock_guard lock(impl_->mutex);
  SqliteConnection& db = impl_->db();
  Transaction transaction(db, Transaction::Mode::kRead);
  std::string hash = resolve_workload(db, impl_->path, "best", workload,
                                      "give a hash, or the run's config (ingot best --config CONFIG)");
  Statement select(db, std::string("SELECT ") + kMeasuredCandidateColumns +
                           " FROM best_per_workload_target WHERE workload_hash = ?1 AND target = ?2");
  select.bind(1, hash).bind(2, target);
  if (!select.step()) return std::nullopt;
  return read_measured_candidate(impl_->path, select);
}

std::vector<MeasuredCandidate> Database::best_of_every_workload(const std::string& target) const {
  std::lock_guard lock(impl_->mutex);
  Statement select(impl_->db(), std::string("SELECT ") + kMeasuredCandidateColumns +
                                    " FROM best_per_workload_target WHERE target = ?1 ORDER BY workload_name, "
                                    "workload_hash");
  select.bind(1, target);
  std::vector<MeasuredCandidate> rows;
  while (select.step()) rows.push_back(read_measured_candidate(impl_->path, select));
  return rows;
}

std::vector<MeasuredCandidate> Database::history(const std::string& workload, int64_t limit) const {
  std::lock_guard lock(impl_->mutex);
  // Newest first so LIMIT keeps the latest; reversed below into time order.
  Statement select(impl_->db(), std::string("SELECT ") + kMeasuredCandidateColumns +
                                    " FROM history WHERE ?1 = '' OR workload_hash = ?1 OR workload_name = ?1 "
                                    "ORDER BY measured_at DESC, measurement_id DESC LIMIT ?2");
  select.bind(1, workload).bind(2, limit > 0 ? limit : int64_t{-1});
  std::vector<MeasuredCandidate> rows;
  while (select.step()) rows.push_back(read_measured_candidate(impl_->path, select));
  std::reverse(rows.begin(), rows.end());
  return rows;
}

std::map<ErrorClass, int64_t> Database::error_counts(const std::string& workload) const {
  std::lock_guard lock(impl_->mutex);
  std::map<ErrorClass, int64_t> counts;
  for (ErrorClass c : all_error_classes()) counts[c] = 0;
  Statement select(impl_->db(),
                   "SELECT error_class, COUNT(*) FROM history "
                   "WHERE ?1 = '' OR workload_hash = ?1 OR workload_name = ?1 GROUP BY error_class");
  select.bind(1, workload);
  while (select.step()) {
    try {
      counts[error_class_from_string(select.column_text(0))] = select.column_int(1);
    } catch (const std::invalid_argument& e) {
      throw_database_error(impl_->path, std::string("error_counts: ") + e.what());
    }
  }
  return counts;
}

std::vector<WorkloadRecord> Database::list_workloads() const {
  std::lock_guard lock(impl_->mutex);
  Statement select(impl_->db(), "SELECT hash, name, program_text, created_at FROM workloads ORDER BY name, hash");
  std::vector<WorkloadRecord> workloads;
  while (select.step()) {
    workloads.push_back({select.column_text(0), select.column_text(1), select.column_text(2), select.column_text(3)});
  }
  return workloads;
}

std::vector<CandidateRecord> Database::candidates_with_prefix(const std::string& prefix, int64_t limit) const {
  std::lock_guard lock(impl_->mutex);
  // substr instead of LIKE: a prefix is plain text, '%' and '_' in it match only themselves.
  Statement select(impl_->db(),
                   "SELECT hash, workload_hash, target, schedule_json, created_at FROM candidates "
                   "WHERE substr(hash, 1, length(?1)) = ?1 ORDER BY hash LIMIT ?2");
  select.bind(1, prefix).bind(2, limit);
  std::vector<CandidateRecord> found;
  while (select.step())
    found.push_back({select.column_text(0), select.column_text(1), select.column_text(2), select.column_text(3),
                     select.column_text(4)});
  return found;
}

bool Database::add_model_task(const ModelTaskRecord& task) {
  const std::string& path = impl_->path;
  const std::string what = "add_model_task: task " + std::to_string(task.task_index) + " of model " +
                           task.model_workload_hash + " under plan " + task.plan_hash;
  require_hash(path, "add_model_task: model workload hash", task.model_workload_hash);
  require_hash(path, "add_model_task: plan hash", task.plan_hash);
  require_hash(path, "add_model_task: task workload hash", task.task_workload_hash);
  if (task.task_index < 0) throw_database_error(path, what + ": the task index is negative");
  if (task.weight < 1) throw_database_error(path, what + ": weight " + std::to_string(task.weight) + " is below 1");

  std::lock_guard lock(impl_->mutex);
  SqliteConnection& db = impl_->db();
  Transaction transaction(db, Transaction::Mode::kWrite);
  Statement existing(db,
                     "SELECT plan_strategy, task_workload_hash, weight, occurrences_json FROM model_tasks "
                     "WHERE model_workload_hash = ?1 AND plan_hash = ?2 AND task_index = ?3");
  existing.bind(1, task.model_workload_hash).bind(2, task.plan_hash).bind(3, task.task_index);
  if (existing.step()) {
    if (existing.column_text(0) != task.plan_strategy || existing.column_text(1) != task.task_workload_hash ||
        existing.column_int(2) != task.weight || existing.column_text(3) != task.occurrences_json) {
      throw_database_error(path, what +
                                     " is stored with a different strategy, task workload, weight or occurrences "
                                     "(two plans with one hash?)");
    }
    return false;
  }
  for (const std::string* hash : {&task.model_workload_hash, &task.task_workload_hash}) {
    Statement workload(db, "SELECT 1 FROM workloads WHERE hash = ?1");
    workload.bind(1, *hash);
    if (!workload.step())
      throw_database_error(path, what + " refers to workload " + *hash + ", which is not stored; add_workload first");
  }
  Statement insert(db,
                   "INSERT INTO model_tasks (model_workload_hash, plan_hash, plan_strategy, task_index, "
                   "task_workload_hash, weight, occurrences_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  insert.bind(1, task.model_workload_hash)
      .bind(2, task.plan_hash)
      .bind(3, task.plan_strategy)
      .bind(4, task.task_index)
      .bind(5, task.task_workload_hash)
      .bind(6, task.weight)
      .bind(7, task.occurrences_json)
      .bind(8, now_utc())
      .run();
  transaction.commit();
  return true;
}

std::vector<ModelTaskRecord> Database::model_tasks(const std::string& model_workload,
                                                   const std::string& plan_hash) const {
  if (!plan_hash.empty()) require_hash(impl_->path, "model_tasks: plan hash", plan_hash);
  std::lock_guard lock(impl_->mutex);
  SqliteConnection& db = impl_->db();
  Transaction transaction(db, Transaction::Mode::kRead);
  std::string model = resolve_workload(db, impl_->path, "model_tasks", model_workload, "give the model's hash");
  Statement select(db,
                   "SELECT model_workload_hash, plan_hash, plan_strategy, task_index, task_workload_hash, weight, "
                   "occurrences_json, created_at FROM model_tasks "
                   "WHERE model_workload_hash = ?1 AND (?2 = '' OR plan_hash = ?2) ORDER BY plan_hash, task_index");
  select.bind(1, model).bind(2, plan_hash);
  std::vector<ModelTaskRecord> tasks;
  while (select.step()) {
    ModelTaskRecord task;
    task.model_workload_hash = select.column_text(0);
    task.plan_hash = select.column_text(1);
    task.plan_strategy = select.column_text(2);
    task.task_index = select.column_int(3);
    task.task_workload_hash = select.column_text(4);
    task.weight = select.column_int(5);
    task.occurrences_json = select.column_text(6);
    task.created_at = select.column_text(7);
    tasks.push_back(std::move(task));
  }
  return tasks;
}

int64_t Database::add_cost_model(const CostModelRecord& model) {
  const std::string& path = impl_->path;
  const std::string what = "add_cost_model for target '" + model.target + "'";
  if (model.target.empty()) throw_database_error(path, "add_cost_model: the target is empty");
  if (model.model_json.empty()) throw_database_error(path, what + ": model_json is empty");
  if (model.metrics_json.empty()) {
    throw_database_error(path, what + ": metrics_json is empty (give \"{}\" when there are no metrics)");
  }
  if (model.sample_count < 0) {
    throw_database_error(path, what + ": sample_count " + std::to_string(model.sample_count) + " is negative");
  }
  if (model.feature_set_version < 0) {
    throw_database_error(path,
                         what + ": feature_set_version " + std::to_string(model.feature_set_version) + " is negative");
  }
  std::lock_guard lock(impl_->mutex);
  Statement insert(impl_->db(),
                   "INSERT INTO cost_models (target, feature_set_version, sample_count, params_json, model_json, "
                   "metrics_json, trained_on, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  insert.bind(1, model.target)
      .bind(2, static_cast<int64_t>(model.feature_set_version))
      .bind(3, model.sample_count)
      .bind(4, model.params_json)
      .bind(5, model.model_json)
      .bind(6, model.metrics_json)
      .bind(7, model.trained_on)
      .bind(8, now_utc())
      .run();
  return sqlite3_last_insert_rowid(impl_->db().handle());
}

std::optional<CostModelRecord> Database::latest_cost_model(const std::string& target) const {
  std::lock_guard lock(impl_->mutex);
  Statement select(impl_->db(), std::string("SELECT ") + kCostModelColumns +
                                    " FROM cost_models WHERE target = ?1 ORDER BY id DESC LIMIT 1");
  select.bind(1, target);
  if (!select.step()) return std::nullopt;
  return read_cost_model(impl_->path, select);
}

std::vector<CostModelRecord> Database::cost_models(const std::string& target) const {
  std::lock_guard lock(impl_->mutex);
  Statement select(impl_->db(), std::string("SELECT ") + kCostModelColumns +
                                    " FROM cost_models WHERE ?1 = '' OR target = ?1 ORDER BY id");
  select.bind(1, target);
  std::vector<CostModelRecord> models;
  while (select.step()) models.push_back(read_cost_model(impl_->path, select));
  return models;
}

int64_t Database::add_side_by_side(const SideBySideRecord& r) {
  const std::string& path = impl_->path;
  const std::string what = "add_side_by_side of candidate " + r.candidate_hash + ", round " + std::to_string(r.round);
  require_hash(path, what + ": candidate hash", r.candidate_hash);
  if (r.round < 0) throw_database_error(path, what + ": the round is negative");
  if (r.error_class == ErrorClass::kNone && r.run_seconds.empty()) {
    throw_database_error(path, what + ": a correct round (error class none) has no run times");
  }
  std::optional<RunStatistics> stats = checked_statistics(path, what, r.run_seconds);

  std::lock_guard lock(impl_->mutex);
  SqliteConnection& db = impl_->db();
  Transaction transaction(db, Transaction::Mode::kWrite);
  Statement candidate(db, "SELECT 1 FROM candidates WHERE hash = ?1");
  candidate.bind(1, r.candidate_hash);
  if (!candidate.step()) throw_database_error(path, what + ": the candidate is not stored; add_candidate first");
  if (!impl_->run_exists(r.run_id)) throw_database_error(path, what + ": there is no run " + std::to_string(r.run_id));

  // Claims are left alone: a candidate timed again here was measured (and its claim released) long before.
  Statement insert(db,
                   "INSERT INTO side_by_side (run_id, candidate_hash, is_reference, round, target_description, "
                   "error_class, error_message, run_seconds, min_s, median_s, mean_s, stddev_s, measured_at) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  insert.bind(1, r.run_id)
      .bind(2, r.candidate_hash)
      .bind(3, int64_t{r.is_reference ? 1 : 0})
      .bind(4, r.round)
      .bind(5, r.target_description)
      .bind(6, to_string(r.error_class))
      .bind(7, r.error_message)
      .bind(8, run_seconds_to_json(r.run_seconds));
  bind_statistics(insert, 9, stats).bind(13, now_utc()).run();
  int64_t id = sqlite3_last_insert_rowid(db.handle());
  transaction.commit();
  return id;
}

namespace {

// Rows of the side-by-side comparisons of a workload on a target that timed every one of `including` (their
// hashes): of the newest such comparison only, or of all of them, oldest first; in (run, round, id) order.
std::vector<SideBySideRow> side_by_side_rows(SqliteConnection& db, const std::string& path, const char* caller,
                                             const std::string& workload, const std::string& target,
                                             const std::vector<std::string>& including, bool newest_only) {
  // One snapshot: a comparison committed between finding the runs and reading their rows is not half read.
  Transaction transaction(db, Transaction::Mode::kRead);
  std::string hash = resolve_workload(db, path, caller, workload, "give the workload's hash");
  std::string timed_all;
  for (size_t i = 0; i < including.size(); ++i)
    timed_all +=
        " AND run_id IN (SELECT run_id FROM side_by_side WHERE candidate_hash = ?" + std::to_string(i + 3) + ")";
  const std::string runs = newest_only ? "run_id = (SELECT MAX(run_id)" : "run_id IN (SELECT run_id";
  Statement select(db, std::string("SELECT ") + kSideBySideColumns +
                           " FROM side_by_side_history WHERE workload_hash = ?1 AND target = ?2 AND " + runs +
                           " FROM side_by_side_history WHERE workload_hash = ?1 AND target = ?2" + timed_all +
                           ") ORDER BY run_id, round, side_by_side_id");
  select.bind(1, hash).bind(2, target);
  for (size_t i = 0; i < including.size(); ++i) select.bind(int(i + 3), including[i]);
  std::vector<SideBySideRow> rows;
  while (select.step()) rows.push_back(read_side_by_side(path, select));
  return rows;
}

}  // namespace

std::vector<SideBySideRow> Database::latest_side_by_side(const std::string& workload, const std::string& target,
                                                         const std::vector<std::string>& including) const {
  std::lock_guard lock(impl_->mutex);
  return side_by_side_rows(impl_->db(), impl_->path, "latest_side_by_side", workload, target, including, true);
}

std::vector<SideBySideRow> Database::side_by_side_comparisons(const std::string& workload, const std::string& target,
                                                              const std::vector<std::string>& including) const {
  std::lock_guard lock(impl_->mutex);
  return side_by_side_rows(impl_->db(), impl_->path, "side_by_side_comparisons", workload, target, including, false);
}

namespace {

// Every finding of one step of a check, or what stopped it: a damaged page makes SQLite refuse a statement.
template <class Step>
void checked_step(IntegrityReport& report, const char* what, Step step) {
  try {
    step();
  } catch (const DatabaseError& e) {
    report.problems.push_back(std::string(what) + ": could not be read, the file is corrupt (" + e.what() + ")");
  }
}

IntegrityReport integrity_report(SqliteConnection& db, const std::string& path) {
  IntegrityReport report;
  report.path = path;
  Transaction transaction(db, Transaction::Mode::kRead);
  bool integrity_ok = false;
  checked_step(report, "integrity_check", [&] {
    Statement integrity(db, "PRAGMA integrity_check");
    while (integrity.step()) {
      std::string line = integrity.column_text(0);
      if (line == "ok") {
        integrity_ok = true;
      } else {
        report.problems.push_back("integrity_check: " + line);
      }
    }
  });
  checked_step(report, "foreign_key_check", [&] {
    Statement keys(db, "PRAGMA foreign_key_check");
    while (keys.step()) {
      report.problems.push_back("foreign_key_check: row " + std::to_string(keys.column_int(1)) + " of table " +
                                keys.column_text(0) + " refers to a missing row of " + keys.column_text(2));
    }
  });
  checked_step(report, "schema", [&] {
    SchemaState schema = inspect_schema(db);
    report.schema_version = schema.version;
    if (schema.kind != SchemaKind::kIngot) report.problems.push_back("schema: " + schema.reason);
  });
  checked_step(report, "journal mode", [&] {
    Statement mode(db, "PRAGMA journal_mode");
    if (mode.step()) report.journal_mode = mode.column_text(0);
  });
  checked_step(report, "row counts", [&] {
    report.runs = count_rows(db, "SELECT COUNT(*) FROM runs");
    report.unfinished_runs = count_rows(db, "SELECT COUNT(*) FROM runs WHERE ended_at IS NULL");
    report.workloads = count_rows(db, "SELECT COUNT(*) FROM workloads");
    report.candidates = count_rows(db, "SELECT COUNT(*) FROM candidates");
    report.measurements = count_rows(db, "SELECT COUNT(*) FROM measurements");
    report.claims = count_rows(db, "SELECT COUNT(*) FROM claims");
    // check_file reads older files as they are: a table their version lacks is not a problem. A table missing
    // from a version that has it fails the count, and is reported.
    if (report.schema_version >= 2) report.cost_models = count_rows(db, "SELECT COUNT(*) FROM cost_models");
    if (report.schema_version >= 3) report.model_tasks = count_rows(db, "SELECT COUNT(*) FROM model_tasks");
    if (report.schema_version >= 4) report.side_by_side = count_rows(db, "SELECT COUNT(*) FROM side_by_side");
  });
  for (ErrorClass c : all_error_classes()) report.measurements_by_class[c] = 0;
  checked_step(report, "measurements", [&] {
    Statement classes(db, "SELECT error_class, COUNT(*) FROM measurements GROUP BY error_class");
    while (classes.step()) {
      std::string name = classes.column_text(0);
      try {
        report.measurements_by_class[error_class_from_string(name)] = classes.column_int(1);
      } catch (const std::invalid_argument&) {
        report.problems.push_back("measurements: unknown error class '" + name + "'");
      }
    }
  });
  report.ok = integrity_ok && report.problems.empty();
  return report;
}

}  // namespace

IntegrityReport Database::check() const {
  std::lock_guard lock(impl_->mutex);
  return integrity_report(impl_->db(), impl_->path);
}

IntegrityReport Database::check_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw_database_error(path, "no database at this path (ingot tune creates one; --db names another)");
  if (!file_starts_like_sqlite(path))
    throw_database_error(path, "is not an SQLite database (its header is not 'SQLite format 3'); it was not modified");
  const bool immutable = read_as_it_is(path);
  if (!immutable) roll_back_an_interrupted_transaction(path);
  SqliteConnection connection(path, SQLITE_OPEN_READONLY, immutable);
  sqlite3_busy_timeout(connection.handle(), kBusyTimeoutMs);
  return integrity_report(connection, path);
}

std::string IntegrityReport::to_text() const {
  std::ostringstream out;
  out << "database: " << path << "\n";
  out << "schema version: " << schema_version << ", journal mode: " << journal_mode << "\n";
  out << "integrity: " << (ok ? "ok" : "PROBLEMS FOUND") << "\n";
  for (const std::string& p : problems) out << "  " << p << "\n";
  out << "runs: " << runs << " (" << unfinished_runs << " not ended)\n";
  out << "workloads: " << workloads << "\n";
  out << "candidates: " << candidates << "\n";
  out << "measurements: " << measurements;
  std::string by_class;
  for (const auto& [c, n] : measurements_by_class) {
    if (n) by_class += (by_class.empty() ? "" : ", ") + to_string(c) + " " + std::to_string(n);
  }
  if (!by_class.empty()) out << " (" << by_class << ")";
  out << "\n";
  out << "claims in flight: " << claims << "\n";
  out << "cost models: " << cost_models << "\n";
  out << "model tasks: " << model_tasks << "\n";
  out << "side-by-side rounds: " << side_by_side << "\n";
  return out.str();
}

}  // namespace ingot
