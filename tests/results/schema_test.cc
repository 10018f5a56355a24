// Schema migrations: a version-0 file is brought to the current version on open, a version-1 file gains the
// cost_models table, a version-2 file the model_tasks table and a version-3 file the side_by_side table with their
// rows intact, an appended step runs once, and a failing step changes nothing.
#include "results/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "results/database.h"
#include "tests/results/test_database.h"

namespace ingot {
namespace {

using namespace ingot::testing;
using ::testing::HasSubstr;

int stored_version(const std::string& path) {
  return std::stoi(sql_value(path, "SELECT value FROM meta WHERE key = 'schema_version'"));
}

bool has_column(const std::string& path, const std::string& table, const std::string& column) {
  return sql_value(path, "SELECT COUNT(*) FROM pragma_table_info('" + table + "') WHERE name = '" + column + "'") ==
         "1";
}

bool has_table(const std::string& path, const std::string& table) {
  return sql_value(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '" + table + "'") == "1";
}

TEST(Schema, MigrationsAreNumberedOneByOneUpToTheCurrentVersion) {
  const std::vector<SchemaMigration>& steps = schema_migrations();
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSchemaVersion));
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].to_version, static_cast<int>(i) + 1);
}

TEST(Schema, AVersionZeroFileIsMigratedOnOpen) {
  TempDir dir;
  std::string path = dir.file("v0.db");
  sql_rows(path,
           "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
           "INSERT INTO meta VALUES ('schema_version', '0'), ('application', 'ingot');");
  Database db = Database::open(path);
  EXPECT_EQ(stored_version(path), kSchemaVersion);
  db.add_workload(workload(1, "mlp"));
  db.add_candidate(candidate(2, hash_of(1)));
  db.add_measurement(measurement(hash_of(2), db.begin_run(run_info()), {1.0}));
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM best_per_workload_target"), "1");
  EXPECT_TRUE(db.check().ok);
}

// What a file written by an ingot of schema version 1 holds: one run with a measured candidate of workload mlp.
// Written with plain SQL, as that ingot wrote its rows, since today's Database would migrate the file first.
const char* const kVersionOneRows = R"sql(
PRAGMA journal_mode = WAL;
INSERT INTO runs (id, config_text, config_path, started_at, ended_at, machine, compiler, seed)
  VALUES (1, 'workload: mlp', 'configs/mlp.yaml', '2024-05-01T12:00:00.000Z', '2024-05-01T12:05:00.000Z',
          'old machine', 'g++ 12', 42);
INSERT INTO workloads (hash, name, program_text, created_at)
  VALUES ('0000000000000001', 'mlp', 'program mlp', '2024-05-01T12:00:01.000Z');
INSERT INTO candidates (hash, workload_hash, target, schedule_json, created_at)
  VALUES ('0000000000000002', '0000000000000001', 'cpu', '{"decisions":[]}', '2024-05-01T12:00:02.000Z');
INSERT INTO measurements (candidate_hash, run_id, trial_index, target_description, error_class, error_message,
                          run_seconds, min_s, median_s, mean_s, stddev_s, compile_seconds, measured_at)
  VALUES ('0000000000000002', 1, 0, 'cpu test target', 'none', '', '[1.5,1.4,1.6]', 1.4, 1.5, 1.5, 0.1, 0.25,
          '2024-05-01T12:00:03.000Z');
)sql";

// Every row of the given tables and of meta but the schema version itself, to compare before and after a migration.
Rows rows_of(const std::string& path, const std::vector<std::string>& tables) {
  Rows rows = sql_rows(path, "SELECT 'meta', * FROM meta WHERE key <> 'schema_version' ORDER BY key");
  for (const std::string& table : tables) {
    Rows table_rows = sql_rows(path, "SELECT '" + table + "', * FROM " + table + " ORDER BY 2");
    rows.insert(rows.end(), table_rows.begin(), table_rows.end());
  }
  return rows;
}

const std::vector<std::string> kVersionOneTables = {"runs", "workloads", "candidates", "measurements", "claims"};

Rows version_one_rows(const std::string& path) { return rows_of(path, kVersionOneTables); }

TEST(Schema, AVersionOneDatabaseGainsCostModelsAndKeepsItsRows) {
  TempDir dir;
  std::string path = dir.file("v1.db");
  {
    SqliteConnection connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    upgrade_schema(connection, {schema_migrations().front()});
  }
  ASSERT_EQ(stored_version(path), 1);
  ASSERT_FALSE(has_table(path, "cost_models"));
  sql_rows(path, kVersionOneRows);
  Rows before = version_one_rows(path);
  ASSERT_EQ(before.size(), 6u);  // meta's application and created_at, and one row of each table but claims

  Database db = Database::open(path);
  EXPECT_EQ(stored_version(path), kSchemaVersion);
  EXPECT_TRUE(has_table(path, "cost_models"));
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'cost_models_by_target'"), "1");
  EXPECT_EQ(version_one_rows(path), before);

  // The old rows read back through the views as before.
  std::optional<MeasuredCandidate> best = db.best("mlp", "cpu");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->candidate.hash, hash_of(2));
  EXPECT_EQ(best->candidate.schedule_json, "{\"decisions\":[]}");
  EXPECT_EQ(best->measurement.run_seconds, (std::vector<double>{1.5, 1.4, 1.6}));
  EXPECT_DOUBLE_EQ(best->measurement.statistics->median, 1.5);
  std::vector<MeasuredCandidate> history = db.history("mlp");
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].measurement.measured_at, "2024-05-01T12:00:03.000Z");
  EXPECT_EQ(db.run(1)->seed, 42u);
  EXPECT_TRUE(db.has_measurement(hash_of(2), "cpu"));

  // And the new table works in the migrated file.
  EXPECT_TRUE(db.cost_models().empty());
  CostModelRecord model;
  model.target = "cpu";
  model.feature_set_version = 1;
  model.sample_count = 1;
  model.params_json = "{}";
  model.model_json = "{\"learner\":{}}";
  model.trained_on = "mlp";
  int64_t id = db.add_cost_model(model);
  ASSERT_TRUE(db.latest_cost_model("cpu"));
  EXPECT_EQ(db.latest_cost_model("cpu")->id, id);

  IntegrityReport report = db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.schema_version, kSchemaVersion);
  EXPECT_EQ(report.measurements, 1);
  EXPECT_EQ(report.cost_models, 1);
}

// What a file of schema version 2 adds to version 1's rows: a cost model, and a second workload (a task of mlp's,
// once the file can say so) with a correct and a failed measurement.
const char* const kVersionTwoRows = R"sql(
INSERT INTO cost_models (id, target, feature_set_version, sample_count, params_json, model_json, metrics_json,
                         trained_on, created_at)
  VALUES (1, 'cpu', 1, 1, '{}', '{"learner":{}}', '{}', 'mlp', '2024-05-02T09:00:00.000Z');
INSERT INTO workloads (hash, name, program_text, created_at)
  VALUES ('0000000000000003', 'mlp_task0', 'program mlp_task0', '2024-05-02T09:00:01.000Z');
INSERT INTO candidates (hash, workload_hash, target, schedule_json, created_at)
  VALUES ('0000000000000004', '0000000000000003', 'cpu', '{"decisions":[1]}', '2024-05-02T09:00:02.000Z'),
         ('0000000000000005', '0000000000000003', 'cpu', '{"decisions":[2]}', '2024-05-02T09:00:02.500Z');
INSERT INTO measurements (candidate_hash, run_id, trial_index, target_description, error_class, error_message,
                          run_seconds, min_s, median_s, mean_s, stddev_s, compile_seconds, measured_at)
  VALUES ('0000000000000004', 1, 1, 'cpu test target', 'none', '', '[0.5]', 0.5, 0.5, 0.5, 0, 0.25,
          '2024-05-02T09:00:03.000Z'),
         ('0000000000000005', 1, 2, 'cpu test target', 'runtime_error', 'crashed', '[]', NULL, NULL, NULL, NULL,
          0.25, '2024-05-02T09:00:04.000Z');
)sql";

TEST(Schema, AVersionTwoDatabaseGainsModelTasksAndKeepsItsRows) {
  TempDir dir;
  std::string path = dir.file("v2.db");
  {
    SqliteConnection connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const std::vector<SchemaMigration>& all = schema_migrations();
    upgrade_schema(connection, {all.begin(), all.begin() + 2});
  }
  ASSERT_EQ(stored_version(path), 2);
  ASSERT_FALSE(has_table(path, "model_tasks"));
  sql_rows(path, kVersionOneRows);
  sql_rows(path, kVersionTwoRows);
  std::vector<std::string> tables = kVersionOneTables;
  tables.push_back("cost_models");
  Rows before = rows_of(path, tables);
  ASSERT_EQ(before.size(), 12u);  // meta 2, runs 1, workloads 2, candidates 3, measurements 3, cost_models 1

  // db check reads a version-2 file as it is, without migrating it: no model_tasks table is no problem there.
  IntegrityReport old_report = Database::check_file(path);
  EXPECT_TRUE(old_report.ok) << old_report.to_text();
  EXPECT_EQ(old_report.schema_version, 2);
  EXPECT_EQ(old_report.model_tasks, 0);
  EXPECT_EQ(old_report.cost_models, 1);
  EXPECT_EQ(stored_version(path), 2);

  Database db = Database::open(path);
  EXPECT_EQ(stored_version(path), kSchemaVersion);
  EXPECT_TRUE(has_table(path, "model_tasks"));
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = 'model_task_best'"),
            "1");
  EXPECT_EQ(rows_of(path, tables), before);
  EXPECT_EQ(db.best("mlp", "cpu")->candidate.hash, hash_of(2));
  EXPECT_EQ(db.best("mlp_task0", "cpu")->candidate.hash, hash_of(4));
  EXPECT_EQ(db.latest_cost_model("cpu")->id, 1);
  EXPECT_EQ(db.history().size(), 3u);

  // The migrated file takes the old workloads' tasks, and the view finds their old measurements.
  ModelTaskRecord task;
  task.model_workload_hash = hash_of(1);
  task.plan_hash = hash_of(0x9a);
  task.plan_strategy = "global";
  task.task_index = 0;
  task.task_workload_hash = hash_of(3);
  task.weight = 2;
  task.occurrences_json = "[0,1]";
  EXPECT_TRUE(db.add_model_task(task));
  ASSERT_EQ(db.model_tasks("mlp").size(), 1u);
  EXPECT_EQ(sql_rows(path, "SELECT best_candidate_hash, best_median_s, weighted_median_s FROM model_task_best"),
            (Rows{{hash_of(4), "0.5", "1.0"}}));

  IntegrityReport report = db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.schema_version, kSchemaVersion);
  EXPECT_EQ(report.workloads, 2);
  EXPECT_EQ(report.measurements, 3);
  EXPECT_EQ(report.cost_models, 1);
  EXPECT_EQ(report.model_tasks, 1);
}

// What a file of schema version 3 adds to version 2's rows: mlp_task0 as the one task of mlp under a global plan.
const char* const kVersionThreeRows = R"sql(
INSERT INTO model_tasks (model_workload_hash, plan_hash, plan_strategy, task_index, task_workload_hash, weight,
                         occurrences_json, created_at)
  VALUES ('0000000000000001', '000000000000009a', 'global', 0, '0000000000000003', 2, '[0,1]',
          '2024-05-03T10:00:00.000Z');
)sql";

TEST(Schema, AVersionThreeDatabaseGainsSideBySideAndKeepsItsRows) {
  TempDir dir;
  std::string path = dir.file("v3.db");
  {
    SqliteConnection connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const std::vector<SchemaMigration>& all = schema_migrations();
    upgrade_schema(connection, {all.begin(), all.begin() + 3});
  }
  ASSERT_EQ(stored_version(path), 3);
  ASSERT_FALSE(has_table(path, "side_by_side"));
  sql_rows(path, kVersionOneRows);
  sql_rows(path, kVersionTwoRows);
  sql_rows(path, kVersionThreeRows);
  std::vector<std::string> tables = kVersionOneTables;
  tables.push_back("cost_models");
  tables.push_back("model_tasks");
  Rows before = rows_of(path, tables);
  ASSERT_EQ(before.size(), 13u);  // version 2's 12 and one model task
  Rows best_before = sql_rows(path, "SELECT * FROM best_per_workload_target ORDER BY workload_hash");
  Rows tasks_before = sql_rows(path, "SELECT * FROM model_task_best");
  ASSERT_EQ(best_before.size(), 2u);
  ASSERT_EQ(tasks_before.size(), 1u);

  // db check reads a version-3 file as it is, without migrating it: no side_by_side table is no problem there.
  IntegrityReport old_report = Database::check_file(path);
  EXPECT_TRUE(old_report.ok) << old_report.to_text();
  EXPECT_EQ(old_report.schema_version, 3);
  EXPECT_EQ(old_report.side_by_side, 0);
  EXPECT_EQ(old_report.model_tasks, 1);
  EXPECT_EQ(stored_version(path), 3);

  Database db = Database::open(path);
  EXPECT_EQ(stored_version(path), 4);
  EXPECT_TRUE(has_table(path, "side_by_side"));
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'side_by_side_by_run'"),
            "1");
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = 'side_by_side_history'"),
            "1");
  EXPECT_EQ(rows_of(path, tables), before);
  EXPECT_EQ(sql_rows(path, "SELECT * FROM best_per_workload_target ORDER BY workload_hash"), best_before);
  EXPECT_EQ(sql_rows(path, "SELECT * FROM model_task_best"), tasks_before);
  EXPECT_EQ(db.best("mlp", "cpu")->candidate.hash, hash_of(2));
  EXPECT_EQ(db.model_tasks("mlp").size(), 1u);
  EXPECT_EQ(db.history().size(), 3u);

  // The migrated file takes rounds of the old candidates, by the old run; the measurements' best stays.
  EXPECT_TRUE(db.latest_side_by_side("mlp", "cpu").empty());
  SideBySideRecord round;
  round.candidate_hash = hash_of(2);
  round.run_id = 1;
  round.is_reference = true;
  round.run_seconds = {0.75, 0.5};
  db.add_side_by_side(round);
  std::vector<SideBySideRow> rows = db.latest_side_by_side("mlp", "cpu");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].record.statistics->median, 0.625);
  EXPECT_EQ(rows[0].candidate.schedule_json, "{\"decisions\":[]}");
  EXPECT_DOUBLE_EQ(db.best("mlp", "cpu")->measurement.statistics->median, 1.5);

  IntegrityReport report = db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.schema_version, 4);
  EXPECT_EQ(report.measurements, 3);
  EXPECT_EQ(report.model_tasks, 1);
  EXPECT_EQ(report.side_by_side, 1);
}

TEST(Schema, AnAppendedStepRunsOnceAndKeepsTheData) {
  TempDir dir;
  std::string path = dir.file("tune.db");
  {
    Database db = Database::open(path);
    db.begin_run(run_info());
  }
  std::vector<SchemaMigration> steps = schema_migrations();
  steps.push_back({kSchemaVersion + 1, "runs get a note", "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT ''"});
  {
    SqliteConnection connection(path, SQLITE_OPEN_READWRITE);
    upgrade_schema(connection, steps);
    upgrade_schema(connection, steps);  // already there: nothing to do (ALTER twice would fail)
  }
  EXPECT_EQ(stored_version(path), kSchemaVersion + 1);
  EXPECT_TRUE(has_column(path, "runs", "note"));
  EXPECT_EQ(sql_value(path, "SELECT COUNT(*) FROM runs"), "1");
  // This build does not know the appended version.
  EXPECT_THROW(Database::open(path), DatabaseError);
}

TEST(Schema, AFailingStepChangesNothing) {
  TempDir dir;
  std::string path = dir.file("tune.db");
  Database::open(path);
  std::vector<SchemaMigration> steps = schema_migrations();
  steps.push_back({kSchemaVersion + 1, "half done",
                   "ALTER TABLE runs ADD COLUMN note TEXT; INSERT INTO no_such_table VALUES (1);"});
  SqliteConnection connection(path, SQLITE_OPEN_READWRITE);
  try {
    upgrade_schema(connection, steps);
    FAIL();
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(),
                HasSubstr("migrating to schema version " + std::to_string(kSchemaVersion + 1) + " (half done) failed"));
    EXPECT_THAT(e.what(), HasSubstr("no_such_table"));
  }
  EXPECT_EQ(stored_version(path), kSchemaVersion);
  EXPECT_FALSE(has_column(path, "runs", "note"));
}

TEST(Schema, AGapInTheStepsIsRefused) {
  TempDir dir;
  std::string path = dir.file("tune.db");
  Database::open(path);
  std::vector<SchemaMigration> steps = schema_migrations();
  steps.push_back({kSchemaVersion + 2, "skips one", "CREATE TABLE later (x)"});
  SqliteConnection connection(path, SQLITE_OPEN_READWRITE);
  EXPECT_THROW(upgrade_schema(connection, steps), DatabaseError);
  EXPECT_EQ(stored_version(path), kSchemaVersion);
}

TEST(Schema, InspectTellsEmptyIngotAndForeignApart) {
  TempDir dir;
  std::string empty = dir.file("empty.db");
  sql_rows(empty, "PRAGMA user_version");
  {
    SqliteConnection c(empty, SQLITE_OPEN_READONLY);
    EXPECT_EQ(inspect_schema(c).kind, SchemaKind::kEmpty);
  }
  std::string ingot = dir.file("ingot.db");
  Database::open(ingot);
  {
    SqliteConnection c(ingot, SQLITE_OPEN_READONLY);
    SchemaState state = inspect_schema(c);
    EXPECT_EQ(state.kind, SchemaKind::kIngot);
    EXPECT_EQ(state.version, kSchemaVersion);
  }
  std::string foreign = dir.file("foreign.db");
  sql_rows(foreign, "CREATE TABLE t (x)");
  SqliteConnection c(foreign, SQLITE_OPEN_READONLY);
  EXPECT_EQ(inspect_schema(c).kind, SchemaKind::kForeign);
}

}  // namespace
}  // namespace ingot
