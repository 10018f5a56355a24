// The task scheduler of whole-model tuning: its warm-up, the priority of tasks without a correct result, Ansor's
// gradient (checked by hand), and on synthetic latency curves that it gives rounds to the task that gains most and
// ends lower than round robin on the same budget. All curves are functions of the trial count: nothing is timed.
#include "tuner/task_scheduler.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace ingot {
namespace {

constexpr double kMs = 1e-3;

// A task's best time as a function of its trials so far.
using LatencyCurve = std::function<double(int64_t)>;

struct Simulation {
  double estimated_seconds = 0;
  std::vector<int64_t> rounds;  // per task
  std::vector<int> choices;     // the task of each round
};

// Runs `total_rounds` rounds of `trials_per_round` trials each, every round going to the task the scheduler chooses,
// whose best then follows its curve.
Simulation simulate(TaskScheduler& scheduler, const std::vector<LatencyCurve>& curves, int total_rounds,
                    int64_t trials_per_round) {
  Simulation out;
  for (int round = 0; round < total_rounds; ++round) {
    std::optional<int> task = scheduler.next_task();
    if (!task) break;
    out.choices.push_back(*task);
    scheduler.record(*task, trials_per_round, curves[size_t(*task)](scheduler.trials(*task) + trials_per_round));
  }
  for (int i = 0; i < scheduler.task_count(); ++i) out.rounds.push_back(scheduler.rounds(i));
  out.estimated_seconds = scheduler.estimated_seconds().value();
  return out;
}

double round_robin_estimate(const std::vector<double>& weights, const std::vector<LatencyCurve>& curves,
                            int total_rounds, int64_t trials_per_round) {
  std::vector<int64_t> trials(weights.size(), 0);
  for (int round = 0; round < total_rounds; ++round) trials[size_t(round) % weights.size()] += trials_per_round;
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) sum += weights[i] * curves[i](trials[i]);
  return sum;
}

// The message of the std::invalid_argument that f throws; fails the test if it throws none.
std::string invalid_argument_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return "";
}

TaskSchedulerOptions without_epsilon() {
  TaskSchedulerOptions options;
  options.epsilon = 0;
  return options;
}

TEST(TaskScheduler, WarmUpIsRoundRobinOverAllTasks) {
  TaskScheduler scheduler({1, 5, 2, 3}, 1);
  for (int task = 0; task < 4; ++task) {
    EXPECT_EQ(scheduler.next_task(), task);
    EXPECT_FALSE(scheduler.gradient(task).has_value());
    scheduler.record(task, 8, (4 - task) * kMs);  // the last task is the steepest: it must not jump the queue
  }
  scheduler.next_task();
  for (int task = 0; task < 4; ++task) EXPECT_TRUE(scheduler.gradient(task).has_value()) << task;
}

TEST(TaskScheduler, WarmUpSkipsExhaustedTasks) {
  TaskScheduler scheduler({1, 1, 1}, 1, without_epsilon());
  scheduler.exhaust(1);
  EXPECT_EQ(scheduler.next_task(), 0);
  scheduler.record(0, 8, 1 * kMs);
  EXPECT_EQ(scheduler.next_task(), 2);
  scheduler.record(2, 8, 1 * kMs);
  // Past warm-up, an exhausted task is still never chosen, though it is the only one without a result.
  for (int round = 0; round < 10; ++round) {
    std::optional<int> task = scheduler.next_task();
    ASSERT_TRUE(task.has_value());
    EXPECT_NE(*task, 1);
    scheduler.record(*task, 8, 1 * kMs);
  }
  EXPECT_EQ(scheduler.rounds(1), 0);
  EXPECT_FALSE(scheduler.gradient(1).has_value());
}

TEST(TaskScheduler, NoTaskWhenEveryTaskIsExhausted) {
  TaskScheduler scheduler({1, 2}, 1);
  scheduler.exhaust(0);
  EXPECT_EQ(scheduler.next_task(), 1);
  scheduler.record(1, 8, 1 * kMs);
  scheduler.exhaust(1);
  EXPECT_EQ(scheduler.next_task(), std::nullopt);
  EXPECT_TRUE(scheduler.exhausted(0) && scheduler.exhausted(1));
}

TEST(TaskScheduler, TasksWithoutACorrectResultComeFirstAfterWarmUp) {
  TaskScheduler scheduler({100, 1, 1}, 1, without_epsilon());
  scheduler.record(0, 8, 50 * kMs);  // heavy and slow: by gradient it would win every round
  scheduler.record(1, 8, std::nullopt);
  scheduler.record(2, 8, std::nullopt);
  // The two tasks without a result share the rounds, fewest rounds first.
  EXPECT_EQ(scheduler.next_task(), 1);
  scheduler.record(1, 8, std::nullopt);
  EXPECT_EQ(scheduler.next_task(), 2);
  scheduler.record(2, 8, 3 * kMs);
  EXPECT_EQ(scheduler.next_task(), 1);
  EXPECT_FALSE(scheduler.gradient(1).has_value());
  EXPECT_TRUE(scheduler.gradient(2).has_value());
  scheduler.record(1, 8, 3 * kMs);
  EXPECT_EQ(scheduler.next_task(), 0);
}

// Task A (weight 10) keeps improving; task B (weight 1, 0.25 ms) is flat: its search found nothing better after its
// first round. B still gets some rounds: Ansor's forward term expects every task to improve like 1 / trials, and only
// the backward term (alpha) sees that B does not. With B as slow as A (1 ms), B would get more rounds than A.
TEST(TaskScheduler, AnImprovingHeavyTaskGetsMostRounds) {
  std::vector<LatencyCurve> curves = {[](int64_t t) { return 1.0 * kMs / (1 + double(t) / 8); },
                                      [](int64_t) { return 0.25 * kMs; }};
  for (uint64_t seed : {1, 2, 3}) {
    TaskScheduler scheduler({10, 1}, seed);
    Simulation run = simulate(scheduler, curves, 40, 8);
    int64_t a_after_warm_up = run.rounds[0] - 1, b_after_warm_up = run.rounds[1] - 1;
    EXPECT_GT(double(a_after_warm_up), 0.6 * double(a_after_warm_up + b_after_warm_up))
        << "seed " << seed << ": A " << run.rounds[0] << " rounds, B " << run.rounds[1];
  }
}

// Four tasks with diminishing returns towards different floors and different weights, as a model's convolutions,
// dense layers and elementwise tails: on the same budget of rounds the scheduler's estimate ends below round robin's.
TEST(TaskScheduler, BeatsRoundRobinOnTheSameBudget) {
  std::vector<double> weights = {12, 4, 1, 6};
  std::vector<LatencyCurve> curves = {
      [](int64_t t) { return (0.3 + 2.0 / (1 + double(t) / 32)) * kMs; },  // heavy, improves a lot
      [](int64_t t) { return (0.5 + 1.0 / (1 + double(t) / 16)) * kMs; },
      [](int64_t t) { return (1.0 + 3.0 / (1 + double(t) / 64)) * kMs; },   // improves a lot, but occurs once
      [](int64_t t) { return (0.05 + 0.05 / (1 + double(t) / 8)) * kMs; },  // tiny: little to gain
  };
  const int total_rounds = 40;
  const int64_t trials_per_round = 16;
  double round_robin = round_robin_estimate(weights, curves, total_rounds, trials_per_round);
  for (uint64_t seed : {1, 2, 3}) {
    TaskScheduler scheduler(weights, seed);
    Simulation run = simulate(scheduler, curves, total_rounds, trials_per_round);
    ASSERT_EQ(run.choices.size(), size_t(total_rounds));
    EXPECT_LT(run.estimated_seconds, 0.95 * round_robin)
        << "seed " << seed << ": scheduler " << run.estimated_seconds / kMs << " ms, round robin " << round_robin / kMs
        << " ms";
    EXPECT_GT(run.rounds[0], total_rounds / 4) << "seed " << seed;
  }
}

TEST(TaskScheduler, SameSeedSameRecordsSameChoices) {
  std::vector<double> weights = {3, 1, 2};
  std::vector<LatencyCurve> curves = {[](int64_t t) { return 1.0 * kMs / (1 + double(t) / 16); },
                                      [](int64_t t) { return 2.0 * kMs / (1 + double(t) / 64); },
                                      [](int64_t t) { return 0.5 * kMs / (1 + double(t) / 4); }};
  TaskSchedulerOptions options;
  options.epsilon = 0.3;  // many random rounds, so that a difference in draws would show
  TaskScheduler a(weights, 7, options), b(weights, 7, options), other_seed(weights, 8, options);
  Simulation first = simulate(a, curves, 60, 8), second = simulate(b, curves, 60, 8);
  Simulation third = simulate(other_seed, curves, 60, 8);
  EXPECT_EQ(first.choices, second.choices);
  EXPECT_NE(first.choices, third.choices);
}

TEST(TaskScheduler, WithoutEpsilonTheSeedDoesNotMatter) {
  std::vector<double> weights = {3, 1, 2};
  std::vector<LatencyCurve> curves = {[](int64_t t) { return 1.0 * kMs / (1 + double(t) / 16); },
                                      [](int64_t t) { return 2.0 * kMs / (1 + double(t) / 64); },
                                      [](int64_t t) { return 0.5 * kMs / (1 + double(t) / 4); }};
  TaskScheduler a(weights, 1, without_epsilon()), b(weights, 99, without_epsilon());
  EXPECT_EQ(simulate(a, curves, 60, 8).choices, simulate(b, curves, 60, 8).choices);
}

// With epsilon 1 every choice after warm-up is a random draw: a task the gradient never picks gets about half.
TEST(TaskScheduler, EpsilonRoundsGoToRandomTasks) {
  std::vector<LatencyCurve> curves = {[](int64_t t) { return 1.0 * kMs / (1 + double(t) / 8); },
                                      [](int64_t) { return 1e-6 * kMs; }};
  TaskSchedulerOptions options;
  options.epsilon = 1;
  TaskScheduler random({1000, 1}, 5, options), by_gradient({1000, 1}, 5, without_epsilon());
  Simulation drawn = simulate(random, curves, 202, 8), ranked = simulate(by_gradient, curves, 202, 8);
  EXPECT_EQ(ranked.rounds[1], 1);  // its warm-up round only
  EXPECT_GT(drawn.rounds[1], 60);
  EXPECT_LT(drawn.rounds[1], 140);
}

// dL/dt = w * (alpha * (g(t) - g(t - dt)) / dt + (1 - alpha) * (-g(t) / t)), the backward term over the last
// backward_window rounds, or from the first round with a correct result when there are fewer.
TEST(TaskScheduler, GradientFollowsAnsorsFormula) {
  TaskSchedulerOptions options = without_epsilon();
  options.alpha = 0.2;
  options.backward_window = 3;
  TaskScheduler scheduler({2, 1, 4}, 1, options);
  // Task 0: five rounds; three rounds ago it had 20 trials and a best of 3 ms.
  for (auto [trials, best] : std::vector<std::pair<int64_t, double>>{{10, 4}, {10, 3}, {10, 2.5}, {10, 2}, {10, 1.8}})
    scheduler.record(0, trials, best * kMs);
  // Task 1: one round; no earlier round, so no backward term.
  scheduler.record(1, 16, 2.0 * kMs);
  // Task 2: its first correct result came in its second round; the window starts there.
  scheduler.record(2, 8, std::nullopt);
  scheduler.record(2, 8, 1.0 * kMs);
  scheduler.record(2, 0, 1.0 * kMs);
  scheduler.record(2, 16, 0.6 * kMs);
  scheduler.next_task();
  EXPECT_NEAR(*scheduler.gradient(0), 2 * (0.2 * (1.8 - 3.0) / 30 + 0.8 * (-1.8 / 50)) * kMs, 1e-15);
  EXPECT_NEAR(*scheduler.gradient(1), 1 * (0.8 * (-2.0 / 16)) * kMs, 1e-15);
  EXPECT_NEAR(*scheduler.gradient(2), 4 * (0.2 * (0.6 - 1.0) / 16 + 0.8 * (-0.6 / 32)) * kMs, 1e-15);
  // The most negative gradient (task 1's, -0.1 against -0.0736 and -0.08) wins.
  EXPECT_EQ(scheduler.next_task(), 1);
}

TEST(TaskScheduler, EqualGradientsGoToTheLowerIndex) {
  TaskScheduler scheduler({1, 1, 1}, 1, without_epsilon());
  for (int task = 0; task < 3; ++task) scheduler.record(task, 8, 1 * kMs);
  EXPECT_EQ(scheduler.next_task(), 0);
  scheduler.exhaust(0);
  EXPECT_EQ(scheduler.next_task(), 1);
}

TEST(TaskScheduler, HistoryKeepsEveryRound) {
  TaskScheduler scheduler({1, 1}, 1);
  scheduler.record(0, 8, std::nullopt);
  scheduler.record(0, 0, 2.0 * kMs);
  scheduler.record(0, 16, 1.5 * kMs);
  EXPECT_EQ(scheduler.history(0), (std::vector<TaskRound>{{8, std::nullopt}, {8, 2.0 * kMs}, {24, 1.5 * kMs}}));
  EXPECT_EQ(scheduler.trials(0), 24);
  EXPECT_EQ(scheduler.rounds(0), 3);
  EXPECT_EQ(scheduler.best(0), 1.5 * kMs);
  EXPECT_TRUE(scheduler.history(1).empty());
  EXPECT_EQ(scheduler.trials(1), 0);
  EXPECT_EQ(scheduler.best(1), std::nullopt);
}

TEST(TaskScheduler, MisuseIsRefused) {
  TaskScheduler scheduler({1, 1}, 1);
  scheduler.record(0, 8, 2.0 * kMs);
  EXPECT_NE(invalid_argument_message([&] { scheduler.record(2, 8, 1.0 * kMs); }).find("no task 2"), std::string::npos);
  EXPECT_THROW(scheduler.record(-1, 8, 1.0 * kMs), std::invalid_argument);
  EXPECT_THROW(scheduler.record(1, -1, 1.0 * kMs), std::invalid_argument);
  EXPECT_THROW(scheduler.record(0, 8, 2.5 * kMs), std::invalid_argument);     // a best that increases
  EXPECT_THROW(scheduler.record(0, 8, std::nullopt), std::invalid_argument);  // a best that disappears
  EXPECT_THROW(scheduler.record(1, 8, 0.0), std::invalid_argument);
  EXPECT_THROW(scheduler.exhaust(2), std::invalid_argument);
  EXPECT_THROW(scheduler.trials(2), std::invalid_argument);
  // Nothing was recorded by the refused calls; an equal best is no increase.
  EXPECT_EQ(scheduler.rounds(0), 1);
  EXPECT_EQ(scheduler.rounds(1), 0);
  scheduler.record(0, 8, 2.0 * kMs);
  EXPECT_EQ(scheduler.trials(0), 16);
}

TEST(TaskScheduler, BadWeightsAreRefusedByIndex) {
  EXPECT_NE(invalid_argument_message([] { TaskScheduler({}, 1); }).find("no tasks"), std::string::npos);
  EXPECT_NE(invalid_argument_message([] { TaskScheduler({1, 2, 0}, 1); }).find("task 2"), std::string::npos);
  EXPECT_NE(invalid_argument_message([] { TaskScheduler({1, -1}, 1); }).find("task 1"), std::string::npos);
  TaskSchedulerOptions options;
  options.backward_window = 0;
  EXPECT_THROW(TaskScheduler({1}, 1, options), std::invalid_argument);
}

TEST(TaskScheduler, EstimatedSecondsIsTheWeightedSum) {
  TaskScheduler scheduler({2, 3, 0.5}, 1);
  EXPECT_EQ(scheduler.estimated_seconds(), std::nullopt);
  scheduler.record(0, 8, 1.0 * kMs);
  scheduler.record(1, 8, 2.0 * kMs);
  scheduler.record(2, 8, std::nullopt);
  EXPECT_EQ(scheduler.estimated_seconds(), std::nullopt);
  scheduler.record(2, 8, 4.0 * kMs);
  EXPECT_NEAR(scheduler.estimated_seconds().value(), (2 * 1.0 + 3 * 2.0 + 0.5 * 4.0) * kMs, 1e-15);
}

}  // namespace
}  // namespace ingot
