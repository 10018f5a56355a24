#include "tuner/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ingot {

namespace {

// Drawn from raw engine output rather than std::uniform_*_distribution, whose draws differ between standard
// libraries: the same seed and records give the same choices wherever ingot is built.
double draw_unit(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }
size_t draw_index(std::mt19937_64& rng, size_t n) { return size_t(rng() % n); }

}  // namespace

TaskScheduler::TaskScheduler(std::vector<double> weights, uint64_t seed, TaskSchedulerOptions options)
    : options_(options), rng_(seed) {
  if (weights.empty()) throw std::invalid_argument("task scheduler: no tasks");
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] <= 0)
      throw std::invalid_argument("task scheduler: the weight of task " + std::to_string(i) + " is " +
                                  std::to_string(weights[i]) + "; it must be > 0");
    tasks_.emplace_back().weight = weights[i];
  }
  if (!(options.alpha >= 0 && options.alpha <= 1))
    throw std::invalid_argument("task scheduler: alpha must be in [0, 1]");
  if (options.backward_window < 1) throw std::invalid_argument("task scheduler: backward_window must be >= 1");
  if (!(options.epsilon >= 0 && options.epsilon <= 1))
    throw std::invalid_argument("task scheduler: epsilon must be in [0, 1]");
}

size_t TaskScheduler::index_of(int task) const {
  if (task < 0 || task >= task_count())
    throw std::invalid_argument("task scheduler: no task " + std::to_string(task) + " (there are " +
                                std::to_string(task_count()) + ")");
  return size_t(task);
}

std::optional<int> TaskScheduler::next_task() {
  std::vector<int> live;
  for (int i = 0; i < task_count(); ++i)
    if (!tasks_[size_t(i)].exhausted) live.push_back(i);
  if (live.empty()) return std::nullopt;
  for (int i : live)
    if (tasks_[size_t(i)].history.empty()) return i;  // warm-up: gradients need one round of every task

  std::optional<int> chosen = choose_by_rule();
  // Nothing is drawn when epsilon is 0, so that those choices do not depend on the seed.
  if (options_.epsilon > 0 && draw_unit(rng_) < options_.epsilon) return live[draw_index(rng_, live.size())];
  return chosen;
}

std::optional<int> TaskScheduler::choose_by_rule() {
  std::optional<int> without_result, steepest;
  for (int i = 0; i < task_count(); ++i) {
    Task& task = tasks_[size_t(i)];
    if (task.exhausted) {
      task.gradient.reset();
      continue;
    }
    task.gradient = latency_gradient(task);
    // Until a task has a correct result the model has no estimated latency at all, so that comes before any gain;
    // the fewest rounds first, so that several such tasks share the rounds.
    if (!task.history.back().best_seconds) {
      if (!without_result || task.history.size() < tasks_[size_t(*without_result)].history.size()) without_result = i;
    } else if (!steepest || *task.gradient < *tasks_[size_t(*steepest)].gradient) {
      steepest = i;
    }
  }
  return without_result ? without_result : steepest;
}

// Ansor's (OSDI 2020, section 6.2) estimate of d(estimated latency) / d(trials of the task):
//   w * (alpha * (g(t) - g(t - dt)) / dt + (1 - alpha) * (-g(t) / t)).
// The backward term is the recent rate of improvement; the forward term assumes the best keeps improving like 1 / t,
// which credits a task whose best has stopped improving as much as one that still improves: only the backward term
// (alpha) tells them apart.
// Ansor's forward term also estimates what the task can reach from similar tasks (beta * C_i / max V_k); that term is
// left out because tasks have no similarity measure yet.
std::optional<double> TaskScheduler::latency_gradient(const Task& task) const {
  const TaskRound& now = task.history.back();
  if (!now.best_seconds) return std::nullopt;
  size_t window_start = task.history.size() - 1 - std::min(task.history.size() - 1, size_t(options_.backward_window));
  // The look-back starts no earlier than the task's first correct result: before it there is no time to compare.
  while (!task.history[window_start].best_seconds) ++window_start;
  const TaskRound& then = task.history[window_start];
  int64_t window_trials = now.trials - then.trials;
  double backward = window_trials > 0 ? (*now.best_seconds - *then.best_seconds) / double(window_trials) : 0.0;
  // A best recorded with no trials (known before the run) counts as one trial's, which keeps the term finite.
  double forward = -*now.best_seconds / double(std::max<int64_t>(now.trials, 1));
  return task.weight * (options_.alpha * backward + (1 - options_.alpha) * forward);
}

void TaskScheduler::record(int task, int64_t trials, std::optional<double> best_seconds) {
  Task& t = tasks_[index_of(task)];
  if (trials < 0)
    throw std::invalid_argument("task scheduler: task " + std::to_string(task) + " recorded " + std::to_string(trials) +
                                " trials");
  if (best_seconds && !(std::isfinite(*best_seconds) && *best_seconds > 0))
    throw std::invalid_argument("task scheduler: task " + std::to_string(task) + " recorded a best of " +
                                std::to_string(*best_seconds) + " s");
  std::optional<double> before = t.history.empty() ? std::nullopt : t.history.back().best_seconds;
  if (before && (!best_seconds || *best_seconds > *before))
    throw std::invalid_argument(
        "task scheduler: the best of task " + std::to_string(task) + " went from " + std::to_string(*before) +
        " s to " + (best_seconds ? std::to_string(*best_seconds) + " s" : "none") + "; a best only improves");
  int64_t trials_before = t.history.empty() ? 0 : t.history.back().trials;
  t.history.push_back(TaskRound{trials_before + trials, best_seconds});
}

void TaskScheduler::exhaust(int task) { tasks_[index_of(task)].exhausted = true; }

std::optional<double> TaskScheduler::estimated_seconds() const {
  double sum = 0;
  for (int i = 0; i < task_count(); ++i) {
    std::optional<double> b = best(i);
    if (!b) return std::nullopt;
    sum += tasks_[size_t(i)].weight * *b;
  }
  return sum;
}

double TaskScheduler::weight(int task) const { return tasks_[index_of(task)].weight; }
bool TaskScheduler::exhausted(int task) const { return tasks_[index_of(task)].exhausted; }

int64_t TaskScheduler::trials(int task) const {
  const Task& t = tasks_[index_of(task)];
  return t.history.empty() ? 0 : t.history.back().trials;
}

int64_t TaskScheduler::rounds(int task) const { return int64_t(tasks_[index_of(task)].history.size()); }

std::optional<double> TaskScheduler::best(int task) const {
  const Task& t = tasks_[index_of(task)];
  return t.history.empty() ? std::nullopt : t.history.back().best_seconds;
}

const std::vector<TaskRound>& TaskScheduler::history(int task) const { return tasks_[index_of(task)].history; }

std::optional<double> TaskScheduler::gradient(int task) const { return tasks_[index_of(task)].gradient; }

}  // namespace ingot
