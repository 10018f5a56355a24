#include "results/schema.h"

#include <charconv>

namespace ingot {
namespace {

const char* const kVersion1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  config_text TEXT NOT NULL,
  config_path TEXT NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  machine TEXT NOT NULL,
  compiler TEXT NOT NULL,
  seed INTEGER NOT NULL
);

CREATE TABLE workloads (
  hash TEXT PRIMARY KEY CHECK (length(hash) = 16 AND hash NOT GLOB '*[^0-9a-f]*'),
  name TEXT NOT NULL,
  program_text TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX workloads_by_name ON workloads(name);

CREATE TABLE candidates (
  hash TEXT PRIMARY KEY CHECK (length(hash) = 16 AND hash NOT GLOB '*[^0-9a-f]*'),
  workload_hash TEXT NOT NULL REFERENCES workloads(hash),
  target TEXT NOT NULL,
  schedule_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX candidates_by_workload ON candidates(workload_hash, target);

CREATE TABLE measurements (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  candidate_hash TEXT NOT NULL REFERENCES candidates(hash),
  run_id INTEGER NOT NULL REFERENCES runs(id),
  trial_index INTEGER NOT NULL,
  target_description TEXT NOT NULL,
  error_class TEXT NOT NULL CHECK (error_class IN ('none', 'invalid_schedule', 'compile_error',
                                                  'compile_timeout', 'runtime_error', 'run_timeout',
                                                  'wrong_answer')),
  error_message TEXT NOT NULL,
  run_seconds TEXT NOT NULL,
  min_s REAL,
  median_s REAL,
  mean_s REAL,
  stddev_s REAL,
  compile_seconds REAL,
  measured_at TEXT NOT NULL
);
CREATE INDEX measurements_by_candidate ON measurements(candidate_hash);
CREATE INDEX measurements_by_run ON measurements(run_id);

CREATE TABLE claims (
  candidate_hash TEXT NOT NULL,
  target TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  process_start INTEGER,
  claimed_at TEXT NOT NULL,
  PRIMARY KEY (candidate_hash, target)
);

CREATE VIEW history AS
SELECT m.id AS measurement_id, m.measured_at, m.run_id, m.trial_index,
       w.hash AS workload_hash, w.name AS workload_name,
       c.hash AS candidate_hash, c.target, m.target_description, c.schedule_json,
       m.error_class, m.error_message, m.run_seconds,
       m.min_s, m.median_s, m.mean_s, m.stddev_s, m.compile_seconds
FROM measurements m
JOIN candidates c ON c.hash = m.candidate_hash
JOIN workloads w ON w.hash = c.workload_hash;

CREATE VIEW best_per_workload_target AS
SELECT workload_name, workload_hash, target, median_s, min_s, mean_s, stddev_s, candidate_hash, schedule_json,
       measurement_id, measured_at, run_id, trial_index, target_description, error_class, error_message,
       run_seconds, compile_seconds
FROM (SELECT history.*,
             ROW_NUMBER() OVER (PARTITION BY workload_hash, target ORDER BY median_s, measurement_id) AS place
      FROM history
      WHERE error_class = 'none' AND median_s IS NOT NULL)
WHERE place = 1;

CREATE VIEW error_summary AS
SELECT workload_name, workload_hash, target, error_class, COUNT(*) AS count
FROM history
GROUP BY workload_hash, workload_name, target, error_class;
)sql";

// Learned cost models, newest by id per target. The checks repeat add_cost_model's so that rows written by
// other tools (the sqlite3 shell) cannot break what readers rely on either.
const char* const kVersion2 = R"sql(
CREATE TABLE cost_models (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  target TEXT NOT NULL CHECK (target <> ''),
  feature_set_version INTEGER NOT NULL CHECK (feature_set_version >= 0),
  sample_count INTEGER NOT NULL CHECK (sample_count >= 0),
  params_json TEXT NOT NULL,
  model_json TEXT NOT NULL CHECK (model_json <> ''),
  metrics_json TEXT NOT NULL DEFAULT '{}' CHECK (metrics_json <> ''),
  trained_on TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX cost_models_by_target ON cost_models(target, id);
)sql";

// The tasks of a whole model under one partition plan: a model's tasks change with its plan, so the plan's hash is
// part of the key. The view reuses best_per_workload_target, so a task's best is chosen exactly as a workload's is.
const char* const kVersion3 = R"sql(
CREATE TABLE model_tasks (
  model_workload_hash TEXT NOT NULL REFERENCES workloads(hash),
  plan_hash TEXT NOT NULL CHECK (length(plan_hash) = 16 AND plan_hash NOT GLOB '*[^0-9a-f]*'),
  plan_strategy TEXT NOT NULL,
  task_index INTEGER NOT NULL CHECK (task_index >= 0),
  task_workload_hash TEXT NOT NULL REFERENCES workloads(hash),
  weight INTEGER NOT NULL CHECK (weight >= 1),
  occurrences_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (model_workload_hash, plan_hash, task_index)
);
CREATE INDEX model_tasks_by_task ON model_tasks(task_workload_hash);

CREATE VIEW model_task_best AS
SELECT t.model_workload_hash, m.name AS model_workload_name, t.plan_hash, t.plan_strategy, t.task_index, t.weight,
       t.task_workload_hash, b.workload_name AS task_workload_name, b.target, b.candidate_hash AS best_candidate_hash,
       b.median_s AS best_median_s, t.weight * b.median_s AS weighted_median_s
FROM model_tasks t
JOIN workloads m ON m.hash = t.model_workload_hash
JOIN best_per_workload_target b ON b.workload_hash = t.task_workload_hash;
)sql";

// Timings of the reference schedule and a run's best candidates taken again in interleaved rounds, kept apart from
// measurements: they are not measurements, so best_per_workload_target, claims and resume never see them. The
// checks repeat add_side_by_side's, so that rows from the sqlite3 shell hold to them too.
const char* const kVersion4 = R"sql(
CREATE TABLE side_by_side (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  candidate_hash TEXT NOT NULL REFERENCES candidates(hash),
  is_reference INTEGER NOT NULL CHECK (is_reference IN (0, 1)),
  round INTEGER NOT NULL CHECK (round >= 0),
  target_description TEXT NOT NULL,
  error_class TEXT NOT NULL CHECK (error_class IN ('none', 'invalid_schedule', 'compile_error',
                                                  'compile_timeout', 'runtime_error', 'run_timeout',
                                                  'wrong_answer')),
  error_message TEXT NOT NULL,
  run_seconds TEXT NOT NULL,
  min_s REAL,
  median_s REAL,
  mean_s REAL,
  stddev_s REAL,
  measured_at TEXT NOT NULL
);
CREATE INDEX side_by_side_by_run ON side_by_side(run_id);

CREATE VIEW side_by_side_history AS
SELECT s.id AS side_by_side_id, s.measured_at, s.run_id, s.round, s.is_reference,
       w.hash AS workload_hash, w.name AS workload_name,
       c.hash AS candidate_hash, c.target, s.target_description, c.schedule_json,
       s.error_class, s.error_message, s.run_seconds,
       s.min_s, s.median_s, s.mean_s, s.stddev_s
FROM side_by_side s
JOIN candidates c ON c.hash = s.candidate_hash
JOIN workloads w ON w.hash = c.workload_hash;
)sql";

bool has_table(SqliteConnection& connection, const std::string& name) {
  Statement s(connection, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, name);
  return s.step();
}

void write_version(SqliteConnection& connection, int version) {
  Statement s(connection, "UPDATE meta SET value = ?1 WHERE key = 'schema_version'");
  s.bind(1, std::to_string(version)).run();
}

}  // namespace

const std::vector<SchemaMigration>& schema_migrations() {
  static const std::vector<SchemaMigration> migrations = {
      {1, "runs, workloads, candidates, measurements, claims; views history, best_per_workload_target, error_summary",
       kVersion1},
      {2, "cost_models (learned cost models per target)", kVersion2},
      {3, "model_tasks (the tasks of a whole model under a partition plan); view model_task_best", kVersion3},
      {4, "side_by_side (side-by-side timings of a run's reference and best candidates); view side_by_side_history",
       kVersion4},
  };
  return migrations;
}

SchemaState inspect_schema(SqliteConnection& connection) {
  SchemaState state;
  Statement objects(connection, "SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
  objects.step();
  if (objects.column_int(0) == 0) return state;

  state.kind = SchemaKind::kForeign;
  if (!has_table(connection, "meta")) {
    state.reason = "it holds tables but no 'meta' table, so it is not an ingot database";
    return state;
  }
  std::string text;
  try {
    // Other applications keep a `meta` table with a schema version too; the application row tells ours.
    Statement application(connection, "SELECT value FROM meta WHERE key = 'application'");
    if (!application.step() || application.column_text(0) != "ingot") {
      state.reason = "its 'meta' table does not name the application 'ingot', so it is not an ingot database";
      return state;
    }
    Statement version(connection, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (!version.step()) {
      state.reason = "its 'meta' table has no schema_version row, so it is not an ingot database";
      return state;
    }
    text = version.column_text(0);
  } catch (const DatabaseError&) {
    // A `meta` table of another application, without our key and value columns.
    state.reason = "its 'meta' table has no (key, value) columns, so it is not an ingot database";
    return state;
  }
  int version = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (error != std::errc() || end != text.data() + text.size() || version < 0) {
    state.reason = "its meta.schema_version '" + text + "' is not a version number";
    return state;
  }
  state.kind = SchemaKind::kIngot;
  state.version = version;
  return state;
}

void upgrade_schema(SqliteConnection& connection, const std::vector<SchemaMigration>& migrations) {
  const int latest = migrations.empty() ? 0 : migrations.back().to_version;
  Transaction transaction(connection, Transaction::Mode::kWrite);
  // Inspected again under the write lock: another process may have created the schema since the caller
  // looked, and must not see it created twice.
  SchemaState state = inspect_schema(connection);
  if (state.kind == SchemaKind::kForeign)
    throw_database_error(connection.path(), state.reason + "; it was not modified");
  if (state.kind == SchemaKind::kIngot && state.version > latest) {
    throw_database_error(connection.path(), "schema version " + std::to_string(state.version) +
                                                " is newer than this ingot supports (" + std::to_string(latest) +
                                                "); use a newer ingot. The file was not modified");
  }
  if (state.kind == SchemaKind::kEmpty) {
    connection.exec(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta (key, value) VALUES ('schema_version', '0'), ('application', 'ingot');");
    Statement created(connection,
                      "INSERT INTO meta (key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ'))");
    created.run();
  }
  int version = state.version;
  for (const SchemaMigration& step : migrations) {
    if (step.to_version <= version) continue;
    if (step.to_version != version + 1) {
      throw_database_error(connection.path(), "no migration from schema version " + std::to_string(version) + " to " +
                                                  std::to_string(version + 1));
    }
    try {
      connection.exec(step.sql);
    } catch (const DatabaseError& e) {
      throw_database_error(connection.path(), "migrating to schema version " + std::to_string(step.to_version) + " (" +
                                                  step.description + ") failed, nothing was changed: " + e.what());
    }
    version = step.to_version;
    write_version(connection, version);
  }
  transaction.commit();
}

}  // namespace ingot
