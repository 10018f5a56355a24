#include "tuner/ranked_search.h"

#include <algorithm>
#include <numeric>

#include "costmodel/ranking_metrics.h"

namespace ingot {
RankedSearch::RankedSearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed,
                           std::shared_ptr<XGBoostCostModel> model, std::string workload_name,
                           RankedSearchOptions options)
    : space_(std::move(space)),
      rng_(seed),
      model_(std::move(model)),
      workload_name_(std::move(workload_name)),
      options_(options) {}

std::vector<Schedule> RankedSearch::propose(int n) {
  const int wanted = model_->trained() ? n * std::max(options_.pool_factor, 1) : n;
  std::set<uint64_t> seen = proposed_;
  std::vector<Schedule> pool = draw_unseen(*space_, rng_, wanted, seen);
  std::vector<size_t> chosen(pool.size());
  std::iota(chosen.begin(), chosen.end(), 0);
  std::vector<double> scores;
  if (model_->trained() && int(pool.size()) > n) {
    scores = model_->predict(space_->program(), pool);
    std::stable_sort(chosen.begin(), chosen.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    // The last epsilon share of the batch comes from the rest of the pool at random.
    const int by_score = n - int(double(n) * options_.epsilon);
    std::shuffle(chosen.begin() + by_score, chosen.end(), rng_);
  }
  chosen.resize(std::min<size_t>(chosen.size(), size_t(n)));
  std::vector<Schedule> out;
  for (size_t i : chosen) {
    const uint64_t hash = pool[i].hash();
    proposed_.insert(hash);
    if (!scores.empty()) proposed_scores_[hash] = scores[i];
    out.push_back(std::move(pool[i]));
  }
  return out;
}

void RankedSearch::tell(const std::vector<TrialResult>& results) {
  std::vector<MeasuredSchedule> measured;
  RankedGroup batch;
  for (const TrialResult& r : results) {
    if (!r.seconds) continue;
    // Results measured before are learned too, in sequence order: a resumed run's model then grows as the
    // interrupted run's did, and proposes what it proposed.
    measured.push_back(MeasuredSchedule{r.candidate.schedule(), r.seconds});
    if (r.skipped) continue;
    auto score = proposed_scores_.find(r.candidate.schedule().hash());
    if (score != proposed_scores_.end()) {
      batch.seconds.push_back(*r.seconds);
      batch.scores.push_back(score->second);
    }
  }
  RankingMetrics metrics = ranking_metrics({batch});
  last_batch_accuracy_ = metrics.pairs > 0 ? std::optional<double>(metrics.pairwise_accuracy) : std::nullopt;
  for (const MeasuredSchedule& m : measured)
    model_->add_measured(space_->program(), workload_name_, m.schedule, *m.seconds);
  if (!measured.empty() && model_->sample_count() >= model_->options().warmup_samples) model_->retrain();
}

}  // namespace ingot
