#include "space/space_generator.h"

namespace ingot {

std::vector<Schedule> SpaceGenerator::sample(std::mt19937_64& rng, int n) const {
  std::vector<Schedule> out;
  for (int i = 0; i < n; ++i) out.push_back(draw(rng));
  return out;
}

SamplerSpace::SamplerSpace(Program program, SamplerOptions options)
    : program_(std::move(program)), options_(std::move(options)) {}

Schedule SamplerSpace::draw(std::mt19937_64& rng) const { return sample_schedule(program_, rng, options_); }

StrategySpace::StrategySpace(Program program, const PartitionPlan& plan, const FixedScheduleOptions& options)
    : program_(std::move(program)), schedule_(strategy_schedule(program_, plan, options)) {}

}  // namespace ingot
