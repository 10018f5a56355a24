#include "tuner/evolutionary_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "costmodel/ranking_metrics.h"
#include "ir/schedule.h"
#include "space/schedule_mutation.h"

namespace ingot {

namespace {
// Fitness of a parent nothing ranked yet (a fill-in sample): below every measured or scored one.
constexpr double kUnranked = -std::numeric_limits<double>::max();
// Parents are the best of 4 picked at random: with 2, a planted optimum 4 decisions away took 262 trials to find; with
// 4, 158 (tests/tuner/evolutionary_search_test.cc).
constexpr int kTournament = 4;

void sort_by_fitness(std::vector<EvolutionarySearch::Member>& members) {
  std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.fitness > b.fitness; });
}
}  // namespace

EvolutionarySearch::EvolutionarySearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed, EvolutionSeeds seeds,
                                       std::shared_ptr<XGBoostCostModel> model, std::string workload_name,
                                       EvolutionOptions options)
    : space_(std::move(space)),
      rng_(seed),
      seeds_(std::move(seeds)),
      model_(std::move(model)),
      workload_name_(std::move(workload_name)),
      options_(options) {
  const uint64_t fixed_hash = seeds_.fixed ? seeds_.fixed->hash() : 0;
  bool taught = false;
  for (const MeasuredSchedule& m : seeds_.measured) {
    const uint64_t hash = m.schedule.hash();
    proposed_.insert(hash);
    if (!m.seconds) continue;
    measured_.push_back(Member{m.schedule, hash, -*m.seconds});
    if (seeds_.fixed && hash == fixed_hash) fixed_seconds_ = *m.seconds;
    if (!model_) continue;
    try {
      model_->add_measured(space_->program(), workload_name_, m.schedule, *m.seconds);
      taught = true;
    } catch (const ScheduleError&) {
      // A stored schedule this ingot no longer lowers stays a parent the mutations skip; the model cannot read it.
    }
  }
  if (taught && model_->sample_count() >= model_->options().warmup_samples) model_->retrain();
}

std::vector<Schedule> EvolutionarySearch::propose(int n) {
  std::vector<Schedule> out;
  std::set<uint64_t> seen = proposed_;
  auto take = [&](Schedule s, std::optional<double> score) {
    const uint64_t hash = s.hash();
    if (score) proposed_scores_[hash] = *score;
    out.push_back(std::move(s));
  };
  if (n <= 0) return out;
  if (seeds_.fixed && seen.insert(seeds_.fixed->hash()).second) take(*seeds_.fixed, std::nullopt);
  const int fresh = std::min<int>(n - int(out.size()), int(std::lround(options_.epsilon * n)));
  const int evolved = n - int(out.size()) - fresh;
  if (evolved > 0) {
    if (model_ranks()) {
      // A quarter of the evolved share are children of the measured best that the model does not rank: a move that
      // makes new structure (a new tile level) gives schedules unlike any it learned from, which it may rank low.
      std::vector<Member> measured_parents = parents();
      for (Schedule& s : children(measured_parents, (evolved + 3) / 4, seen)) take(std::move(s), std::nullopt);
      for (const Member& m : evolve_by_model(std::move(measured_parents))) {
        if (int(out.size()) >= n - fresh) break;
        if (seen.insert(m.hash).second) take(m.schedule, m.fitness);
      }
    } else {
      for (Schedule& s : children(parents(), evolved, seen)) take(std::move(s), std::nullopt);
    }
  }
  for (Schedule& s : draw_unseen(*space_, rng_, n - int(out.size()), seen)) take(std::move(s), std::nullopt);
  // A small space runs out of fresh samples before the search runs out of children.
  if (int(out.size()) < n)
    for (Schedule& s : children(parents(), n - int(out.size()), seen)) take(std::move(s), std::nullopt);
  for (const Schedule& s : out) proposed_.insert(s.hash());
  return out;
}

void EvolutionarySearch::tell(const std::vector<TrialResult>& results) {
  const uint64_t fixed_hash = seeds_.fixed ? seeds_.fixed->hash() : 0;
  RankedGroup batch;
  bool taught = false;
  for (const TrialResult& r : results) {
    if (!r.seconds) continue;
    const Schedule& schedule = r.candidate.schedule();
    const uint64_t hash = schedule.hash();
    measured_.push_back(Member{schedule, hash, -*r.seconds});
    if (seeds_.fixed && hash == fixed_hash) fixed_seconds_ = *r.seconds;
    if (model_) {
      model_->add_measured(space_->program(), workload_name_, schedule, *r.seconds);
      taught = true;
    }
    if (r.skipped) continue;
    if (auto score = proposed_scores_.find(hash); score != proposed_scores_.end()) {
      batch.seconds.push_back(*r.seconds);
      batch.scores.push_back(score->second);
    }
  }
  RankingMetrics metrics = ranking_metrics({batch});
  last_batch_accuracy_ = metrics.pairs > 0 ? std::optional<double>(metrics.pairwise_accuracy) : std::nullopt;
  if (taught && model_->sample_count() >= model_->options().warmup_samples) model_->retrain();
}

// The best measured schedules (by measured time), filled up to the population with the fixed schedule and samples
// of the space when fewer were measured.
std::vector<EvolutionarySearch::Member> EvolutionarySearch::parents() {
  std::vector<Member> out = measured_;
  sort_by_fitness(out);
  std::set<uint64_t> in;
  std::vector<Member> unique;
  for (Member& m : out)
    if (int(unique.size()) < options_.population && in.insert(m.hash).second) unique.push_back(std::move(m));
  if (seeds_.fixed && int(unique.size()) < options_.population && in.insert(seeds_.fixed->hash()).second)
    unique.push_back(Member{*seeds_.fixed, seeds_.fixed->hash(), kUnranked});
  const int missing = options_.population - int(unique.size());
  if (missing > 0)
    for (Schedule& s : draw_unseen(*space_, rng_, missing, in)) {
      const uint64_t hash = s.hash();
      unique.push_back(Member{std::move(s), hash, kUnranked});
    }
  return unique;
}

// Generations of children ranked by the model; returns everything it saw, best predicted first.
std::vector<EvolutionarySearch::Member> EvolutionarySearch::evolve_by_model(std::vector<Member> population) {
  score(population);
  sort_by_fitness(population);
  std::set<uint64_t> seen;
  for (const Member& m : population) seen.insert(m.hash);
  std::vector<Member> explored = population;
  for (int g = 0; g < options_.generations; ++g) {
    std::vector<Member> kids;
    for (Schedule& s : children(population, options_.population, seen)) {
      const uint64_t hash = s.hash();
      kids.push_back(Member{std::move(s), hash, 0});
    }
    if (kids.empty()) break;
    score(kids);
    explored.insert(explored.end(), kids.begin(), kids.end());
    population.insert(population.end(), kids.begin(), kids.end());
    sort_by_fitness(population);
    if (int(population.size()) > options_.population) population.resize(size_t(options_.population));
  }
  sort_by_fitness(explored);
  return explored;
}

std::vector<Schedule> EvolutionarySearch::children(const std::vector<Member>& parents, int count,
                                                   std::set<uint64_t>& seen) {
  std::vector<Schedule> out;
  if (parents.empty()) return out;
  MutationOptions mutation;
  mutation.simd_fp32_lanes = options_.simd_fp32_lanes;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  // Each try lowers its child once or twice; a neighbourhood with few valid moves must not spin.
  for (int tries = 0; int(out.size()) < count && tries < 4 * count + 8; ++tries) {
    std::optional<Schedule> child;
    if (parents.size() >= 2 && coin(rng_) >= options_.mutation_probability) {
      const Member& a = tournament(parents);
      const Member& b = tournament(parents);
      child = crossover(space_->program(), a.schedule, b.schedule, rng_, mutation);
    } else {
      child = mutate(space_->program(), tournament(parents).schedule, rng_, mutation);
    }
    if (child && seen.insert(child->hash()).second) out.push_back(std::move(*child));
  }
  return out;
}

// The best of kTournament members picked at random.
const EvolutionarySearch::Member& EvolutionarySearch::tournament(const std::vector<Member>& members) {
  std::uniform_int_distribution<size_t> pick(0, members.size() - 1);
  const Member* best = &members[pick(rng_)];
  for (int k = 1; k < kTournament; ++k) {
    const Member& other = members[pick(rng_)];
    if (other.fitness > best->fitness) best = &other;
  }
  return *best;
}

// The model's scores as fitness, each schedule scored once per model generation.
void EvolutionarySearch::score(std::vector<Member>& members) {
  if (scored_generation_ != model_->generation()) {
    score_cache_.clear();
    scored_generation_ = model_->generation();
  }
  std::vector<Schedule> unscored;
  std::set<uint64_t> asked;
  for (const Member& m : members)
    if (!score_cache_.count(m.hash) && asked.insert(m.hash).second) unscored.push_back(m.schedule);
  if (!unscored.empty()) {
    std::vector<double> scores = model_->predict(space_->program(), unscored);
    for (size_t i = 0; i < unscored.size(); ++i) score_cache_[unscored[i].hash()] = scores[i];
  }
  for (Member& m : members) m.fitness = score_cache_.at(m.hash);
}

}  // namespace ingot
