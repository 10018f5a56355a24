// Statistics of a candidate's run times, defined once for the runner, the in-process path and the database:
// min, median (mean of the middle two for an even count), mean and sample standard deviation.
#pragma once

#include <vector>

namespace ingot {

struct RunStatistics {
  double min = 0, median = 0, mean = 0, stddev = 0;
};
// An empty list gives zeros; one run gives a standard deviation of 0.
RunStatistics run_statistics(std::vector<double> seconds);

}  // namespace ingot
