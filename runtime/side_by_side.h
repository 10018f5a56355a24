// Side-by-side timing: built programs measured by one runner in interleaved rounds, each round timing every
// contender once, so that all of them meet the same periods of the machine's speed. These are the comparisons to
// quote where that speed drifts between measurements taken minutes apart (docs/search.md). Call it as
// Runner::measure: with no other thread running.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/builder.h"
#include "runtime/measurement.h"
#include "runtime/runner.h"

namespace ingot {

// rounds[r][c]: contender c in round r, timed by measure(c). Round r starts at contender r % n and goes round, so that
// no contender always runs right after the same other one. A contender that failed once (its build, a crash, a wrong
// answer) is not run again: its later rounds repeat that measurement. Once `stop` is set no new round starts (the
// rounds done are returned). std::invalid_argument for rounds < 1.
std::vector<std::vector<Measurement>> time_in_rounds(int rounds, size_t contenders,
                                                     const std::function<Measurement(size_t)>& measure,
                                                     const std::atomic<bool>* stop = nullptr);

// Asked after the rounds asked for, and after each round past them, with every round so far: whether to time another.
using MoreRounds = std::function<bool(const std::vector<std::vector<Measurement>>&)>;

// Built programs timed in rounds. The first round measures each alone (Runner::measure: its verification, and
// a fault recorded against it), as time_in_rounds does; every later round measures the contenders still correct
// together, one call of each in turn in one child (Runner::measure_alternating), so that within a round all meet
// the same moments of the machine's speed. A failed contender's later rounds repeat its failure. On the GPU every
// round measures each alone. After `rounds` rounds, more are timed one at a time while `more` (when given) says so:
// a sequential test, which the caller bounds.
std::vector<std::vector<Measurement>> measure_side_by_side(const Runner& runner,
                                                           const std::vector<BuildResult>& contenders, int rounds,
                                                           const std::atomic<bool>* stop = nullptr,
                                                           const MoreRounds& more = {});

// Over the rounds where both were correct: the median of reference / contender, each round's ratio taken from
// the two rounds' medians (paired, so a slow period slows both). nullopt when no round has both correct.
std::optional<double> paired_speedup(const std::vector<std::vector<Measurement>>& rounds, size_t reference,
                                     size_t contender);
// The same from each round's fastest runs: the median of reference min / contender min. Where interference makes
// runs bimodal (BERT on the Intel Xeon VM: calls of 80-85 ms or of 100-120 ms, either for any program), a round's
// median of 3 runs is whichever mode had two of them, and the medians' ratio of two equal programs reached 1.20x;
// the fastest runs' ratio stayed within 5%.
std::optional<double> paired_min_speedup(const std::vector<std::vector<Measurement>>& rounds, size_t reference,
                                         size_t contender);

// The median of a contender's correct rounds' medians; nullopt when none was correct.
std::optional<double> median_of_rounds(const std::vector<std::vector<Measurement>>& rounds, size_t contender);

}  // namespace ingot
