// `ingot run`: compiles a workload with a schedule for the CPU (or, with --gpu, for this machine's GPU), checks
// it against the reference interpreter, and times it (warm-up, repeats, median) next to nothing else.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "codegen/pipeline.h"
#include "interp/interpreter.h"
#include "ir/flops.h"
#include "lower/kernels.h"
#include "runtime/cuda_run.h"
#include "runtime/local_run.h"
#include "tuner/tune_job.h"

namespace ingot::cli {

void add_run_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("run", "Compile, verify against the interpreter and time a workload");
  static std::string workload = "matmul_bias_relu", size = "default";
  static std::vector<std::string> schedules = {"naive", "hand"};
  static int threads = 0;
  static uint64_t seed = 1;
  static double min_repeat_ms = 200;
  static bool gpu = false;
  static std::string isa = "native";
  cmd->add_option("--workload", workload, "Workload (see `ingot workloads`) or an ONNX model file (.onnx)")
      ->capture_default_str();
  cmd->add_option("--size", size, "small, default or NAME=VALUE,... (the default size with those parameters changed)")
      ->capture_default_str();
  cmd->add_option("--schedule", schedules,
                  "One or more of naive, hand, random:SEED, strategy:unfused|rules|subgraph|global, FILE.json")
      ->capture_default_str();
  cmd->add_option("--threads", threads, "OpenMP threads (0: all cores)")->capture_default_str();
  cmd->add_option("--seed", seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--min-repeat-ms", min_repeat_ms, "Time each schedule for at least this long")->capture_default_str();
  cmd->add_flag("--gpu", gpu, "Run on this machine's GPU (strategy schedules bind GPU blocks and threads)");
  cmd->add_option("--isa", isa,
                  "The CPU's ISA to write and compile code for: native (this CPU's), avx512, avx2 or generic "
                  "(strategy and random schedules plan with its vectors; compiled with its flags)")
      ->capture_default_str();
  cmd->callback([cmd] {
    const CpuIsa code_isa = target_isa(isa);
    if (!gpu && !host_runs(code_isa))
      throw std::invalid_argument("--isa " + isa + ": this CPU (" + cpu_isa_name(host_cpu_isa()) +
                                  ") cannot run that code; `ingot lower --isa " + isa + " --emit cpp` prints it");
    ConfiguredWorkload w = command_line_workload(workload, size, cmd->count("--size") > 0);
    const Program& program = w.program;
    TensorMap inputs = workload_inputs(w, seed);
    std::cout << "program " << program.name() << " (" << (is_onnx_file(workload) ? workload : size)
              << "): interpreting for the reference output...\n";
    TensorMap expected = interpret(program, inputs);
    double flops = double(program_flops(program));
    LocalRunOptions options;
    options.threads = threads;
    options.min_repeat_ms = min_repeat_ms;
    options.compile.flags = cpp_flags_for(code_isa);
    CudaRunOptions gpu_options;
    gpu_options.min_repeat_ms = min_repeat_ms;
    bool all_correct = true;
    for (const std::string& spec : schedules) {
      Schedule s = schedule_from_spec(spec, program, gpu, isa);
      bool correct = false;
      double median = 0, min = 0;
      size_t runs = 0;
      std::vector<Comparison> checks;
      if (gpu) {
        LoopFunction f = lower_program(program, s);
        CudaRunResult r = cuda_run(program, f, inputs, expected, gpu_options);
        KernelTraffic traffic = kernel_traffic(f);
        int max_registers = 0;
        for (const CudaKernelLaunch& k : r.kernels) max_registers = std::max(max_registers, k.registers);
        std::printf("%-18s %s  %5lld kernels  %8.2f MB moved  %d binaries, compile %.2fs  max %d registers  %s",
                    spec.c_str(), r.correct ? "correct" : "WRONG  ", static_cast<long long>(traffic.kernel_count()),
                    double(traffic.bytes_moved()) / 1e6, r.distinct_binaries, r.compile_seconds, max_registers,
                    r.device.c_str());
        if (r.kernels.size() == 1)
          std::printf("  grid %lld x %lld threads", static_cast<long long>(r.kernels[0].launch.num_blocks()),
                      static_cast<long long>(r.kernels[0].launch.threads_per_block()));
        correct = r.correct, median = r.statistics.median, min = r.statistics.min, runs = r.seconds.size();
        checks = r.checks;
      } else {
        LocalRunResult r = local_run(program, s, inputs, expected, options);
        KernelTraffic traffic = kernel_traffic(r.function);
        std::printf("%-18s %s  %5lld kernels  %8.2f MB moved  compile %.2fs%s", spec.c_str(),
                    r.correct ? "correct" : "WRONG  ", static_cast<long long>(traffic.kernel_count()),
                    double(traffic.bytes_moved()) / 1e6, r.library.compile_seconds,
                    r.library.cache_hit ? " (cached)" : "");
        correct = r.correct, median = r.statistics.median, min = r.statistics.min, runs = r.seconds.size();
        checks = r.checks;
      }
      all_correct &= correct;
      if (correct) {
        std::printf("  median %.3f ms  min %.3f ms  (%zu runs)", median * 1e3, min * 1e3, runs);
        if (flops > 0) std::printf("  %.1f GFLOP/s", flops / median * 1e-9);
      } else {
        for (const Comparison& c : checks)
          if (!c.ok) std::printf("  %s", c.message.c_str());
      }
      std::printf("\n");
    }
    if (!all_correct) throw std::runtime_error("a generated program did not match the interpreter");
  });
}

}  // namespace ingot::cli
