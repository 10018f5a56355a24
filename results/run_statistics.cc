#include "results/run_statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ingot {

RunStatistics run_statistics(std::vector<double> seconds) {
  RunStatistics s;
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  s.min = seconds.front();
  s.median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  s.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / double(n);
  double squares = 0;
  for (double x : seconds) squares += (x - s.mean) * (x - s.mean);
  s.stddev = n > 1 ? std::sqrt(squares / double(n - 1)) : 0;
  return s;
}

}  // namespace ingot
