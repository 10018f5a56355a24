// `ingot plan`: the partition plan a strategy makes of a workload for a target: kernels, stages with their TEs'
// classes, barriers, resident tensors, bytes moved and kernel count; as text or, with --json, as data.
#include <iostream>

#include "analysis/program_analysis.h"
#include "analysis/strategies.h"
#include "cli/commands.h"

namespace ingot::cli {

void add_plan_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("plan", "Print the partition plan of a workload under a fusion strategy");
  static std::string workload, size = "default", strategy = "global", target = "cpu";
  static bool json = false;
  cmd->add_option("--workload", workload, "Workload (see `ingot workloads`) or an ONNX model file (.onnx)")->required();
  cmd->add_option("--size", size, "small, default or NAME=VALUE,... (the default size with those parameters changed)")
      ->capture_default_str();
  cmd->add_option("--strategy", strategy, "unfused, rules, subgraph or global")
      ->check(CLI::IsMember(plan_strategy_names()))
      ->capture_default_str();
  cmd->add_option("--target", target, "sm_80, sm_90, cpu or a target YAML file")->capture_default_str();
  cmd->add_flag("--json", json, "Print the plan as JSON");
  cmd->callback([cmd] {
    Program program = command_line_workload(workload, size, cmd->count("--size") > 0).program;
    ProgramAnalysis analysis = analyze(program, resolve_target(target));
    PartitionPlan plan = make_plan(strategy, analysis);
    validate_plan(plan, analysis);
    if (json)
      std::cout << plan_report_json(plan, analysis).dump(2) << "\n";
    else
      std::cout << format_plan(plan, analysis);
  });
}

}  // namespace ingot::cli
