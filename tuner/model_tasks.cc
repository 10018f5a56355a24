#include "tuner/model_tasks.h"

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <utility>

#include "ir/hash.h"
#include "ir/subprogram.h"
#include "space/strategy_schedule.h"

namespace ingot {
namespace {

// The stage's program with every tensor renamed by its position: equal for stages equal up to names.
std::string position_named_text(const Program& model, const Program& stage, const std::vector<std::string>& tes) {
  std::map<std::string, std::string> by_position;
  for (const Tensor& t : stage.tensors()) by_position.emplace(t->name, "t" + std::to_string(by_position.size()));
  return extract_subprogram(model, tes, "stage", by_position).to_string();
}

TensorMap values_of(const ModelTask& task, const std::vector<Tensor>& tensors, const TensorMap& values) {
  TensorMap out;
  for (const Tensor& t : tensors) {
    auto it = values.find(t->name);
    if (it == values.end())
      throw std::invalid_argument("task '" + task.name + "': no value of the model's tensor '" + t->name + "'");
    out.emplace(t->name, it->second);
  }
  return out;
}

std::string renamed(const std::map<std::string, std::string>& names, const std::string& name) {
  auto it = names.find(name);
  return it == names.end() ? name : it->second;
}

Decision renamed(const std::map<std::string, std::string>& names, Decision d) {
  d.stage = renamed(names, d.stage);
  if (!d.target.empty()) d.target = renamed(names, d.target);
  if (!d.tensor.empty()) d.tensor = renamed(names, d.tensor);
  return d;
}

}  // namespace

std::vector<ModelTask> extract_tasks(const Program& model, const PartitionPlan& plan, const std::string& model_name) {
  std::vector<ModelTask> tasks;
  std::map<std::string, size_t> task_of_text;
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    for (size_t s = 0; s < plan.kernels[k].stages.size(); ++s) {
      const std::vector<std::string>& tes = plan.kernels[k].stages[s].tes;
      Program stage = extract_subprogram(model, tes, "stage");
      const std::string text = position_named_text(model, stage, tes);
      auto [it, is_new] = task_of_text.emplace(text, tasks.size());
      if (is_new) {
        const std::string name = model_name + "/task" + std::to_string(tasks.size());
        PartitionPlan task_plan{plan.strategy, name, plan.target, {PlanKernel{{PlanStage{tes, false, {}}}, {}}}};
        tasks.push_back(ModelTask{name, extract_subprogram(model, tes, name), std::move(task_plan), {}, fnv1a64(text)});
      }
      ModelTask& task = tasks[it->second];
      TaskOccurrence occurrence{int64_t(k), int64_t(s), {}};
      // Equal position-named texts list their tensors in the same order (Program orders them by structure alone).
      const std::vector<Tensor>& own = task.program.tensors();
      const std::vector<Tensor>& here = stage.tensors();
      for (size_t i = 0; i < own.size(); ++i) occurrence.model_names.emplace(own[i]->name, here[i]->name);
      task.occurrences.push_back(std::move(occurrence));
    }
  return tasks;
}

TensorMap task_inputs(const ModelTask& task, const TensorMap& values) {
  return values_of(task, task.program.placeholders(), values);
}

TensorMap task_expected_outputs(const ModelTask& task, const TensorMap& values) {
  return values_of(task, task.program.outputs(), values);
}

Schedule schedule_for_task(const Schedule& schedule, const ModelTask& from, const ModelTask& to) {
  const std::vector<Tensor>& from_tensors = from.program.tensors();
  const std::vector<Tensor>& to_tensors = to.program.tensors();
  if (from.structure != to.structure || from_tensors.size() != to_tensors.size())
    throw std::invalid_argument("schedule_for_task: tasks '" + from.name + "' and '" + to.name + "' differ");
  std::map<std::string, std::string> names;
  for (size_t i = 0; i < from_tensors.size(); ++i) names.emplace(from_tensors[i]->name, to_tensors[i]->name);
  Schedule out;
  for (const Decision& d : schedule.decisions()) out.append(renamed(names, d));
  StageLayout layout = schedule.layout();
  for (LayoutStep& step : layout) {
    for (std::string& c : step.computes) c = renamed(names, c);
    for (std::string& t : step.prefetch) t = renamed(names, t);
  }
  out.set_layout(std::move(layout));
  return out;
}

Schedule assemble_schedule(const PartitionPlan& plan, const std::vector<ModelTask>& tasks,
                           const std::vector<Schedule>& task_schedules, const Schedule& fixed) {
  if (tasks.size() != task_schedules.size())
    throw std::invalid_argument("assemble_schedule: " + std::to_string(tasks.size()) + " tasks but " +
                                std::to_string(task_schedules.size()) + " schedules");
  std::map<std::pair<int64_t, int64_t>, std::pair<size_t, size_t>> at;  // (kernel, stage) -> (task, occurrence)
  for (size_t t = 0; t < tasks.size(); ++t)
    for (size_t o = 0; o < tasks[t].occurrences.size(); ++o)
      at[{tasks[t].occurrences[o].kernel, tasks[t].occurrences[o].stage}] = {t, o};
  Schedule out;
  std::set<std::string> packed;  // a weight that two tasks read is packed as the first packs it
  // Maps between stages take their layout from the fixed schedule alone: a task packs a map it reads as an input
  // wherever the task occurs, and a task tuned on another plan may pack one the fixed schedule keeps dense.
  std::set<std::string> computes;
  for (const PlanKernel& kernel : plan.kernels)
    for (const PlanStage& stage : kernel.stages) computes.insert(stage.tes.begin(), stage.tes.end());
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    for (size_t s = 0; s < plan.kernels[k].stages.size(); ++s) {
      auto it = at.find({int64_t(k), int64_t(s)});
      if (it == at.end())
        throw std::invalid_argument("assemble_schedule: no task stands for stage " + std::to_string(s) + " of kernel " +
                                    std::to_string(k));
      const auto& names = tasks[it->second.first].occurrences[it->second.second].model_names;
      for (const Decision& d : task_schedules[it->second.first].decisions()) {
        Decision model_decision = renamed(names, d);
        if (d.kind == DecisionKind::kPack &&
            (computes.count(model_decision.stage) || !packed.insert(model_decision.stage).second))
          continue;
        out.append(std::move(model_decision));
      }
    }
  for (const Decision& d : fixed.decisions())
    if (d.kind == DecisionKind::kPad || (d.kind == DecisionKind::kPack && computes.count(d.stage))) out.append(d);
  out.set_layout(plan_layout(plan));
  return out;
}

Schedule task_schedule(const Schedule& model_schedule, const ModelTask& task, const FixedScheduleOptions& options) {
  std::set<std::string> computes, inputs;
  for (const Tensor& t : task.program.computes()) computes.insert(t->name);
  for (const Tensor& t : task.program.placeholders()) inputs.insert(t->name);
  Schedule out;
  for (const Decision& d : model_schedule.decisions()) {
    if (d.kind == DecisionKind::kPack ? inputs.count(d.stage) == 0 : computes.count(d.stage) == 0) continue;
    if (d.kind == DecisionKind::kPad) continue;  // a layout between stages: the task's buffers are dense
    if (d.kind == DecisionKind::kComputeAt && computes.count(d.target) == 0)
      return strategy_schedule(task.program, task.plan, options);
    out.append(d);
  }
  out.set_layout(plan_layout(task.plan));
  return out;
}

std::string occurrences_json(const ModelTask& task) {
  nlohmann::json out = nlohmann::json::array();
  for (const TaskOccurrence& o : task.occurrences)
    out.push_back({{"kernel", o.kernel}, {"stage", o.stage}, {"tensors", o.model_names}});
  return out.dump();
}

}  // namespace ingot
