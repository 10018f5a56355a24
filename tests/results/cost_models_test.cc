// Learned cost models in the tuning database: every field round trips, the newest model of a target wins
// whatever its feature-set version, records the database cannot store faithfully are refused (by the API and
// by the schema's checks), and the integrity report counts them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "results/database.h"
#include "tests/results/test_database.h"

namespace ingot {
namespace {

using namespace ingot::testing;
using ::testing::HasSubstr;

const std::string kCpu = "cpu:AMD EPYC:threads=2";
const std::string kGpu = "sm_80";

CostModelRecord cost_model(const std::string& target, int feature_set_version, int64_t sample_count,
                           const std::string& trained_on) {
  CostModelRecord model;
  model.target = target;
  model.feature_set_version = feature_set_version;
  model.sample_count = sample_count;
  model.params_json = "{\"max_depth\":6,\"eta\":0.3}";
  model.model_json = "{\"learner\":{\"trained_on\":\"" + trained_on + "\"}}";
  model.metrics_json = "{\"rmse\":0.125,\"pairwise_accuracy\":0.875}";
  model.trained_on = trained_on;
  return model;
}

void expect_same_model(const CostModelRecord& back, const CostModelRecord& given, int64_t id) {
  EXPECT_EQ(back.id, id);
  EXPECT_EQ(back.target, given.target);
  EXPECT_EQ(back.feature_set_version, given.feature_set_version);
  EXPECT_EQ(back.sample_count, given.sample_count);
  EXPECT_EQ(back.params_json, given.params_json);
  EXPECT_EQ(back.model_json, given.model_json);
  EXPECT_EQ(back.metrics_json, given.metrics_json);
  EXPECT_EQ(back.trained_on, given.trained_on);
  // UTC ISO-8601 with milliseconds, set by the database.
  EXPECT_EQ(back.created_at.size(), 24u) << back.created_at;
  EXPECT_EQ(back.created_at[10], 'T');
  EXPECT_EQ(back.created_at.back(), 'Z');
}

TEST(CostModels, EveryFieldRoundTripsAndTheDatabaseSetsIdAndCreationTime) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  EXPECT_FALSE(db.latest_cost_model(kCpu));
  EXPECT_TRUE(db.cost_models().empty());

  CostModelRecord given = cost_model(kCpu, 3, 4096, "mlp,lstm");
  // A model as big as XGBoost writes, with the characters JSON and SQL quote.
  given.model_json = "{\"trees\":\"" + std::string(1 << 21, 'x') + "\",\"quote\":\"it's \\\"here\\\"\",\"µ\":\"\\n\"}";
  given.id = 99;                   // ignored
  given.created_at = "yesterday";  // ignored
  int64_t id = db.add_cost_model(given);
  EXPECT_GT(id, 0);
  EXPECT_NE(id, 99);

  std::optional<CostModelRecord> latest = db.latest_cost_model(kCpu);
  ASSERT_TRUE(latest);
  expect_same_model(*latest, given, id);
  std::vector<CostModelRecord> all = db.cost_models();
  ASSERT_EQ(all.size(), 1u);
  expect_same_model(all[0], given, id);
  // What the sqlite3 shell shows.
  EXPECT_EQ(sql_value(db.path(), "SELECT json_extract(metrics_json, '$.rmse') FROM cost_models"), "0.125");
  EXPECT_EQ(sql_value(db.path(), "SELECT length(model_json) >= 2097152 FROM cost_models"), "1");

  // Another Database on the same file sees it: it was committed when add_cost_model returned.
  Database other = Database::open(db.path());
  ASSERT_TRUE(other.latest_cost_model(kCpu));
  EXPECT_EQ(other.latest_cost_model(kCpu)->model_json, given.model_json);
}

TEST(CostModels, MetricsDefaultToAnEmptyObject) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  CostModelRecord model;
  model.target = kCpu;
  model.model_json = "{}";
  db.add_cost_model(model);
  EXPECT_EQ(db.latest_cost_model(kCpu)->metrics_json, "{}");
  EXPECT_EQ(db.latest_cost_model(kCpu)->params_json, "");
}

TEST(CostModels, TheNewestOfATargetWinsWhateverItsFeatureSetVersion) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  CostModelRecord first_cpu = cost_model(kCpu, 2, 100, "mlp");
  CostModelRecord gpu = cost_model(kGpu, 2, 50, "all");
  CostModelRecord second_cpu = cost_model(kCpu, 1, 200, "all");  // an older feature set, added later
  int64_t first_cpu_id = db.add_cost_model(first_cpu);
  int64_t gpu_id = db.add_cost_model(gpu);
  int64_t second_cpu_id = db.add_cost_model(second_cpu);
  EXPECT_LT(first_cpu_id, gpu_id);
  EXPECT_LT(gpu_id, second_cpu_id);

  expect_same_model(*db.latest_cost_model(kCpu), second_cpu, second_cpu_id);
  expect_same_model(*db.latest_cost_model(kGpu), gpu, gpu_id);
  EXPECT_FALSE(db.latest_cost_model("sm_90"));
  EXPECT_FALSE(db.latest_cost_model("cpu"));  // targets match whole, never by prefix

  std::vector<CostModelRecord> all = db.cost_models();
  ASSERT_EQ(all.size(), 3u);
  expect_same_model(all[0], first_cpu, first_cpu_id);
  expect_same_model(all[1], gpu, gpu_id);
  expect_same_model(all[2], second_cpu, second_cpu_id);
  std::vector<CostModelRecord> cpu = db.cost_models(kCpu);
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(cpu[0].id, first_cpu_id);
  EXPECT_EQ(cpu[1].id, second_cpu_id);
  EXPECT_TRUE(db.cost_models("sm_90").empty());

  // Ids are never reused, so "largest id" stays "newest" even after the newest row was deleted by hand.
  sql_rows(db.path(), "DELETE FROM cost_models WHERE id = " + std::to_string(second_cpu_id));
  expect_same_model(*db.latest_cost_model(kCpu), first_cpu, first_cpu_id);
  int64_t third_cpu_id = db.add_cost_model(cost_model(kCpu, 2, 300, "all"));
  EXPECT_GT(third_cpu_id, second_cpu_id);
  EXPECT_EQ(db.latest_cost_model(kCpu)->id, third_cpu_id);
}

void expect_refused(Database& db, const CostModelRecord& model, const std::string& problem) {
  try {
    db.add_cost_model(model);
    FAIL() << "stored a model that should be refused for: " << problem;
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr(db.path()));
    EXPECT_THAT(e.what(), HasSubstr(problem));
  }
}

TEST(CostModels, RefusesRecordsItCannotStoreFaithfully) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  CostModelRecord good = cost_model(kCpu, 1, 10, "all");

  CostModelRecord no_target = good;
  no_target.target = "";
  expect_refused(db, no_target, "add_cost_model: the target is empty");
  CostModelRecord no_model = good;
  no_model.model_json = "";
  expect_refused(db, no_model, "model_json is empty");
  CostModelRecord no_metrics = good;
  no_metrics.metrics_json = "";
  expect_refused(db, no_metrics, "metrics_json is empty");
  CostModelRecord negative_samples = good;
  negative_samples.sample_count = -1;
  expect_refused(db, negative_samples, "sample_count -1 is negative");
  CostModelRecord negative_version = good;
  negative_version.feature_set_version = -2;
  expect_refused(db, negative_version, "feature_set_version -2 is negative");
  EXPECT_EQ(sql_value(db.path(), "SELECT COUNT(*) FROM cost_models"), "0");

  // The schema refuses the same rows written by hand, e.g. with the sqlite3 shell.
  const std::string columns =
      "INSERT INTO cost_models (target, feature_set_version, sample_count, params_json, model_json, metrics_json, "
      "trained_on, created_at) VALUES ";
  EXPECT_THROW(sql_rows(db.path(), columns + "('', 1, 1, '{}', '{}', '{}', 'all', '')"), std::runtime_error);
  EXPECT_THROW(sql_rows(db.path(), columns + "('cpu', -1, 1, '{}', '{}', '{}', 'all', '')"), std::runtime_error);
  EXPECT_THROW(sql_rows(db.path(), columns + "('cpu', 1, -1, '{}', '{}', '{}', 'all', '')"), std::runtime_error);
  EXPECT_THROW(sql_rows(db.path(), columns + "('cpu', 1, 1, '{}', '', '{}', 'all', '')"), std::runtime_error);
  EXPECT_THROW(sql_rows(db.path(), columns + "('cpu', 1, 1, '{}', '{}', '', 'all', '')"), std::runtime_error);
  EXPECT_EQ(sql_value(db.path(), "SELECT COUNT(*) FROM cost_models"), "0");

  EXPECT_GT(db.add_cost_model(good), 0);
}

// A row the schema allows but add_cost_model never writes is refused by name when read, not truncated.
TEST(CostModels, AFeatureSetVersionBeyondAnIntIsRefusedWhenRead) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  sql_rows(db.path(),
           "INSERT INTO cost_models (target, feature_set_version, sample_count, params_json, model_json, "
           "metrics_json, trained_on, created_at) VALUES ('cpu', " +
               std::to_string(int64_t{std::numeric_limits<int>::max()} + 1) + ", 1, '{}', '{}', '{}', 'all', '')");
  try {
    db.latest_cost_model("cpu");
    FAIL() << "no error";
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cost model 1: feature_set_version 2147483648 does not fit an int"));
  }
  EXPECT_THROW(db.cost_models(), DatabaseError);
}

TEST(CostModels, TheIntegrityReportCountsThem) {
  TempDir dir;
  Database db = Database::open(dir.file("tune.db"));
  db.add_cost_model(cost_model(kCpu, 1, 10, "all"));
  db.add_cost_model(cost_model(kGpu, 1, 10, "all"));
  IntegrityReport report = db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.cost_models, 2);
  EXPECT_THAT(report.to_text(), HasSubstr("cost models: 2\n"));
}

}  // namespace
}  // namespace ingot
