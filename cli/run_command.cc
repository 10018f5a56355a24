// `ingot run`: compiles a workload with a schedule for the CPU (or, with --gpu, for this machine's GPU), checks
// it against the reference interpreter, and times it (warm-up, repeats, median) next to nothing else.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>

#include "cli/commands.h"
#include "codegen/pipeline.h"
#include "configs/flag_values.h"
#include "interp/interpreter.h"
#include "interp/rounding_noise.h"
#include "ir/flops.h"
#include "lower/kernels.h"
#include "runtime/builder.h"
#include "runtime/cuda_run.h"
#include "runtime/local_run.h"
#include "runtime/runner.h"
#include "runtime/side_by_side.h"
#include "space/hand_schedules.h"
#include "tuner/tune_job.h"
#include "workloads/bf16_products.h"

namespace ingot::cli {

namespace {

// The profile of one run: its stage intervals, slowest first (the first `top`, or all when 0), each with its time,
// share of the intervals' total, GFLOP/s, share of the roofline (the time at the target's peak FLOP/s or bandwidth,
// whichever binds, over the time measured) and the buffers it stores.
std::string format_profile(const LocalRunResult& r, const Target& cpu, int threads, size_t top) {
  const double used = threads > 0 && cpu.cpu.cores > 0 ? std::min(1.0, double(threads) / double(cpu.cpu.cores)) : 1.0;
  const double peak = cpu.peak_fp32_gflops * used * 1e9, bandwidth = cpu.memory_bandwidth_gb_s * 1e9;
  double total = 0;
  for (double t : r.interval_seconds) total += t;
  std::vector<size_t> order(r.intervals.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return r.interval_seconds[a] > r.interval_seconds[b]; });
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "  profile: %zu stage intervals in %lld kernels, %.3f ms in all (median of each over the runs); "
                "roofline at %.0f GFLOP/s and %.1f GB/s\n",
                r.intervals.size(), static_cast<long long>(kernel_traffic(r.function).kernel_count()), total * 1e3,
                peak * 1e-9, bandwidth * 1e-9);
  out += line;
  std::snprintf(line, sizeof line, "  %4s %6s %9s %10s %6s %9s %8s %9s  %s\n", "rank", "kernel", "interval", "ms",
                "share", "GFLOP/s", "roofline", "MB", "stores");
  out += line;
  double shown = 0;
  for (size_t rank = 0; rank < order.size() && (top == 0 || rank < top); ++rank) {
    const StageInterval& interval = r.intervals[order[rank]];
    const double seconds = r.interval_seconds[order[rank]];
    shown += seconds;
    const double roofline = std::max(double(interval.flops) / peak, double(interval.bytes) / bandwidth);
    std::string stores;
    for (size_t n = 0; n < interval.stores.size() && n < 3; ++n) stores += (n ? ", " : "") + interval.stores[n];
    if (interval.stores.size() > 3) stores += ", ... (" + std::to_string(interval.stores.size()) + ")";
    std::snprintf(line, sizeof line, "  %4zu %6zu %9zu %10.4f %5.1f%% %9.1f %7.1f%% %9.2f  %s\n", rank + 1,
                  interval.kernel, order[rank], seconds * 1e3, total > 0 ? 100 * seconds / total : 0.0,
                  seconds > 0 ? double(interval.flops) / seconds * 1e-9 : 0.0,
                  seconds > 0 ? 100 * roofline / seconds : 0.0, double(interval.bytes) * 1e-6, stores.c_str());
    out += line;
  }
  if (shown < total) {
    std::snprintf(line, sizeof line, "  %4s %6s %9s %10.4f %5.1f%%  (the other %zu intervals)\n", "", "", "",
                  (total - shown) * 1e3, 100 * (total - shown) / total, order.size() - std::min(order.size(), top));
    out += line;
  }
  if (r.statistics.median > total) {
    std::snprintf(line, sizeof line,
                  "  %4s %6s %9s %10.4f  outside the intervals (starting and ending parallel regions)\n", "", "", "",
                  (r.statistics.median - total) * 1e3);
    out += line;
  }
  return out;
}

std::string side_by_side_table(const std::vector<std::vector<Measurement>>& timed,
                               const std::vector<std::pair<std::string, Schedule>>& schedules) {
  std::string out = "side by side, " + std::to_string(timed.size()) +
                    " interleaved rounds (median of each schedule's round medians; speed-up: median of the paired "
                    "ratios to the first schedule in the same round):\n";
  char line[256];
  for (size_t c = 0; c < schedules.size(); ++c) {
    std::optional<double> median = median_of_rounds(timed, c);
    std::snprintf(line, sizeof line, "  %-18s ", schedules[c].first.c_str());
    out += line;
    if (median) {
      std::snprintf(line, sizeof line, "%10.3f ms", *median * 1e3);
      out += line;
    } else {
      out += "  wrong in a round";
    }
    if (std::optional<double> speedup = paired_speedup(timed, 0, c); speedup && c > 0) {
      std::snprintf(line, sizeof line, "  %.3fx", *speedup);
      out += line;
    }
    out += "\n";
  }
  return out;
}

// Without --schedule: the naive lowering, the hand schedule where the workload has one, and the fixed `global`
// schedule, so that any workload runs and is compared with its naive form.
std::vector<std::string> default_schedules(const Program& program) {
  std::vector<std::string> specs = {"naive"};
  try {
    hand_schedule(program);
    specs.push_back("hand");
  } catch (const std::invalid_argument&) {
  }
  specs.push_back("strategy:global");
  return specs;
}

// Per output of the program: how far the bf16 program's reference is from the f32 program's on the same inputs.
std::string bf16_error_text(const Program& program, const TensorMap& f32, const TensorMap& bf16) {
  std::string out;
  char line[256];
  for (const Tensor& output : program.outputs()) {
    const std::string& name = output->name;
    const HostTensor &expected = f32.at(name), &got = bf16.at(name);
    double worst = 0, sum = 0, largest = 0;
    for (int64_t i = 0; i < expected.num_elements(); ++i) {
      const double error = std::fabs(got.get(i) - expected.get(i));
      worst = std::max(worst, error);
      sum += error;
      largest = std::max(largest, std::fabs(expected.get(i)));
    }
    std::snprintf(line, sizeof line,
                  "bf16 against the fp32 interpreter, %s: max |error| %.3g (%.3g of max |fp32 value| %.3g), mean "
                  "|error| %.3g\n",
                  name.c_str(), worst, largest > 0 ? worst / largest : 0.0, largest,
                  expected.num_elements() > 0 ? sum / double(expected.num_elements()) : 0.0);
    out += line;
  }
  return out;
}

}  // namespace

void add_run_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("run", "Compile, verify against the interpreter and time a workload");
  static std::string workload = "matmul_bias_relu", size = "default";
  static std::vector<std::string> schedules;
  static int threads = 0;
  static uint64_t seed = 1;
  static double min_repeat_ms = 200;
  static bool gpu = false;
  static std::string isa = "native";
  static bool profile = false;
  static int top = 15;
  static int rounds = 1;
  static std::string rtol = "1e-4", atol = "1e-5";
  static std::string database = "ingot.db";
  static std::string precision = "fp32";
  cmd->add_option("--workload", workload, "Workload (see `ingot workloads`) or an ONNX model file (.onnx)")
      ->capture_default_str();
  cmd->add_option("--size", size, "small, default or NAME=VALUE,... (the default size with those parameters changed)")
      ->capture_default_str();
  cmd->add_option(
      "--schedule", schedules,
      "One or more of naive, hand, random:SEED, strategy:unfused|rules|subgraph|global (with :KNOB=VALUE,... "
      "to change knobs of the fixed schedule), db:HASH (a candidate measured in --db), FILE.json (a schedule, or "
      "`ingot best --json`'s answer) (default: naive, hand where the workload has one, strategy:global)");
  cmd->add_option("--db", database, "The database that --schedule db:HASH reads (read only)")->capture_default_str();
  cmd->add_option("--threads", threads, "OpenMP threads (0: all cores)")->capture_default_str();
  cmd->add_option("--seed", seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--min-repeat-ms", min_repeat_ms, "Time each schedule for at least this long")->capture_default_str();
  cmd->add_flag("--gpu", gpu, "Run on this machine's GPU (strategy schedules bind GPU blocks and threads)");
  cmd->add_option("--isa", isa,
                  "The CPU's ISA to write and compile code for: native (this CPU's), avx512, avx2 or generic "
                  "(strategy and random schedules plan with its vectors; compiled with its flags)")
      ->capture_default_str();
  cmd->add_option("--rtol", rtol,
                  "Verification: relative tolerance per element (as measure.rtol: |got - expected| <= atol * max(1, "
                  "max |expected|) + rtol * |expected|, + 4 times the output's f32 rounding noise, measured when a "
                  "program fails without it, unless --rtol or --atol is given)")
      ->capture_default_str();
  cmd->add_option("--atol", atol,
                  "Verification: absolute tolerance, scaled by the output's magnitude (as measure.atol)")
      ->capture_default_str();
  cmd->add_flag("--profile", profile,
                "Also time each stage interval (the stages between two barriers) and print where the time goes: "
                "milliseconds, share, GFLOP/s and share of this CPU's roofline (CPU only)");
  cmd->add_option("--top", top, "With --profile: print this many intervals, the slowest first (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--rounds", rounds,
                  "Time the schedules side by side: after the first pass, this many interleaved rounds, each timing "
                  "every correct schedule once (round r starts at the r-th), then each one's median over the rounds "
                  "and its paired speed-up over the first schedule (CPU only; 1: no rounds)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--precision", precision,
                  "fp32, or bf16: the dense layers' weights and their products in bf16, summed in f32 (needs AVX-512 "
                  "BF16; the output's error against the fp32 interpreter is printed)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd->callback([cmd] {
    if (rounds > 1 && gpu) throw std::invalid_argument("--rounds times CPU programs; it does not combine with --gpu");
    if (profile && gpu) throw std::invalid_argument("--profile times CPU programs; it does not combine with --gpu");
    const auto [rtol_value, atol_value] =
        verification_tolerance(precision, number_flag("--rtol", rtol, 0, false), number_flag("--atol", atol, 0, false));
    const CpuIsa code_isa = target_isa(isa);
    if (!gpu && !host_runs(code_isa))
      throw std::invalid_argument("--isa " + isa + ": this CPU (" + cpu_isa_name(host_cpu_isa()) +
                                  ") cannot run that code; `ingot lower --isa " + isa + " --emit cpp` prints it");
    const bool bf16 = precision == "bf16";
    if (bf16 && !gpu) check_bf16_precision(code_isa, "--precision bf16");
    ConfiguredWorkload f32 = command_line_workload(workload, size, cmd->count("--size") > 0);
    TensorMap f32_inputs = workload_inputs(f32, seed), inputs = f32_inputs;
    ConfiguredWorkload w = f32;
    if (bf16) {
      // The f32 run's inputs, its weights rounded: the error below is bf16's alone.
      Bf16Program rewritten = bf16_products(f32.program, f32.weights, bf16_conv_channel_multiple(cpu_target_for(isa)));
      inputs = bf16_inputs(rewritten, f32_inputs);
      w = bf16_workload(f32, rewritten);
    }
    const Program& program = w.program;
    if (schedules.empty()) schedules = default_schedules(program);
    std::cout << "program " << program.name() << " (" << (is_onnx_file(workload) ? workload : size)
              << "): interpreting for the reference output...\n";
    TensorMap expected = interpret(program, inputs, {.outputs_only = true});
    if (bf16)
      std::cout << bf16_error_text(f32.program, interpret(f32.program, f32_inputs, {.outputs_only = true}), expected);
    // The f32 program's: a bf16 program's padded channels (bf16_products) add products of zeros, not work.
    double flops = double(program_flops(f32.program));
    LocalRunOptions options;
    options.threads = threads;
    options.min_repeat_ms = min_repeat_ms;
    options.compile.flags = cpp_flags_for(code_isa);
    options.profile = profile;
    options.rtol = rtol_value;
    options.atol = atol_value;
    CudaRunOptions gpu_options;
    gpu_options.min_repeat_ms = min_repeat_ms;
    gpu_options.rtol = rtol_value;
    gpu_options.atol = atol_value;
    // Measured once a program fails the check without it, since it takes another interpretation
    // (interp/rounding_noise.h): a deep model's correct programs may differ from the interpreter by more than rtol and
    // atol allow. Not for a failure that no noise explains: an output of another shape, or NaNs alone.
    // Given --rtol or --atol are the whole rule.
    bool noise_decided = cmd->count("--rtol") > 0 || cmd->count("--atol") > 0;
    auto allow_rounding_noise = [&](const std::vector<Comparison>& checks) {
      if (noise_decided) return false;
      for (const Comparison& c : checks)
        if (!c.ok && (c.first_bad_index < 0 || c.max_abs_error == 0)) return false;
      std::cout << "interpreting again with sums in double, for the outputs' f32 rounding noise...\n";
      options.rounding_noise = gpu_options.rounding_noise = rounding_noise(program, inputs, expected);
      std::cout << "rounding noise (allowed " << kRoundingNoiseFactor << " times besides rtol and atol):";
      for (const auto& [name, noise] : options.rounding_noise) std::printf(" %s %.3g", name.c_str(), noise);
      std::cout << std::endl;
      noise_decided = true;
      return true;
    };
    bool all_correct = true;
    std::vector<std::pair<std::string, Schedule>> correct_schedules;
    for (const std::string& spec : schedules) {
      Schedule s = schedule_from_spec(spec, program, gpu, isa, w.weights, database);
      bool correct = false;
      double median = 0, min = 0;
      size_t runs = 0;
      std::vector<Comparison> checks;
      std::string profile_table;
      if (gpu) {
        LoopFunction f = lower_program(program, s);
        CudaRunResult r = cuda_run(program, f, inputs, expected, gpu_options);
        if (!r.correct && allow_rounding_noise(r.checks)) r = cuda_run(program, f, inputs, expected, gpu_options);
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
        if (!r.correct && allow_rounding_noise(r.checks)) r = local_run(program, s, inputs, expected, options);
        KernelTraffic traffic = kernel_traffic(r.function);
        std::printf("%-18s %s  %5lld kernels  %8.2f MB moved  compile %.2fs%s", spec.c_str(),
                    r.correct ? "correct" : "WRONG  ", static_cast<long long>(traffic.kernel_count()),
                    double(traffic.bytes_moved()) / 1e6, r.library.compile_seconds,
                    r.library.cache_hit ? " (cached)" : "");
        if (!r.function.packed_inputs.empty())
          std::printf("  %zu input%s packed once in %.2f ms (untimed)", r.function.packed_inputs.size(),
                      r.function.packed_inputs.size() == 1 ? "" : "s", r.pack_seconds * 1e3);
        correct = r.correct, median = r.statistics.median, min = r.statistics.min, runs = r.seconds.size();
        checks = r.checks;
        if (profile && r.correct) profile_table = format_profile(r, cpu_target_for(isa), threads, size_t(top));
        if (r.correct) correct_schedules.emplace_back(spec, s);
      }
      all_correct &= correct;
      if (correct) {
        std::printf("  median %.3f ms  min %.3f ms  (%zu runs)", median * 1e3, min * 1e3, runs);
        if (flops > 0) std::printf("  %.1f GFLOP/s", flops / median * 1e-9);
      } else {
        for (const Comparison& c : checks)
          if (!c.ok) std::printf("  %s", c.message.c_str());
      }
      std::printf("\n%s", profile_table.c_str());
    }
    if (rounds > 1 && correct_schedules.size() > 1) {
      // Built again (from the kernel cache) and measured by a runner: after the first round the schedules take turns
      // call by call in one child, so that each round's ratios meet the same moments of the machine's speed.
      BuilderOptions builder_options;
      builder_options.compile = options.compile;
      std::vector<BuildInput> builds;
      for (const auto& [spec, s] : correct_schedules) builds.emplace_back(program, s);
      const std::vector<BuildResult> built = Builder(builder_options).build(builds);
      RunnerOptions runner_options;
      runner_options.threads = options.threads;
      runner_options.warmup_runs = options.warmup_runs;
      runner_options.min_repeat_ms = options.min_repeat_ms;
      runner_options.min_repeats = options.min_repeats;
      runner_options.max_repeats = options.max_repeats;
      runner_options.rtol = options.rtol;
      runner_options.atol = options.atol;
      runner_options.rounding_noise = options.rounding_noise;
      const Runner runner(program, inputs, expected, runner_options);
      std::cout << side_by_side_table(measure_side_by_side(runner, built, rounds), correct_schedules);
    }
    if (!all_correct) throw std::runtime_error("a generated program did not match the interpreter");
  });
}

}  // namespace ingot::cli
