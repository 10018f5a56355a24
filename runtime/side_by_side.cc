#include "runtime/side_by_side.h"

#include <stdexcept>

namespace ingot {

std::vector<std::vector<Measurement>> time_in_rounds(int rounds, size_t contenders,
                                                     const std::function<Measurement(size_t)>& measure,
                                                     const std::atomic<bool>* stop) {
  if (rounds < 1) throw std::invalid_argument("side-by-side timing needs at least 1 round");
  const size_t n = contenders;
  std::vector<std::vector<Measurement>> out;
  std::vector<std::optional<Measurement>> failed(n);
  for (size_t r = 0; r < size_t(rounds) && !(stop && stop->load()); ++r) {
    out.emplace_back(n);
    for (size_t step = 0; step < n; ++step) {
      const size_t c = (r + step) % n;
      if (failed[c]) {
        out[r][c] = *failed[c];
        continue;
      }
      out[r][c] = measure(c);
      if (!out[r][c].ok()) failed[c] = out[r][c];
    }
  }
  return out;
}

std::vector<std::vector<Measurement>> measure_side_by_side(const Runner& runner,
                                                           const std::vector<BuildResult>& contenders, int rounds,
                                                           const std::atomic<bool>* stop, const MoreRounds& more) {
  if (rounds < 1) throw std::invalid_argument("side-by-side timing needs at least 1 round");
  auto alone = [&](size_t c) { return runner.measure(contenders[c]); };
  auto stopped = [&] { return stop && stop->load(); };
  const bool gpu = runner.options().gpu;
  std::vector<std::vector<Measurement>> out = time_in_rounds(gpu ? rounds : 1, contenders.size(), alone, stop);
  // A round after the first: the contenders still correct, together in one child (each alone on the GPU, starting
  // at the r-th as time_in_rounds does).
  auto next_round = [&] {
    const std::vector<Measurement>& last = out.back();
    std::vector<Measurement> round = last;  // a failed contender's later rounds repeat its failure
    std::vector<size_t> correct;
    for (size_t c = 0; c < contenders.size(); ++c)
      if (last[c].ok()) correct.push_back(c);
    if (gpu) {
      for (size_t i = 0; i < correct.size(); ++i) {
        const size_t c = correct[(i + out.size()) % correct.size()];
        round[c] = alone(c);
      }
    } else {
      std::vector<BuildResult> alternating;
      for (size_t c : correct) alternating.push_back(contenders[c]);
      const std::vector<Measurement> timed = runner.measure_alternating(alternating);
      for (size_t i = 0; i < correct.size(); ++i) round[correct[i]] = timed[i];
    }
    out.push_back(std::move(round));
  };
  while (!out.empty() && int(out.size()) < rounds && !stopped()) next_round();
  while (more && !out.empty() && !stopped() && more(out) && !stopped()) next_round();
  return out;
}

namespace {

std::optional<double> paired_ratio(const std::vector<std::vector<Measurement>>& rounds, size_t reference,
                                   size_t contender, double RunStatistics::*statistic) {
  std::vector<double> ratios;
  for (const std::vector<Measurement>& round : rounds)
    if (round.at(reference).ok() && round.at(contender).ok() && round[contender].statistics.*statistic > 0)
      ratios.push_back(round[reference].statistics.*statistic / round[contender].statistics.*statistic);
  if (ratios.empty()) return std::nullopt;
  return run_statistics(ratios).median;
}

}  // namespace

std::optional<double> paired_speedup(const std::vector<std::vector<Measurement>>& rounds, size_t reference,
                                     size_t contender) {
  return paired_ratio(rounds, reference, contender, &RunStatistics::median);
}

std::optional<double> paired_min_speedup(const std::vector<std::vector<Measurement>>& rounds, size_t reference,
                                         size_t contender) {
  return paired_ratio(rounds, reference, contender, &RunStatistics::min);
}

std::optional<double> median_of_rounds(const std::vector<std::vector<Measurement>>& rounds, size_t contender) {
  std::vector<double> medians;
  for (const std::vector<Measurement>& round : rounds)
    if (round.at(contender).ok()) medians.push_back(round[contender].statistics.median);
  if (medians.empty()) return std::nullopt;
  return run_statistics(medians).median;
}

}  // namespace ingot
