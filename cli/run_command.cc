// `ingot run`: compiles a workload with a schedule for the CPU, checks it against the reference
// interpreter, and times it (warm-up, repeats, median) next to nothing else.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "codegen/kernels.h"
#include "ir/flops.h"
#include "ir/interpreter.h"
#include "runtime/local_run.h"

namespace ingot::cli {

void add_run_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("run", "Compile, verify against the interpreter and time a workload");
  static std::string workload = "matmul_bias_relu", size = "default";
  static std::vector<std::string> schedules = {"naive", "hand"};
  static int threads = 0;
  static uint64_t seed = 1;
  static double min_repeat_ms = 200;
  cmd->add_option("--workload", workload, "Workload (see `ingot workloads`)")->capture_default_str();
  cmd->add_option("--size", size, "small or default")->capture_default_str();
  cmd->add_option("--schedule", schedules,
                  "One or more of naive, hand, random:SEED, strategy:unfused|rules|subgraph|global, FILE.json")
      ->capture_default_str();
  cmd->add_option("--threads", threads, "OpenMP threads (0: all cores)")->capture_default_str();
  cmd->add_option("--seed", seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--min-repeat-ms", min_repeat_ms, "Time each schedule for at least this long")->capture_default_str();
  cmd->callback([] {
    Program program = workload_program(workload, size);
    TensorMap inputs =
        random_inputs(program, seed, workload_input_ranges(workload, workload_size_params(workload, size)));
    std::cout << "program " << program.name() << " (" << size << "): interpreting for the reference output...\n";
    TensorMap expected = interpret(program, inputs);
    double flops = double(program_flops(program));
    LocalRunOptions options;
    options.threads = threads;
    options.min_repeat_ms = min_repeat_ms;
    bool all_correct = true;
    for (const std::string& spec : schedules) {
      Schedule s = schedule_from_spec(spec, program);
      LocalRunResult r = local_run(program, s, inputs, expected, options);
      all_correct &= r.correct;
      KernelTraffic traffic = kernel_traffic(r.function);
      std::printf("%-18s %s  %5lld kernels  %8.2f MB moved  compile %.2fs%s", spec.c_str(),
                  r.correct ? "correct" : "WRONG  ", static_cast<long long>(traffic.kernel_count()),
                  double(traffic.bytes_moved()) / 1e6, r.library.compile_seconds,
                  r.library.cache_hit ? " (cached)" : "");
      if (r.correct) {
        std::printf("  median %.3f ms  min %.3f ms  (%zu runs)", r.median_seconds * 1e3, r.min_seconds * 1e3,
                    r.seconds.size());
        if (flops > 0) std::printf("  %.1f GFLOP/s", flops / r.median_seconds * 1e-9);
      } else {
        for (const Comparison& c : r.checks)
          if (!c.ok) std::printf("  %s", c.message.c_str());
      }
      std::printf("\n");
    }
    if (!all_correct) throw std::runtime_error("a generated program did not match the interpreter");
  });
}

}  // namespace ingot::cli
