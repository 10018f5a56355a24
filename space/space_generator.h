// A program's search space: where a search strategy's schedules come from (as MetaSchedule's SpaceGenerator).
// Two spaces so far: the random sampler's valid schedules (space/schedule_sampler.h), optionally within a fusion
// plan's layout, and a fusion strategy's one fixed schedule (space/strategy_schedule.h). A space is bound to its
// program and never changes; drawing from it is reproducible: the same generator state gives the same schedules.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "analysis/partition_plan.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "space/schedule_sampler.h"
#include "space/strategy_schedule.h"

namespace ingot {

class SpaceGenerator {
 public:
  virtual ~SpaceGenerator() = default;

  virtual const Program& program() const = 0;
  // How many distinct schedules the space holds, when known (1 for a fixed schedule); nullopt when unknown.
  virtual std::optional<int64_t> size() const = 0;

  // One schedule of the space, drawn with rng; draws may repeat a schedule.
  Schedule sample(std::mt19937_64& rng) const { return draw(rng); }
  // n draws in order: the same as n calls of sample(rng).
  std::vector<Schedule> sample(std::mt19937_64& rng, int n) const;

 protected:
  virtual Schedule draw(std::mt19937_64& rng) const = 0;
};

// Up to n draws from space whose hashes `seen` does not hold yet, each added to it, in draw order. Stops early after
// 200 draws in a row that were all seen (the space is exhausted, or nearly), and, for a space of known size, once seen
// holds that many schedules. The search strategies' "new schedules from the space".
std::vector<Schedule> draw_unseen(const SpaceGenerator& space, std::mt19937_64& rng, int n, std::set<uint64_t>& seen);

// Random valid schedules of the program: sample_schedule with these options (a plan's layout, GPU bindings).
class SamplerSpace final : public SpaceGenerator {
 public:
  explicit SamplerSpace(Program program, SamplerOptions options = {});
  const Program& program() const override { return program_; }
  std::optional<int64_t> size() const override { return std::nullopt; }
  const SamplerOptions& options() const { return options_; }

 protected:
  Schedule draw(std::mt19937_64& rng) const override;

 private:
  Program program_;
  SamplerOptions options_;
};

// A fusion plan's strategy schedule (strategy_schedule): one point, drawn without using the generator.
class StrategySpace final : public SpaceGenerator {
 public:
  // Throws what strategy_schedule throws (a plan that does not cover the program).
  StrategySpace(Program program, const PartitionPlan& plan, const FixedScheduleOptions& options = {});
  const Program& program() const override { return program_; }
  std::optional<int64_t> size() const override { return 1; }
  const Schedule& schedule() const { return schedule_; }

 protected:
  Schedule draw(std::mt19937_64&) const override { return schedule_; }

 private:
  Program program_;
  Schedule schedule_;
};

}  // namespace ingot
