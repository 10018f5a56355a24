// A model's tasks: each stage of its plan cut out as a program with placeholders where it reads from outside, equal
// stages one task, weights that add up to the stage count, and the model's fixed schedule given back whole when the
// tasks' fixed schedules are assembled.
#include "tuner/model_tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/strategies.h"
#include "codegen/pipeline.h"
#include "interp/interpreter.h"
#include "ir/subprogram.h"
#include "lower/lower.h"
#include "runtime/local_run.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

const Target& cpu() {
  static const Target target = test_support::avx512_cpu();
  return target;
}

// y = relu(a @ b + bias); z = y * 2; the part {mm, y} reads a, b, bias and gives y to z.
Program gemm_relu_scale() {
  Tensor a = placeholder("a", {4, 8}), b = placeholder("b", {8, 6}), bias = placeholder("bias", {6});
  IterVar k = reduce_axis(8, "k");
  Tensor mm =
      compute("mm", {4, 6}, [&](const std::vector<Expr>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); });
  Tensor y = compute("y", {4, 6},
                     [&](const std::vector<Expr>& i) { return maximum(mm(i[0], i[1]) + bias(i[1]), float_imm(0)); });
  Tensor z = compute("z", {4, 6}, [&](const std::vector<Expr>& i) { return y(i[0], i[1]) * float_imm(2); });
  return Program({z}, "gemm_relu_scale");
}

std::vector<std::string> names(const std::vector<Tensor>& tensors) {
  std::vector<std::string> out;
  for (const Tensor& t : tensors) out.push_back(t->name);
  return out;
}

TEST(Subprogram, ReadsFromOutsideBecomePlaceholdersAndWhatOthersReadIsAnOutput) {
  Program p = gemm_relu_scale();
  Program part = extract_subprogram(p, {"mm", "y"}, "part");
  EXPECT_EQ(part.name(), "part");
  EXPECT_EQ(names(part.placeholders()), (std::vector<std::string>{"a", "b", "bias"}));
  EXPECT_EQ(names(part.outputs()), (std::vector<std::string>{"y"}));
  EXPECT_EQ(names(part.computes()), (std::vector<std::string>{"mm", "y"}));
  // The copy computes what the original does.
  TensorMap inputs = random_inputs(p, 5);
  TensorMap whole = interpret(p, inputs);
  TensorMap alone = interpret(part, {{"a", inputs.at("a")}, {"b", inputs.at("b")}, {"bias", inputs.at("bias")}});
  EXPECT_TRUE(compare(alone.at("y"), whole.at("y"), 0, 0).ok);

  Program tail = extract_subprogram(p, {"z"}, "tail", {{"y", "y_in"}, {"z", "out"}});
  EXPECT_EQ(tail.to_string(),
            "program tail {\n  y_in: f32[4, 6] = placeholder\n  out: f32[4, 6] = compute(i, j) (y_in[i, j] * 2.0)\n"
            "  outputs: out\n}\n");
}

TEST(Subprogram, RefusesWhatIsNotAComputeOfTheProgram) {
  Program p = gemm_relu_scale();
  EXPECT_THROW(extract_subprogram(p, {}, "x"), std::invalid_argument);
  EXPECT_THROW(extract_subprogram(p, {"nope"}, "x"), std::invalid_argument);
  EXPECT_THROW(extract_subprogram(p, {"a"}, "x"), std::invalid_argument);
  EXPECT_THROW(extract_subprogram(p, {"y", "y"}, "x"), std::invalid_argument);
  EXPECT_THROW(extract_subprogram(p, {"y", "z"}, "x", {{"z", "y"}}), std::invalid_argument);
}

TEST(ModelTasks, BertLayersShareTheirTasks) {
  const WorkloadParams& small = find_workload("bert")->small;
  Program model = make_workload("bert", small);
  PartitionPlan plan = make_plan("global", model, cpu());
  std::vector<ModelTask> tasks = extract_tasks(model, plan, "bert");
  // 13 stages per layer, and the two layer norms' stages are alike: 11 tasks, each once per layer or twice.
  const int64_t layers = small.at("layers");
  ASSERT_EQ(plan.stage_count(), 13 * layers);
  ASSERT_EQ(tasks.size(), 11u);
  int64_t weights = 0;
  for (const ModelTask& t : tasks) {
    weights += t.weight();
    EXPECT_TRUE(t.weight() == layers || t.weight() == 2 * layers) << t.name << " " << t.weight();
  }
  EXPECT_EQ(weights, plan.stage_count());
  EXPECT_EQ(tasks[0].name, "bert/task0");
  EXPECT_EQ(tasks[0].program.name(), "bert/task0");
  // The second layer's query projection reads the first layer's output where the first reads the embeddings.
  const TaskOccurrence& second = tasks[0].occurrences[1];
  EXPECT_EQ(second.model_names.at("l0_query_matmul"), "l1_query_matmul");
  for (const auto& [own, model_name] : tasks[0].occurrences[0].model_names) EXPECT_EQ(own, model_name);
  nlohmann::json occurrences = nlohmann::json::parse(occurrences_json(tasks[0]));
  ASSERT_EQ(occurrences.size(), size_t(layers));
  EXPECT_EQ(occurrences[1]["tensors"]["l0_query_matmul"], "l1_query_matmul");
}

TEST(ModelTasks, TheModelsFixedScheduleSplitsIntoTaskSchedulesThatAssembleBack) {
  for (const char* model_name : {"bert", "lstm", "resnext", "efficientnet", "swin", "mmoe"}) {
    Program model = make_workload(model_name, find_workload(model_name)->small);
    for (const char* strategy : {"unfused", "global"}) {
      SCOPED_TRACE(std::string(model_name) + " " + strategy);
      PartitionPlan plan = make_plan(strategy, model, cpu());
      Schedule fixed = strategy_schedule(model, plan);
      std::vector<ModelTask> tasks = extract_tasks(model, plan, model_name);
      int64_t weights = 0;
      std::vector<Schedule> starts;
      for (const ModelTask& t : tasks) {
        weights += t.weight();
        EXPECT_TRUE(plan_problems(t.plan, analyze(t.program, cpu())).empty()) << t.name;
        starts.push_back(task_schedule(fixed, t, FixedScheduleOptions{}));
        EXPECT_NO_THROW(lower(t.program, starts.back())) << t.name;
        EXPECT_NO_THROW(lower(t.program, strategy_schedule(t.program, t.plan))) << t.name;
      }
      EXPECT_EQ(weights, plan.stage_count());
      // The same C++: every occurrence of a task has the decisions of its first.
      EXPECT_EQ(compile_to_cpp_source(model, assemble_schedule(plan, tasks, starts, fixed)).source,
                compile_to_cpp_source(model, fixed).source);
    }
  }
  // The unfused LSTM repeats its cells' kernels; the global one fuses cells of different steps into each stage.
  Program lstm = make_workload("lstm", find_workload("lstm")->small);
  EXPECT_LT(extract_tasks(lstm, make_plan("unfused", lstm, cpu()), "lstm").size(), lstm.computes().size());
}

// A pad of a tensor between two stages (R: 28 rows of 4 KB, read 14 rows at a time by the second GEMM's tiles) is left
// out of the task that writes it, whose outputs stay dense, and comes back from the fixed schedule in the assembly.
TEST(ModelTasks, APadBetweenStagesLeavesTheTasksAndComesBackInTheAssembly) {
  Program model = two_gemm(28, 1024, 32, 512);
  PartitionPlan plan = make_plan("global", model, cpu());
  Schedule fixed = strategy_schedule(model, plan);
  ASSERT_EQ(fixed.decisions().front().to_string(), "pad R dimension 1 by 16 elements") << fixed.to_json();
  std::vector<ModelTask> tasks = extract_tasks(model, plan, "two_gemm");
  ASSERT_EQ(tasks.size(), 2u);
  std::vector<Schedule> starts;
  for (const ModelTask& t : tasks) {
    starts.push_back(task_schedule(fixed, t, FixedScheduleOptions{}));
    for (const Decision& d : starts.back().decisions()) EXPECT_NE(d.kind, DecisionKind::kPad) << t.name;
    EXPECT_NO_THROW(lower(t.program, starts.back())) << t.name;
  }
  EXPECT_EQ(compile_to_cpp_source(model, assemble_schedule(plan, tasks, starts, fixed)).source,
            compile_to_cpp_source(model, fixed).source);
  EXPECT_NE(compile_to_cpp_source(model, assemble_schedule(plan, tasks, starts, Schedule())).source,
            compile_to_cpp_source(model, fixed).source);
}

// A pack of a tensor between two stages (R in blocks of 16 of its columns) is left out of the task that writes it,
// whose outputs stay dense; the task that reads it packs its input as the model's stage reads it; assembled, the model
// packs R once, as its fixed schedule does.
TEST(ModelTasks, APackBetweenStagesLeavesTheWriterAndComesBackOnceInTheAssembly) {
  Program model = two_gemm(28, 1024, 32, 512);
  PartitionPlan plan = make_plan("global", model, cpu());
  const Schedule strategy = strategy_schedule(model, plan);
  Schedule fixed = Schedule().pack("R", 1, 16);  // instead of the strategy's pad of R
  for (const Decision& d : strategy.decisions())
    if (d.kind != DecisionKind::kPad) fixed.append(d);
  fixed.set_layout(strategy.layout());
  std::vector<ModelTask> tasks = extract_tasks(model, plan, "two_gemm");
  ASSERT_EQ(tasks.size(), 2u);
  std::vector<Schedule> starts;
  int packs_of_inputs = 0;
  for (const ModelTask& t : tasks) {
    starts.push_back(task_schedule(fixed, t, FixedScheduleOptions{}));
    for (const Decision& d : starts.back().decisions()) {
      if (d.kind != DecisionKind::kPack) continue;
      EXPECT_TRUE(t.program.find(d.stage)->is_placeholder()) << t.name << ": " << d.to_string();
      packs_of_inputs += t.program.find(d.stage)->shape == std::vector<int64_t>{28, 1024};
    }
    EXPECT_NO_THROW(lower(t.program, starts.back())) << t.name;
  }
  EXPECT_EQ(packs_of_inputs, 1);
  Schedule assembled = assemble_schedule(plan, tasks, starts, fixed);
  EXPECT_EQ(std::count_if(assembled.decisions().begin(), assembled.decisions().end(),
                          [](const Decision& d) { return d.kind == DecisionKind::kPack && d.stage == "R"; }),
            1);
  EXPECT_EQ(compile_to_cpp_source(model, assembled).source, compile_to_cpp_source(model, fixed).source);
}

// With an L2 small enough that EfficientNet's expansions run in their depthwise convolutions' bands, the model's
// schedule computes a stage of one task inside another task's: such a task starts from its own fixed schedule, and
// every task's start lowers.
TEST(ModelTasks, ATaskComputedInAnotherTasksBandStartsFromItsOwnFixedSchedule) {
  Program model = make_workload("efficientnet", find_workload("efficientnet")->small);
  PartitionPlan plan = make_plan("global", model, cpu());
  FixedScheduleOptions options;
  options.l2_bytes = 1024;
  Schedule fixed = strategy_schedule(model, plan, options);
  ASSERT_LT(fixed.layout().size(), size_t(plan.stage_count()));  // some bands merged two stages
  int own = 0;
  for (const ModelTask& t : extract_tasks(model, plan, "efficientnet")) {
    Schedule start = task_schedule(fixed, t, options);
    EXPECT_NO_THROW(lower(t.program, start)) << t.name;
    own += start == strategy_schedule(t.program, t.plan, options) && start.layout() == plan_layout(t.plan);
  }
  EXPECT_GT(own, 0);
}

TEST(ModelTasks, TaskInputsAreTheModelsValuesThere) {
  Program model = make_workload("lstm", find_workload("lstm")->small);
  PartitionPlan plan = make_plan("global", model, cpu());
  std::vector<ModelTask> tasks = extract_tasks(model, plan, "lstm");
  TensorMap values = random_inputs(model, 2);
  for (auto& [name, value] : interpret(model, values)) values.emplace(name, value);
  for (const ModelTask& t : tasks) {
    TensorMap inputs = task_inputs(t, values);
    ASSERT_EQ(inputs.size(), t.program.placeholders().size());
    TensorMap got = interpret(t.program, inputs);
    TensorMap expected = task_expected_outputs(t, values);
    for (const Tensor& out : t.program.outputs())
      EXPECT_TRUE(compare(got.at(out->name), expected.at(out->name), 0, 0).ok) << t.name << " " << out->name;
  }
  EXPECT_THROW(task_inputs(tasks[1], {}), std::invalid_argument);
}

TEST(ModelTasks, AssembledTunedSchedulesRunCorrectly) {
  // Each task's schedule changed a little (a different unroll), assembled into the model's: it still computes the
  // model's outputs, and the change shows at every occurrence.
  Program model = make_workload("mmoe", find_workload("mmoe")->small);
  PartitionPlan plan = make_plan("global", model, cpu());
  std::vector<ModelTask> tasks = extract_tasks(model, plan, "mmoe");
  std::vector<Schedule> schedules;
  FixedScheduleOptions knobs;
  knobs.knobs.register_tile = 2;
  knobs.knobs.cache_write = false;
  for (const ModelTask& t : tasks) schedules.push_back(strategy_schedule(t.program, t.plan, knobs));
  Schedule assembled = assemble_schedule(plan, tasks, schedules, strategy_schedule(model, plan, knobs));
  EXPECT_EQ(compile_to_cpp_source(model, assembled).source,
            compile_to_cpp_source(model, strategy_schedule(model, plan, knobs)).source);
  TensorMap inputs = random_inputs(model, 3);
  LocalRunOptions options;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  LocalRunResult r = local_run(model, assembled, inputs, interpret(model, inputs), options);
  EXPECT_TRUE(r.correct);
  EXPECT_THROW(assemble_schedule(plan, tasks, {}, Schedule()), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
