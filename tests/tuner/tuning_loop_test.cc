// The tuning loop end to end on a small matmul: budgets, resume without re-measuring, SIGKILL in the middle
// of a run, and two processes tuning into one database file.
#include "tuner/tuning_loop.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "analysis/strategies.h"
#include "compile/cpp_compiler.h"
#include "lower/kernels.h"
#include "lower/lower.h"
#include "results/database.h"
#include "space/strategy_schedule.h"
#include "tests/tuner/test_directory.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

// The random search, keeping every batch the loop tells it.
class RecordingSearch : public SearchStrategy {
 public:
  RecordingSearch(const Program& program, uint64_t seed) : inner_(program, seed) {}
  std::vector<Schedule> propose(int n) override { return inner_.propose(n); }
  void tell(const std::vector<TrialResult>& results) override { batches.push_back(results); }

  std::vector<TrialResult> all() const {
    std::vector<TrialResult> out;
    for (const auto& batch : batches) out.insert(out.end(), batch.begin(), batch.end());
    return out;
  }

  std::vector<std::vector<TrialResult>> batches;

 private:
  RandomSearch inner_;
};

class TuningLoop : public TestDirectory {
 protected:
  TuneOptions options(const std::string& db_name, int64_t trials) const {
    TuneOptions o;
    o.database_path = (dir_ / db_name).string();
    o.trials = trials;
    o.seed = 3;
    o.threads = 1;
    o.batch_size = 2;
    o.builder.workers = 2;
    o.runner.warmup_runs = 0;
    o.runner.min_repeat_ms = 1;
    o.runner.min_repeats = 1;
    o.runner.run_timeout_seconds = 30;
    return o;
  }

  // tune() with the random search over the program, seeded as the options.
  static TuneSummary run(const Program& program, const std::string& name, const TuneOptions& o,
                         const std::function<void(const TuneProgress&)>& on_progress = {}) {
    RandomSearch search(program, o.seed);
    return tune(program, name, o, search, on_progress);
  }

  static std::vector<std::string> measured_schedules(const std::string& path) {
    std::vector<std::string> out;
    for (const MeasuredCandidate& m : Database::open(path).history()) out.push_back(m.candidate.schedule_json);
    return out;
  }

  static void expect_no_duplicates(const std::vector<std::string>& schedules) {
    std::set<std::string> unique(schedules.begin(), schedules.end());
    EXPECT_EQ(unique.size(), schedules.size()) << "a candidate was measured twice";
  }

  Program program_ = matmul(16, 12, 8);
};

TEST_F(TuningLoop, MeasuresTheBudgetAndKeepsTheBest) {
  TuneOptions o = options("a.db", 5);
  int measured_reports = 0, compiling_reports = 0;
  TuneSummary s = run(program_, "matmul", o, [&](const TuneProgress& p) {
    measured_reports += p.phase == "measuring";
    compiling_reports += p.phase.rfind("compiling", 0) == 0;
    EXPECT_LE(p.trials_done, 5);
  });
  EXPECT_EQ(s.measured_now, 5);
  EXPECT_EQ(s.skipped, 0);
  EXPECT_EQ(measured_reports, 5);   // one per candidate measured
  EXPECT_EQ(compiling_reports, 3);  // one per batch of 2 (the last batch holds the fifth only)
  ASSERT_TRUE(s.best_seconds.has_value());
  Database db = Database::open(o.database_path);
  EXPECT_EQ(db.history().size(), 5u);
  auto best = db.best("matmul", s.target);
  ASSERT_TRUE(best.has_value());
  EXPECT_DOUBLE_EQ(best->measurement.statistics->median, *s.best_seconds);
  for (const MeasuredCandidate& m : db.history())
    if (m.measurement.error_class == ErrorClass::kNone) {
      EXPECT_LE(*s.best_seconds, m.measurement.statistics->median);
    }
  EXPECT_TRUE(db.check().ok);
}

// With a fusion strategy's layout, every candidate carries the plan: the same kernels, in the plan's order.
TEST_F(TuningLoop, CandidatesFollowTheFusionLayout) {
  Program mlp = make_workload("mlp", find_workload("mlp")->small);
  TuneOptions o = options("layout.db", 4);
  SamplerOptions sampler;
  sampler.layout = plan_layout(make_plan("unfused", mlp, resolve_target("cpu")));
  RandomSearch search(mlp, o.seed, sampler);
  TuneSummary s = tune(mlp, "mlp", o, search, [](const TuneProgress&) {});
  EXPECT_EQ(s.measured_now, 4);
  ASSERT_TRUE(s.best_seconds.has_value());
  for (const std::string& json : measured_schedules(o.database_path)) {
    Schedule schedule = Schedule::from_json(json);
    EXPECT_EQ(schedule.layout(), sampler.layout);
    // Unfused: nothing is inlined or nested in another compute, so every compute is a kernel of its own.
    EXPECT_EQ(kernel_traffic(lower(mlp, schedule)).kernel_count(), int64_t(mlp.computes().size()));
  }
}

// A compile still running when the minutes run out is stopped at the budget, and its candidate is released
// unmeasured (it is not the candidate's fault), not recorded as a compile timeout.
TEST_F(TuningLoop, CompilesStillRunningAtTheBudgetEndAreStoppedAndReleased) {
  std::filesystem::path slow_compiler = dir_ / "slow_cxx.sh";
  {
    std::ofstream script(slow_compiler);
    // Slow only when compiling a candidate: the compiler's version query (part of the kernel cache key) and the
    // toolchain check's kernel stay quick.
    script << "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.cc) src=\"$a\" ;; esac; done\n"
           << "if [ -n \"$src\" ] && ! grep -q ingot_toolchain_probe \"$src\"; then sleep 60; fi\nexec c++ \"$@\"\n";
  }
  std::filesystem::permissions(slow_compiler, std::filesystem::perms::owner_all);
  TuneOptions o = options("cut.db", 0);
  o.minutes = 0.05;  // 3 s
  o.builder.compile.compiler = slow_compiler.string();
  o.builder.compile.cache_dir = (dir_ / "cache").string();
  auto started = std::chrono::steady_clock::now();
  TuneSummary s = run(program_, "matmul", o);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(seconds, 30.0) << "the compiles ran past the budget";
  EXPECT_EQ(s.measured_now, 0);
  IntegrityReport report = Database::open(o.database_path).check();
  EXPECT_EQ(report.measurements, 0);
  EXPECT_EQ(report.claims, 0);
  EXPECT_GT(report.candidates, 0);
}

TEST_F(TuningLoop, ResumeContinuesTheSameSequenceWithoutMeasuringTwice) {
  run(program_, "matmul", options("resumed.db", 3));
  TuneSummary second = run(program_, "matmul", options("resumed.db", 6));
  EXPECT_EQ(second.skipped, 3);
  EXPECT_EQ(second.measured_now, 3);
  run(program_, "matmul", options("straight.db", 6));
  std::vector<std::string> resumed = measured_schedules((dir_ / "resumed.db").string());
  std::vector<std::string> straight = measured_schedules((dir_ / "straight.db").string());
  expect_no_duplicates(resumed);
  EXPECT_EQ(std::set<std::string>(resumed.begin(), resumed.end()),
            std::set<std::string>(straight.begin(), straight.end()));
}

// A stop request (SIGINT in `ingot tune`) after the first measurement: that one is kept, the rest of its batch is
// released unrecorded, no new batch starts, and the next run measures what is left of the same sequence.
TEST_F(TuningLoop, AStopKeepsWhatWasMeasuredAndReleasesTheRest) {
  std::atomic<bool> stop{false};
  TuneOptions o = options("stopped.db", 6);
  o.batch_size = 3;
  o.stop = &stop;
  TuneSummary first = run(program_, "matmul", o, [&](const TuneProgress& p) {
    if (p.measured_now == 1) stop = true;
  });
  EXPECT_TRUE(first.stopped);
  EXPECT_EQ(first.measured_now, 1);
  Database db = Database::open(o.database_path);
  EXPECT_EQ(db.history("matmul").size(), 1u);
  EXPECT_EQ(db.check().claims, 0);
  stop = false;
  TuneSummary second = run(program_, "matmul", o);
  EXPECT_FALSE(second.stopped);
  EXPECT_EQ(second.skipped, 1);
  EXPECT_EQ(second.measured_now, 5);
  run(program_, "matmul", options("straight.db", 6));
  std::vector<std::string> resumed = measured_schedules(o.database_path);
  std::vector<std::string> straight = measured_schedules((dir_ / "straight.db").string());
  expect_no_duplicates(resumed);
  EXPECT_EQ(std::set<std::string>(resumed.begin(), resumed.end()),
            std::set<std::string>(straight.begin(), straight.end()));
}

TEST_F(TuningLoop, SigkillLosesAtMostTheCandidateInFlight) {
  TuneOptions o = options("killed.db", 8);
  // Each measurement takes at least 40 ms, so the 20 ms polls below see the run half done: with the compiled
  // kernels already in the cache, all 8 once fitted between two polls.
  o.runner.min_repeat_ms = 40;
  o.runner.max_repeats = 1 << 30;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    run(program_, "matmul", o);
    ::_exit(0);
  }
  // Kill it once two measurements are durable.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  size_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(o.database_path)) {
      try {
        seen = Database::open(o.database_path).history().size();
      } catch (const std::exception&) {
        seen = 0;  // the child may still be creating the schema
      }
    }
    if (seen >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_GE(seen, 2u) << "the child never measured two candidates";
  size_t before = Database::open(o.database_path).history().size();
  ASSERT_LT(before, 8u) << "killed too late to test a resume";

  TuneSummary resumed = run(program_, "matmul", o);
  EXPECT_EQ(resumed.skipped, int64_t(before));
  std::vector<std::string> all = measured_schedules(o.database_path);
  EXPECT_EQ(all.size(), 8u);
  expect_no_duplicates(all);
  EXPECT_TRUE(Database::open(o.database_path).check().ok);
}

TEST_F(TuningLoop, TwoProcessesShareOneDatabase) {
  TuneOptions o = options("shared.db", 8);
  Database::open(o.database_path);  // create the schema before either child starts
  std::vector<pid_t> children;
  for (int n = 0; n < 2; ++n) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        run(program_, "matmul", o);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", n, e.what());
        ::_exit(1);
      }
      ::_exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::vector<std::string> all = measured_schedules(o.database_path);
  EXPECT_EQ(all.size(), 8u);
  expect_no_duplicates(all);
  EXPECT_TRUE(Database::open(o.database_path).check().ok);
}

// Each told result is the stored measurement of the candidate whose key the loop stored, in sequence order.
void expect_told_as_stored(const std::vector<TrialResult>& told, const TuneSummary& s, const std::string& path) {
  std::map<std::string, MeasuredCandidate> stored;
  for (const MeasuredCandidate& m : Database::open(path).history()) stored.emplace(m.candidate.hash, m);
  for (size_t n = 0; n < told.size(); ++n) {
    const TrialResult& r = told[n];
    EXPECT_EQ(r.candidate.workload(), s.workload_hash);
    EXPECT_EQ(r.candidate.target(), s.target);
    if (n > 0) {
      EXPECT_GT(r.trial_index, told[n - 1].trial_index);
    }
    auto m = stored.find(r.candidate.hash_hex());
    ASSERT_NE(m, stored.end()) << r.candidate << " is not stored under its key";
    EXPECT_EQ(m->second.candidate.schedule_json, r.candidate.schedule_json());
    if (r.skipped) continue;
    EXPECT_EQ(m->second.measurement.trial_index, r.trial_index);
    EXPECT_EQ(r.error_class, m->second.measurement.error_class);
    ASSERT_EQ(r.seconds.has_value(), m->second.measurement.statistics.has_value());
    if (r.seconds) {
      EXPECT_EQ(*r.seconds, m->second.measurement.statistics->median);
    }
  }
}

TEST_F(TuningLoop, TellsTheStrategyEveryMeasuredCandidateOfEachBatch) {
  TuneOptions o = options("told.db", 5);  // batches of 2: 2, 2, then 1 for the budget
  RecordingSearch search(program_, o.seed);
  TuneSummary s = tune(program_, "matmul", o, search);
  ASSERT_EQ(search.batches.size(), 3u);
  EXPECT_EQ(search.batches[0].size(), 2u);
  EXPECT_EQ(search.batches[1].size(), 2u);
  EXPECT_EQ(search.batches[2].size(), 1u);
  std::vector<TrialResult> told = search.all();
  for (size_t n = 0; n < told.size(); ++n) {
    EXPECT_EQ(told[n].trial_index, int64_t(n));
    EXPECT_FALSE(told[n].skipped);
    EXPECT_EQ(told[n].error_class, ErrorClass::kNone);
    EXPECT_TRUE(told[n].seconds.has_value());
  }
  expect_told_as_stored(told, s, o.database_path);
}

// A compiler that builds the toolchain check's kernel and fails on every candidate.
std::string compiler_failing_candidates(const std::filesystem::path& dir) {
  std::filesystem::path path = dir / "picky_cxx.sh";
  std::ofstream script(path);
  script << "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.cc) src=\"$a\" ;; esac; done\n"
         << "if [ -z \"$src\" ] || grep -q ingot_toolchain_probe \"$src\"; then exec c++ \"$@\"; fi\n"
         << "echo 'error: this compiler refuses candidates' >&2\nexit 1\n";
  script.close();
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

TEST_F(TuningLoop, TellsFailedCandidatesWithoutSeconds) {
  TuneOptions o = options("failed.db", 3);
  o.builder.compile.compiler = compiler_failing_candidates(dir_);  // every candidate's compile fails
  o.builder.compile.cache_dir = (dir_ / "cache").string();
  RecordingSearch search(program_, o.seed);
  TuneSummary s = tune(program_, "matmul", o, search);
  EXPECT_EQ(s.errors_now, 3);
  std::vector<TrialResult> told = search.all();
  ASSERT_EQ(told.size(), 3u);
  for (const TrialResult& r : told) {
    EXPECT_NE(r.error_class, ErrorClass::kNone);
    EXPECT_FALSE(r.seconds.has_value());
  }
  expect_told_as_stored(told, s, o.database_path);
}

// Failures recorded as the candidates' own stay skipped on resume; with retry_errors the same candidates are measured
// again (next to their failed rows), and a candidate measured correctly is never measured twice.
TEST_F(TuningLoop, RetryErrorsMeasuresFailedCandidatesAgain) {
  TuneOptions failing = options("retry.db", 3);
  failing.builder.compile.compiler = compiler_failing_candidates(dir_);
  failing.builder.compile.cache_dir = (dir_ / "failing_cache").string();
  ASSERT_EQ(run(program_, "matmul", failing).errors_now, 3);

  TuneOptions fixed = options("retry.db", 3);
  fixed.builder.compile.cache_dir = (dir_ / "cache").string();
  TuneSummary resumed = run(program_, "matmul", fixed);
  EXPECT_EQ(resumed.measured_now, 0);
  EXPECT_EQ(resumed.skipped, 3);
  EXPECT_FALSE(resumed.best_seconds.has_value());

  fixed.retry_errors = true;
  TuneSummary retried = run(program_, "matmul", fixed);
  EXPECT_EQ(retried.measured_now, 3);
  EXPECT_EQ(retried.errors_now, 0);
  EXPECT_EQ(retried.skipped, 0);
  EXPECT_TRUE(retried.best_seconds.has_value());
  std::vector<MeasuredCandidate> history = Database::open(fixed.database_path).history();
  EXPECT_EQ(history.size(), 6u);  // the three failed rows stay
  EXPECT_EQ(std::count_if(history.begin(), history.end(),
                          [](const MeasuredCandidate& m) { return m.measurement.error_class == ErrorClass::kNone; }),
            3);

  TuneSummary again = run(program_, "matmul", fixed);
  EXPECT_EQ(again.measured_now, 0);
  EXPECT_EQ(again.skipped, 3);
}

// A resumed run tells the candidates measured before as skipped, in their places of the sequence, with their stored
// outcome (what a learning search relearns).
TEST_F(TuningLoop, TellsSkippedCandidatesOnResume) {
  run(program_, "matmul", options("resumed_told.db", 3));
  TuneOptions o = options("resumed_told.db", 6);
  RecordingSearch search(program_, o.seed);
  std::vector<std::string> phases;
  TuneSummary s = tune(program_, "matmul", o, search, [&](const TuneProgress& p) {
    if (phases.empty() || phases.back() != p.phase) phases.push_back(p.phase);
  });
  EXPECT_EQ(s.skipped, 3);
  // Batches of 2: the first skips 2, the second skips 1 and compiles 1, the third compiles 2 (each compile told as
  // it finishes); each measures.
  EXPECT_EQ(phases,
            (std::vector<std::string>{"skipped 2 measured before", "skipped 1 measured before", "compiling 1 candidate",
                                      "compiled 1 of 1", "measuring", "compiling 2 candidates", "compiled 1 of 2",
                                      "compiled 2 of 2", "measuring"}));
  std::vector<TrialResult> told = search.all();
  ASSERT_EQ(told.size(), 6u);
  for (size_t n = 0; n < told.size(); ++n) {
    EXPECT_EQ(told[n].trial_index, int64_t(n));
    EXPECT_EQ(told[n].skipped, n < 3) << n;
    EXPECT_TRUE(told[n].seconds.has_value()) << n;  // every candidate of this small matmul runs correctly
  }
  Database db = Database::open(o.database_path);
  for (size_t n = 0; n < 3; ++n) {
    std::optional<Database::StoredOutcome> stored = db.first_outcome(told[n].candidate.hash_hex(), s.target);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(told[n].seconds, stored->median_seconds) << n;
  }
  EXPECT_FALSE(db.first_outcome("0123456789abcdef", s.target).has_value());
  expect_told_as_stored(told, s, o.database_path);
}

// A compiler that cannot build anything (missing, or refusing a flag) is the environment's fault: the run is refused
// before it records a run, a candidate or a measurement, so fixing the config and running again measures everything.
TEST_F(TuningLoop, AToolchainThatCannotBuildIsRefusedBeforeAnythingIsRecorded) {
  TuneOptions o = options("toolchain.db", 3);
  o.builder.compile.compiler = "/nonexistent/g++";
  o.builder.compile.cache_dir = (dir_ / "cache").string();
  EXPECT_THROW(run(program_, "matmul", o), ToolchainError);
  EXPECT_FALSE(std::filesystem::exists(o.database_path));
  o.builder.compile.compiler = "";
  o.builder.compile.flags += " -fno-such-flag-ingot";
  EXPECT_THROW(run(program_, "matmul", o), ToolchainError);
  EXPECT_FALSE(std::filesystem::exists(o.database_path));
  o.builder.compile.flags = default_cpp_flags();
  TuneSummary s = run(program_, "matmul", o);
  EXPECT_EQ(s.measured_now, 3);
  EXPECT_EQ(s.errors_now, 0);
}

TEST_F(TuningLoop, NeedsABudget) {
  TuneOptions o = options("none.db", 0);
  EXPECT_THROW(run(program_, "matmul", o), std::invalid_argument);
}

// `--target sm_90` names the one GPU of that architecture a workload was measured on; where several were, the
// message lists their keys; where none was, the key says so and holds nothing; other settings are keys as given.
TEST_F(TuningLoop, AGpuArchitectureNamesTheStoredKeyOfItsGpu) {
  Database db = Database::open((dir_ / "keys.db").string());
  db.add_workload(WorkloadRecord{"00000000000000a1", "mlp", "program", ""});
  const int64_t run = db.begin_run(RunInfo{});
  auto measured = [&](const std::string& hash, const std::string& target) {
    db.add_candidate(CandidateRecord{hash, "00000000000000a1", target, Schedule().to_json(), ""});
    MeasurementRecord m;
    m.candidate_hash = hash;
    m.run_id = run;
    m.run_seconds = {1e-3};
    db.add_measurement(m);
  };
  measured("00000000000000c1", gpu_target_key("NVIDIA H200", "sm_90"));
  measured("00000000000000c2", gpu_target_key("NVIDIA A100-SXM4-40GB", "sm_80"));
  measured("00000000000000c3", cpu_target_key(1));
  EXPECT_EQ(resolve_stored_target(db, "mlp", "sm_90"), "gpu:NVIDIA H200:sm_90");
  EXPECT_EQ(resolve_stored_target(db, "00000000000000a1", "sm_80"), "gpu:NVIDIA A100-SXM4-40GB:sm_80");
  EXPECT_EQ(resolve_stored_target(db, "mlp", "cpu:x"), "cpu:x");
  EXPECT_FALSE(db.best("mlp", resolve_stored_target(db, "other", "sm_90")).has_value());
  measured("00000000000000c4", gpu_target_key("NVIDIA H100 80GB HBM3", "sm_90"));
  try {
    resolve_stored_target(db, "mlp", "sm_90");
    FAIL() << "two GPUs of sm_90 were not told apart";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "workload 'mlp' was measured on 2 GPUs of sm_90; name one with its key: 'gpu:NVIDIA H100 80GB "
              "HBM3:sm_90' 'gpu:NVIDIA H200:sm_90'");
  }
}

}  // namespace
}  // namespace ingot
