#include "configs/run_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/target.h"
#include "compile/cpp_compiler.h"
#include "runtime/local_run.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

// The repository root (INGOT_SOURCE_DIR, absolute: configs store ONNX paths absolute).
std::filesystem::path repo_root() { return std::filesystem::path(INGOT_SOURCE_DIR); }

// Lines joined with newlines, so that a test reads like the file it stands for and line numbers are visible.
std::string yaml(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

// The message parse_run_config throws for text named "x.yaml", or "<no error>".
std::string error_of(const std::string& text) {
  try {
    parse_run_config(text, "x.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

const std::string kMinimal = yaml({"workload:", "  name: mlp", "budget:", "  trials: 8"});

TEST(RunConfig, DefaultsApply) {
  RunConfig c = parse_run_config(kMinimal, "minimal.yaml");
  RunConfig expected;
  expected.workload.name = "mlp";
  expected.budget.trials = 8;
  EXPECT_EQ(c, expected);
  EXPECT_TRUE(c.workload.params.empty());
  EXPECT_EQ(c.target.kind, "cpu");
  EXPECT_EQ(c.target.threads, 0);
  EXPECT_EQ(c.budget.minutes, 0);
  EXPECT_EQ(c.seed, 0u);
  EXPECT_EQ(c.database, "ingot.db");
  EXPECT_EQ(c.search.strategy, "evolutionary");
  EXPECT_EQ(c.search.fusion, "global");
  EXPECT_EQ(c.search.cost_model, "xgboost");
  EXPECT_EQ(c.search.batch, 0);
  // The measurement and compiler defaults are those of the in-process path, so both measure alike.
  const LocalRunOptions local;
  EXPECT_EQ(c.measure.warmup_runs, local.warmup_runs);
  EXPECT_EQ(c.measure.min_repeat_ms, local.min_repeat_ms);
  EXPECT_EQ(c.measure.min_repeats, local.min_repeats);
  EXPECT_EQ(c.measure.max_repeats, local.max_repeats);
  EXPECT_EQ(c.measure.rtol, local.rtol);
  EXPECT_EQ(c.measure.atol, local.atol);
  const CompileOptions compile;
  EXPECT_EQ(c.target.compiler, compile.compiler);
  EXPECT_EQ(c.target.flags, "");  // the compiler driver's own default_cpp_flags()
  EXPECT_EQ(c.measure.build_timeout_s, compile.timeout_seconds);
}

TEST(RunConfig, EveryKeyIsRead) {
  RunConfig c = parse_run_config(yaml({
                                     "workload:",
                                     "  name: lstm",
                                     "  params: {layers: 2, steps: 5}",
                                     "precision: bf16",
                                     "target:",
                                     "  kind: cpu",
                                     "  threads: 4",
                                     "  compiler: ccache g++",
                                     "  flags: -O2 -fopenmp -fPIC -shared",
                                     "budget:",
                                     "  trials: 10",
                                     "  minutes: 2.5",
                                     "seed: 42",
                                     "database: out/results.db",
                                     "measure:",
                                     "  warmup_runs: 0",
                                     "  min_repeat_ms: 20",
                                     "  min_repeats: 2",
                                     "  max_repeats: 50",
                                     "  build_timeout_s: 30",
                                     "  run_timeout_s: 7.5",
                                     "  build_workers: 3",
                                     "  rtol: 1e-3",
                                     "  atol: 0.002",
                                     "  side_by_side: 5",
                                     "  side_by_side_rounds: 7",
                                     "search:",
                                     "  strategy: random",
                                     "  fusion: rules",
                                     "  cost_model: none",
                                     "  batch: 6",
                                     "  population: 32",
                                     "  generations: 3",
                                     "  mutation_probability: 0.5",
                                     "  epsilon: 0.25",
                                     "  scope: tasks",
                                 }),
                                 "all.yaml");
  EXPECT_EQ(c.workload.name, "lstm");
  EXPECT_EQ(c.workload.params, (WorkloadParams{{"layers", 2}, {"steps", 5}}));
  EXPECT_EQ(c.workload.precision, "bf16");
  EXPECT_EQ(c.search.fusion, "rules");
  EXPECT_EQ(c.search.cost_model, "none");
  EXPECT_EQ(c.search.batch, 6);
  EXPECT_EQ(c.search.population, 32);
  EXPECT_EQ(c.search.generations, 3);
  EXPECT_EQ(c.search.mutation_probability, 0.5);
  EXPECT_EQ(c.search.epsilon, 0.25);
  EXPECT_EQ(c.search.scope, "tasks");
  EXPECT_EQ(c.target.threads, 4);
  EXPECT_EQ(c.target.compiler, "ccache g++");
  EXPECT_EQ(c.target.flags, "-O2 -fopenmp -fPIC -shared");
  EXPECT_EQ(c.budget.trials, 10);
  EXPECT_EQ(c.budget.minutes, 2.5);
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.database, "out/results.db");
  EXPECT_EQ(c.measure.warmup_runs, 0);
  EXPECT_EQ(c.measure.min_repeat_ms, 20);
  EXPECT_EQ(c.measure.min_repeats, 2);
  EXPECT_EQ(c.measure.max_repeats, 50);
  EXPECT_EQ(c.measure.build_timeout_s, 30);
  EXPECT_EQ(c.measure.run_timeout_s, 7.5);
  EXPECT_EQ(c.measure.build_workers, 3);
  EXPECT_EQ(c.measure.rtol, 1e-3);
  EXPECT_EQ(c.measure.atol, 0.002);
  EXPECT_EQ(c.measure.side_by_side, 5);
  EXPECT_EQ(c.measure.side_by_side_rounds, 7);
  // Every key is set to a non-default value above, so the round trip checks every key's formatting.
  EXPECT_EQ(parse_run_config(format_run_config(c), "formatted"), c);
}

// workload.size: small starts the parameters left out from the workload's small size (as `ingot run --size small`),
// and the parsed config names every parameter, so its workload is the same one however it was written.
TEST(RunConfig, SmallSizeStartsTheParametersFromTheWorkloadsSmallOne) {
  WorkloadParams small = find_workload("lstm")->small;
  ASSERT_FALSE(small.empty());
  RunConfig c = parse_run_config("workload: {name: lstm, size: small, params: {steps: 7}}\nbudget: {trials: 1}\n", "x");
  WorkloadParams expected = small;
  expected["steps"] = 7;
  EXPECT_EQ(c.workload.params, expected);
  EXPECT_EQ(c.workload.size, "small");
  EXPECT_EQ(parse_run_config(format_run_config(c), "formatted"), c);
  EXPECT_EQ(parse_run_config("workload: {name: lstm}\nbudget: {trials: 1}\n", "x").workload.params, WorkloadParams{});
  EXPECT_EQ(error_of("workload: {name: lstm, size: tiny}\nbudget: {trials: 1}\n"),
            "x.yaml:1:30: workload.size: unknown size 'tiny' (known: small, default)");
}

TEST(RunConfig, FormatRoundTripsDefaultsAndOddStrings) {
  RunConfig c = parse_run_config(kMinimal, "minimal.yaml");
  EXPECT_EQ(parse_run_config(format_run_config(c), "formatted"), c);
  c.database = "null";  // would read back as a YAML null if written unquoted
  c.target.compiler = "";
  c.target.flags = "- '#x: y";
  EXPECT_EQ(parse_run_config(format_run_config(c), "formatted"), c);
}

// target.kind takes the built-in targets' names; whether a run can measure on one is the tuner's to say
// (tuner/tune_job.h refuses the GPUs).
TEST(RunConfig, TargetKindsAreTheBuiltInTargets) {
  for (const std::string& name : builtin_target_names())
    EXPECT_EQ(parse_run_config(kMinimal + "target: {kind: " + name + "}\n", "x.yaml").target.kind, name);
}

TEST(RunConfig, ShippedConfigsLoad) {
  const std::filesystem::path configs = repo_root() / "configs";
  RunConfig quick = load_run_config((configs / "quickstart.yaml").string());
  EXPECT_EQ(quick.workload.name, "mlp");
  EXPECT_EQ(quick.workload.params, (WorkloadParams{{"batch", 32}, {"in", 256}, {"hidden", 512}, {"out", 256}}));
  EXPECT_EQ(quick.budget.trials, 24);
  EXPECT_GT(quick.budget.minutes, 0);

  RunConfig mlp = load_run_config((configs / "mlp.yaml").string());
  EXPECT_EQ(mlp.workload.name, "mlp");
  EXPECT_EQ(complete_workload_params("mlp", mlp.workload.params), complete_workload_params("mlp", {}));
  EXPECT_EQ(mlp.budget.trials, 64);

  RunConfig lstm = load_run_config((configs / "lstm.yaml").string());
  EXPECT_EQ(lstm.workload.name, "lstm");
  EXPECT_EQ(lstm.workload.params, (WorkloadParams{{"layers", 10}, {"steps", 100}, {"hidden", 256}, {"input", 256}}));
  EXPECT_EQ(lstm.budget.minutes, 20);
  EXPECT_EQ(lstm.budget.trials, 0);

  RunConfig onnx = load_run_config((configs / "onnx_example.yaml").string());
  EXPECT_EQ(onnx.workload.onnx, (configs / "tiny_mlp.onnx").lexically_normal().string());
  EXPECT_EQ(make_configured_workload(onnx.workload).name, "tiny_mlp");

  // Every shipped config builds its workload.
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    if (entry.path().extension() != ".yaml") continue;
    RunConfig c = load_run_config(entry.path().string());
    EXPECT_NO_THROW(make_configured_workload(c.workload)) << entry.path();
  }
}

// A workload name with a colon is a plain YAML scalar in block style (a colon is a key indicator only when a space
// follows it); the shipped configs quote it anyway, and flow style needs no quotes either.
TEST(RunConfig, TaskWorkloadNamesWithAColonParseQuotedOrNot) {
  for (const std::string& text :
       {yaml({"workload:", "  name: task:bert_ffn", "budget:", "  trials: 1"}),
        yaml({"workload:", "  name: \"task:bert_ffn\"", "budget:", "  trials: 1"}),
        yaml({"workload: {name: task:bert_ffn, params: {sequence: 4}}", "budget: {trials: 1}"}),
        yaml({"workload: {name: 'task:bert_ffn'}", "budget: {trials: 1}"})})
    EXPECT_EQ(parse_run_config(text, "x.yaml").workload.name, "task:bert_ffn") << text;
  EXPECT_EQ(error_of(yaml({"workload:", "  name: task:bert_fnn", "budget:", "  trials: 1"}))
                .rfind("x.yaml:2:9: workload.name: unknown workload 'task:bert_fnn' (known: ", 0),
            0u);
}

// configs/costmodel/: the data set of scripts/make_costmodel_dataset.sh, random schedules of every task workload
// under the unfused and the global plan, all into costmodel.db with short timing loops.
// Each task three ways: random schedules under the unfused and the global plan, and the evolutionary search without
// the model (strategy-derived candidates, near the templates) under the global plan.
TEST(RunConfig, CostModelConfigsCoverEveryTaskRandomlyAndEvolved) {
  std::set<std::string> covered, tasks;
  for (const WorkloadInfo& w : list_workloads())
    if (w.name.rfind("task:", 0) == 0) tasks.insert(w.name);
  for (const auto& entry : std::filesystem::directory_iterator(repo_root() / "configs" / "costmodel")) {
    const std::string file = entry.path().filename().string();
    RunConfig c = load_run_config(entry.path().string());
    EXPECT_EQ(tasks.count(c.workload.name), 1u) << file;
    EXPECT_TRUE(c.workload.params.empty()) << file << ": the paper's sizes are the defaults";
    const bool evolved = c.search.strategy == "evolutionary";
    if (evolved) {
      EXPECT_EQ(file, c.workload.name.substr(5) + "_evolved.yaml");
      EXPECT_EQ(c.search.fusion, "global") << file;
      EXPECT_EQ(c.search.cost_model, "none") << file << ": the data set must not depend on a model trained from it";
    } else {
      EXPECT_EQ(file, c.workload.name.substr(5) + "_" + c.search.fusion + ".yaml");
      EXPECT_EQ(c.search.strategy, "random") << file;
    }
    EXPECT_EQ(c.database, "costmodel.db") << file;
    EXPECT_EQ(c.target.kind, "cpu") << file;
    EXPECT_EQ(c.target.threads, 0) << file;
    EXPECT_EQ(c.measure.min_repeat_ms, 20) << file;
    EXPECT_EQ(c.measure.build_workers, 2) << file;
    EXPECT_GE(c.budget.trials, 75) << file;
    EXPECT_EQ(c.budget.minutes, 0) << file << ": a trial budget keeps the data set the same on every machine";
    covered.insert(c.workload.name + " " + (evolved ? "evolved" : c.search.fusion));
  }
  for (const std::string& task : tasks)
    for (const char* kind : {"unfused", "global", "evolved"})
      EXPECT_EQ(covered.count(task + " " + kind), 1u) << task << " " << kind;
  EXPECT_EQ(covered.size(), 3 * tasks.size());
}

// One must-fail case per kind of mistake, each matched on the whole message: file, line, column, key, problem.

TEST(RunConfigErrors, UnknownKey) {
  EXPECT_EQ(error_of(yaml({"workload:", "  name: mlp", "budget:", "  trails: 8"})),
            "x.yaml:4:3: budget.trails: unknown key (known: trials, minutes)");
  EXPECT_EQ(error_of(yaml({"workload:", "  name: mlp", "budget:", "  trials: 8", "sead: 3"})),
            "x.yaml:5:1: sead: unknown key (known: workload, precision, target, budget, seed, database, measure, search)");
  EXPECT_EQ(error_of(yaml({"workload:", "  name: mlp", "budget: {trials: 8}", "measure:", "  warmup: 2"})),
            "x.yaml:5:3: measure.warmup: unknown key (known: warmup_runs, min_repeat_ms, min_repeats, max_repeats, "
            "build_timeout_s, run_timeout_s, build_workers, rtol, atol, side_by_side, side_by_side_rounds)");
}

TEST(RunConfigErrors, UnknownWorkloadParameter) {
  EXPECT_EQ(error_of(yaml({"budget: {trials: 8}", "workload:", "  params:", "    batchh: 3", "  name: mlp"})),
            "x.yaml:4:5: workload.params.batchh: unknown parameter of workload 'mlp' (known: batch, in, hidden, out)");
}

TEST(RunConfigErrors, WrongType) {
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "target:", "  threads: four"})),
            "x.yaml:4:12: target.threads: expected an integer, got 'four'");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget:", "  trials: \"64\""})),
            "x.yaml:3:11: budget.trials: expected an integer, got the string \"64\"");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "measure:", "  rtol: [1, 2]"})),
            "x.yaml:4:9: measure.rtol: expected a number, got a list");
  EXPECT_EQ(error_of(yaml({"workload: mlp", "budget: {trials: 8}"})),
            "x.yaml:1:11: workload: expected a mapping (keys: name, params, size, onnx, bind), got 'mlp'");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "database:"})),
            "x.yaml:3:1: database: expected a string, got nothing (write \"\" for an empty string)");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8, minutes: soon}"})),
            "x.yaml:2:30: budget.minutes: expected a finite number, got 'soon'");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp, params: [1, 2]}", "budget: {trials: 8}"})),
            "x.yaml:1:31: workload.params: expected a mapping of parameter names to integers, got a list");
  EXPECT_EQ(error_of(yaml({"- workload"})),
            "x.yaml:1:1: expected a mapping of keys (workload, precision, target, budget, seed, database, measure, search), "
            "got a list");
}

TEST(RunConfigErrors, BadValues) {
  EXPECT_EQ(error_of(yaml({"workload:", "  name: mlp", "budget:", "  trials: -5"})),
            "x.yaml:4:11: budget.trials: must be at least 0, got -5");
  // The known names are the registry's, in list_workloads() order; the registry grows, so they are not spelled here.
  std::string known;
  for (const WorkloadInfo& w : list_workloads()) known += (known.empty() ? "" : ", ") + w.name;
  EXPECT_EQ(error_of(yaml({"workload:", "  name: mpl", "budget:", "  trials: 5"})),
            "x.yaml:2:9: workload.name: unknown workload 'mpl' (known: " + known + ")");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "target:", "  kind: gpu"})),
            "x.yaml:4:9: target.kind: unknown target kind 'gpu' (known: cpu, sm_80, sm_90)");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "search: {strategy: genetic}"})),
            "x.yaml:3:20: search.strategy: unknown search strategy 'genetic' (known: evolutionary, random, ranked)");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "search: {epsilon: 1.5}"})),
            "x.yaml:3:19: search.epsilon: must be at most 1, got 1.5");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "search: {population: 1}"})),
            "x.yaml:3:22: search.population: must be at least 2, got 1");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "search: {cost_model: lightgbm}"})),
            "x.yaml:3:22: search.cost_model: unknown cost model 'lightgbm' (known: xgboost, none)");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "precision: fp16"})),
            "x.yaml:3:12: precision: unknown precision 'fp16' (known: fp32, bf16)");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "search: {fusion: greedy}"})),
            "x.yaml:3:18: search.fusion: unknown fusion strategy 'greedy' (known: unfused, rules, subgraph, global)");
  EXPECT_EQ(error_of(yaml({"workload:", "  name: mlp", "  params: {batch: 0}", "budget: {trials: 8}"})),
            "x.yaml:3:19: workload.params.batch: must be at least 1, got 0");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "measure: {run_timeout_s: 0}"})),
            "x.yaml:3:26: measure.run_timeout_s: must be greater than 0, got 0");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "measure: {max_repeats: 2}"})),
            "x.yaml:3:24: measure.max_repeats: measure.max_repeats (2) is below measure.min_repeats (3)");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 99999999999999999999}"})),
            "x.yaml:2:18: budget.trials: integer out of range: 99999999999999999999");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget:", "  trials: 0", "  minutes: 0"})),
            "x.yaml:2:1: budget: set trials or minutes above 0 (the run stops at whichever is reached first; "
            "without either it would never stop)");
}

TEST(RunConfigErrors, MissingRequiredKey) {
  EXPECT_EQ(error_of(yaml({"budget: {trials: 8}", "workload:", "  params: {batch: 2}"})),
            "x.yaml:2:1: workload: needs a name (a registered workload) or an onnx file");
  EXPECT_EQ(error_of(yaml({"budget: {trials: 8}"})),
            "x.yaml:1:1: workload: missing required section (add one with a name or an onnx file)");
  EXPECT_EQ(error_of(""), "x.yaml:1:1: workload: missing required section (add one with a name or an onnx file)");
  // A config without a budget would never stop.
  EXPECT_EQ(error_of(yaml({"# no budget", "workload: {name: mlp}"})),
            "x.yaml:2:1: budget: set trials or minutes above 0 (the run stops at whichever is reached first; "
            "without either it would never stop)");
}

TEST(RunConfigErrors, DuplicateKey) {
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget:", "  trials: 8", "  trials: 9"})),
            "x.yaml:4:3: budget.trials: duplicate key");
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "budget: {minutes: 1}"})),
            "x.yaml:3:1: budget: duplicate key");
}

TEST(RunConfigErrors, YamlSyntaxAndDocuments) {
  std::string syntax = error_of(yaml({"workload: {name: mlp", "budget: {trials: 8}"}));
  EXPECT_EQ(syntax.rfind("x.yaml:", 0), 0u) << syntax;
  EXPECT_NE(syntax.find("invalid YAML"), std::string::npos) << syntax;
  EXPECT_EQ(error_of(yaml({"workload: {name: mlp}", "budget: {trials: 8}", "---", "seed: 1"})),
            "x.yaml:4:1: expected one YAML document, found 2");
}

TEST(RunConfigErrors, ErrorCarriesItsParts) {
  try {
    parse_run_config(yaml({"workload:", "  name: mlp", "budget:", "  trails: 8"}), "configs/x.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "configs/x.yaml:4:3: budget.trails: unknown key (known: trials, minutes)");
    EXPECT_EQ(e.file(), "configs/x.yaml");
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.column(), 3);
    EXPECT_EQ(e.key_path(), "budget.trails");
    EXPECT_EQ(e.problem(), "unknown key (known: trials, minutes)");
  }
}

TEST(RunConfigErrors, UnreadableFile) {
  const std::string missing = (std::filesystem::temp_directory_path() / "ingot_no_such_config.yaml").string();
  try {
    load_run_config(missing);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ":0:0: cannot open the file: No such file or directory");
  }
}

TEST(RunConfigErrors, ADirectoryIsNoConfig) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  try {
    load_run_config(dir);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), dir + ":0:0: is a directory, not a file");
  }
}

TEST(RunConfigErrors, LoadNamesTheFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "ingot_run_config_test_bad.yaml";
  std::ofstream(path) << yaml({"workload:", "  name: mlp", "budget:", "  trials: -1"});
  try {
    load_run_config(path.string());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ":4:11: budget.trials: must be at least 0, got -1");
  }
  std::filesystem::remove(path);
}

// The rows of the table in docs/config.md whose first cell is a `key`: {key, type, default}, backticks removed.
std::vector<ConfigKey> documented_keys() {
  std::ifstream in(repo_root() / "docs" / "config.md");
  EXPECT_TRUE(in) << "cannot read docs/config.md";
  std::vector<ConfigKey> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    // Split on pipes that are not escaped (\| is a literal pipe inside a cell).
    std::vector<std::string> cells;
    std::string cell;
    for (size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        cell += '|';
        ++i;
      } else if (line[i] == '|') {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    auto clean = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      if (s.size() >= 2 && s.front() == '`' && s.back() == '`') s = s.substr(1, s.size() - 2);
      return s;
    };
    EXPECT_EQ(cells.size(), 4u) << line;
    if (cells.size() < 3) continue;
    rows.push_back({clean(cells[0]), clean(cells[1]), clean(cells[2])});
  }
  return rows;
}

TEST(RunConfigDocs, TableListsExactlyTheAcceptedKeys) {
  std::vector<ConfigKey> documented = documented_keys();
  std::vector<ConfigKey> accepted = run_config_keys();
  std::vector<std::string> documented_paths, accepted_paths;
  for (const ConfigKey& k : documented) documented_paths.push_back(k.path);
  for (const ConfigKey& k : accepted) accepted_paths.push_back(k.path);
  EXPECT_EQ(documented_paths, accepted_paths) << "docs/config.md's table and the parser disagree on the keys";
  for (const ConfigKey& a : accepted)
    for (const ConfigKey& d : documented)
      if (d.path == a.path) {
        EXPECT_EQ(d.type, a.type) << a.path;
        EXPECT_EQ(d.default_value, a.default_value) << a.path;
      }
}

TEST(RunConfigDocs, EveryAcceptedKeyParsesAndEveryOtherIsRejected) {
  // Each documented leaf key, written alone in a minimal config with a value of its type, is accepted;
  // the same with a misspelled last part is rejected naming it. This ties run_config_keys() to the parser.
  for (const ConfigKey& k : run_config_keys()) {
    if (k.path.rfind("workload.", 0) == 0 || k.path == "budget.trials") continue;
    std::string section = k.path.find('.') == std::string::npos ? "" : k.path.substr(0, k.path.find('.'));
    std::string leaf = k.path.substr(k.path.find('.') + 1);
    std::string value = k.default_value == "\"\"" ? "\"\"" : k.default_value;
    std::string line = section.empty() ? leaf + ": " + value : section + ": {" + leaf + ": " + value + "}";
    if (section == "budget") line = "budget: {trials: 1, " + leaf + ": " + value + "}";
    std::string base = "workload: {name: mlp}\n" + std::string(section == "budget" ? "" : "budget: {trials: 1}\n");
    EXPECT_EQ(error_of(base + line + "\n"), "<no error>") << k.path;
    std::string bad = section.empty() ? leaf + "x: " + value : section + ": {" + leaf + "x: " + value + "}";
    EXPECT_NE(error_of(base + bad + "\n").find(k.path + "x: unknown key"), std::string::npos) << k.path;
  }
}

}  // namespace
}  // namespace ingot
