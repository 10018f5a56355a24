// The ISA bench (docs/strategies.md, "AVX2 and AVX-512 forms"): the fixed strategy program of each paper model written
// and compiled for each CPU ISA this machine runs (AVX-512 and AVX2 on an AVX-512 machine), every program compiled and
// checked against the interpreter first, then timed in interleaved rounds (each round runs every program once for at
// least --min-ms), so that all forms see the same machine. Prints a Markdown table of medians.
// Usage: ingot_isa_bench [--models a,b] [--strategy global] [--size default|small] [--rounds N] [--min-ms MS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/strategies.h"
#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"
#include "compile/kernel_module.h"
#include "configs/run_config.h"
#include "interp/interpreter.h"
#include "runtime/local_run.h"
#include "space/strategy_schedule.h"
#include "tuner/tune_job.h"
#include "tuner/tuning_loop.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

struct Form {
  std::string model;
  CpuIsa isa;
  LoopFunction function;
  CompiledLibrary library;
  std::unique_ptr<KernelModule> module;
  std::vector<HostTensor> outputs;
  std::vector<HostTensor> packed;  // the weights in the layouts the program reads, packed once (pack_inputs)
  std::vector<const HostTensor*> in;
  std::vector<HostTensor*> out;
  std::vector<double> seconds;  // one per round: the mean of that round's runs
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

int run(int argc, char** argv) {
  std::vector<std::string> models{"lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"};
  std::string strategy = "global", size = "default";
  int rounds = 7;
  double min_ms = 300;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--models")
      models = split_list(value);
    else if (flag == "--strategy")
      strategy = value;
    else if (flag == "--size")
      size = value;
    else if (flag == "--rounds")
      rounds = std::stoi(value);
    else if (flag == "--min-ms")
      min_ms = std::stod(value);
    else
      throw std::invalid_argument("unknown flag " + flag);
  }
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::kAvx512, CpuIsa::kAvx2})
    if (host_runs(isa)) isas.push_back(isa);
  const Target host = resolve_target("cpu");
  std::printf("CPU: %s (%s), %lld cores; load average before: %s\n", cpu_target_key(0).c_str(),
              cpu_isa_name(host.cpu.isa), static_cast<long long>(host.cpu.cores), load_average().c_str());
  std::vector<std::unique_ptr<Form>> forms;
  std::vector<std::unique_ptr<TensorMap>> model_inputs;  // the forms point at them
  for (const std::string& model : models) {
    WorkloadParams params = size == "small" ? find_workload(model)->small : WorkloadParams{};
    // With its weights named, as `ingot run` has them: the fixed programs read them packed once before the runs.
    WorkloadConfig config;
    config.name = model;
    config.params = params;
    const ConfiguredWorkload workload = make_configured_workload(config);
    const Program& program = workload.program;
    FixedScheduleOptions options;
    options.weights = workload.weights;
    model_inputs.push_back(std::make_unique<TensorMap>(random_inputs(program, 1, workload.input_ranges)));
    const TensorMap& inputs = *model_inputs.back();
    std::fprintf(stderr, "%s: interpreting for the reference outputs...\n", model.c_str());
    TensorMap expected = interpret(program, inputs);
    for (CpuIsa isa : isas) {
      auto form = std::make_unique<Form>();
      form->model = model;
      form->isa = isa;
      Target target = isa == host.cpu.isa ? host : with_cpu_isa(host, isa);
      form->function = lower_program(program, make_strategy_program(program, strategy, target, options).schedule);
      CompileOptions compile;
      compile.flags = cpp_flags_for(isa);
      compile.timeout_seconds = 1800;
      std::fprintf(stderr, "%s %s: compiling (%s)...\n", model.c_str(), cpu_isa_name(isa), compile.flags.c_str());
      form->library = compile_cpp(cpp_source(form->function).source, compile);
      form->module = std::make_unique<KernelModule>(form->library.path, form->function);
      std::vector<const HostTensor*> in;
      for (const Buffer& b : form->function.inputs) in.push_back(&inputs.at(b->name));
      form->in = pack_inputs(form->function, in, form->packed);
      for (const Buffer& b : form->function.outputs) form->outputs.emplace_back(b->dtype, b->shape);
      for (HostTensor& t : form->outputs) form->out.push_back(&t);
      form->module->run(form->in, form->out);
      for (size_t n = 0; n < form->outputs.size(); ++n) {
        const HostTensor& want = expected.at(form->function.outputs[n]->name);
        Comparison check = compare(form->outputs[n], want, 1e-4, 1e-5 * magnitude(want));
        if (!check.ok) throw std::runtime_error(model + " " + cpu_isa_name(isa) + ": wrong answer: " + check.message);
      }
      forms.push_back(std::move(form));
    }
  }
  using clock = std::chrono::steady_clock;
  for (int round = 0; round < rounds; ++round) {
    for (auto& form : forms) {
      form->module->run(form->in, form->out);  // warm-up
      int runs = 0;
      const auto start = clock::now();
      double elapsed = 0;
      while (runs < 3 || elapsed * 1e3 < min_ms) {
        form->module->run(form->in, form->out);
        ++runs;
        elapsed = std::chrono::duration<double>(clock::now() - start).count();
      }
      form->seconds.push_back(elapsed / runs);
    }
    std::fprintf(stderr, "round %d of %d done\n", round + 1, rounds);
  }
  std::printf("load average after: %s\n\n", load_average().c_str());
  std::printf("| model (%s, %s size) |", strategy.c_str(), size.c_str());
  for (CpuIsa isa : isas) std::printf(" %s ms |", cpu_isa_name(isa));
  if (isas.size() == 2) std::printf(" %s / %s |", cpu_isa_name(isas[1]), cpu_isa_name(isas[0]));
  std::printf("\n|---|");
  for (size_t n = 0; n < isas.size() + (isas.size() == 2); ++n) std::printf("---|");
  std::printf("\n");
  for (size_t f = 0; f < forms.size(); f += isas.size()) {
    std::printf("| %s |", forms[f]->model.c_str());
    for (size_t n = 0; n < isas.size(); ++n) std::printf(" %.4g |", median(forms[f + n]->seconds) * 1e3);
    if (isas.size() == 2) std::printf(" %.2fx |", median(forms[f + 1]->seconds) / median(forms[f]->seconds));
    std::printf("\n");
  }
  std::printf("\nmedian of %d rounds, each the mean of >= %.0f ms of runs after a warm-up run\n", rounds, min_ms);
  return 0;
}

}  // namespace
}  // namespace ingot

int main(int argc, char** argv) {
  try {
    return ingot::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ingot_isa_bench: %s\n", e.what());
    return 1;
  }
}
