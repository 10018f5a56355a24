// Side-by-side timings: rounds of a run's reference and best candidates are stored and read back by workload and
// target (the newest comparison only), refused when they cannot be stored faithfully, counted by db check, and
// never seen by what reads measurements (best, history, resume, claims).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "results/database.h"
#include "tests/results/test_database.h"

namespace ingot {
namespace {

using namespace ingot::testing;
using ::testing::HasSubstr;

// Workload mlp with the fixed schedule (ref) and two searched candidates (a, b) on cpu, a candidate on cuda (g),
// and workload lstm with one candidate (l) on cpu. Each was measured once by the search run.
struct SideBySideFixture {
  TempDir dir;
  std::string path = dir.file("side.db");
  Database db = Database::open(path);
  std::string mlp = hash_of(0x100), lstm = hash_of(0x200);
  std::string ref = hash_of(0xf), a = hash_of(0xa), b = hash_of(0xb), g = hash_of(0xc), l = hash_of(0xd);
  int64_t search = 0;

  SideBySideFixture() {
    db.add_workload(workload(0x100, "mlp"));
    db.add_workload(workload(0x200, "lstm"));
    db.add_candidate(candidate(0xf, mlp));
    db.add_candidate(candidate(0xa, mlp));
    db.add_candidate(candidate(0xb, mlp));
    db.add_candidate(candidate(0xc, mlp, "cuda"));
    db.add_candidate(candidate(0xd, lstm));
    search = db.begin_run(run_info());
    db.add_measurement(measurement(ref, search, {2.0}));
    db.add_measurement(measurement(a, search, {1.0}));
    db.add_measurement(measurement(b, search, {1.5}));
    db.add_measurement(measurement(g, search, {4.0}));
    db.add_measurement(measurement(l, search, {3.0}));
  }

  SideBySideRecord round(const std::string& candidate_hash, int64_t run_id, int64_t index, std::vector<double> seconds,
                         bool is_reference = false) const {
    SideBySideRecord r;
    r.candidate_hash = candidate_hash;
    r.run_id = run_id;
    r.is_reference = is_reference;
    r.round = index;
    r.target_description = "cpu test target";
    r.run_seconds = std::move(seconds);
    return r;
  }
};

// "round/candidate" of each row, in the order read.
std::vector<std::string> order(const std::vector<SideBySideRow>& rows) {
  std::vector<std::string> out;
  for (const SideBySideRow& r : rows) out.push_back(std::to_string(r.record.round) + "/" + r.candidate.hash);
  return out;
}

TEST(DatabaseSideBySide, RoundsAreAddedAndReadBackInRoundOrderWithDerivedStatistics) {
  SideBySideFixture f;
  // Added as a tuner might, but out of round order: round 1 before round 0.
  SideBySideRecord reference = f.round(f.ref, f.search, 1, {2.0, 2.25, 1.75}, true);
  reference.statistics = RunStatistics{99, 99, 99, 99};  // ignored: statistics come from the run times
  int64_t first = f.db.add_side_by_side(reference);
  f.db.add_side_by_side(f.round(f.a, f.search, 1, {1.25}));
  f.db.add_side_by_side(f.round(f.ref, f.search, 0, {2.5, 1.5}, true));
  SideBySideRecord crashed = f.round(f.a, f.search, 0, {});
  crashed.error_class = ErrorClass::kRuntimeError;
  crashed.error_message = "signal 11";
  int64_t last = f.db.add_side_by_side(crashed);
  EXPECT_GT(first, 0);
  EXPECT_GT(last, first);

  std::vector<SideBySideRow> rows = f.db.latest_side_by_side("mlp", "cpu");
  EXPECT_EQ(order(rows), (std::vector<std::string>{"0/" + f.ref, "0/" + f.a, "1/" + f.ref, "1/" + f.a}));
  ASSERT_EQ(rows.size(), 4u);
  const SideBySideRecord& back = rows[2].record;
  EXPECT_EQ(back.id, first);
  EXPECT_EQ(back.candidate_hash, f.ref);
  EXPECT_EQ(back.run_id, f.search);
  EXPECT_TRUE(back.is_reference);
  EXPECT_EQ(back.round, 1);
  EXPECT_EQ(back.target_description, "cpu test target");
  EXPECT_EQ(back.error_class, ErrorClass::kNone);
  EXPECT_EQ(back.run_seconds, (std::vector<double>{2.0, 2.25, 1.75}));
  ASSERT_TRUE(back.statistics);
  EXPECT_DOUBLE_EQ(back.statistics->min, 1.75);
  EXPECT_DOUBLE_EQ(back.statistics->median, 2.0);
  EXPECT_DOUBLE_EQ(back.statistics->mean, 2.0);
  EXPECT_DOUBLE_EQ(back.statistics->stddev, 0.25);
  EXPECT_EQ(back.measured_at.size(), 24u) << back.measured_at;
  EXPECT_EQ(rows[2].workload_name, "mlp");
  EXPECT_EQ(rows[2].candidate.workload_hash, f.mlp);
  EXPECT_EQ(rows[2].candidate.target, "cpu");
  EXPECT_EQ(rows[2].candidate.schedule_json, candidate(0xf, f.mlp).schedule_json);

  EXPECT_DOUBLE_EQ(rows[0].record.statistics->median, 2.0);  // an even count: the mean of the middle two
  EXPECT_FALSE(rows[1].record.is_reference);
  EXPECT_EQ(rows[1].record.error_class, ErrorClass::kRuntimeError);
  EXPECT_EQ(rows[1].record.error_message, "signal 11");
  EXPECT_TRUE(rows[1].record.run_seconds.empty());
  EXPECT_FALSE(rows[1].record.statistics);

  // What the sqlite3 shell shows: the JSON array add_measurement writes, and NULL statistics for the error.
  EXPECT_EQ(
      sql_rows(f.path, "SELECT run_seconds, median_s, is_reference FROM side_by_side ORDER BY id"),
      (Rows{{"[2,2.25,1.75]", "2.0", "1"}, {"[1.25]", "1.25", "0"}, {"[2.5,1.5]", "2.0", "1"}, {"[]", "NULL", "0"}}));
  // By hash as by name.
  EXPECT_EQ(order(f.db.latest_side_by_side(f.mlp, "cpu")), order(rows));
}

TEST(DatabaseSideBySide, TheNewestRunWinsAndOtherWorkloadsAndTargetsAreLeftOut) {
  SideBySideFixture f;
  EXPECT_TRUE(f.db.latest_side_by_side("mlp", "cpu").empty());  // never compared
  int64_t older = f.db.begin_run(run_info());
  int64_t newer = f.db.begin_run(run_info());
  // The newer run compares first: the run's id decides, not when its rows were added.
  f.db.add_side_by_side(f.round(f.ref, newer, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.b, newer, 0, {1.5}));
  f.db.add_side_by_side(f.round(f.ref, older, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.a, older, 0, {1.0}));
  f.db.add_side_by_side(f.round(f.a, older, 1, {1.0}));
  // Other workloads and targets, compared by a run newer still.
  int64_t other = f.db.begin_run(run_info());
  f.db.add_side_by_side(f.round(f.g, other, 0, {4.0}, true));
  f.db.add_side_by_side(f.round(f.l, other, 0, {3.0}, true));

  std::vector<SideBySideRow> mlp = f.db.latest_side_by_side("mlp", "cpu");
  EXPECT_EQ(order(mlp), (std::vector<std::string>{"0/" + f.ref, "0/" + f.b}));
  for (const SideBySideRow& r : mlp) EXPECT_EQ(r.record.run_id, newer);
  std::vector<SideBySideRow> cuda = f.db.latest_side_by_side("mlp", "cuda");
  EXPECT_EQ(order(cuda), (std::vector<std::string>{"0/" + f.g}));
  EXPECT_EQ(cuda[0].record.run_id, other);
  EXPECT_EQ(order(f.db.latest_side_by_side(f.lstm, "cpu")), (std::vector<std::string>{"0/" + f.l}));
  EXPECT_TRUE(f.db.latest_side_by_side("lstm", "cuda").empty());
  EXPECT_TRUE(f.db.latest_side_by_side("mlp", "gpu").empty());
}

// The newest comparison that timed given candidates: how a resumed whole-model run finds a comparison it made before.
TEST(DatabaseSideBySide, TheNewestComparisonIncludingGivenCandidates) {
  SideBySideFixture f;
  int64_t older = f.db.begin_run(run_info());
  int64_t newer = f.db.begin_run(run_info());
  f.db.add_side_by_side(f.round(f.ref, older, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.a, older, 0, {1.0}));
  f.db.add_side_by_side(f.round(f.b, older, 0, {1.5}));
  f.db.add_side_by_side(f.round(f.ref, newer, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.b, newer, 0, {1.5}));
  EXPECT_EQ(order(f.db.latest_side_by_side("mlp", "cpu", {f.ref, f.b})),
            (std::vector<std::string>{"0/" + f.ref, "0/" + f.b}));
  EXPECT_EQ(order(f.db.latest_side_by_side("mlp", "cpu", {f.a})),
            (std::vector<std::string>{"0/" + f.ref, "0/" + f.a, "0/" + f.b}));
  EXPECT_EQ(f.db.latest_side_by_side("mlp", "cpu", {f.a, f.ref}).front().record.run_id, older);
  EXPECT_TRUE(f.db.latest_side_by_side("mlp", "cpu", {f.a, f.g}).empty()) << "g was never compared";
  EXPECT_TRUE(f.db.latest_side_by_side("mlp", "cuda", {f.a}).empty()) << "another target";
}

// Every comparison that timed given candidates, oldest first: how a repeated whole-model run finds the comparison it
// decided from, even where a later one (its final comparison) timed the same schedules.
TEST(DatabaseSideBySide, EveryComparisonIncludingGivenCandidatesOldestFirst) {
  SideBySideFixture f;
  int64_t older = f.db.begin_run(run_info());
  int64_t newer = f.db.begin_run(run_info());
  int64_t other = f.db.begin_run(run_info());
  // The newer run's rows are added first: the run's id orders them, not when they were added.
  f.db.add_side_by_side(f.round(f.ref, newer, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.a, newer, 0, {1.5}));
  f.db.add_side_by_side(f.round(f.ref, older, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.a, older, 0, {1.0}));
  f.db.add_side_by_side(f.round(f.ref, older, 1, {2.0}, true));
  f.db.add_side_by_side(f.round(f.a, older, 1, {1.0}));
  f.db.add_side_by_side(f.round(f.ref, other, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.b, other, 0, {1.0}));
  f.db.add_side_by_side(f.round(f.g, other, 0, {4.0}, true));  // another target
  std::vector<SideBySideRow> rows = f.db.side_by_side_comparisons("mlp", "cpu", {f.a, f.ref});
  EXPECT_EQ(order(rows),
            (std::vector<std::string>{"0/" + f.ref, "0/" + f.a, "1/" + f.ref, "1/" + f.a, "0/" + f.ref, "0/" + f.a}));
  std::vector<int64_t> runs;
  for (const SideBySideRow& r : rows) runs.push_back(r.record.run_id);
  EXPECT_EQ(runs, (std::vector<int64_t>{older, older, older, older, newer, newer}));
  EXPECT_EQ(f.db.side_by_side_comparisons("mlp", "cpu").size(), 8u) << "without candidates: every comparison";
  EXPECT_EQ(f.db.side_by_side_comparisons("mlp", "cpu", {f.b}).size(), 2u);
  EXPECT_TRUE(f.db.side_by_side_comparisons("mlp", "cpu", {f.a, f.b}).empty()) << "never timed together";
  EXPECT_EQ(f.db.side_by_side_comparisons("mlp", "cuda", {f.g}).size(), 1u);
  EXPECT_THROW(f.db.side_by_side_comparisons("no such workload", "cpu"), DatabaseError);
}

// A name as best() takes it: an unknown name and one that several workloads share are refused, the hash still works.
TEST(DatabaseSideBySide, WorkloadsAreNamedAsBestNamesThem) {
  SideBySideFixture f;
  f.db.add_side_by_side(f.round(f.a, f.search, 0, {1.0}));
  EXPECT_THROW(f.db.best("no such workload", "cpu"), DatabaseError);
  try {
    f.db.latest_side_by_side("no such workload", "cpu");
    FAIL() << "no error";
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("latest_side_by_side: no workload has the hash or name 'no such workload'"));
  }
  f.db.add_workload(workload(0x101, "mlp"));
  EXPECT_THROW(f.db.best("mlp", "cpu"), DatabaseError);
  try {
    f.db.latest_side_by_side("mlp", "cpu");
    FAIL() << "no error";
  } catch (const DatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("latest_side_by_side: 2 workloads are named 'mlp'"));
  }
  EXPECT_EQ(f.db.latest_side_by_side(f.mlp, "cpu").size(), 1u);
}

// The rounds are no measurements: a round faster than every measurement, or a failed one, changes nothing that reads
// measurements, and a candidate timed only side by side is still to be measured.
TEST(DatabaseSideBySide, RoundsNeverCountAsMeasurements) {
  SideBySideFixture f;
  f.db.add_candidate(candidate(0xe, f.mlp));  // never measured
  const std::string unmeasured = hash_of(0xe);
  std::optional<MeasuredCandidate> best_before = f.db.best("mlp", "cpu");
  std::vector<MeasuredCandidate> history_before = f.db.history();
  std::map<ErrorClass, int64_t> errors_before = f.db.error_counts();
  ASSERT_TRUE(best_before);
  ASSERT_EQ(best_before->candidate.hash, f.a);

  int64_t compare = f.db.begin_run(run_info());
  f.db.add_side_by_side(f.round(f.b, compare, 0, {0.001}));          // faster than a's measurement
  f.db.add_side_by_side(f.round(unmeasured, compare, 0, {0.0001}));  // faster still, and never measured
  SideBySideRecord failed = f.round(f.ref, compare, 0, {}, true);
  failed.error_class = ErrorClass::kWrongAnswer;
  f.db.add_side_by_side(failed);

  std::optional<MeasuredCandidate> best_after = f.db.best("mlp", "cpu");
  ASSERT_TRUE(best_after);
  EXPECT_EQ(best_after->candidate.hash, f.a);
  EXPECT_EQ(best_after->measurement.id, best_before->measurement.id);
  EXPECT_EQ(f.db.best_of_every_workload("cpu").size(), 2u);
  std::vector<MeasuredCandidate> history_after = f.db.history();
  ASSERT_EQ(history_after.size(), history_before.size());
  for (size_t i = 0; i < history_after.size(); ++i)
    EXPECT_EQ(history_after[i].measurement.id, history_before[i].measurement.id);
  EXPECT_EQ(f.db.error_counts(), errors_before);
  EXPECT_FALSE(f.db.has_measurement(unmeasured, "cpu"));
  EXPECT_FALSE(f.db.first_outcome(unmeasured, "cpu"));
  std::optional<Database::StoredOutcome> ref = f.db.first_outcome(f.ref, "cpu");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->error_class, ErrorClass::kNone);  // the measurement, not the failed round
  EXPECT_DOUBLE_EQ(*ref->median_seconds, 2.0);
  // Resume claims and measures the candidate timed only side by side; a measured one stays measured.
  EXPECT_TRUE(f.db.claim(unmeasured, "cpu", compare));
  EXPECT_FALSE(f.db.claim(f.b, "cpu", compare));
  EXPECT_EQ(sql_value(f.path, "SELECT COUNT(*) FROM best_per_workload_target WHERE median_s < 0.5"), "0");
}

TEST(DatabaseSideBySide, RefusesRoundsItCannotStoreFaithfully) {
  SideBySideFixture f;
  auto expect_refused = [&](const SideBySideRecord& r, const std::string& problem) {
    try {
      f.db.add_side_by_side(r);
      ADD_FAILURE() << "no error for " << problem;
    } catch (const DatabaseError& e) {
      EXPECT_THAT(e.what(), HasSubstr(f.path));
      EXPECT_THAT(e.what(), HasSubstr(problem));
    }
  };
  expect_refused(f.round(hash_of(0x999), f.search, 0, {1.0}),
                 "candidate " + hash_of(0x999) + ", round 0: the candidate is not stored; add_candidate first");
  expect_refused(f.round(f.a, f.search + 100, 0, {1.0}), "there is no run " + std::to_string(f.search + 100));
  expect_refused(f.round(f.a, f.search, -1, {1.0}), "round -1: the round is negative");
  expect_refused(f.round(f.a, f.search, 0, {}), "a correct round (error class none) has no run times");
  expect_refused(f.round(f.a, f.search, 0, {1.0, std::nan("")}), "is invalid");
  expect_refused(f.round(f.a, f.search, 0, {-1.0}), "run time -1.000000 is invalid");
  expect_refused(f.round("ABCDEF0123456789", f.search, 0, {1.0}), "is not 16 lowercase hex digits");
  EXPECT_EQ(sql_value(f.path, "SELECT COUNT(*) FROM side_by_side"), "0");

  // The schema refuses a negative round, a reference flag other than 0 or 1 and an unknown error class too, e.g.
  // from a hand-written INSERT.
  const std::string insert =
      "INSERT INTO side_by_side (run_id, candidate_hash, is_reference, round, target_description, error_class, "
      "error_message, run_seconds, measured_at) VALUES (1, '" +
      f.a + "', ";
  EXPECT_THROW(sql_rows(f.path, insert + "0, -1, '', 'none', '', '[1]', '')"), std::runtime_error);
  EXPECT_THROW(sql_rows(f.path, insert + "2, 0, '', 'none', '', '[1]', '')"), std::runtime_error);
  EXPECT_THROW(sql_rows(f.path, insert + "0, 0, '', 'Crashed', '', '[]', '')"), std::runtime_error);
  EXPECT_EQ(sql_value(f.path, "SELECT COUNT(*) FROM side_by_side"), "0");
  EXPECT_NO_THROW(sql_rows(f.path, insert + "1, 0, '', 'none', '', '[1]', '')"));
}

// docs/database.md's query: the median of each candidate's round medians in one run, the reference first.
TEST(DatabaseSideBySide, TheDocsMedianOfRoundsQuery) {
  SideBySideFixture f;
  f.db.add_side_by_side(f.round(f.a, f.search, 0, {100.0}));  // another run's comparison: not counted
  int64_t compare = f.db.begin_run(run_info());
  const std::vector<double> ref_rounds = {2.0, 2.5, 1.0, 2.25, 3.0}, a_rounds = {1.0, 1.5, 1.25, 4.0};
  for (size_t i = 0; i < ref_rounds.size(); ++i) {
    f.db.add_side_by_side(f.round(f.ref, compare, static_cast<int64_t>(i), {ref_rounds[i]}, true));
    if (i < a_rounds.size()) f.db.add_side_by_side(f.round(f.a, compare, static_cast<int64_t>(i), {a_rounds[i]}));
  }
  SideBySideRecord failed = f.round(f.a, compare, 4, {});
  failed.error_class = ErrorClass::kRunTimeout;
  f.db.add_side_by_side(failed);
  // The query as docs/database.md prints it, for run 7.
  std::string query =
      "SELECT workload_name, target, candidate_hash, is_reference, MAX(n) AS rounds, "
      "AVG(median_s) * 1e3 AS median_of_rounds_ms "
      "FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY candidate_hash ORDER BY median_s) AS place, "
      "COUNT(*) OVER (PARTITION BY candidate_hash) AS n "
      "FROM side_by_side_history WHERE run_id = 7 AND error_class = 'none') "
      "WHERE place IN ((n + 1) / 2, (n + 2) / 2) "
      "GROUP BY candidate_hash ORDER BY workload_name, target, is_reference DESC, median_of_rounds_ms";
  query.replace(query.find("run_id = 7"), 10, "run_id = " + std::to_string(compare));
  // ref: the middle of five; a: the mean of the middle two of four (its timed-out round left out).
  EXPECT_EQ(sql_rows(f.path, query),
            (Rows{{"mlp", "cpu", f.ref, "1", "5", "2250.0"}, {"mlp", "cpu", f.a, "0", "4", "1375.0"}}));
}

TEST(DatabaseSideBySide, CheckCountsTheRounds) {
  SideBySideFixture f;
  f.db.add_side_by_side(f.round(f.ref, f.search, 0, {2.0}, true));
  f.db.add_side_by_side(f.round(f.a, f.search, 0, {1.0}));
  f.db.add_side_by_side(f.round(f.b, f.search, 0, {1.5}));
  IntegrityReport report = f.db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.side_by_side, 3);
  EXPECT_EQ(report.measurements, 5);  // the rounds are not among them
  EXPECT_EQ(report.measurements_by_class[ErrorClass::kNone], 5);
  EXPECT_THAT(report.to_text(), HasSubstr("model tasks: 0\nside-by-side rounds: 3\n"));
  EXPECT_EQ(Database::check_file(f.path).side_by_side, 3);

  // A round written by hand with foreign keys off (the sqlite3 shell's default) is found like a measurement's.
  sql_rows(f.path,
           "INSERT INTO side_by_side (run_id, candidate_hash, is_reference, round, target_description, error_class, "
           "error_message, run_seconds, measured_at) VALUES (1, '00000000000000ff', 0, 0, '', 'none', '', '[1]', '')");
  report = f.db.check();
  EXPECT_FALSE(report.ok);
  ASSERT_EQ(report.problems.size(), 1u) << report.to_text();
  EXPECT_THAT(report.problems[0], HasSubstr("side_by_side"));
}

}  // namespace
}  // namespace ingot
