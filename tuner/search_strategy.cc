#include "tuner/search_strategy.h"

namespace ingot {

RandomSearch::RandomSearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed)
    : space_(std::move(space)), rng_(seed) {}

RandomSearch::RandomSearch(Program program, uint64_t seed, SamplerOptions options)
    : RandomSearch(std::make_shared<SamplerSpace>(std::move(program), std::move(options)), seed) {}

std::vector<Schedule> RandomSearch::propose(int n) { return draw_unseen(*space_, rng_, n, proposed_); }

}  // namespace ingot
