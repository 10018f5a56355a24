// `ingot export --workload W --out DIR`: the best measured program of a workload as standalone C++ that checks
// itself (compile/export_cpp.h). The program is rebuilt from the config recorded with the measuring run, and must
// hash to the stored workload; its inputs are the ones that run measured with, its reference the interpreter's.
// With --schedule, the program of that schedule instead, built as `ingot run` builds it. With a GPU target (sm_80,
// sm_90, or the stored key of a GPU: gpu:DEVICE:sm_90) as CUDA (compile/export_cuda.h): the best measured on the GPU
// of that architecture (`ingot tune` with target.kind sm_80 or sm_90), or the named schedule.
#include <filesystem>
#include <iostream>
#include <tuple>

#include "cli/commands.h"
#include "codegen/pipeline.h"
#include "compile/export_cpp.h"
#include "compile/export_cuda.h"
#include "configs/flag_values.h"
#include "configs/run_config.h"
#include "interp/interpreter.h"
#include "interp/rounding_noise.h"
#include "results/database.h"
#include "tuner/candidate.h"
#include "tuner/tune_job.h"
#include "tuner/tuning_loop.h"
#include "workloads/registry.h"

namespace ingot::cli {

namespace {

// What both ways of choosing the program hand to the export.
struct ProgramToExport {
  LoopFunction function;
  TensorMap inputs;
  TensorMap reference;
  ExportTolerance tolerance;  // what the program was verified with
};

void print_written(const ExportedProgram& e, const std::vector<std::string>& written, const std::string& out) {
  // The text files come first; the data files, one per tensor, are summed up by folder.
  size_t text_files = written.size() - e.inputs.size() - e.reference.size();
  for (size_t n = 0; n < text_files; ++n) std::cout << "wrote " << written[n] << "\n";
  for (const auto& [folder, tensors] : {std::pair{"inputs", &e.inputs}, std::pair{"reference", &e.reference}}) {
    size_t bytes = 0;
    for (const auto& [name, tensor] : *tensors) bytes += tensor.num_bytes();
    std::cout << "wrote " << tensors->size() << (tensors->size() == 1 ? " file, " : " files, ") << bytes
              << " bytes, in " << (std::filesystem::path(out) / folder).string() << "\n";
  }
  std::cout << "build: cd " << out << " && " << e.build_command << "\n"
            << "run:   cd " << out << " && ./" << e.name
            << "  (checks every output against reference/; --repeat N times the kernel)\n";
}

}  // namespace

void add_export_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("export", "Write the best program of a workload as standalone C++ (or CUDA)");
  static std::string db = "ingot.db", workload, out, target, isa = "native", schedule, size = "default",
                     precision = "fp32", rtol = "1e-4", atol = "1e-5";
  static int threads = 0;
  static uint64_t seed = 1;
  cmd->add_option("--db", db, "Database file")->capture_default_str();
  cmd->add_option("--workload", workload, "Workload name or hash, or the ONNX file tuned")->required();
  cmd->add_option("--out", out, "Output directory")->required();
  cmd->add_option("--target", target,
                  "Target key (default: this machine's CPU target); sm_80 or sm_90: CUDA for that GPU (the best "
                  "tuned on a GPU of that architecture, or --schedule)");
  cmd->add_option("--threads", threads, "Threads of the CPU target, when --target is not given")->capture_default_str();
  cmd->add_option("--isa", isa, "ISA of the CPU target, when --target is not given (native, avx512, avx2, generic)")
      ->capture_default_str();
  cmd->add_option("--schedule", schedule,
                  "Export this schedule instead of the best measured one: a spec as `ingot run --schedule` takes "
                  "(strategy:global, a schedule JSON file, db:HASH, ...)");
  cmd->add_option("--size", size, "With --schedule: small, default or NAME=VALUE,... (as `ingot run --size`)")
      ->capture_default_str();
  cmd->add_option("--seed", seed, "With --schedule: the seed of the random inputs")->capture_default_str();
  cmd->add_option("--precision", precision, "With --schedule: fp32, or bf16 (as `ingot run --precision`)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd->add_option(
         "--rtol", rtol,
         "With --schedule: the exported check's relative tolerance (as `ingot run --rtol`); a measured program "
         "is checked with its run's measure.rtol")
      ->capture_default_str();
  cmd->add_option("--atol", atol,
                  "With --schedule: the exported check's absolute tolerance, scaled by the output's magnitude (as "
                  "`ingot run --atol`); a measured program is checked with its run's measure.atol")
      ->capture_default_str();
  cmd->callback([cmd] {
    const bool gpu_key = target.rfind("gpu:", 0) == 0;
    const bool gpu = is_gpu_arch(target) || gpu_key;
    // The architecture the CUDA is written for: a stored GPU key ends with it.
    const std::string arch = gpu_key ? gpu_key_arch(target) : target;
    if (gpu_key && !is_gpu_arch(arch))
      throw std::invalid_argument("--target " + target + ": a GPU key ends with sm_80 or sm_90");
    for (const char* flag : {"--size", "--seed", "--precision", "--rtol", "--atol"})
      if (cmd->count(flag) > 0 && schedule.empty())
        throw std::invalid_argument(
            std::string(flag) +
            " applies with --schedule; the best measured program "
            "is exported at the size, seed and precision it was measured with, and checks with its run's tolerance");
    ProgramToExport p;
    std::string program_isa = isa;  // the ISA the program was written (and measured) for
    if (!schedule.empty()) {
      // The flags first: a bad one is refused before the workload is built.
      std::tie(p.tolerance.rtol, p.tolerance.atol) = verification_tolerance(
          precision, number_flag("--rtol", rtol, 0, false), number_flag("--atol", atol, 0, false));
      ConfiguredWorkload w = command_line_workload(workload, size, cmd->count("--size") > 0, precision, isa);
      Schedule s = schedule_from_spec(schedule, w.program, gpu, isa, w.weights, db);
      p.function = lower_program(w.program, s);
      p.inputs = workload_inputs(w, seed);
      p.reference = interpret(w.program, p.inputs);
      p.tolerance.rounding_noise = rounding_noise(w.program, p.inputs, p.reference);
    } else {
      Database d = Database::open_existing(db);
      const std::string name = stored_workload_name(workload);
      std::string t =
          target.empty() ? cpu_target_key(threads, target_isa_key(isa)) : resolve_stored_target(d, name, target);
      // The fastest side by side where the tuner's end-of-run comparison overruled the least single median.
      std::optional<ChosenBest> chosen = choose_best(d, name, t);
      if (!chosen) throw std::runtime_error("no correct measurement of '" + name + "' on target '" + t + "' in " + db);
      const MeasuredCandidate* best = &chosen->least_median;
      auto run = d.run(best->measurement.run_id);
      if (!run) throw std::runtime_error("the run of the best measurement is missing from " + db);
      RunConfig config = parse_run_config(run->config_text, db + ": run " + std::to_string(run->id) + " config");
      // An ONNX workload is imported again from the absolute path the config recorded.
      ConfiguredWorkload w = configured_workload(config, best->candidate.workload_hash);
      if (workload_key(w.program) != best->candidate.workload_hash)
        throw std::runtime_error(
            "workload '" + w.name +
            "' no longer builds the program that was measured (this ingot builds a different program from the "
            "recorded config" +
            (config.workload.onnx.empty() ? "" : ", or " + config.workload.onnx + " changed") + ")");
      if (chosen->side_by_side_winner)
        std::cout << "candidate " << chosen->candidate_hash() << ": the fastest side by side in run "
                  << chosen->side_by_side->run_id << "\n";
      program_isa = config.target.isa;
      std::tie(p.tolerance.rtol, p.tolerance.atol) =
          verification_tolerance(config.workload.precision, config.measure.rtol, config.measure.atol);
      p.function = lower_program(w.program, Schedule::from_json(chosen->schedule_json()));
      // As the tuning loop builds them; the run's seed, not the config's, which `ingot tune --seed` overrides.
      p.inputs = workload_inputs(w, run->seed);
      p.reference = interpret(w.program, p.inputs);
      p.tolerance.rounding_noise = rounding_noise(w.program, p.inputs, p.reference);
    }
    ExportedProgram e = gpu ? export_cuda(p.function, std::move(p.inputs), std::move(p.reference), arch, p.tolerance)
                            : export_cpp(p.function, std::move(p.inputs), std::move(p.reference),
                                         isa_flags_for(target_isa(program_isa)), p.tolerance);
    print_written(e, write_exported_program(e, out), out);
  });
}

}  // namespace ingot::cli
