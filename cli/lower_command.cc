// `ingot lower`: prints what lowering makes of a workload and a schedule: loop IR, C++ or CUDA source.
#include <iostream>

#include "cli/commands.h"
#include "codegen/pipeline.h"

namespace ingot::cli {

void add_lower_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("lower", "Print the loop IR or generated source of a workload");
  static std::string workload = "matmul_bias_relu", size = "default", schedule = "naive", emit = "loop", isa = "native";
  static std::string database = "ingot.db";
  static bool dump_passes = false;
  static std::string precision = "fp32";
  cmd->add_option("--workload", workload, "Workload (see `ingot workloads`) or an ONNX model file (.onnx)")
      ->capture_default_str();
  cmd->add_option("--size", size, "small, default or NAME=VALUE,... (the default size with those parameters changed)")
      ->capture_default_str();
  cmd->add_option("--schedule", schedule,
                  "naive, hand, random:SEED, strategy:NAME, db:HASH (a candidate measured in --db) or a schedule JSON "
                  "file (or `ingot best --json`'s answer)")
      ->capture_default_str();
  cmd->add_option("--db", database, "The database that --schedule db:HASH reads (read only)")->capture_default_str();
  cmd->add_option("--isa", isa,
                  "The CPU's ISA that strategy and random schedules plan for: native (this CPU's), avx512, avx2 or "
                  "generic")
      ->capture_default_str();
  cmd->add_option("--precision", precision,
                  "fp32, or bf16: the program whose dense layers multiply bf16 (as `precision: bf16` in a config)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--emit", emit, "loop, cpp, cuda, schedule or program")
      ->check(CLI::IsMember({"loop", "cpp", "cuda", "schedule", "program"}))
      ->capture_default_str();
  cmd->add_flag("--dump-passes", dump_passes,
                "Print the loop IR after each pass of codegen's pipeline before the output (loop: lower; cpp: lower, "
                "merge_parallel_stages; cuda: lower, split_kernels)");
  cmd->callback([cmd] {
    ConfiguredWorkload w = command_line_workload(workload, size, cmd->count("--size") > 0, precision, isa);
    const Program& program = w.program;
    Schedule s = schedule_from_spec(schedule, program, emit == "cuda", isa, w.weights, database);
    if (emit == "program") {
      std::cout << program.to_string();
      return;
    }
    if (emit == "schedule") {
      std::cout << s.to_json() << "\n";
      return;
    }
    PipelineOptions options;
    if (dump_passes) options.dump_after_each_pass = &std::cout;
    if (emit == "loop")
      std::cout << to_string(lower_program(program, s, options));
    else if (emit == "cpp")
      std::cout << compile_to_cpp_source(program, s, options).source;
    else
      for (const std::string& source : compile_to_cuda_sources(program, s, options)) std::cout << source;
  });
}

}  // namespace ingot::cli
