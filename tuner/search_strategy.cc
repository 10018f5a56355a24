#include "tuner/search_strategy.h"

namespace ingot {

RandomSearch::RandomSearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed)
    : space_(std::move(space)), rng_(seed) {}

RandomSearch::RandomSearch(Program program, uint64_t seed, SamplerOptions options)
    : RandomSearch(std::make_shared<SamplerSpace>(std::move(program), std::move(options)), seed) {}

std::vector<Schedule> RandomSearch::propose(int n) { return draw_unseen(*space_, rng_, n, proposed_); }

ListSearch::ListSearch(std::vector<Schedule> schedules, std::optional<Schedule> reference)
    : reference_(std::move(reference)) {
  std::set<uint64_t> seen;
  for (Schedule& s : schedules)
    if (seen.insert(s.hash()).second) schedules_.push_back(std::move(s));
}

std::vector<Schedule> ListSearch::propose(int n) {
  std::vector<Schedule> out;
  while (int(out.size()) < n && next_ < schedules_.size()) out.push_back(schedules_[next_++]);
  return out;
}

void ListSearch::tell(const std::vector<TrialResult>& results) {
  results_.insert(results_.end(), results.begin(), results.end());
}

}  // namespace ingot
