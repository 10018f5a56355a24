// The tuning database in one process: creating and reopening files, refusing files that are not ingot
// databases without touching them, idempotent records, measurement round trips, a model's tasks, the SQL views as
// a sqlite3 shell user sees them, and the integrity report.
#include "results/database.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "results/sqlite_connection.h"
#include "tests/results/test_database.h"

namespace ingot {
namespace {

using namespace ingot::testing;
using ::testing::HasSubstr;

TEST(Database, StoresEveryErrorClassUnderItsExactSpelling) {
  std::vector<std::string> spellings;
  for (ErrorClass c : all_error_classes()) spellings.push_back(to_string(c));
  EXPECT_EQ(spellings, (std::vector<std::string>{"none", "invalid_schedule", "compile_error", "compile_timeout",
                                                 "runtime_error", "run_timeout", "wrong_answer"}));
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  db.add_workload(workload(1, "mlp"));
  db.add_candidate(candidate(2, hash_of(1)));
  int64_t run = db.begin_run(run_info());
  for (ErrorClass c : all_error_classes()) db.add_measurement(measurement(hash_of(2), run, {1.0}, c));
  EXPECT_EQ(sql_value(db.path(),
                      "SELECT group_concat(error_class, ' ') FROM (SELECT error_class FROM measurements ORDER BY id)"),
            "none invalid_schedule compile_error compile_timeout runtime_error run_timeout wrong_answer");
  std::vector<MeasuredCandidate> rows = db.history();
  ASSERT_EQ(rows.size(), all_error_classes().size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].measurement.error_class, all_error_classes()[i]);
  // The schema itself refuses any other spelling, e.g. from a hand-written INSERT.
  EXPECT_THROW(sql_rows(db.path(),
                        "INSERT INTO measurements (candidate_hash, run_id, trial_index, target_description, "
                        "error_class, error_message, run_seconds, measured_at) VALUES ('" +
                            hash_of(2) + "', 1, 0, '', 'Compile_Error', '', '[]', '')"),
               std::runtime_error);
}

// `--schedule db:HASH` names a candidate by a prefix of its hash: one match, several (in hash order) or none.
TEST(Database, FindsCandidatesByAPrefixOfTheirHash) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  db.add_workload(workload(1, "mlp"));
  for (uint64_t n : {0x100u, 0x101u, 0x200u}) db.add_candidate(candidate(n, hash_of(1)));
  const std::string first = hash_of(0x100), second = hash_of(0x101), third = hash_of(0x200);
  ASSERT_EQ(first.substr(0, 14), second.substr(0, 14));
  std::vector<CandidateRecord> one = db.candidates_with_prefix(third.substr(0, 14));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].hash, third);
  EXPECT_EQ(one[0].workload_hash, hash_of(1));
  EXPECT_EQ(one[0].schedule_json, candidate(0x200, hash_of(1)).schedule_json);
  std::vector<CandidateRecord> two = db.candidates_with_prefix(first.substr(0, 14));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].hash, first);
  EXPECT_EQ(two[1].hash, second);
  EXPECT_EQ(db.candidates_with_prefix(first.substr(0, 14), 1).size(), 1u);
  EXPECT_TRUE(db.candidates_with_prefix("zz").empty());
  EXPECT_TRUE(db.candidates_with_prefix(first.substr(0, 12) + "%").empty());  // a prefix, not a LIKE pattern
}

TEST(Database, CreatesAFileInWalModeAndReopensIt) {
  TempDir dir;
  std::string path = dir.file("tune.db");
  int64_t run_id = 0;
  {
    Database db = Database::open(path);
    EXPECT_EQ(db.path(), path);
    run_id = db.begin_run(run_info(1234567890123ULL));
    EXPECT_TRUE(db.add_workload(workload(1, "mlp")));
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(sql_value(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(sql_value(path, "SELECT value FROM meta WHERE key = 'schema_version'"), "4");

  Database db = Database::open(path);
  std::optional<RunInfo> run = db.run(run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->seed, 1234567890123ULL);
  EXPECT_EQ(run->config_path, "configs/test.yaml");
  EXPECT_EQ(run->config_text, "workload: test\n");
  EXPECT_EQ(run->ended_at, "");
  // UTC ISO-8601 with milliseconds.
  EXPECT_EQ(run->started_at.size(), 24u) << run->started_at;
  EXPECT_EQ(run->started_at[10], 'T');
  EXPECT_EQ(run->started_at.back(), 'Z');
  db.end_run(run_id);
  EXPECT_GE(db.run(run_id)->ended_at, run->started_at);
  EXPECT_THROW(db.end_run(run_id + 100), DatabaseError);
  EXPECT_FALSE(db.run(run_id + 100));
  ASSERT_EQ(db.list_workloads().size(), 1u);
  EXPECT_EQ(db.list_workloads()[0].name, "mlp");
}

// Commands that only read open with open_existing: a missing file is an error that names it, and stays missing.
TEST(Database, OpenExistingRefusesAMissingFileAndCreatesNothing) {
  TempDir dir;
  std::string path = dir.file("never_tuned.db");
  try {
    Database::open_existing(path);
    FAIL() << "no error";
  } catch (const DatabaseError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ingot database '" + path + "': no database at this path (ingot tune creates one; --db names another)");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  Database::open(path);
  EXPECT_NO_THROW(Database::open_existing(path));
}

TEST(Database, LargeSeedsSurviveTheRoundTrip) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  int64_t id = db.begin_run(run_info(~0ULL - 5));
  EXPECT_EQ(db.run(id)->seed, ~0ULL - 5);
}

TEST(Database, AnEmptyExistingFileBecomesADatabase) {
  TempDir dir;
  std::string path = dir.file("empty.db");
  write_file(path, "");
  Database::open(path);
  EXPECT_EQ(sql_value(path, "SELECT value FROM meta WHERE key = 'schema_version'"), "4");
}

void expect_refused_untouched(const std::string& path, const std::string& problem) {
  std::string before = file_bytes(path);
  try {
    Database::open(path);
    FAIL() << "opened " << path;
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr(problem));
  }
  EXPECT_EQ(file_bytes(path), before);
}

TEST(Database, RefusesANonSqliteFileWithoutTouchingIt) {
  TempDir dir;
  std::string path = dir.file("notes.txt");
  write_file(path, "these are my notes, not a database\n");
  expect_refused_untouched(path, "is not an SQLite database");
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  // Shorter than an SQLite header.
  write_file(path, "SQLite");
  expect_refused_untouched(path, "is not an SQLite database");
}

TEST(Database, RefusesAForeignSqliteDatabaseWithoutTouchingIt) {
  TempDir dir;
  std::string path = dir.file("other.db");
  sql_rows(path, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada'), ('alan');");
  expect_refused_untouched(path, "not an ingot database");
  EXPECT_EQ(sql_value(path, "PRAGMA journal_mode"), "delete");

  // Another application's meta table, with or without a schema_version of its own.
  std::string meta = dir.file("meta.db");
  sql_rows(meta,
           "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema_version', '1');");
  expect_refused_untouched(meta, "not an ingot database");
  std::string odd_meta = dir.file("odd_meta.db");
  sql_rows(odd_meta, "CREATE TABLE meta (version INTEGER); INSERT INTO meta VALUES (3);");
  expect_refused_untouched(odd_meta, "not an ingot database");
}

// A database whose middle page (a page of the workloads table's rows) is overwritten with garbage.
std::string corrupt_database(const TempDir& dir) {
  std::string path = dir.file("damaged.db");
  {
    Database db = Database::open(path);
    for (int i = 0; i < 200; ++i) {
      char hash[17];
      std::snprintf(hash, sizeof hash, "%016x", i + 1);
      db.add_workload(WorkloadRecord{hash, "w" + std::to_string(i), std::string(1000, 'p'), ""});
    }
  }
  sql_rows(path, "PRAGMA wal_checkpoint(TRUNCATE);");
  std::string bytes = file_bytes(path);
  const size_t page = 4096, middle = bytes.size() / page / 2;
  EXPECT_GT(middle, 10u);
  for (size_t i = middle * page; i < (middle + 1) * page; ++i) bytes[i] = char(0xAB);
  write_file(path, bytes);
  return path;
}

// A process killed inside a transaction while the file was in rollback-journal mode (a new file, before WAL is on)
// leaves a hot journal beside it. The next open rolls it back, as SQLite does, instead of failing on it for ever.
TEST(Database, ATransactionCutOffByAKillIsRolledBackAtTheNextOpen) {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  {
    Database db = Database::open(path);
    db.add_workload(workload(1, "mlp"));
  }
  pid_t child = fork_child([&] {
    SqliteConnection connection(path, SQLITE_OPEN_READWRITE);
    connection.exec("PRAGMA journal_mode = DELETE");
    connection.exec("PRAGMA cache_size = 1");  // the changed pages go to the file before the commit
    connection.exec("BEGIN");
    for (int n = 2; n < 400; ++n)
      connection.exec("INSERT INTO workloads (hash, name, program_text, created_at) VALUES ('" + hash_of(uint64_t(n)) +
                      "', 'w', '" + std::string(200, 'x') + "', 'now')");
    _exit(0);  // no commit, no close: what SIGKILL leaves
    return 0;
  });
  ASSERT_EQ(wait_child(child), 0);
  ASSERT_GT(std::filesystem::file_size(path + "-journal"), 0u) << "the child left no journal";
  EXPECT_TRUE(Database::check_file(path).ok);
  Database db = Database::open_existing(path);
  std::vector<WorkloadRecord> workloads = db.list_workloads();
  ASSERT_EQ(workloads.size(), 1u);  // the committed one; none of the cut-off transaction's
  EXPECT_EQ(workloads[0].hash, hash_of(1));
}

// A database in a folder that this process cannot write (a read-only mount, another user's results) is read as it
// is: the commands that read it work, a write is refused, and nothing appears beside it. Permissions do not bind
// root, so as root the reading runs in a child that has become nobody.
TEST(Database, ReadsADatabaseInAFolderItCannotWrite) {
  TempDir dir;
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(dir.file("results"));
  fs::create_directory(folder);
  const std::string path = (folder / "tune.db").string();
  {
    Database db = Database::open(path);
    db.add_workload(workload(1, "mlp"));
    db.add_candidate(candidate(2, hash_of(1)));
  }
  ASSERT_FALSE(fs::exists(path + "-wal"));  // closed cleanly: the log was checkpointed and removed
  const std::string before = file_bytes(path);
  fs::permissions(dir.file(""), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  pid_t child = fork_child([&] {
    if (::getuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 2;
    if (::access(folder.c_str(), W_OK) == 0) return 3;  // still allowed to write: the case would prove nothing
    Database db = Database::open_existing(path);
    if (db.list_workloads().size() != 1 || db.candidates_with_prefix(hash_of(2)).size() != 1) return 4;
    if (!Database::check_file(path).ok) return 5;
    try {
      db.add_workload(workload(3, "other"));
      return 6;
    } catch (const DatabaseError&) {
    }
    try {
      Database::open(path);  // what tune does
      return 7;
    } catch (const DatabaseError&) {
    }
    return 0;
  });
  EXPECT_EQ(wait_child(child), 0) << "2: cannot become nobody, 3: the folder is writable, 4: wrong rows, 5: check "
                                     "failed, 6: a write was accepted, 7: a writable open was accepted";
  fs::permissions(folder, fs::perms::owner_all);
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_FALSE(fs::exists(path + "-shm"));
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_FALSE(fs::exists(path + "-journal"));
}

TEST(Database, RefusesACorruptFileBeforeWritingAnythingAndDbCheckReportsIt) {
  TempDir dir;
  std::string path = corrupt_database(dir);
  expect_refused_untouched(path, "is corrupt");
  std::string before = file_bytes(path);
  EXPECT_THROW(Database::open_existing(path), DatabaseError);
  IntegrityReport report = Database::check_file(path);  // reports, does not throw
  EXPECT_FALSE(report.ok);
  ASSERT_FALSE(report.problems.empty());
  EXPECT_EQ(report.schema_version, 4);
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_THROW(Database::check_file(dir.file("missing.db")), DatabaseError);
}

TEST(Database, RefusesANewerSchemaWithoutTouchingIt) {
  TempDir dir;
  std::string path = dir.file("future.db");
  Database::open(path);
  sql_rows(path, "UPDATE meta SET value = '5' WHERE key = 'schema_version'; PRAGMA wal_checkpoint(TRUNCATE);");
  expect_refused_untouched(path, "schema version 5 is newer than this ingot supports (4)");
  // open_existing, as the read-only commands use it, refuses it the same way.
  std::string before = file_bytes(path);
  EXPECT_THROW(Database::open_existing(path), DatabaseError);
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_EQ(sql_value(path, "SELECT value FROM meta WHERE key = 'schema_version'"), "5");
}

TEST(Database, NamesThePathWhenTheFileCannotBeCreated) {
  TempDir dir;
  std::string path = dir.file("missing_dir/tune.db");
  try {
    Database::open(path);
    FAIL();
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("cannot open"));
  }
  EXPECT_THROW(Database::open(dir.file("")), DatabaseError);  // a directory
}

TEST(Database, AddsWorkloadsAndCandidatesIdempotently) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  WorkloadRecord w = workload(0xabc, "mlp");
  EXPECT_TRUE(db.add_workload(w));
  EXPECT_FALSE(db.add_workload(w));
  WorkloadRecord renamed = w;
  renamed.name = "another name";
  EXPECT_FALSE(db.add_workload(renamed));
  EXPECT_EQ(db.list_workloads().at(0).name, "mlp");  // the first name is kept

  WorkloadRecord collision = w;
  collision.program_text = "a different program";
  EXPECT_THROW(db.add_workload(collision), DatabaseError);

  CandidateRecord c = candidate(0xdef, w.hash);
  EXPECT_TRUE(db.add_candidate(c));
  EXPECT_FALSE(db.add_candidate(c));
  CandidateRecord other_schedule = c;
  other_schedule.schedule_json = "{}";
  EXPECT_THROW(db.add_candidate(other_schedule), DatabaseError);
  CandidateRecord other_target = c;
  other_target.target = "cuda";
  EXPECT_THROW(db.add_candidate(other_target), DatabaseError);

  try {
    db.add_candidate(candidate(0x123, hash_of(0x999)));
    FAIL();
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("add_workload first"));
  }
  EXPECT_THROW(db.add_workload({"ABCDEF0123456789", "upper", "p", ""}), DatabaseError);
  EXPECT_THROW(db.add_workload({"abc", "short", "p", ""}), DatabaseError);
  EXPECT_EQ(sql_value(db.path(), "SELECT COUNT(*) FROM workloads"), "1");
  EXPECT_EQ(sql_value(db.path(), "SELECT COUNT(*) FROM candidates"), "1");
}

TEST(Database, MeasurementsRoundTripWithEveryRunTime) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  db.add_workload(workload(1, "mlp"));
  db.add_candidate(candidate(2, hash_of(1)));
  int64_t run = db.begin_run(run_info());

  std::vector<double> seconds = {3.0, 0.1, 2.0, 1e-7, 3.141592653589793, 1.0 / 3.0};
  MeasurementRecord m = measurement(hash_of(2), run, seconds);
  m.trial_index = 17;
  m.statistics = RunStatistics{99, 99, 99, 99};  // ignored: statistics come from the run times
  int64_t id = db.add_measurement(m);
  EXPECT_GT(id, 0);

  std::vector<MeasuredCandidate> rows = db.history();
  ASSERT_EQ(rows.size(), 1u);
  const MeasurementRecord& back = rows[0].measurement;
  EXPECT_EQ(back.id, id);
  EXPECT_EQ(back.run_seconds, seconds);  // exactly, every one
  EXPECT_EQ(back.trial_index, 17);
  EXPECT_EQ(back.run_id, run);
  EXPECT_EQ(back.error_class, ErrorClass::kNone);
  EXPECT_EQ(back.target_description, "cpu test target");
  EXPECT_DOUBLE_EQ(back.statistics->min, 1e-7);
  EXPECT_DOUBLE_EQ(back.statistics->median, (1.0 / 3.0 + 2.0) / 2);
  double mean = (3.0 + 0.1 + 2.0 + 1e-7 + 3.141592653589793 + 1.0 / 3.0) / 6;
  EXPECT_DOUBLE_EQ(back.statistics->mean, mean);
  double squares = 0;
  for (double s : seconds) squares += (s - mean) * (s - mean);
  EXPECT_DOUBLE_EQ(back.statistics->stddev, std::sqrt(squares / 5));
  EXPECT_DOUBLE_EQ(*back.compile_seconds, 0.25);
  EXPECT_EQ(rows[0].workload_name, "mlp");
  EXPECT_EQ(rows[0].candidate.schedule_json, candidate(2, hash_of(1)).schedule_json);
  EXPECT_EQ(back.measured_at.size(), 24u);
  // What the sqlite3 shell shows: a JSON array.
  EXPECT_EQ(sql_value(db.path(), "SELECT json_array_length(run_seconds) FROM measurements"), "6");

  // An error without run times and without a compile.
  MeasurementRecord error = measurement(hash_of(2), run, {}, ErrorClass::kCompileError, "error: expected ';'");
  error.compile_seconds.reset();
  db.add_measurement(error);
  rows = db.history();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].measurement.error_class, ErrorClass::kCompileError);
  EXPECT_EQ(rows[1].measurement.error_message, "error: expected ';'");
  EXPECT_TRUE(rows[1].measurement.run_seconds.empty());
  EXPECT_FALSE(rows[1].measurement.statistics);
  EXPECT_FALSE(rows[1].measurement.compile_seconds);
  EXPECT_EQ(sql_value(db.path(), "SELECT run_seconds FROM measurements WHERE error_class = 'compile_error'"), "[]");
}

TEST(Database, RefusesMeasurementsItCannotStoreFaithfully) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  db.add_workload(workload(1, "mlp"));
  db.add_candidate(candidate(2, hash_of(1)));
  int64_t run = db.begin_run(run_info());
  EXPECT_THROW(db.add_measurement(measurement(hash_of(3), run, {1.0})), DatabaseError);  // unknown candidate
  EXPECT_THROW(db.add_measurement(measurement(hash_of(2), run + 1, {1.0})), DatabaseError);
  EXPECT_THROW(db.add_measurement(measurement(hash_of(2), run, {1.0, std::nan("")})), DatabaseError);
  EXPECT_THROW(db.add_measurement(measurement(hash_of(2), run, {-1.0})), DatabaseError);
  EXPECT_EQ(sql_value(db.path(), "SELECT COUNT(*) FROM measurements"), "0");
}

TEST(Database, HasMeasurementCountsEveryRunAndMatchesTheTarget) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  db.add_workload(workload(1, "mlp"));
  db.add_candidate(candidate(2, hash_of(1), "cpu"));
  int64_t first = db.begin_run(run_info());
  EXPECT_FALSE(db.has_measurement(hash_of(2), "cpu"));
  db.add_measurement(measurement(hash_of(2), first, {}, ErrorClass::kRunTimeout));
  db.end_run(first);
  db.begin_run(run_info());
  EXPECT_TRUE(db.has_measurement(hash_of(2), "cpu"));  // an error counts too: it is not measured again
  EXPECT_FALSE(db.has_measurement(hash_of(2), "cuda"));
  EXPECT_FALSE(db.has_measurement(hash_of(3), "cpu"));
}

// A small history: workload mlp (cpu: A 2 s median, B 1.5 s, C faster but wrong; cuda: D 4 s) and lstm
// (cpu: only errors).
struct ViewFixture {
  TempDir dir;
  std::string path = dir.file("views.db");
  Database db = Database::open(path);
  std::string mlp = hash_of(0x100), lstm = hash_of(0x200);
  std::string a = hash_of(0xa), b = hash_of(0xb), c = hash_of(0xc), d = hash_of(0xd), e = hash_of(0xe);

  ViewFixture() {
    db.add_workload(workload(0x100, "mlp"));
    db.add_workload(workload(0x200, "lstm"));
    db.add_candidate(candidate(0xa, mlp));
    db.add_candidate(candidate(0xb, mlp));
    db.add_candidate(candidate(0xc, mlp));
    db.add_candidate(candidate(0xd, mlp, "cuda"));
    db.add_candidate(candidate(0xe, lstm));
    int64_t run = db.begin_run(run_info());
    db.add_measurement(measurement(a, run, {3, 1, 2}));
    db.add_measurement(measurement(b, run, {1.5, 1.4, 1.6}));
    db.add_measurement(measurement(c, run, {0.5}, ErrorClass::kWrongAnswer, "C[5]: 2 != 3"));
    db.add_measurement(measurement(d, run, {4}));
    db.add_measurement(measurement(e, run, {}, ErrorClass::kCompileError, "error"));
    db.add_measurement(measurement(e, run, {}, ErrorClass::kRunTimeout, "killed after 10 s"));
  }
};

TEST(DatabaseViews, BestPerWorkloadTargetIsTheFastestCorrectMeasurement) {
  ViewFixture f;
  Rows rows = sql_rows(f.path,
                       "SELECT workload_name, target, candidate_hash, median_s, schedule_json "
                       "FROM best_per_workload_target ORDER BY workload_name, target");
  Rows expected = {{"mlp", "cpu", f.b, "1.5", candidate(0xb, f.mlp).schedule_json},
                   {"mlp", "cuda", f.d, "4.0", candidate(0xd, f.mlp).schedule_json}};
  EXPECT_EQ(rows, expected);

  std::optional<MeasuredCandidate> best = f.db.best("mlp", "cpu");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->candidate.hash, f.b);
  EXPECT_EQ(best->measurement.run_seconds, (std::vector<double>{1.5, 1.4, 1.6}));
  EXPECT_EQ(f.db.best(f.mlp, "cuda")->candidate.hash, f.d);
  EXPECT_FALSE(f.db.best("lstm", "cpu"));  // only errors
  EXPECT_FALSE(f.db.best("mlp", "gpu"));
  EXPECT_THROW(f.db.best("no such workload", "cpu"), DatabaseError);

  // A second workload named mlp makes the name ambiguous; its hash still works.
  f.db.add_workload(workload(0x300, "mlp"));
  EXPECT_THROW(f.db.best("mlp", "cpu"), DatabaseError);
  EXPECT_EQ(f.db.best(f.mlp, "cpu")->candidate.hash, f.b);
}

// A measurement row whose statistics are partly NULL (written by another tool) is refused by name, not half read.
TEST(DatabaseViews, PartlyNullStatisticsAreRefused) {
  ViewFixture f;
  sql_rows(f.path, "UPDATE measurements SET mean_s = NULL WHERE candidate_hash = '" + f.b + "'");
  try {
    f.db.best("mlp", "cpu");
    FAIL() << "no error";
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find(": min_s, median_s, mean_s and stddev_s must be all set or all NULL"),
              std::string::npos)
        << e.what();
  }
}

// Every workload's best on a target at once (`ingot best` without --workload): lstm has only errors, so none.
TEST(DatabaseViews, BestOfEveryWorkloadOnATarget) {
  ViewFixture f;
  f.db.add_candidate(candidate(0xf, f.lstm));
  int64_t run = f.db.begin_run(run_info());
  f.db.add_measurement(measurement(hash_of(0xf), run, {7, 8, 9}));
  std::vector<MeasuredCandidate> all = f.db.best_of_every_workload("cpu");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].workload_name, "lstm");
  EXPECT_EQ(all[0].candidate.hash, hash_of(0xf));
  EXPECT_EQ(all[0].measurement.statistics->median, 8);
  EXPECT_EQ(all[1].workload_name, "mlp");
  EXPECT_EQ(all[1].candidate.hash, f.b);
  EXPECT_EQ(f.db.best_of_every_workload("cuda").size(), 1u);
  EXPECT_TRUE(f.db.best_of_every_workload("gpu").empty());
}

TEST(DatabaseViews, ErrorSummaryCountsPerWorkloadTargetAndClass) {
  ViewFixture f;
  Rows rows = sql_rows(f.path,
                       "SELECT workload_name, target, error_class, count FROM error_summary "
                       "ORDER BY workload_name, target, error_class");
  Rows expected = {{"lstm", "cpu", "compile_error", "1"},
                   {"lstm", "cpu", "run_timeout", "1"},
                   {"mlp", "cpu", "none", "2"},
                   {"mlp", "cpu", "wrong_answer", "1"},
                   {"mlp", "cuda", "none", "1"}};
  EXPECT_EQ(rows, expected);

  std::map<ErrorClass, int64_t> all = f.db.error_counts();
  EXPECT_EQ(all.size(), all_error_classes().size());
  EXPECT_EQ(all[ErrorClass::kNone], 3);
  EXPECT_EQ(all[ErrorClass::kWrongAnswer], 1);
  EXPECT_EQ(all[ErrorClass::kCompileError], 1);
  EXPECT_EQ(all[ErrorClass::kRunTimeout], 1);
  EXPECT_EQ(all[ErrorClass::kInvalidSchedule], 0);
  std::map<ErrorClass, int64_t> lstm = f.db.error_counts("lstm");
  EXPECT_EQ(lstm[ErrorClass::kNone], 0);
  EXPECT_EQ(lstm[ErrorClass::kCompileError], 1);
}

TEST(DatabaseViews, HistoryJoinsMeasurementsWithCandidatesAndWorkloadsInTimeOrder) {
  ViewFixture f;
  Rows rows = sql_rows(f.path,
                       "SELECT workload_name, candidate_hash, target, error_class, median_s FROM history "
                       "ORDER BY measured_at, measurement_id");
  Rows expected = {{"mlp", f.a, "cpu", "none", "2.0"},
                   {"mlp", f.b, "cpu", "none", "1.5"},
                   {"mlp", f.c, "cpu", "wrong_answer", "0.5"},
                   {"mlp", f.d, "cuda", "none", "4.0"},
                   {"lstm", f.e, "cpu", "compile_error", "NULL"},
                   {"lstm", f.e, "cpu", "run_timeout", "NULL"}};
  EXPECT_EQ(rows, expected);

  std::vector<MeasuredCandidate> all = f.db.history();
  ASSERT_EQ(all.size(), 6u);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].measurement.id, all[i].measurement.id);
  std::vector<MeasuredCandidate> latest = f.db.history("", 2);
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].measurement.error_class, ErrorClass::kCompileError);
  EXPECT_EQ(latest[1].measurement.error_class, ErrorClass::kRunTimeout);
  std::vector<MeasuredCandidate> mlp = f.db.history("mlp");
  ASSERT_EQ(mlp.size(), 4u);
  EXPECT_EQ(mlp[2].measurement.error_message, "C[5]: 2 != 3");
  EXPECT_EQ(f.db.history(f.lstm).size(), 2u);
}

// A model (bert) with two tasks under a global plan: its hash, and task workloads t0, t1.
struct ModelFixture {
  TempDir dir;
  std::string path = dir.file("model.db");
  Database db = Database::open(path);
  std::string bert = hash_of(0x100), t0 = hash_of(0x200), t1 = hash_of(0x201);
  std::string global = hash_of(0x9a), unfused = hash_of(0x9b);

  ModelFixture() {
    db.add_workload(workload(0x100, "bert"));
    db.add_workload(workload(0x200, "bert_t0"));
    db.add_workload(workload(0x201, "bert_t1"));
  }

  ModelTaskRecord task(const std::string& plan, int64_t index, const std::string& task_hash, int64_t weight = 1) const {
    ModelTaskRecord t;
    t.model_workload_hash = bert;
    t.plan_hash = plan;
    t.plan_strategy = plan == global ? "global" : "unfused";
    t.task_index = index;
    t.task_workload_hash = task_hash;
    t.weight = weight;
    t.occurrences_json = "[{\"first_compute\":" + std::to_string(index) + "}]";
    return t;
  }
};

std::vector<std::string> keys(const std::vector<ModelTaskRecord>& tasks) {
  std::vector<std::string> out;
  for (const ModelTaskRecord& t : tasks) out.push_back(t.plan_hash + "/" + std::to_string(t.task_index));
  return out;
}

TEST(ModelTasks, AddedIdempotentlyAndReadBack) {
  ModelFixture f;
  ModelTaskRecord t = f.task(f.global, 0, f.t0, 12);
  t.occurrences_json = "[{\"at\":[0,1]},{\"at\":[5,6]}]";
  EXPECT_TRUE(f.db.add_model_task(t));
  ModelTaskRecord again = t;
  again.created_at = "given, and ignored";
  EXPECT_FALSE(f.db.add_model_task(again));

  std::vector<ModelTaskRecord> tasks = f.db.model_tasks(f.bert);
  ASSERT_EQ(tasks.size(), 1u);
  const ModelTaskRecord& back = tasks[0];
  EXPECT_EQ(back.model_workload_hash, f.bert);
  EXPECT_EQ(back.plan_hash, f.global);
  EXPECT_EQ(back.plan_strategy, "global");
  EXPECT_EQ(back.task_index, 0);
  EXPECT_EQ(back.task_workload_hash, f.t0);
  EXPECT_EQ(back.weight, 12);
  EXPECT_EQ(back.occurrences_json, "[{\"at\":[0,1]},{\"at\":[5,6]}]");  // as given
  EXPECT_EQ(back.created_at.size(), 24u) << back.created_at;
  EXPECT_EQ(sql_value(f.path, "SELECT COUNT(*) FROM model_tasks"), "1");
}

TEST(ModelTasks, ARecordWithOtherContentUnderTheSameKeyIsRefused) {
  ModelFixture f;
  ModelTaskRecord t = f.task(f.global, 0, f.t0, 2);
  f.db.add_model_task(t);
  ModelTaskRecord other_weight = t, other_task = t, other_occurrences = t, other_strategy = t;
  other_weight.weight = 3;
  other_task.task_workload_hash = f.t1;
  other_occurrences.occurrences_json = "[]";
  other_strategy.plan_strategy = "fused";
  for (const ModelTaskRecord& conflict : {other_weight, other_task, other_occurrences, other_strategy}) {
    try {
      f.db.add_model_task(conflict);
      FAIL() << "no error";
    } catch (const DatabaseError& e) {
      EXPECT_THAT(e.what(), HasSubstr(f.path));
      EXPECT_THAT(e.what(),
                  HasSubstr("task 0 of model " + f.bert + " under plan " + f.global + " is stored with a different"));
    }
  }
  std::vector<ModelTaskRecord> tasks = f.db.model_tasks(f.bert);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].weight, 2);
  EXPECT_EQ(tasks[0].task_workload_hash, f.t0);
  // The same index under another plan is another task.
  EXPECT_TRUE(f.db.add_model_task(f.task(f.unfused, 0, f.t1, 3)));
}

TEST(ModelTasks, RefusesMissingWorkloadsMalformedHashesAndBadNumbers) {
  ModelFixture f;
  auto expect_refused = [&](const ModelTaskRecord& t, const std::string& problem) {
    try {
      f.db.add_model_task(t);
      ADD_FAILURE() << "no error for " << problem;
    } catch (const DatabaseError& e) {
      EXPECT_THAT(e.what(), HasSubstr(f.path));
      EXPECT_THAT(e.what(), HasSubstr(problem));
    }
  };
  ModelTaskRecord t = f.task(f.global, 0, f.t0);
  ModelTaskRecord no_model = t, no_task = t;
  no_model.model_workload_hash = hash_of(0x999);
  no_task.task_workload_hash = hash_of(0x998);
  expect_refused(no_model, "refers to workload " + hash_of(0x999) + ", which is not stored; add_workload first");
  expect_refused(no_task, "refers to workload " + hash_of(0x998) + ", which is not stored; add_workload first");

  ModelTaskRecord upper_model = t, short_plan = t, bad_task = t;
  upper_model.model_workload_hash = "ABCDEF0123456789";
  short_plan.plan_hash = "abc";
  bad_task.task_workload_hash = "000000000000000g";
  expect_refused(upper_model, "model workload hash 'ABCDEF0123456789' is not 16 lowercase hex digits");
  expect_refused(short_plan, "plan hash 'abc' is not 16 lowercase hex digits");
  expect_refused(bad_task, "task workload hash '000000000000000g' is not 16 lowercase hex digits");

  ModelTaskRecord zero_weight = t, negative_weight = t, negative_index = t;
  zero_weight.weight = 0;
  negative_weight.weight = -4;
  negative_index.task_index = -1;
  expect_refused(zero_weight, "weight 0 is below 1");
  expect_refused(negative_weight, "weight -4 is below 1");
  expect_refused(negative_index, "the task index is negative");
  EXPECT_EQ(sql_value(f.path, "SELECT COUNT(*) FROM model_tasks"), "0");

  // The schema refuses them too, e.g. from a hand-written INSERT.
  const std::string insert =
      "INSERT INTO model_tasks (model_workload_hash, plan_hash, plan_strategy, task_index, task_workload_hash, "
      "weight, occurrences_json, created_at) VALUES ('" +
      f.bert + "', ";
  EXPECT_THROW(sql_rows(f.path, insert + "'" + f.global + "', 'global', 0, '" + f.t0 + "', 0, '[]', '')"),
               std::runtime_error);
  EXPECT_THROW(sql_rows(f.path, insert + "'" + f.global + "', 'global', -1, '" + f.t0 + "', 1, '[]', '')"),
               std::runtime_error);
  EXPECT_THROW(sql_rows(f.path, insert + "'XYZ', 'global', 0, '" + f.t0 + "', 1, '[]', '')"), std::runtime_error);
  EXPECT_EQ(sql_value(f.path, "SELECT COUNT(*) FROM model_tasks"), "0");
}

TEST(ModelTasks, ListedByNameOrHashPerPlanInPlanAndIndexOrder) {
  ModelFixture f;
  // Added out of order; the unfused plan's hash sorts after the global plan's.
  f.db.add_model_task(f.task(f.unfused, 1, f.t1));
  f.db.add_model_task(f.task(f.global, 1, f.t1));
  f.db.add_model_task(f.task(f.unfused, 0, f.t0));
  f.db.add_model_task(f.task(f.global, 0, f.t0));
  // Another model sharing a task: not one of bert's.
  f.db.add_workload(workload(0x300, "gpt"));
  ModelTaskRecord gpt = f.task(f.global, 0, f.t0);
  gpt.model_workload_hash = hash_of(0x300);
  f.db.add_model_task(gpt);

  const std::vector<std::string> all = {f.global + "/0", f.global + "/1", f.unfused + "/0", f.unfused + "/1"};
  EXPECT_EQ(keys(f.db.model_tasks("bert")), all);
  EXPECT_EQ(keys(f.db.model_tasks(f.bert)), all);
  EXPECT_EQ(keys(f.db.model_tasks("bert", f.unfused)), (std::vector<std::string>{f.unfused + "/0", f.unfused + "/1"}));
  EXPECT_EQ(keys(f.db.model_tasks(f.bert, f.global)), (std::vector<std::string>{f.global + "/0", f.global + "/1"}));
  EXPECT_TRUE(f.db.model_tasks("bert", hash_of(0x9c)).empty());  // a plan without tasks
  EXPECT_TRUE(f.db.model_tasks("bert_t0").empty());              // a workload that is no model
  EXPECT_EQ(keys(f.db.model_tasks("gpt")), (std::vector<std::string>{f.global + "/0"}));
  EXPECT_THROW(f.db.model_tasks("no such model"), DatabaseError);
  EXPECT_THROW(f.db.model_tasks("bert", "not a hash"), DatabaseError);

  // A second workload named bert makes the name ambiguous; the hash still works.
  f.db.add_workload(workload(0x101, "bert"));
  try {
    f.db.model_tasks("bert");
    FAIL() << "no error";
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("model_tasks: 2 workloads are named 'bert'"));
  }
  EXPECT_EQ(keys(f.db.model_tasks(f.bert)), all);

  IntegrityReport report = f.db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.model_tasks, 5);
  EXPECT_THAT(report.to_text(), HasSubstr("model tasks: 5\n"));
}

// bert's global plan: t0 three times, t1 twice. On cpu each task has a wrong answer (faster than any correct
// measurement) and two correct measurements; on cuda only t0 is measured.
TEST(ModelTasks, BestViewGivesEachTasksLeastCorrectMedianAndItsWeightedTime) {
  ModelFixture f;
  f.db.add_model_task(f.task(f.global, 0, f.t0, 3));
  f.db.add_model_task(f.task(f.global, 1, f.t1, 2));
  int64_t run = f.db.begin_run(run_info());
  auto measure = [&](uint64_t n, const std::string& task, const std::string& target, std::vector<double> seconds,
                     ErrorClass error = ErrorClass::kNone) {
    f.db.add_candidate(candidate(n, task, target));
    f.db.add_measurement(measurement(hash_of(n), run, std::move(seconds), error));
  };
  measure(0xa1, f.t0, "cpu", {0.25}, ErrorClass::kWrongAnswer);
  measure(0xa2, f.t0, "cpu", {2, 2.5, 3});
  measure(0xa3, f.t0, "cpu", {1.5, 1.4, 1.6});
  measure(0xb1, f.t1, "cpu", {4});
  measure(0xb2, f.t1, "cpu", {0.125}, ErrorClass::kWrongAnswer);
  measure(0xb3, f.t1, "cpu", {5});
  measure(0xc1, f.t0, "cuda", {0.5});

  Rows rows = sql_rows(f.path,
                       "SELECT model_workload_hash, model_workload_name, plan_hash, plan_strategy, task_index, weight, "
                       "task_workload_hash, task_workload_name, target, best_candidate_hash, best_median_s, "
                       "weighted_median_s FROM model_task_best ORDER BY target, task_index");
  Rows expected = {
      {f.bert, "bert", f.global, "global", "0", "3", f.t0, "bert_t0", "cpu", hash_of(0xa3), "1.5", "4.5"},
      {f.bert, "bert", f.global, "global", "1", "2", f.t1, "bert_t1", "cpu", hash_of(0xb1), "4.0", "8.0"},
      {f.bert, "bert", f.global, "global", "0", "3", f.t0, "bert_t0", "cuda", hash_of(0xc1), "0.5", "1.5"}};
  EXPECT_EQ(rows, expected);
  // The model's time on a target, where every task has a best (docs/database.md's query).
  EXPECT_EQ(sql_rows(f.path,
                     "SELECT target, COUNT(*), SUM(weighted_median_s) FROM model_task_best "
                     "WHERE model_workload_name = 'bert' GROUP BY plan_hash, target ORDER BY target"),
            (Rows{{"cpu", "2", "12.5"}, {"cuda", "1", "1.5"}}));
}

TEST(Database, CheckReportsCountsAndBrokenForeignKeys) {
  ViewFixture f;
  IntegrityReport report = f.db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.schema_version, 4);
  EXPECT_EQ(report.journal_mode, "wal");
  EXPECT_EQ(report.workloads, 2);
  EXPECT_EQ(report.candidates, 5);
  EXPECT_EQ(report.measurements, 6);
  EXPECT_EQ(report.runs, 1);
  EXPECT_EQ(report.unfinished_runs, 1);
  EXPECT_EQ(report.measurements_by_class[ErrorClass::kNone], 3);
  EXPECT_EQ(report.cost_models, 0);
  EXPECT_EQ(report.model_tasks, 0);
  EXPECT_EQ(report.side_by_side, 0);
  EXPECT_THAT(report.to_text(), HasSubstr("integrity: ok"));
  EXPECT_THAT(report.to_text(), HasSubstr("cost models: 0\n"));
  EXPECT_THAT(report.to_text(), HasSubstr("model tasks: 0\n"));
  EXPECT_THAT(report.to_text(), HasSubstr("side-by-side rounds: 0\n"));

  // A row written by hand with foreign keys off (the sqlite3 shell's default).
  sql_rows(f.path,
           "INSERT INTO measurements (candidate_hash, run_id, trial_index, target_description, error_class, "
           "error_message, run_seconds, measured_at) VALUES ('00000000000000ff', 1, 0, '', 'none', '', '[]', '')");
  report = f.db.check();
  EXPECT_FALSE(report.ok);
  ASSERT_EQ(report.problems.size(), 1u) << report.to_text();
  EXPECT_THAT(report.problems[0], HasSubstr("measurements"));
  EXPECT_THAT(report.to_text(), HasSubstr("PROBLEMS FOUND"));
}

}  // namespace
}  // namespace ingot
