// Turns the --workload / --size / --schedule flags shared by several commands into a program and schedule.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

#include "cli/commands.h"
#include "interp/interpreter.h"
#include "results/database.h"
#include "space/hand_schedules.h"
#include "space/schedule_sampler.h"
#include "space/strategy_schedule.h"
#include "tuner/candidate.h"
#include "tuner/tune_job.h"
#include "workloads/registry.h"

namespace ingot::cli {

namespace {

// NAME=VALUE,NAME=VALUE,... with integer values, in order. Throws std::invalid_argument whose message is the first
// item that is not NAME=INTEGER.
std::vector<std::pair<std::string, int64_t>> name_values(const std::string& text) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t eq = item.find('=');
    size_t used = 0;
    int64_t value = 0;
    try {
      if (eq != std::string::npos && eq > 0) value = std::stoll(item.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || used != item.size() - eq - 1)
      throw std::invalid_argument(item);
    out.emplace_back(item.substr(0, eq), value);
  }
  return out;
}

// The schedule of the candidate whose hash starts with `prefix` in the database at `path` (opened read-only:
// nothing is written), when it was measured for this very program.
Schedule measured_schedule(const std::string& prefix, const Program& program, const std::string& path) {
  const std::string spec = "--schedule db:" + prefix;
  if (prefix.size() < 4) throw std::invalid_argument(spec + ": give at least 4 characters of a candidate's hash");
  std::vector<CandidateRecord> found = Database::open_existing(path).candidates_with_prefix(prefix);
  if (found.empty())
    throw std::invalid_argument(spec + ": no candidate in " + path + " has a hash starting with '" + prefix +
                                "' (`ingot history --db " + path + "` lists them; --db names another database)");
  if (found.size() > 1)
    throw std::invalid_argument(spec + ": several candidates in " + path + " start with '" + prefix + "' (" +
                                found[0].hash + ", " + found[1].hash + ", ...); give more of the hash");
  const CandidateRecord& candidate = found[0];
  if (candidate.workload_hash != workload_key(program))
    throw std::invalid_argument(spec + ": candidate " + candidate.hash + " was measured for another workload (" +
                                candidate.workload_hash + "), not program '" + program.name() + "' (" +
                                workload_key(program) + ") at this size");
  try {
    return Schedule::from_json(candidate.schedule_json);
  } catch (const ScheduleError& e) {
    throw std::invalid_argument(spec + ": the stored schedule does not read back: " + e.what());
  }
}

}  // namespace

WorkloadParams workload_size_params(const std::string& name, const std::string& size) {
  const WorkloadInfo* info = find_workload(name);
  if (!info) make_workload(name);  // throws, listing the known workloads
  if (size == "small") return info->small;
  if (size == "default") return {};
  // NAME=VALUE,NAME=VALUE: the default size with those parameters changed.
  WorkloadParams params;
  try {
    for (const auto& [parameter, value] : name_values(size)) params[parameter] = value;
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("--size must be small, default or NAME=VALUE[,NAME=VALUE...], not '" + size + "'");
  }
  return complete_workload_params(name, params);  // throws for an unknown parameter, naming the known ones
}

bool is_onnx_file(const std::string& workload) {
  std::string extension = std::filesystem::path(workload).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return extension == ".onnx";
}

ConfiguredWorkload command_line_workload(const std::string& workload, const std::string& size, bool size_given,
                                         const std::string& precision, const std::string& isa) {
  WorkloadConfig config;
  config.precision = precision;
  if (is_onnx_file(workload)) {
    if (size_given)
      throw std::invalid_argument("--size " + size + ": " + workload +
                                  " is an ONNX model, whose shapes are its file's; --size applies to the built-in "
                                  "workloads (`ingot workloads`)");
    config.onnx = workload;
  } else {
    config.name = workload;
    config.params = workload_size_params(workload, size);
  }
  return make_configured_workload(config, precision == "bf16" ? bf16_conv_channel_multiple(cpu_target_for(isa)) : 2);
}

std::string stored_workload_name(const std::string& workload) {
  return is_onnx_file(workload) ? std::filesystem::path(workload).stem().string() : workload;
}

CLI::Validator onnx_file_as_stored_name() {
  return CLI::Validator(
      [](std::string& workload) {
        workload = stored_workload_name(workload);
        return std::string();
      },
      "", "ONNX file as its stem");
}

TensorMap workload_inputs(const ConfiguredWorkload& workload, uint64_t seed) {
  TensorMap inputs = random_inputs(workload.program, seed, workload.input_ranges);
  for (const auto& [name, value] : workload.fixed_inputs) inputs.insert_or_assign(name, value);
  return inputs;
}

Target cpu_target_for(const std::string& isa) {
  Target cpu = resolve_target("cpu");
  const CpuIsa wanted = target_isa(isa);
  return wanted == cpu.cpu.isa ? cpu : with_cpu_isa(cpu, wanted);
}

Schedule schedule_from_spec(const std::string& spec, const Program& program, bool gpu, const std::string& isa,
                            const std::vector<std::string>& weights, const std::string& database) {
  if (spec == "naive") return Schedule();
  if (spec == "hand") return hand_schedule(program);
  if (spec.rfind("strategy:", 0) == 0) {
    FixedScheduleOptions options;
    options.gpu = gpu;
    options.weights = weights;
    // strategy:NAME:KNOB=VALUE,...: the fixed schedule with those knobs changed (docs/strategies.md, "Knobs").
    std::string strategy = spec.substr(9);
    if (size_t colon = strategy.find(':'); colon != std::string::npos) {
      std::vector<std::pair<std::string, int64_t>> knobs;
      try {
        knobs = name_values(strategy.substr(colon + 1));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("--schedule " + spec + ": knobs are KNOB=VALUE[,KNOB=VALUE...], not '" + e.what() +
                                    "'");
      }
      strategy.resize(colon);
      try {
        for (const auto& [knob, value] : knobs) {
          if (value != int(value)) throw std::invalid_argument("knob " + knob + ": " + std::to_string(value));
          set_knob(options, knob, int(value));
        }
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("--schedule " + spec + ": " + e.what());
      }
    }
    return make_strategy_program(program, strategy, gpu ? resolve_target("sm_90") : cpu_target_for(isa), options)
        .schedule;
  }
  if (spec.rfind("random:", 0) == 0) {
    uint64_t seed = 0;
    try {
      seed = std::stoull(spec.substr(7));
    } catch (const std::exception&) {
      throw std::invalid_argument("--schedule random:SEED needs a number, not '" + spec.substr(7) + "'");
    }
    std::mt19937_64 rng(seed);
    SamplerOptions options;
    options.simd_fp32_lanes = int(cpu_target_for(isa).cpu.simd_fp32_lanes);
    return sample_schedule(program, rng, options);
  }
  if (spec.rfind("db:", 0) == 0) return measured_schedule(spec.substr(3), program, database);
  std::ifstream in(spec);
  if (!in)
    throw std::invalid_argument("--schedule '" + spec +
                                "' is not naive, hand, random:SEED, strategy:NAME, db:HASH or a readable file");
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  // `ingot best --json` writes the schedule as the member "schedule" of its answer: that file replays it too.
  try {
    nlohmann::json root = nlohmann::json::parse(json);
    if (root.is_object() && root.contains("schedule") && root["schedule"].is_object()) json = root["schedule"].dump();
  } catch (const nlohmann::json::exception&) {
    // not JSON: from_json says so below, in its words
  }
  try {
    return Schedule::from_json(json);
  } catch (const ScheduleError& e) {
    throw std::invalid_argument(spec + ": " + e.what());
  }
}

}  // namespace ingot::cli
