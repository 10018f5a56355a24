// The schema of the tuning database: its tables and views as a list of forward migrations, the test that a
// file is an ingot database at all, and the upgrade of an older one. Used by Database::open; the tests use it
// to exercise migrations that do not exist yet.
#pragma once

#include <string>
#include <vector>

#include "results/sqlite_connection.h"

namespace ingot {

// The version this build writes. A database at a lower version is migrated forward when opened; one at a
// higher version is refused.
inline constexpr int kSchemaVersion = 4;

// One step forward: the SQL that turns a database at version to_version - 1 into version to_version. Steps
// run inside the upgrade's single transaction with foreign_keys on; a step that rebuilds a table must
// `PRAGMA defer_foreign_keys = ON` first.
struct SchemaMigration {
  int to_version;
  std::string description;
  std::string sql;
};

// The steps from version 0 (a `meta` table only, as every new database starts) to kSchemaVersion, in order.
// A new version is added by appending one step here and raising kSchemaVersion.
const std::vector<SchemaMigration>& schema_migrations();

enum class SchemaKind {
  kEmpty,    // no tables at all: a new (or empty) file that may become an ingot database
  kIngot,    // has meta.schema_version
  kForeign,  // has tables but is not an ingot database
};

struct SchemaState {
  SchemaKind kind = SchemaKind::kEmpty;
  int version = 0;     // meta.schema_version when kIngot
  std::string reason;  // why it is foreign, for the error message
};

// Reads only; safe on a read-only connection to a file that must not be changed.
SchemaState inspect_schema(SqliteConnection& connection);

// Throws DatabaseError, having changed nothing, when the database is foreign, or newer than the last step of
// migrations knows. Otherwise brings it to that version in one BEGIN IMMEDIATE transaction (an empty
// database first gets `meta` at version 0), so a failing step leaves the file as it was, and two processes
// opening one new file at once create the schema once.
void upgrade_schema(SqliteConnection& connection, const std::vector<SchemaMigration>& migrations);

}  // namespace ingot
