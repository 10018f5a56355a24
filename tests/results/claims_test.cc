// Claims on candidates in flight: held against other Database objects and other live processes, released
// explicitly or by the measurement, and taken over from a holder that died (exit without release, SIGKILL,
// a reused pid, another host).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "results/database.h"
#include "results/process_identity.h"
#include "tests/results/test_database.h"

namespace ingot {
namespace {

using namespace ingot::testing;

// A database with workload 1, candidate 2 and one run, closed again so that tests may fork.
struct ClaimFixture {
  TempDir dir;
  std::string path = dir.file("claims.db");
  std::string x = hash_of(2);
  int64_t run = 0;

  ClaimFixture() {
    Database db = Database::open(path);
    db.add_workload(workload(1, "mlp"));
    db.add_candidate(candidate(2, hash_of(1)));
    run = db.begin_run(run_info());
  }
  std::string claim_holder() { return sql_value(path, "SELECT COALESCE(MAX(pid), 0) FROM claims"); }
};

TEST(Claims, HeldWithinAProcessUntilReleased) {
  ClaimFixture f;
  Database a = Database::open(f.path);
  Database b = Database::open(f.path);
  EXPECT_TRUE(a.claim(f.x, "cpu", f.run));
  EXPECT_FALSE(b.claim(f.x, "cpu", f.run));
  EXPECT_FALSE(a.claim(f.x, "cpu", f.run));
  EXPECT_TRUE(a.claim(f.x, "cuda", f.run));  // another target is another claim
  EXPECT_EQ(f.claim_holder(), std::to_string(getpid()));
  EXPECT_TRUE(a.release_claim(f.x, "cpu"));
  EXPECT_FALSE(a.release_claim(f.x, "cpu"));
  EXPECT_TRUE(b.claim(f.x, "cpu", f.run));
  EXPECT_THROW(b.claim(hash_of(3), "cpu", f.run + 1), DatabaseError);  // no such run
}

TEST(Claims, AMeasurementReleasesTheClaimAndBlocksNewOnes) {
  ClaimFixture f;
  Database db = Database::open(f.path);
  ASSERT_TRUE(db.claim(f.x, "cpu", f.run));
  db.add_measurement(measurement(f.x, f.run, {1.0}));
  EXPECT_EQ(sql_value(f.path, "SELECT COUNT(*) FROM claims"), "0");
  EXPECT_FALSE(db.claim(f.x, "cpu", f.run));
  EXPECT_FALSE(db.release_claim(f.x, "cpu"));
}

TEST(Claims, RetryingClaimsACandidateWhoseMeasurementsFailed) {
  ClaimFixture f;
  Database db = Database::open(f.path);
  db.add_measurement(measurement(f.x, f.run, {}, ErrorClass::kCompileError, "error: no such header"));
  EXPECT_FALSE(db.claim(f.x, "cpu", f.run));
  EXPECT_TRUE(db.claim(f.x, "cpu", f.run, true));
  db.add_measurement(measurement(f.x, f.run, {1.0}));
  EXPECT_FALSE(db.claim(f.x, "cpu", f.run, true));  // measured correctly now: never again
}

TEST(Claims, HeldAgainstAnotherLiveProcessUntilItReleases) {
  ClaimFixture f;
  Pipe to_parent, to_child;
  pid_t child = fork_child([&] {
    to_parent.close_read();
    to_child.close_write();
    Database db = Database::open(f.path);
    to_parent.write_value(db.claim(f.x, "cpu", f.run) ? 1 : 0);
    int64_t go = 0;
    to_child.read_value(go);
    to_parent.write_value(db.release_claim(f.x, "cpu") ? 1 : 0);
    return 0;
  });
  // Closed here so that a child that dies early gives end of file rather than a hang.
  to_parent.close_write();
  to_child.close_read();
  int64_t claimed = 0, released = 0;
  ASSERT_TRUE(to_parent.read_value(claimed));
  EXPECT_EQ(claimed, 1);
  Database db = Database::open(f.path);
  EXPECT_FALSE(db.claim(f.x, "cpu", f.run));
  EXPECT_EQ(f.claim_holder(), std::to_string(child));
  to_child.write_value(1);
  ASSERT_TRUE(to_parent.read_value(released));
  EXPECT_EQ(released, 1);
  EXPECT_TRUE(db.claim(f.x, "cpu", f.run));
  EXPECT_EQ(wait_child(child), 0);
}

TEST(Claims, TakenOverFromAProcessThatExitedWithoutReleasing) {
  ClaimFixture f;
  pid_t child = fork_child([&] {
    Database db = Database::open(f.path);
    return db.claim(f.x, "cpu", f.run) ? 0 : 2;  // _exit: no destructor, no release
  });
  ASSERT_EQ(wait_child(child), 0);
  EXPECT_EQ(f.claim_holder(), std::to_string(child));
  Database db = Database::open(f.path);
  EXPECT_TRUE(db.claim(f.x, "cpu", f.run));
  EXPECT_EQ(f.claim_holder(), std::to_string(getpid()));
}

TEST(Claims, TakenOverFromAProcessKilledWithSigkill) {
  ClaimFixture f;
  Pipe to_parent;
  pid_t child = fork_child([&] {
    to_parent.close_read();
    Database db = Database::open(f.path);
    to_parent.write_value(db.claim(f.x, "cpu", f.run) ? 1 : 0);
    while (true) pause();
    return 0;
  });
  to_parent.close_write();
  int64_t claimed = 0;
  // No ASSERT before the kill below: a failed one would leave the child paused forever.
  EXPECT_TRUE(to_parent.read_value(claimed));
  EXPECT_EQ(claimed, 1);
  {
    Database db = Database::open(f.path);
    EXPECT_FALSE(db.claim(f.x, "cpu", f.run));
  }
  kill(child, SIGKILL);
  EXPECT_EQ(wait_child(child), 128 + SIGKILL);
  Database db = Database::open(f.path);
  EXPECT_TRUE(db.claim(f.x, "cpu", f.run));
}

TEST(Claims, ReusedPidsAndOtherHostsDoNotHoldAClaim) {
  ClaimFixture f;
  ProcessIdentity self = current_process();
  ASSERT_TRUE(self.start_ticks) << "no /proc";
  Database db = Database::open(f.path);
  auto plant = [&](const std::string& host, int64_t pid, int64_t start) {
    sql_rows(f.path, "DELETE FROM claims; INSERT INTO claims VALUES ('" + f.x + "', 'cpu', " + std::to_string(f.run) +
                         ", " + std::to_string(pid) + ", '" + host + "', " + std::to_string(start) +
                         ", '2024-01-01T00:00:00.000Z')");
  };
  // This pid, but a process that started at another time: an earlier process whose pid we now have.
  plant(self.host, self.pid, *self.start_ticks - 1);
  EXPECT_TRUE(db.claim(f.x, "cpu", f.run));
  plant("some-other-host", self.pid, *self.start_ticks);
  EXPECT_TRUE(db.claim(f.x, "cpu", f.run));

  // Our parent runs, so its claim holds, and this process cannot release it.
  std::optional<int64_t> parent_start = process_start_ticks(getppid());
  ASSERT_TRUE(parent_start);
  plant(self.host, getppid(), *parent_start);
  EXPECT_FALSE(db.claim(f.x, "cpu", f.run));
  EXPECT_FALSE(db.release_claim(f.x, "cpu"));
  EXPECT_EQ(f.claim_holder(), std::to_string(getppid()));
}

TEST(ProcessIdentity, TellsRunningProcessesFromGoneOnes) {
  ProcessIdentity self = current_process();
  EXPECT_TRUE(is_running(self));
  ProcessIdentity elsewhere = self;
  elsewhere.host += "-elsewhere";
  EXPECT_FALSE(is_running(elsewhere));
  ProcessIdentity reused = self;
  *reused.start_ticks += 1;
  EXPECT_FALSE(is_running(reused));

  pid_t child = fork_child([] { return 0; });
  ProcessIdentity zombie{self.host, child, std::nullopt};
  // Until it is reaped the child is a zombie: gone, though kill(pid, 0) still succeeds.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (is_running(zombie) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(is_running(zombie));
  EXPECT_EQ(kill(child, 0), 0);
  EXPECT_EQ(wait_child(child), 0);
  EXPECT_FALSE(is_running(zombie));
}

}  // namespace
}  // namespace ingot
