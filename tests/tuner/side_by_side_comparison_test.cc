// The end-of-run side-by-side comparison: the reference and the best few are timed in interleaved rounds and stored,
// never as measurements (resume and best() do not see them), and read back as they were summarized.
#include "tuner/side_by_side_comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <optional>

#include "results/database.h"
#include "tests/tuner/test_directory.h"
#include "tuner/measured_dataset.h"
#include "tuner/tuning_loop.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

class SideBySideComparisonTest : public TestDirectory {
 protected:
  TuneOptions options(int side_by_side) const {
    TuneOptions o;
    o.database_path = (dir_ / "t.db").string();
    o.trials = 4;
    o.seed = 3;
    o.threads = 1;
    o.batch_size = 4;
    o.builder.workers = 2;
    o.runner.warmup_runs = 0;
    o.runner.min_repeat_ms = 1;
    o.runner.min_repeats = 1;
    o.side_by_side = side_by_side;
    o.side_by_side_rounds = 3;
    return o;
  }

  // Four schedules of the small matmul, the naive one among them; it is the reference.
  static std::vector<Schedule> schedules() {
    return {Schedule().split("C", "j", 2), Schedule(), Schedule().split("C", "i", 2).parallel("C", "i.o"),
            Schedule().reorder("C", {"j", "i", "k"})};
  }

  Program program_ = find_example("matmul").make_small();
};

TEST_F(SideBySideComparisonTest, TimesTheReferenceAndTheBestInRoundsAndStoresThemApartFromMeasurements) {
  ListSearch search(schedules(), Schedule());
  const TuneSummary s = tune(program_, "mm", options(2), search);
  ASSERT_TRUE(s.side_by_side.has_value());
  const SideBySideComparison& c = *s.side_by_side;
  EXPECT_EQ(c.run_id, s.run_id);
  // 3 rounds, and up to 3 more where a verdict was close and rested on one round (SideBySideEntry::undecided).
  EXPECT_GE(c.rounds, 3);
  EXPECT_LE(c.rounds, 6);
  ASSERT_EQ(c.entries.size(), 3u);
  const Candidate naive(s.workload_hash, s.target, Schedule());
  EXPECT_TRUE(c.entries[0].is_reference);
  EXPECT_EQ(c.entries[0].candidate_hash, naive.hash_hex());
  EXPECT_FALSE(c.entries[0].speedup.has_value());

  Database db = Database::open(options(2).database_path);
  // The two others are the best two other candidates by their stored least median, best first.
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [hash, measured] : best_correct_medians(db.history(s.workload_hash), s.target))
    if (hash != naive.hash_hex()) ranked.emplace_back(measured.second, hash);
  std::sort(ranked.begin(), ranked.end());
  ASSERT_EQ(ranked.size(), 3u);
  for (size_t e = 1; e < 3; ++e) {
    EXPECT_FALSE(c.entries[e].is_reference);
    EXPECT_EQ(c.entries[e].candidate_hash, ranked[e - 1].second);
    EXPECT_EQ(c.entries[e].correct_rounds, c.rounds);
    EXPECT_TRUE(c.entries[e].speedup.has_value());
    EXPECT_GT(*c.entries[e].median_seconds, 0);
  }
  ASSERT_NE(c.fastest(), nullptr);

  // Every round is stored; none is a measurement.
  EXPECT_EQ(db.latest_side_by_side(s.workload_hash, s.target).size(), 3u * size_t(c.rounds));
  EXPECT_EQ(db.history(s.workload_hash).size(), 4u);
  const std::optional<SideBySideComparison> stored = stored_side_by_side(db, s.workload_hash, s.target);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->run_id, s.run_id);
  EXPECT_EQ(stored->rounds, c.rounds);
  ASSERT_EQ(stored->entries.size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(stored->entries[e].candidate_hash, c.entries[e].candidate_hash);
    EXPECT_EQ(stored->entries[e].is_reference, c.entries[e].is_reference);
    EXPECT_DOUBLE_EQ(*stored->entries[e].median_seconds, *c.entries[e].median_seconds);
    EXPECT_EQ(stored->entries[e].speedup.has_value(), c.entries[e].speedup.has_value());
    if (c.entries[e].speedup) {
      EXPECT_DOUBLE_EQ(*stored->entries[e].speedup, *c.entries[e].speedup);
    }
  }
}

TEST_F(SideBySideComparisonTest, TheNaiveScheduleIsTimedOnceAfterTheRoundsWhenNoContenderIsIt) {
  // The reference is the naive schedule: it is timed every round as a contender, and not again.
  ListSearch with_naive(schedules(), Schedule());
  const TuneSummary a = tune(program_, "mm", options(2), with_naive);
  ASSERT_TRUE(a.side_by_side.has_value());
  EXPECT_FALSE(a.side_by_side->naive.has_value());
  EXPECT_EQ(a.side_by_side->naive_seconds(), a.side_by_side->entries[0].median_seconds);

  // No schedule of this search is naive: it is built with the contenders and timed once, after the rounds.
  const std::vector<Schedule> others = {schedules()[0], schedules()[2], schedules()[3]};
  ListSearch search(others, others[0]);
  TuneOptions o = options(2);
  o.database_path = (dir_ / "n.db").string();
  const TuneSummary s = tune(program_, "mm", o, search);
  ASSERT_TRUE(s.side_by_side.has_value());
  const SideBySideComparison& c = *s.side_by_side;
  ASSERT_EQ(c.entries.size(), 3u);
  ASSERT_TRUE(c.naive.has_value());
  EXPECT_EQ(c.naive->candidate_hash, Candidate(s.workload_hash, s.target, Schedule()).hash_hex());
  EXPECT_EQ(c.naive->correct_rounds, 1);
  EXPECT_EQ(c.naive->runs, 1);  // timed by one run, however many the contenders' rounds take
  ASSERT_TRUE(c.naive->median_seconds.has_value());
  EXPECT_EQ(c.naive_seconds(), c.naive->median_seconds);
  for (const SideBySideEntry& e : c.entries) {
    ASSERT_TRUE(c.speedup_over_naive(e).has_value());
    EXPECT_DOUBLE_EQ(*c.speedup_over_naive(e), *c.naive->median_seconds / *e.median_seconds);
  }

  // Stored one round past the last, never as a measurement; read back apart from the contenders.
  Database db = Database::open(o.database_path);
  EXPECT_EQ(db.latest_side_by_side(s.workload_hash, s.target).size(), 3u * size_t(c.rounds) + 1u);
  EXPECT_EQ(db.history(s.workload_hash).size(), 3u);
  const std::optional<SideBySideComparison> stored = stored_side_by_side(db, s.workload_hash, s.target);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->rounds, c.rounds);
  ASSERT_EQ(stored->entries.size(), 3u);
  ASSERT_TRUE(stored->naive.has_value());
  EXPECT_EQ(stored->naive->candidate_hash, c.naive->candidate_hash);
  EXPECT_DOUBLE_EQ(*stored->naive->median_seconds, *c.naive->median_seconds);
}

TEST_F(SideBySideComparisonTest, AResumedRunMeasuresNothingAgainAndComparesAnew) {
  ListSearch first(schedules(), Schedule());
  const TuneSummary a = tune(program_, "mm", options(1), first);
  ListSearch again(schedules(), Schedule());
  const TuneSummary b = tune(program_, "mm", options(1), again);
  EXPECT_EQ(b.measured_now, 0);
  EXPECT_EQ(b.skipped, 4);
  ASSERT_TRUE(b.side_by_side.has_value());
  EXPECT_GT(b.side_by_side->run_id, a.run_id);
  Database db = Database::open(options(1).database_path);
  EXPECT_EQ(stored_side_by_side(db, b.workload_hash, b.target)->run_id, b.run_id);
  EXPECT_EQ(db.history(b.workload_hash).size(), 4u);
}

TEST_F(SideBySideComparisonTest, NothingIsComparedWhenOffOrStopped) {
  ListSearch off(schedules(), Schedule());
  EXPECT_FALSE(tune(program_, "mm", options(0), off).side_by_side.has_value());
  std::atomic<bool> stop{true};
  TuneOptions stopped = options(2);
  stopped.stop = &stop;
  ListSearch search(schedules(), Schedule());
  const TuneSummary s = tune(program_, "mm", stopped, search);
  EXPECT_TRUE(s.stopped);
  EXPECT_FALSE(s.side_by_side.has_value());
}

TEST_F(SideBySideComparisonTest, WithoutAReferenceTheBestAreComparedWithEachOther) {
  ListSearch search(schedules());
  const TuneSummary s = tune(program_, "mm", options(3), search);
  ASSERT_TRUE(s.side_by_side.has_value());
  ASSERT_EQ(s.side_by_side->entries.size(), 3u);
  for (const SideBySideEntry& e : s.side_by_side->entries) {
    EXPECT_FALSE(e.is_reference);
    EXPECT_FALSE(e.speedup.has_value());
    EXPECT_TRUE(e.median_seconds.has_value());
  }
}

TEST_F(SideBySideComparisonTest, ContendersAreTheReferenceThenTheBestCorrectOthers) {
  std::vector<Schedule> list = schedules();
  list.push_back(Schedule().split("C", "nope", 2));  // invalid: never a contender
  ListSearch search(list);
  TuneOptions o = options(0);
  o.trials = 5;
  const TuneSummary s = tune(program_, "mm", o, search);
  Database db = Database::open(o.database_path);
  const std::string reference_hash = Candidate(s.workload_hash, s.target, schedules()[0]).hash_hex();
  const std::vector<Candidate> with_reference =
      side_by_side_contenders(db, s.workload_hash, s.target, schedules()[0], 10);
  ASSERT_EQ(with_reference.size(), 4u);  // the reference and the three other correct ones
  EXPECT_EQ(with_reference[0].hash_hex(), reference_hash);
  std::map<std::string, std::pair<std::string, double>> medians =
      best_correct_medians(db.history(s.workload_hash), s.target);
  for (size_t i = 2; i < with_reference.size(); ++i) {
    EXPECT_NE(with_reference[i].hash_hex(), reference_hash);
    EXPECT_LE(medians.at(with_reference[i - 1].hash_hex()).second, medians.at(with_reference[i].hash_hex()).second);
  }
  // Without a reference the two least medians of all correct ones, the fixed schedule's included: which schedule is
  // fastest depends on this machine (the reference was, once, under the sanitizers).
  const std::vector<Candidate> two = side_by_side_contenders(db, s.workload_hash, s.target, std::nullopt, 2);
  std::vector<std::pair<double, std::string>> by_median;
  for (const auto& [hash, median] : medians) by_median.emplace_back(median.second, hash);
  std::sort(by_median.begin(), by_median.end());
  ASSERT_EQ(two.size(), 2u);
  ASSERT_EQ(by_median.size(), 4u);
  EXPECT_EQ(two[0].hash_hex(), by_median[0].second);
  EXPECT_EQ(two[1].hash_hex(), by_median[1].second);
}

// The database rows of a fixed schedule and two candidates, written by hand so that the times are known.
class ChooseBestTest : public TestDirectory {
 protected:
  void SetUp() override {
    TestDirectory::SetUp();
    db_.emplace(Database::open((dir_ / "c.db").string()));
    db_->add_workload(WorkloadRecord{workload_, "mm", "program", ""});
    for (const Candidate* c : {&fixed_, &a_, &b_, &c_}) db_->add_candidate(c->record());
    run_ = db_->begin_run(RunInfo{});
  }
  void measure(const Candidate& c, double seconds) {
    MeasurementRecord m;
    m.candidate_hash = c.hash_hex();
    m.run_id = run_;
    m.run_seconds = {seconds};
    db_->add_measurement(m);
  }
  // One comparison in a new run: each round's timed runs per candidate, the fixed schedule first.
  void compare_runs(const std::vector<std::pair<const Candidate*, std::vector<std::vector<double>>>>& rounds) {
    const int64_t run = db_->begin_run(RunInfo{});
    for (size_t r = 0; r < rounds[0].second.size(); ++r)
      for (const auto& [candidate, runs] : rounds) {
        SideBySideRecord record;
        record.candidate_hash = candidate->hash_hex();
        record.run_id = run;
        record.is_reference = candidate == &fixed_;
        record.round = int64_t(r);
        record.run_seconds = runs[r];
        db_->add_side_by_side(record);
      }
  }
  // The same with one timed run per round: round medians per candidate.
  void compare(const std::vector<std::pair<const Candidate*, std::vector<double>>>& rounds) {
    std::vector<std::pair<const Candidate*, std::vector<std::vector<double>>>> runs;
    for (const auto& [candidate, medians] : rounds) {
      runs.emplace_back(candidate, std::vector<std::vector<double>>{});
      for (double m : medians) runs.back().second.push_back({m});
    }
    compare_runs(runs);
  }

  const std::string workload_ = "00000000000000aa", target_ = "cpu:test";
  const Candidate fixed_{workload_, target_, Schedule()}, a_{workload_, target_, Schedule().split("C", "i", 2)},
      b_{workload_, target_, Schedule().split("C", "j", 2)}, c_{workload_, target_, Schedule().split("C", "k", 2)};
  std::optional<Database> db_;
  int64_t run_ = 0;
};

TEST_F(ChooseBestTest, TheLeastMedianStandsWithoutAComparison) {
  measure(fixed_, 3.0);
  measure(a_, 1.0);
  measure(b_, 2.0);
  std::optional<ChosenBest> chosen = choose_best(*db_, workload_, target_);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->candidate_hash(), a_.hash_hex());
  EXPECT_EQ(chosen->schedule_json(), a_.schedule_json());
  EXPECT_FALSE(chosen->side_by_side.has_value());
  EXPECT_FALSE(chosen->side_by_side_winner.has_value());
  EXPECT_FALSE(choose_best(*db_, workload_, "cpu:other").has_value());
}

TEST_F(ChooseBestTest, AComparisonOfTheLeastMedianChoosesItsFastest) {
  measure(fixed_, 3.0);
  measure(a_, 1.0);  // met a fast period
  measure(b_, 2.0);
  compare({{&fixed_, {3.0, 3.2, 3.0}}, {&a_, {2.5, 2.6, 2.4}}, {&b_, {2.0, 2.1, 1.9}}});
  std::optional<ChosenBest> chosen = choose_best(*db_, workload_, target_);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->least_median.candidate.hash, a_.hash_hex());
  ASSERT_TRUE(chosen->side_by_side_winner.has_value());
  EXPECT_EQ(chosen->candidate_hash(), b_.hash_hex());
  EXPECT_EQ(chosen->schedule_json(), b_.schedule_json());
  EXPECT_DOUBLE_EQ(*chosen->side_by_side_winner->median_seconds, 2.0);
  EXPECT_DOUBLE_EQ(*chosen->side_by_side_winner->min_seconds, 1.9);
  EXPECT_EQ(chosen->side_by_side_winner->runs, 3);
  EXPECT_DOUBLE_EQ(*chosen->side_by_side_winner->speedup, 3.2 / 2.1);  // of 3/2, 3.2/2.1 and 3/1.9

  // The fixed schedule can win too.
  compare({{&fixed_, {1.0, 1.0, 1.0}}, {&a_, {2.5, 2.6, 2.4}}});
  EXPECT_EQ(choose_best(*db_, workload_, target_)->candidate_hash(), fixed_.hash_hex());
  // The least median winning side by side stays.
  compare({{&fixed_, {3.0, 3.0, 3.0}}, {&a_, {1.5, 1.5, 1.5}}, {&b_, {2.0, 2.0, 2.0}}});
  EXPECT_FALSE(choose_best(*db_, workload_, target_)->side_by_side_winner.has_value());
}

// A schedule is kept over the reference only when it was faster in more than three rounds of four: a median ratio
// above 1 alone is what two equal programs give half the time.
TEST_F(ChooseBestTest, TheReferenceStaysUnlessBeatenInMostRounds) {
  measure(fixed_, 3.0);
  measure(a_, 1.0);
  measure(b_, 2.0);
  // b: ratios 1.5, 0.75, 1.5, 0.75, 1.03 (median 1.03), faster in 3 of 5 rounds.
  compare({{&fixed_, {3, 3, 3, 3, 3}}, {&a_, {4, 4, 4, 4, 4}}, {&b_, {2, 4, 2, 4, 2.9}}});
  std::optional<SideBySideComparison> c = stored_side_by_side(*db_, workload_, target_);
  ASSERT_TRUE(c.has_value());
  const SideBySideEntry& b = c->entries.at(2);
  EXPECT_EQ(b.candidate_hash, b_.hash_hex());
  EXPECT_EQ(b.paired_rounds, 5);
  EXPECT_EQ(b.faster_rounds, 3);
  EXPECT_NEAR(*b.speedup, 3 / 2.9, 1e-12);
  EXPECT_FALSE(b.beats_reference());
  EXPECT_EQ(c->fastest()->candidate_hash, b_.hash_hex()) << "the median of b's rounds is 2.9, the fixed one's 3";
  EXPECT_EQ(c->kept()->candidate_hash, fixed_.hash_hex());
  EXPECT_EQ(choose_best(*db_, workload_, target_)->candidate_hash(), fixed_.hash_hex());
  // Faster in 4 of 5 rounds: a beats it, and of two that do, the greater speed-up is kept.
  compare({{&fixed_, {3, 3, 3, 3, 3}}, {&a_, {2.5, 2.5, 2.5, 2.5, 4}}, {&b_, {2, 2, 2, 2, 4}}});
  c = stored_side_by_side(*db_, workload_, target_);
  EXPECT_EQ(c->entries.at(1).faster_rounds, 4);
  EXPECT_TRUE(c->entries.at(1).beats_reference());
  EXPECT_TRUE(c->entries.at(2).beats_reference());
  EXPECT_EQ(c->kept()->candidate_hash, b_.hash_hex());
  EXPECT_EQ(choose_best(*db_, workload_, target_)->candidate_hash(), b_.hash_hex());
}

// Bimodal runs (calls fast or slow whatever the program): the reference's medians met the slow mode, its fastest
// runs did not. Faster by medians in every round is not enough when the fastest runs say otherwise.
TEST_F(ChooseBestTest, TheFastestRunsMustAgree) {
  measure(fixed_, 3.0);
  measure(a_, 1.0);
  compare_runs({{&fixed_, std::vector<std::vector<double>>(5, {0.10, 0.11, 0.08})},
                {&a_, std::vector<std::vector<double>>(5, {0.085, 0.085, 0.09})}});
  std::optional<SideBySideComparison> c = stored_side_by_side(*db_, workload_, target_);
  ASSERT_TRUE(c.has_value());
  const SideBySideEntry& a = c->entries.at(1);
  EXPECT_NEAR(*a.speedup, 0.10 / 0.085, 1e-12);
  EXPECT_NEAR(*a.min_speedup, 0.08 / 0.085, 1e-12);
  EXPECT_EQ(a.faster_rounds, 5);
  EXPECT_FALSE(a.beats_reference());
  EXPECT_EQ(c->kept()->candidate_hash, fixed_.hash_hex());
  EXPECT_EQ(choose_best(*db_, workload_, target_)->candidate_hash(), fixed_.hash_hex());
}

TEST_F(ChooseBestTest, AComparisonWithoutTheLeastMedianIsOlderThanItAndDecidesNothing) {
  measure(fixed_, 3.0);
  measure(a_, 1.0);
  measure(b_, 2.0);
  compare({{&fixed_, {3.0, 3.0, 3.0}}, {&a_, {2.5, 2.5, 2.5}}, {&b_, {2.0, 2.0, 2.0}}});
  measure(c_, 0.5);  // a later run's new best, never compared
  std::optional<ChosenBest> chosen = choose_best(*db_, workload_, target_);
  EXPECT_EQ(chosen->candidate_hash(), c_.hash_hex());
  EXPECT_FALSE(chosen->side_by_side_winner.has_value());
  EXPECT_TRUE(chosen->side_by_side.has_value());
}

// A verdict that rests on one round where the speed-ups are close gets more rounds (compare_side_by_side times them
// until none is undecided, up to twice the rounds asked); a clear one, either way, does not.
TEST_F(ChooseBestTest, AVerdictIsUndecidedWhereItIsCloseAndOneRoundWouldTurnIt) {
  auto entry = [&](const std::vector<double>& reference, const std::vector<double>& contender) {
    compare({{&fixed_, reference}, {&a_, contender}});
    return stored_side_by_side(*db_, workload_, target_)->entries.at(1);
  };
  // Faster in 4 of 5 by 5%: kept, but one round lost would undo that (4 of 6).
  SideBySideEntry e = entry({1, 1, 1, 1, 1}, {0.95, 0.95, 0.95, 0.95, 1.05});
  EXPECT_TRUE(e.beats_reference());
  EXPECT_TRUE(e.undecided());
  // In 5 of 5: one round lost leaves 5 of 6.
  e = entry({1, 1, 1, 1, 1}, {0.95, 0.95, 0.95, 0.95, 0.95});
  EXPECT_TRUE(e.beats_reference());
  EXPECT_FALSE(e.undecided());
  // In 4 of 5 by 2x: not close.
  e = entry({1, 1, 1, 1, 1}, {0.5, 0.5, 0.5, 0.5, 1.05});
  EXPECT_TRUE(e.beats_reference());
  EXPECT_FALSE(e.undecided());
  // In 4 of 5, by 5% by medians but 1.25x by the fastest runs: not close either (both must be under 1.10).
  const std::vector<double> fast = {0.8, 0.95, 0.95}, slow = {0.8, 1.05, 1.05};  // fastest 0.8, medians 0.95, 1.05
  compare_runs(
      {{&fixed_, std::vector<std::vector<double>>(5, {1.0, 1.0, 1.0})}, {&a_, {fast, fast, fast, fast, slow}}});
  e = stored_side_by_side(*db_, workload_, target_)->entries.at(1);
  EXPECT_NEAR(*e.speedup, 1 / 0.95, 1e-12);
  EXPECT_NEAR(*e.min_speedup, 1.25, 1e-12);
  EXPECT_TRUE(e.beats_reference());
  EXPECT_FALSE(e.undecided());
  // Ahead in 3 of 4: not kept, and one round won would make it 4 of 5.
  e = entry({1, 1, 1, 1}, {0.95, 0.95, 0.95, 1.05});
  EXPECT_FALSE(e.beats_reference());
  EXPECT_TRUE(e.undecided());
  // Ahead in 3 of 5: one round won makes 4 of 6, still not.
  e = entry({1, 1, 1, 1, 1}, {0.95, 0.95, 0.95, 1.05, 1.05});
  EXPECT_FALSE(e.beats_reference());
  EXPECT_FALSE(e.undecided());
  // Slower.
  e = entry({1, 1, 1, 1}, {1.05, 1.05, 1.05, 0.95});
  EXPECT_FALSE(e.undecided());
}

// How a whole-model job finds the comparison it decided from: the first one of exactly these schedules, this
// reference and every round; a later one of the same schedules that says otherwise changes nothing.
using FirstCompleteComparisonTest = ChooseBestTest;

TEST_F(FirstCompleteComparisonTest, TheFirstComparisonOfExactlyTheSchedulesInEveryRoundDecides) {
  const std::string fixed = fixed_.hash_hex(), a = a_.hash_hex(), b = b_.hash_hex();
  EXPECT_FALSE(first_complete_comparison(*db_, workload_, target_, fixed, {a}, 3).has_value()) << "none stored";
  compare({{&fixed_, {3.0, 3.0}}, {&a_, {4.0, 4.0}}});  // a stop cut it short
  compare({{&fixed_, {3.0, 3.0, 3.0}}, {&a_, {2.0, 2.0, 2.0}}, {&b_, {2.5, 2.5, 2.5}}});
  EXPECT_FALSE(first_complete_comparison(*db_, workload_, target_, fixed, {a}, 3).has_value())
      << "two rounds of three, and a comparison of more schedules";
  std::optional<SideBySideComparison> ab = first_complete_comparison(*db_, workload_, target_, fixed, {b, a}, 3);
  ASSERT_TRUE(ab.has_value());
  EXPECT_EQ(ab->entries.size(), 3u);
  EXPECT_TRUE(ab->entries.at(1).beats_reference());

  compare({{&fixed_, {3.0, 3.0, 3.0}}, {&a_, {4.0, 4.0, 4.0}}});
  compare({{&fixed_, {3.0, 3.0, 3.0}}, {&a_, {1.0, 1.0, 1.0}}});  // later, and reversing the verdict
  std::optional<SideBySideComparison> first = first_complete_comparison(*db_, workload_, target_, fixed, {a}, 3);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->entries.size(), 2u);
  EXPECT_EQ(first->entries[1].candidate_hash, a);
  EXPECT_DOUBLE_EQ(*first->entries[1].speedup, 0.75);
  EXPECT_FALSE(first->entries[1].beats_reference());
  EXPECT_DOUBLE_EQ(*stored_side_by_side(*db_, workload_, target_)->entries.at(1).speedup, 3.0)
      << "the newest comparison says otherwise";
  EXPECT_TRUE(is_complete_comparison(*first, fixed, {a}, 3));
  EXPECT_FALSE(is_complete_comparison(*first, fixed, {a}, 4)) << "more rounds asked";
  EXPECT_FALSE(is_complete_comparison(*first, a, {fixed}, 3)) << "another reference";
  EXPECT_FALSE(first_complete_comparison(*db_, workload_, target_, a, {fixed}, 3).has_value());
}

}  // namespace
}  // namespace ingot
