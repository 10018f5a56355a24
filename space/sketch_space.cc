#include "space/sketch_space.h"

#include "space/schedule_mutation.h"

namespace ingot {

SketchSpace::SketchSpace(Program program, PartitionPlan plan, FixedScheduleOptions fixed, SamplerOptions sampler,
                         double sampler_share)
    : program_(std::move(program)),
      plan_(std::move(plan)),
      fixed_(std::move(fixed)),
      sampler_(std::move(sampler)),
      sampler_share_(sampler_share),
      fixed_schedule_(strategy_schedule(program_, plan_, fixed_)) {}

Schedule SketchSpace::draw(std::mt19937_64& rng) const {
  if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) < sampler_share_)
    return sample_schedule(program_, rng, sampler_);
  Schedule s = strategy_schedule(program_, plan_, sample_template_knobs(rng, fixed_));
  MutationOptions mutation;
  mutation.simd_fp32_lanes = fixed_.simd_fp32_lanes;
  const int mutations = int(rng() % 3);
  for (int m = 0; m < mutations; ++m)
    if (std::optional<Schedule> child = mutate(program_, s, rng, mutation)) s = std::move(*child);
  return s;
}

}  // namespace ingot
