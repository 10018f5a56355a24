// The task scheduler of whole-model tuning (Ansor's gradient-based task scheduler): a model is split into tasks, each
// tuned on its own in rounds of trials, and the scheduler picks the task of each next round so that the model's
// estimated latency (sum of weight x best time over the tasks) falls fastest. Same seed and same records: same choices.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace ingot {

struct TaskSchedulerOptions {
  double alpha = 0.2;       // weight of the backward-looking gradient (Ansor's alpha), in [0, 1]
  int backward_window = 3;  // rounds the backward gradient looks back over (Ansor's delta t, in rounds), >= 1
  double epsilon = 0.05;    // share of rounds (after warm-up) given to a task drawn at random, so no task starves
  bool operator==(const TaskSchedulerOptions&) const = default;
};

// A task's state after one of its rounds.
struct TaskRound {
  int64_t trials = 0;                  // the task's trials so far, this round's included
  std::optional<double> best_seconds;  // the task's best time so far; nullopt: none correct yet
  bool operator==(const TaskRound&) const = default;
};

class TaskScheduler {
 public:
  // weights: how often each task occurs in the model, each > 0.
  TaskScheduler(std::vector<double> weights, uint64_t seed, TaskSchedulerOptions options = {});

  // The task the next round goes to; nullopt when every task is exhausted. Warm-up: each task not exhausted gets one
  // round, in index order. Then the tasks without a correct result, fewest rounds first; then the task whose gradient
  // of the estimated latency is most negative, ties to the lower index; with probability epsilon a random task
  // not exhausted instead.
  std::optional<int> next_task();
  // The outcome of a round of the task: the trials it used (0 allowed) and the task's best time after it.
  void record(int task, int64_t trials, std::optional<double> best_seconds);
  // The task's search ran out of new candidates: it gets no further rounds.
  void exhaust(int task);

  // Sum of weight x best; nullopt while any task has no correct result.
  std::optional<double> estimated_seconds() const;
  int task_count() const { return int(tasks_.size()); }
  double weight(int task) const;
  bool exhausted(int task) const;
  int64_t trials(int task) const;
  int64_t rounds(int task) const;
  std::optional<double> best(int task) const;
  const std::vector<TaskRound>& history(int task) const;
  // The gradient the last choice was made from (seconds of estimated latency per trial); nullopt before warm-up ends,
  // and for tasks that were not candidates (exhausted, or without a correct result).
  std::optional<double> gradient(int task) const;

 private:
  struct Task {
    double weight = 0;
    bool exhausted = false;
    std::vector<TaskRound> history;
    std::optional<double> gradient;
  };
  size_t index_of(int task) const;  // throws std::invalid_argument for a task that does not exist
  std::optional<double> latency_gradient(const Task& task) const;
  std::optional<int> choose_by_rule();

  std::vector<Task> tasks_;
  TaskSchedulerOptions options_;
  std::mt19937_64 rng_;
};

}  // namespace ingot
