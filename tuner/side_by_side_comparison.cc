#include "tuner/side_by_side_comparison.h"

#include <algorithm>
#include <map>
#include <set>

#include "runtime/side_by_side.h"
#include "tuner/measured_dataset.h"

namespace ingot {

namespace {

// rounds[r][c] is contender c's round r; the contenders' keys and schedules come with them.
SideBySideComparison summarize(const std::vector<std::vector<Measurement>>& rounds,
                               const std::vector<std::pair<std::string, std::string>>& hash_and_json,
                               std::optional<size_t> reference) {
  SideBySideComparison out;
  out.rounds = int(rounds.size());
  for (size_t c = 0; c < hash_and_json.size(); ++c) {
    SideBySideEntry e;
    e.candidate_hash = hash_and_json[c].first;
    e.schedule_json = hash_and_json[c].second;
    e.is_reference = reference == c;
    e.median_seconds = median_of_rounds(rounds, c);
    if (reference && !e.is_reference) {
      e.speedup = paired_speedup(rounds, *reference, c);
      e.min_speedup = paired_min_speedup(rounds, *reference, c);
    }
    for (const std::vector<Measurement>& round : rounds) {
      const Measurement& m = round.at(c);
      if (reference && !e.is_reference && m.ok() && round.at(*reference).ok()) {
        ++e.paired_rounds;
        e.faster_rounds += m.statistics.median < round[*reference].statistics.median;
      }
      if (m.ok()) {
        ++e.correct_rounds;
        e.runs += int64_t(m.run_seconds.size());
        if (!e.min_seconds || m.statistics.min < *e.min_seconds) e.min_seconds = m.statistics.min;
      } else if (e.error_class == ErrorClass::kNone) {
        e.error_class = m.error_class;
        e.error_message = m.error_message;
      }
    }
    out.entries.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::optional<double> SideBySideComparison::naive_seconds() const {
  if (naive) return naive->median_seconds;
  const std::string naive_json = Schedule().to_json();
  for (const SideBySideEntry& e : entries)
    if (e.schedule_json == naive_json) return e.median_seconds;
  return std::nullopt;
}

std::optional<double> SideBySideComparison::speedup_over_naive(const SideBySideEntry& entry) const {
  const std::optional<double> naive_median = naive_seconds();
  if (!naive_median || !entry.median_seconds || *entry.median_seconds <= 0) return std::nullopt;
  return *naive_median / *entry.median_seconds;
}

bool SideBySideEntry::beats_reference() const {
  return speedup && *speedup > 1 && min_speedup && *min_speedup > 1 && 4 * faster_rounds > 3 * paired_rounds;
}

bool SideBySideEntry::undecided() const {
  // Further apart than this by either speed-up, one round more changes nothing that matters.
  constexpr double kClose = 1.10;
  if (!speedup || !min_speedup || std::max(*speedup, *min_speedup) >= kClose) return false;
  if (beats_reference()) return 4 * faster_rounds <= 3 * (paired_rounds + 1);
  return *speedup > 1 && *min_speedup > 1 && 4 * (faster_rounds + 1) > 3 * (paired_rounds + 1);
}

const SideBySideEntry* SideBySideComparison::fastest() const {
  const SideBySideEntry* best = nullptr;
  for (const SideBySideEntry& e : entries)
    if (e.median_seconds && (!best || *e.median_seconds < *best->median_seconds)) best = &e;
  return best;
}

SideBySideComparison compare_side_by_side(const SideBySideSetup& setup, const std::vector<Candidate>& contenders,
                                          std::optional<size_t> reference, int rounds) {
  std::vector<BuildInput> inputs;
  std::vector<std::pair<std::string, std::string>> keys;
  const std::string naive_json = Schedule().to_json();
  bool naive_contends = false;
  for (const Candidate& c : contenders) {
    setup.db->add_candidate(c.record());
    inputs.emplace_back(*setup.program, c.schedule());
    keys.emplace_back(c.hash_hex(), c.schedule_json());
    naive_contends = naive_contends || c.schedule_json() == naive_json;
  }
  std::optional<Candidate> naive;
  if (setup.time_naive && !naive_contends && !contenders.empty()) {
    naive.emplace(contenders.front().workload(), contenders.front().target(), Schedule());
    setup.db->add_candidate(naive->record());
    inputs.emplace_back(*setup.program, naive->schedule());
  }
  // Everything is built before anything is timed: no compiler runs beside a measurement.
  std::vector<BuildResult> built = Builder(setup.builder).build(inputs);
  std::optional<BuildResult> naive_built;
  if (naive) {
    naive_built = std::move(built.back());
    built.pop_back();
  }
  auto undecided = [&](const std::vector<std::vector<Measurement>>& so_far) {
    if (!reference || int(so_far.size()) >= 2 * rounds) return false;
    const SideBySideComparison now = summarize(so_far, keys, reference);
    return std::any_of(now.entries.begin(), now.entries.end(), [](const SideBySideEntry& e) { return e.undecided(); });
  };
  const std::vector<std::vector<Measurement>> timed =
      measure_side_by_side(*setup.runner, built, rounds, setup.stop, undecided);
  auto store = [&](const std::string& hash, bool is_reference, size_t round, const Measurement& m) {
    SideBySideRecord record;
    record.candidate_hash = hash;
    record.run_id = setup.run_id;
    record.is_reference = is_reference;
    record.round = int64_t(round);
    record.target_description = setup.target_description;
    record.error_class = m.error_class;
    record.error_message = m.error_message;
    record.run_seconds = m.run_seconds;
    setup.db->add_side_by_side(record);
  };
  for (size_t r = 0; r < timed.size(); ++r)
    for (size_t c = 0; c < contenders.size(); ++c) store(keys[c].first, reference == c, r, timed[r][c]);
  SideBySideComparison out = summarize(timed, keys, reference);
  out.run_id = setup.run_id;
  if (naive && !(setup.stop && setup.stop->load())) {
    // Stored one round past the last, which is how stored_side_by_side tells it from a contender. Timed by one run
    // after its verification, without warm-up: a naive run of a paper model takes seconds, and on an Intel Xeon VM
    // BERT's verification, warm-up and three timed runs went past the 60 s limit.
    RunnerOptions once_options = setup.runner->options();
    once_options.warmup_runs = 0;
    once_options.min_repeats = 1;
    once_options.max_repeats = 1;
    once_options.min_repeat_ms = 0;
    const std::vector<std::vector<Measurement>> once =
        measure_side_by_side(setup.runner->with_options(once_options), {std::move(*naive_built)}, 1, setup.stop);
    if (!once.empty()) {
      store(naive->hash_hex(), false, timed.size(), once[0][0]);
      out.naive = summarize(once, {{naive->hash_hex(), naive->schedule_json()}}, std::nullopt).entries.at(0);
    }
  }
  return out;
}

const SideBySideEntry* SideBySideComparison::kept() const {
  const SideBySideEntry* reference = nullptr;
  for (const SideBySideEntry& e : entries)
    if (e.is_reference) reference = &e;
  if (!reference) return fastest();
  const SideBySideEntry* best = nullptr;
  for (const SideBySideEntry& e : entries)
    if (e.beats_reference() && (!best || *e.speedup > *best->speedup)) best = &e;
  if (best) return best;
  return reference->median_seconds ? reference : fastest();
}

namespace {

// The comparison that one run stored: its rows, not empty.
SideBySideComparison comparison_of(std::vector<SideBySideRow> rows) {
  // The naive schedule timed once: its one row lies one round past every other candidate's last.
  const std::string naive_json = Schedule().to_json();
  std::map<std::string, std::vector<int64_t>> rounds_of;
  for (const SideBySideRow& row : rows) rounds_of[row.record.candidate_hash].push_back(row.record.round);
  int64_t contenders_rounds = 0;
  for (const SideBySideRow& row : rows)
    if (row.candidate.schedule_json != naive_json)
      contenders_rounds = std::max(contenders_rounds, row.record.round + 1);
  std::optional<SideBySideRow> naive_row;
  for (auto it = rows.begin(); it != rows.end(); ++it) {
    const std::vector<int64_t>& its = rounds_of.at(it->record.candidate_hash);
    if (it->candidate.schedule_json == naive_json && !it->record.is_reference && its.size() == 1 &&
        its[0] == contenders_rounds && contenders_rounds > 0) {
      naive_row = *it;
      rows.erase(it);
      break;
    }
  }
  auto measurement_of = [](const SideBySideRow& row) {
    Measurement m;
    m.error_class = row.record.error_class;
    m.error_message = row.record.error_message;
    m.run_seconds = row.record.run_seconds;
    if (row.record.statistics) m.statistics = *row.record.statistics;
    return m;
  };
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::string, size_t> position;
  std::optional<size_t> reference;
  for (const SideBySideRow& row : rows)
    if (position.emplace(row.record.candidate_hash, keys.size()).second) {
      if (row.record.is_reference) reference = keys.size();
      keys.emplace_back(row.record.candidate_hash, row.candidate.schedule_json);
    }
  std::vector<std::vector<Measurement>> rounds;
  for (const SideBySideRow& row : rows) {
    const size_t r = size_t(row.record.round);
    if (rounds.size() <= r) rounds.resize(r + 1, std::vector<Measurement>(keys.size()));
    rounds[r][position.at(row.record.candidate_hash)] = measurement_of(row);
  }
  SideBySideComparison out = summarize(rounds, keys, reference);
  out.run_id = (naive_row && rows.empty() ? *naive_row : rows.front()).record.run_id;
  if (naive_row)
    out.naive = summarize({{measurement_of(*naive_row)}},
                          {{naive_row->record.candidate_hash, naive_row->candidate.schedule_json}}, std::nullopt)
                    .entries.at(0);
  return out;
}

}  // namespace

std::optional<SideBySideComparison> stored_side_by_side(const Database& db, const std::string& workload,
                                                        const std::string& target,
                                                        const std::vector<std::string>& including) {
  std::vector<SideBySideRow> rows = db.latest_side_by_side(workload, target, including);
  if (rows.empty()) return std::nullopt;
  return comparison_of(std::move(rows));
}

bool is_complete_comparison(const SideBySideComparison& comparison, const std::string& reference,
                            const std::vector<std::string>& contenders, int rounds) {
  if (comparison.rounds < rounds) return false;
  std::set<std::string> have;
  for (const SideBySideEntry& e : comparison.entries) {
    if (e.is_reference != (e.candidate_hash == reference)) return false;
    have.insert(e.candidate_hash);
  }
  std::set<std::string> want(contenders.begin(), contenders.end());
  want.insert(reference);
  return have == want;
}

std::optional<SideBySideComparison> first_complete_comparison(const Database& db, const std::string& workload,
                                                              const std::string& target, const std::string& reference,
                                                              const std::vector<std::string>& contenders, int rounds) {
  std::vector<std::string> hashes = contenders;
  hashes.push_back(reference);
  // Every comparison that timed them all, oldest first: one run's rows follow each other.
  const std::vector<SideBySideRow> rows = db.side_by_side_comparisons(workload, target, hashes);
  for (auto begin = rows.begin(); begin != rows.end();) {
    auto end = std::find_if(begin, rows.end(),
                            [&](const SideBySideRow& row) { return row.record.run_id != begin->record.run_id; });
    SideBySideComparison comparison = comparison_of({begin, end});
    if (is_complete_comparison(comparison, reference, contenders, rounds)) return comparison;
    begin = end;
  }
  return std::nullopt;
}

const std::string& ChosenBest::candidate_hash() const {
  return side_by_side_winner ? side_by_side_winner->candidate_hash : least_median.candidate.hash;
}

const std::string& ChosenBest::schedule_json() const {
  return side_by_side_winner ? side_by_side_winner->schedule_json : least_median.candidate.schedule_json;
}

std::optional<ChosenBest> choose_best(const Database& db, const std::string& workload, const std::string& target) {
  std::optional<MeasuredCandidate> best = db.best(workload, target);
  if (!best) return std::nullopt;
  std::optional<SideBySideComparison> comparison = stored_side_by_side(db, best->candidate.workload_hash, target);
  ChosenBest chosen{std::move(*best), std::move(comparison), std::nullopt};
  if (!chosen.side_by_side) return chosen;
  const SideBySideEntry* kept = chosen.side_by_side->kept();
  bool covers_best = false;
  for (const SideBySideEntry& e : chosen.side_by_side->entries)
    covers_best = covers_best || e.candidate_hash == chosen.least_median.candidate.hash;
  if (covers_best && kept && kept->candidate_hash != chosen.least_median.candidate.hash)
    chosen.side_by_side_winner = *kept;
  return chosen;
}

std::vector<Candidate> side_by_side_contenders(const Database& db, const std::string& workload_hash,
                                               const std::string& target, const std::optional<Schedule>& reference,
                                               int count) {
  std::vector<Candidate> out;
  std::string reference_hash;
  if (reference) {
    out.emplace_back(workload_hash, target, *reference);
    reference_hash = out.back().hash_hex();
  }
  for (const MeasuredSchedule& m : fastest_correct_schedules(db.history(workload_hash), target, count, reference_hash))
    out.emplace_back(workload_hash, target, m.schedule);
  return out;
}

}  // namespace ingot
