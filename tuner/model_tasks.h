// Whole-model tuning's tasks: the distinct stages of a model's partition plan, each cut out as a small program of its
// own (ir/subprogram.h) with the model's values at its inputs, tuned alone, and its best schedule put back in every
// stage it stands for. Stages are one task when they are equal up to tensor names (BERT's 12 layers give one task
// per kind of stage, weighted by how often it occurs). Runs before tuning and again to assemble its result.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/partition_plan.h"
#include "interp/interpreter.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "space/strategy_schedule.h"

namespace ingot {

// One stage of the plan that a task stands for.
struct TaskOccurrence {
  int64_t kernel = 0, stage = 0;  // its place in the plan
  // Every tensor of the task's program (computes and the placeholders they read) -> the model's tensor there.
  std::map<std::string, std::string> model_names;
  bool operator==(const TaskOccurrence&) const = default;
};

struct ModelTask {
  std::string name;  // "<model>/task<N>", N counting from 0 in the order of first occurrence in the plan
  // The stage's computes, named as at its first occurrence, reading placeholders named as the tensors they stand for.
  Program program;
  PartitionPlan plan;  // one kernel of one stage: the task's computes, as the model's plan has them
  std::vector<TaskOccurrence> occurrences;  // in plan order; the first one's names are the program's own
  // Equal for tasks equal up to tensor names, in any plan of any model: the hash of the position-named program.
  uint64_t structure = 0;
  int64_t weight() const { return int64_t(occurrences.size()); }
};

// The tasks of a model under its plan (valid for it), in the order of their first occurrence. Two stages are one
// task when their programs print the same once every tensor is renamed by its position.
std::vector<ModelTask> extract_tasks(const Program& model, const PartitionPlan& plan, const std::string& model_name);

// The model's values at the task's first occurrence, by the task's names: of its placeholders (its inputs), and of its
// outputs (the reference its candidates must match). `values` holds the model's inputs and what interpret() computes
// from them; a tensor it lacks throws std::invalid_argument naming it.
TensorMap task_inputs(const ModelTask& task, const TensorMap& values);
TensorMap task_expected_outputs(const ModelTask& task, const TensorMap& values);

// The decisions of a model's schedule about the task's first occurrence, as a schedule of the task's program (its
// layout the task's one stage). The model's fixed schedule splits into the tasks' starting points this way: the fixed
// schedule of a task alone can differ from the model's, whose strategy aligns a stage with its readers in later
// stages (an LSTM gate GEMV follows the cell's row chunks). Where the model's schedule computes a stage of the task
// inside a compute of another task (an expansion in its depthwise convolution's bands, space/strategy_schedule.h), the
// task starts from its own fixed schedule, strategy_schedule(task.program, task.plan, options), instead. Pads and the
// packs of the task's computes are left out: they lay out tensors that one stage writes and another reads, and a
// task's computes are dense (a pack of a tensor the task reads as an input stays: its runner packs it).
Schedule task_schedule(const Schedule& model_schedule, const ModelTask& task, const FixedScheduleOptions& options);

// A schedule of `from`'s program as a schedule of `to`'s (equal structure): every tensor renamed by its position.
// Throws std::invalid_argument when the structures differ.
Schedule schedule_for_task(const Schedule& schedule, const ModelTask& from, const ModelTask& to);

// The model's schedule made of one schedule per task (in extract_tasks' order): each task's decisions, renamed to
// every occurrence, in plan order, with the plan's layout, and the pads and the packs of computes of `fixed` (the
// plan's fixed schedule): a map between stages takes its layout from `fixed` alone, whatever packs the tasks hold.
// Throws std::invalid_argument when the counts differ.
Schedule assemble_schedule(const PartitionPlan& plan, const std::vector<ModelTask>& tasks,
                           const std::vector<Schedule>& task_schedules, const Schedule& fixed);

// A JSON array of the task's occurrences: [{kernel, stage, tensors: {task name: model name}}], as the database's
// model_tasks table stores it.
std::string occurrences_json(const ModelTask& task);

}  // namespace ingot
