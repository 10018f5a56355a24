// Schema migrations: a version-0 file is brought to the current version on open, an appended step runs
// once, and a failing step leaves the database exactly as it was.
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
  // This build does not know version 2.
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
    EXPECT_THAT(e.what(), HasSubstr("migrating to schema version 2 (half done) failed"));
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
