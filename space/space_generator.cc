#include "space/space_generator.h"

namespace ingot {

std::vector<Schedule> SpaceGenerator::sample(std::mt19937_64& rng, int n) const {
  std::vector<Schedule> out;
  for (int i = 0; i < n; ++i) out.push_back(draw(rng));
  return out;
}

std::vector<Schedule> draw_unseen(const SpaceGenerator& space, std::mt19937_64& rng, int n, std::set<uint64_t>& seen) {
  constexpr int kMaxRepeatsInARow = 200;
  std::vector<Schedule> out;
  const std::optional<int64_t> size = space.size();
  int repeats = 0;
  while (int(out.size()) < n && repeats < kMaxRepeatsInARow && (!size || int64_t(seen.size()) < *size)) {
    Schedule s = space.sample(rng);
    if (!seen.insert(s.hash()).second) {
      ++repeats;
      continue;
    }
    repeats = 0;
    out.push_back(std::move(s));
  }
  return out;
}

SamplerSpace::SamplerSpace(Program program, SamplerOptions options)
    : program_(std::move(program)), options_(std::move(options)) {}

Schedule SamplerSpace::draw(std::mt19937_64& rng) const { return sample_schedule(program_, rng, options_); }

StrategySpace::StrategySpace(Program program, const PartitionPlan& plan, const FixedScheduleOptions& options)
    : program_(std::move(program)), schedule_(strategy_schedule(program_, plan, options)) {}

}  // namespace ingot
