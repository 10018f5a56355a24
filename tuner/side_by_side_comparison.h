// The end of a tuning run: the schedule the search started from (the fixed strategy schedule) and the best few
// candidates measured so far, built again and timed side by side in interleaved rounds (runtime/side_by_side.h),
// every round stored in the database's side_by_side table. On a machine whose speed drifts, a search's best is the
// least of measurements taken minutes apart, so these paired speed-ups are the ones to quote (docs/search.md).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "ir/program.h"
#include "results/database.h"
#include "runtime/builder.h"
#include "runtime/runner.h"
#include "tuner/candidate.h"

namespace ingot {

struct SideBySideEntry {
  std::string candidate_hash;
  std::string schedule_json;
  bool is_reference = false;
  std::optional<double> median_seconds;  // the median of its correct rounds' medians
  std::optional<double> speedup;         // over the reference, paired round by round; nullopt without one
  std::optional<double> min_speedup;     // the same from each round's fastest runs (paired_min_speedup)
  // Rounds in which it and the reference both ran correctly, and those of them in which it was the faster.
  int paired_rounds = 0, faster_rounds = 0;
  int correct_rounds = 0;
  std::optional<double> min_seconds;           // the least timed run of all its rounds
  int64_t runs = 0;                            // timed runs over all its rounds
  ErrorClass error_class = ErrorClass::kNone;  // of its first failed round
  std::string error_message;
  // Faster than the reference by its paired speed-up, by its fastest runs' paired speed-up, and in more than three
  // rounds of four. On a machine whose speed moves by 20% within seconds (the Intel Xeon VM), a median ratio over 5
  // rounds favours one of two equal programs by a few percent half the time, and where runs are bimodal a round's
  // median is a coin flip (runtime/side_by_side.h): two equal BERT programs ran 1.20x by medians in 4 of 5 rounds,
  // 0.99x by their fastest runs.
  bool beats_reference() const;
  // Whether one more round could turn beats_reference around where it is close (both speed-ups under 1.10): it holds,
  // but one round lost would undo its rounds' rule; or it is ahead by both speed-ups, and one round won would make
  // that rule hold. Such a verdict rests on one round: on the Intel Xeon VM a comparison of 5 rounds moved by about
  // 5% (docs/search.md, "Kept").
  bool undecided() const;
};

struct SideBySideComparison {
  int64_t run_id = 0;
  int rounds = 0;                        // rounds timed (fewer than asked when the run was stopped)
  std::vector<SideBySideEntry> entries;  // in the order they were given: the reference, if any, first
  // The naive schedule (no decisions), timed once after the rounds when it is not among the entries: a baseline for
  // the user (how much scheduling gained), never a choice, and too slow on paper-size models to time every round.
  std::optional<SideBySideEntry> naive;
  // The entry with the least median (the reference included). Null when none was correct.
  const SideBySideEntry* fastest() const;
  // The schedule to keep: with a reference, of the entries that beat it (SideBySideEntry::beats_reference) the one
  // with the greatest speed-up, else the reference; without one, the fastest. Null when none was correct.
  const SideBySideEntry* kept() const;
  // The naive schedule's median over the entry's; nullopt when either was not correct or naive was not timed.
  std::optional<double> speedup_over_naive(const SideBySideEntry& entry) const;
  // The naive schedule's median: naive's own entry or the separately timed one; nullopt when neither is correct.
  std::optional<double> naive_seconds() const;
};

// What the comparison runs with: the tuning run's database, run and target, and its program's runner.
struct SideBySideSetup {
  Database* db = nullptr;
  int64_t run_id = 0;
  std::string target_description;  // stored with every round, as with measurements
  const Program* program = nullptr;
  const Runner* runner = nullptr;
  BuilderOptions builder;
  const std::atomic<bool>* stop = nullptr;  // no new round starts once it is set
  bool time_naive = true;                   // the naive schedule timed once after the rounds, as a baseline
};

// Builds the contenders (their candidates are added to the database), times them in `rounds` interleaved rounds and
// stores every round. Where a contender's verdict is undecided (SideBySideEntry::undecided) after them, more rounds
// are timed one at a time until none is, up to twice `rounds` in all (a sequential test: the comparisons whose verdict
// rests on one round get more of them, the clear ones no more). reference: the position in contenders of the schedule
// the speed-ups are over, if any. Unless a contender is the naive schedule, the naive schedule is built with them and
// timed once after the last round (stored as a round-0 row) when setup.time_naive. Throws what Builder::build,
// Runner::measure and the database throw; a contender's failure is recorded, never thrown.
SideBySideComparison compare_side_by_side(const SideBySideSetup& setup, const std::vector<Candidate>& contenders,
                                          std::optional<size_t> reference, int rounds);

// The newest comparison of a workload on a target, as stored (Database::latest_side_by_side); nullopt when it was
// never compared. Entries follow the order of their first round; the reference leads. With `including` (candidate
// hashes), the newest comparison that timed all of them.
std::optional<SideBySideComparison> stored_side_by_side(const Database& db, const std::string& workload,
                                                        const std::string& target,
                                                        const std::vector<std::string>& including = {});
// Whether `comparison` timed exactly `reference` (as its reference) and `contenders` (candidate hashes) in at least
// `rounds` rounds: only such a comparison decides between them; one of more schedules, or one a stop cut short,
// would decide by other rules.
bool is_complete_comparison(const SideBySideComparison& comparison, const std::string& reference,
                            const std::vector<std::string>& contenders, int rounds);
// The first stored complete comparison (is_complete_comparison) of these schedules: what a job that compared them
// before decided from. A later comparison of the same schedules (a whole-model job's final one, timed again on a
// noisy machine) overturns no decision already taken. nullopt when none is stored.
std::optional<SideBySideComparison> first_complete_comparison(const Database& db, const std::string& workload,
                                                              const std::string& target, const std::string& reference,
                                                              const std::vector<std::string>& contenders, int rounds);

// What `ingot best` and `ingot export` answer for a workload on a target: the stored best (the least median of one
// measurement, Database::best), unless the newest side-by-side comparison timed that very candidate and kept another
// schedule (SideBySideComparison::kept); then that one. A comparison that does not include the stored best is
// older than it (a later run found it) and decides nothing.
struct ChosenBest {
  MeasuredCandidate least_median;
  std::optional<SideBySideComparison> side_by_side;    // the newest comparison, when there is one
  std::optional<SideBySideEntry> side_by_side_winner;  // set when the comparison overrules least_median
  const std::string& candidate_hash() const;
  const std::string& schedule_json() const;
};
// nullopt when the workload has no correct measurement on the target; throws what Database::best throws.
std::optional<ChosenBest> choose_best(const Database& db, const std::string& workload, const std::string& target);

// The contenders for the end of a run: the reference (when given), then the best `count` other candidates of the
// workload measured correctly on the target (by their least median), best first.
std::vector<Candidate> side_by_side_contenders(const Database& db, const std::string& workload_hash,
                                               const std::string& target, const std::optional<Schedule>& reference,
                                               int count);

}  // namespace ingot
