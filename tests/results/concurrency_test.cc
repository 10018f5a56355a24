// Several processes on one database file: two writers creating the file and adding measurements at once
// lose nothing, and a writer killed with SIGKILL in the middle of its work leaves every measurement it
// committed, an intact file, and its claim free to take over.
#include <gtest/gtest.h>
#include <signal.h>

#include <set>
#include <thread>

#include "results/database.h"
#include "tests/results/test_database.h"

namespace ingot {
namespace {

using namespace ingot::testing;

TEST(Concurrency, TwoProcessesCreatingAndFillingOneFileLoseNothing) {
  TempDir dir;
  std::string path = dir.file("shared.db");  // does not exist yet: both children create it
  constexpr int kEach = 200;
  auto writer = [&](uint64_t own_candidate) {
    return [&path, own_candidate] {
      Database db = Database::open(path);
      db.add_workload(workload(1, "mlp"));
      db.add_candidate(candidate(2, hash_of(1)));  // both add the same candidate, one each of their own
      db.add_candidate(candidate(own_candidate, hash_of(1)));
      int64_t run = db.begin_run(run_info(own_candidate));
      for (int i = 0; i < kEach; ++i) {
        MeasurementRecord m = measurement(hash_of(i % 2 ? 2 : own_candidate), run, {1e-3 * (i + 1), 2e-3});
        m.trial_index = i;
        db.add_measurement(m);
      }
      db.end_run(run);
      return 0;
    };
  };
  pid_t first = fork_child(writer(10));
  pid_t second = fork_child(writer(11));
  EXPECT_EQ(wait_child(first), 0);
  EXPECT_EQ(wait_child(second), 0);

  Database db = Database::open(path);
  IntegrityReport report = db.check();
  EXPECT_TRUE(report.ok) << report.to_text();
  EXPECT_EQ(report.measurements, 2 * kEach);
  EXPECT_EQ(report.workloads, 1);
  EXPECT_EQ(report.candidates, 3);
  EXPECT_EQ(report.runs, 2);
  EXPECT_EQ(report.unfinished_runs, 0);
  Rows per_run = sql_rows(path, "SELECT COUNT(*), COUNT(DISTINCT trial_index) FROM measurements GROUP BY run_id");
  EXPECT_EQ(per_run, (Rows{{"200", "200"}, {"200", "200"}}));
  EXPECT_EQ(sql_value(path, "PRAGMA integrity_check"), "ok");
}

TEST(Concurrency, SigkillMidWayKeepsEveryCommittedMeasurement) {
  TempDir dir;
  std::string path = dir.file("crash.db");
  int64_t run = 0;
  {
    Database db = Database::open(path);
    db.add_workload(workload(1, "mlp"));
    db.add_candidate(candidate(2, hash_of(1)));
    db.add_candidate(candidate(3, hash_of(1)));
    run = db.begin_run(run_info());
  }
  std::set<int64_t> committed;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Pipe ids;
    pid_t child = fork_child([&] {
      ids.close_read();
      Database db = Database::open(path);
      // In flight when the kill comes, never released.
      if (attempt == 0 && !db.claim(hash_of(3), "cpu", run)) return 2;
      for (int i = 0;; ++i) {
        std::vector<double> seconds(50);
        for (size_t k = 0; k < seconds.size(); ++k) seconds[k] = 1e-4 * double(i + 1) + 1e-9 * double(k);
        ids.write_value(db.add_measurement(measurement(hash_of(2), run, seconds)));  // after the commit
      }
    });
    ids.close_write();
    // Let it commit some, then kill it at a moment that varies between attempts.
    int64_t id = 0;
    size_t wanted = committed.size() + 20 + 7 * attempt;
    while (committed.size() < wanted && ids.read_value(id)) committed.insert(id);
    std::this_thread::sleep_for(std::chrono::microseconds(700 * attempt));
    kill(child, SIGKILL);
    EXPECT_EQ(wait_child(child), 128 + SIGKILL);
    while (ids.read_value(id)) committed.insert(id);
    ASSERT_GE(committed.size(), wanted);

    Database db = Database::open(path);
    IntegrityReport report = db.check();
    EXPECT_TRUE(report.ok) << report.to_text();
    std::set<int64_t> stored;
    for (const MeasuredCandidate& m : db.history()) {
      stored.insert(m.measurement.id);
      EXPECT_EQ(m.measurement.run_seconds.size(), 50u);  // never half a measurement
    }
    for (int64_t c : committed) EXPECT_TRUE(stored.count(c)) << "measurement " << c << " was lost";
    // At most the one the child committed but had not yet reported.
    EXPECT_LE(stored.size(), committed.size() + 1);
    committed = stored;
    if (attempt == 0) {
      EXPECT_TRUE(db.claim(hash_of(3), "cpu", run));  // the dead child's claim
    }
  }
}

}  // namespace
}  // namespace ingot
