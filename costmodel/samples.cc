#include "costmodel/samples.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ingot {

void add_sample(std::vector<SampleGroup>& groups, const std::string& key, const std::string& name,
                std::vector<float> row, double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds))
    throw std::invalid_argument("a measured run time of " + std::to_string(seconds) +
                                " s cannot be learned from; run times must be positive and finite");
  for (const SampleGroup& group : groups)
    if (!group.rows.empty() && group.rows.front().size() != row.size())
      throw std::invalid_argument("a feature row of width " + std::to_string(row.size()) + " joins samples of width " +
                                  std::to_string(group.rows.front().size()));
  auto it = std::find_if(groups.begin(), groups.end(), [&](const SampleGroup& g) { return g.key == key; });
  if (it == groups.end()) {
    groups.push_back(SampleGroup{key, name, {}, {}});
    it = std::prev(groups.end());
  }
  it->rows.push_back(std::move(row));
  it->seconds.push_back(seconds);
}

int64_t sample_count(const std::vector<SampleGroup>& groups) {
  int64_t count = 0;
  for (const SampleGroup& group : groups) count += int64_t(group.rows.size());
  return count;
}

TrainingSet to_training_set(const std::vector<SampleGroup>& groups) {
  TrainingSet set;
  for (const SampleGroup& group : groups) {
    if (group.rows.empty()) continue;
    if (set.columns == 0) set.columns = int(group.rows.front().size());
    const double best = *std::min_element(group.seconds.begin(), group.seconds.end());
    for (size_t i = 0; i < group.rows.size(); ++i) {
      if (int(group.rows[i].size()) != set.columns)
        throw std::invalid_argument("group '" + group.name + "' holds a feature row of width " +
                                    std::to_string(group.rows[i].size()) + ", not " + std::to_string(set.columns));
      set.values.insert(set.values.end(), group.rows[i].begin(), group.rows[i].end());
      set.labels.push_back(float(best / group.seconds[i]));
    }
    set.group_sizes.push_back(unsigned(group.rows.size()));
  }
  return set;
}

}  // namespace ingot
