// Cost models: predict how fast schedules of a program will run, so that a search measures the promising ones
// first, and learn from measurements (as MetaSchedule's CostModel). This is the interface, with one model that
// knows nothing; a learned model (gradient-boosted trees over schedule features) comes later. Models see
// schedules and programs only (ir/), never the tuner, which calls them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

// A schedule of a program and what measuring it gave.
struct MeasuredSchedule {
  Schedule schedule;
  std::optional<double> seconds;  // median run time of a correct run; nullopt for a failed candidate
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // A score per schedule of program, in order: a higher score predicts a faster run. Scores rank the schedules of
  // one call; they are not times.
  virtual std::vector<double> predict(const Program& program, const std::vector<Schedule>& schedules) const = 0;
  // Learns from measured schedules of program.
  virtual void update(const Program& program, const std::vector<MeasuredSchedule>& measured) = 0;
  // Writes the model to path, replacing the file; throws std::runtime_error when it cannot.
  virtual void save(const std::string& path) const = 0;
  // Reads a model saved by save of the same kind; throws std::runtime_error when the file cannot be read or holds
  // another model or format.
  virtual void load(const std::string& path) = 0;
};

// The model that knows nothing: every schedule scores 0 (a search that ranks by it keeps its own order), and
// measurements teach it nothing. Its file holds only its name and format version.
class UniformCostModel final : public CostModel {
 public:
  std::vector<double> predict(const Program& program, const std::vector<Schedule>& schedules) const override;
  void update(const Program&, const std::vector<MeasuredSchedule>&) override {}
  void save(const std::string& path) const override;
  void load(const std::string& path) override;
};

}  // namespace ingot
