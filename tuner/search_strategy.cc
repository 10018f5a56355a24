#include "tuner/search_strategy.h"

#include <stdexcept>

#include "tuner/ranked_search.h"

namespace ingot {

namespace {
// After this many samples in a row that were all proposed before, the space counts as exhausted.
constexpr int kMaxRepeatsInARow = 200;
}  // namespace

RandomSearch::RandomSearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed)
    : space_(std::move(space)), rng_(seed) {}

RandomSearch::RandomSearch(Program program, uint64_t seed, SamplerOptions options)
    : RandomSearch(std::make_shared<SamplerSpace>(std::move(program), std::move(options)), seed) {}

std::vector<Schedule> RandomSearch::propose(int n) {
  std::vector<Schedule> out;
  std::optional<int64_t> size = space_->size();
  int repeats = 0;
  while (int(out.size()) < n && repeats < kMaxRepeatsInARow && (!size || int64_t(proposed_.size()) < *size)) {
    Schedule s = space_->sample(rng_);
    if (!proposed_.insert(s.hash()).second) {
      ++repeats;
      continue;
    }
    repeats = 0;
    out.push_back(std::move(s));
  }
  return out;
}

std::unique_ptr<SearchStrategy> make_search_strategy(const std::string& name,
                                                     std::shared_ptr<const SpaceGenerator> space, uint64_t seed,
                                                     std::shared_ptr<XGBoostCostModel> model,
                                                     const std::string& workload_name) {
  if (name == "random") return std::make_unique<RandomSearch>(std::move(space), seed);
  if (name == "ranked") {
    if (!model) throw std::invalid_argument("search strategy 'ranked' needs a cost model");
    return std::make_unique<RankedSearch>(std::move(space), seed, std::move(model), workload_name);
  }
  throw std::invalid_argument("unknown search strategy '" + name + "' (known: random, ranked)");
}

}  // namespace ingot
