// `ingot costmodel train|eval|features|list`: the learned cost model from the command line. train learns from
// everything a database measured on a target and stores the model there; eval scores held-out candidates and
// left-out workloads; features prints one candidate's feature table; list shows the stored models.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "costmodel/candidate_features.h"
#include "costmodel/evaluation.h"
#include "costmodel/features.h"
#include "costmodel/xgboost_cost_model.h"
#include "lower/kernels.h"
#include "results/database.h"
#include "tuner/measured_dataset.h"
#include "tuner/tuning_loop.h"

namespace ingot::cli {
namespace {

struct DatasetOptions {
  std::vector<std::string> dbs = {"ingot.db"};
  std::string workload, target, objective = "rank:pairwise", params;
};

void add_dataset_options(CLI::App* cmd, DatasetOptions& o) {
  cmd->add_option("--db", o.dbs,
                  "Database file; more than one --db learns from all of them (two passes of a data set: a candidate "
                  "measured in several counts once, at its least median; train stores its model in the first)")
      ->capture_default_str();
  cmd->add_option("--workload", o.workload,
                  "Only this workload (name or hash, or the ONNX file tuned); default: every workload")
      ->transform(onnx_file_as_stored_name());
  cmd->add_option("--target", o.target, "Target key of the measurements (default: this machine's CPU, all cores)");
  cmd->add_option("--params", o.params,
                  "XGBoost parameters as a JSON object, e.g. '{\"max_depth\": 6, \"rounds\": 100}' (keys: "
                  "docs/costmodel.md); the others keep the model's defaults");
}

// The model's defaults, the keys --params gives, then the objective flag unless --params names one.
XGBoostParams params_of(const DatasetOptions& o, const std::string& objective) {
  nlohmann::json params = nlohmann::json::parse(XGBoostCostModelOptions().params.to_json());
  nlohmann::json given = o.params.empty() ? nlohmann::json::object() : nlohmann::json::parse(o.params, nullptr, false);
  if (!given.is_object()) throw std::invalid_argument("--params: not a JSON object: " + o.params);
  params.update(given);
  if (!given.contains("objective")) params["objective"] = objective;
  return XGBoostParams::from_json(params.dump());
}

std::vector<Database> open_databases(const DatasetOptions& o) {
  std::vector<Database> dbs;
  for (const std::string& path : o.dbs) dbs.push_back(Database::open_existing(path));
  return dbs;
}

// The databases' measurements of the target as the model's samples; throws when there are none.
XGBoostCostModel load_samples(const std::vector<Database>& dbs, const DatasetOptions& o, const std::string& target_key,
                              const XGBoostParams& params) {
  XGBoostCostModelOptions options;
  options.params = params;
  XGBoostCostModel model(detect_host_cpu(), options);
  std::vector<const Database*> databases;
  for (const Database& db : dbs) databases.push_back(&db);
  const int64_t added = add_measured_dataset(model, databases, DatasetFilter{target_key, o.workload}, std::cerr);
  if (added == 0) {
    std::string paths;
    for (const std::string& path : o.dbs) paths += (paths.empty() ? "" : ", ") + path;
    throw std::runtime_error("no correct measurement on target '" + target_key + "'" +
                             (o.workload.empty() ? "" : " of workload '" + o.workload + "'") + " in " + paths +
                             " to learn from");
  }
  return model;
}

std::string target_or_default(const std::string& target) { return target.empty() ? cpu_target_key(0) : target; }

void print_metrics_row(const std::string& name, const RankingMetrics& m) {
  std::cout << std::left << std::setw(32) << name << std::right << std::setw(11) << m.candidates << std::setw(9)
            << m.pairs << std::fixed << std::setprecision(3) << std::setw(10) << m.pairwise_accuracy << std::setw(8)
            << m.kendall_tau << std::setw(7) << m.top1 << std::setw(7) << m.top5 << "\n";
}

void print_evaluation(const std::string& title, const ModelEvaluation& e) {
  std::cout << title << "\n"
            << std::left << std::setw(32) << "workload" << std::right << std::setw(11) << "candidates" << std::setw(9)
            << "pairs" << std::setw(10) << "pairwise" << std::setw(8) << "tau" << std::setw(7) << "top1" << std::setw(7)
            << "top5"
            << "\n";
  for (const auto& [name, metrics] : e.per_group) print_metrics_row(name, metrics);
  print_metrics_row("overall", e.overall);
}

nlohmann::json evaluation_json(const ModelEvaluation& e) {
  nlohmann::json out;
  out["overall"] = nlohmann::json::parse(metrics_json(e.overall));
  out["training_rows"] = e.training_rows;
  for (const auto& [name, metrics] : e.per_group) out["workloads"][name] = nlohmann::json::parse(metrics_json(metrics));
  return out;
}

void add_train(CLI::App& parent) {
  CLI::App* cmd =
      parent.add_subcommand("train", "Learn from every correct measurement of a target and store the model");
  static DatasetOptions o;
  add_dataset_options(cmd, o);
  cmd->add_option("--objective", o.objective, "XGBoost objective")
      ->check(CLI::IsMember({"rank:pairwise", "reg:squarederror"}))
      ->capture_default_str();
  cmd->callback([] {
    std::vector<Database> dbs = open_databases(o);
    const std::string target = target_or_default(o.target);
    XGBoostCostModel model = load_samples(dbs, o, target, params_of(o, o.objective));
    model.retrain();
    const int64_t id =
        dbs.front().add_cost_model(cost_model_record(model, target, o.workload.empty() ? "all workloads" : o.workload));
    std::cout << "stored model " << id << " for " << target << ": " << model.sample_count() << " candidates of "
              << model.samples().size() << " workload" << (model.samples().size() == 1 ? "" : "s") << ", "
              << model.options().params.to_json() << "\n";
    if (model.last_metrics())
      std::cout << "held-out (20%): pairwise accuracy " << std::fixed << std::setprecision(3)
                << model.last_metrics()->pairwise_accuracy << ", top-5 " << model.last_metrics()->top5 << "\n";
  });
}

void add_eval(CLI::App& parent) {
  CLI::App* cmd = parent.add_subcommand(
      "eval", "Rank held-out candidates and left-out workloads: pairwise accuracy, Kendall tau, top-1 and top-5");
  static DatasetOptions o;
  static double holdout = 0.2;
  static uint64_t seed = 1;
  static bool json = false;
  add_dataset_options(cmd, o);
  cmd->add_option("--objective", o.objective, "XGBoost objective, or both to compare them")
      ->check(CLI::IsMember({"rank:pairwise", "reg:squarederror", "both"}))
      ->capture_default_str();
  cmd->add_option("--holdout", holdout, "Share of each workload's candidates held out")
      ->check(CLI::Range(0.01, 0.99))
      ->capture_default_str();
  cmd->add_option("--seed", seed, "Seeds the held-out split")->capture_default_str();
  cmd->add_flag("--json", json, "Print JSON");
  cmd->callback([] {
    std::vector<Database> dbs = open_databases(o);
    const std::string target = target_or_default(o.target);
    std::vector<std::string> objectives = o.objective == "both"
                                              ? std::vector<std::string>{"rank:pairwise", "reg:squarederror"}
                                              : std::vector<std::string>{o.objective};
    XGBoostCostModel model = load_samples(dbs, o, target, params_of(o, objectives.front()));
    nlohmann::json out;
    out["target"] = target;
    out["holdout"] = holdout;
    out["seed"] = seed;
    for (const std::string& objective : objectives) {
      const XGBoostParams params = params_of(o, objective);
      ModelEvaluation held = evaluate_held_out(model.samples(), params, holdout, seed);
      std::optional<ModelEvaluation> left_out;
      if (model.samples().size() >= 2) left_out = evaluate_leave_one_group_out(model.samples(), params);
      if (json) {
        out["objectives"][objective]["held_out"] = evaluation_json(held);
        if (left_out) out["objectives"][objective]["leave_one_workload_out"] = evaluation_json(*left_out);
        continue;
      }
      std::ostringstream title;
      title << objective << ", held-out " << int(holdout * 100 + 0.5) << "% of each workload's candidates (seed "
            << seed << "), trained on " << held.training_rows << " candidates:";
      print_evaluation(title.str(), held);
      if (left_out) print_evaluation(objective + ", leave-one-workload-out (each trained on the others):", *left_out);
    }
    if (json) std::cout << out.dump(2) << "\n";
  });
}

void add_features(CLI::App& parent) {
  CLI::App* cmd = parent.add_subcommand("features", "The named feature table of one candidate: one column per store");
  static std::string workload = "matmul", size = "small", schedule = "naive";
  static bool candidate = false;
  cmd->add_option("--workload", workload, "Workload (see `ingot workloads`) or an ONNX model file (.onnx)")
      ->capture_default_str();
  cmd->add_option("--size", size, "small, default or NAME=VALUE,...")->capture_default_str();
  cmd->add_option("--schedule", schedule, "naive, hand, random:SEED, strategy:NAME or a schedule JSON file")
      ->capture_default_str();
  cmd->add_flag("--candidate", candidate, "Print the candidate's aggregated row instead of the stores' rows");
  cmd->callback([cmd] {
    ConfiguredWorkload w = command_line_workload(workload, size, cmd->count("--size") > 0);
    const Program& program = w.program;
    Schedule s = schedule_from_spec(schedule, program, false, "native", w.weights);
    const Target target = detect_host_cpu();
    LoopFunction f = lower_as_compiled(program, s, target);
    std::vector<StageFeatures> stages = extract_stage_features(f, target);
    if (candidate) {
      std::vector<float> row = aggregate_stage_features(stages, int64_t(kernel_bodies(f.body).size()));
      const std::vector<std::string>& names = candidate_feature_names();
      for (size_t i = 0; i < names.size(); ++i)
        std::cout << std::left << std::setw(40) << names[i] << " " << row[i] << "\n";
      return;
    }
    std::cout << "feature set " << kFeatureSetVersion << ", values log2(1 + x); " << stages.size()
              << " distinct stores\n"
              << std::left << std::setw(36) << "feature";
    for (const StageFeatures& stage : stages)
      std::cout << " " << std::setw(12)
                << (stage.store + (stage.multiplicity > 1 ? "x" + std::to_string(stage.multiplicity) : ""));
    std::cout << "\n";
    const std::vector<std::string>& names = stage_feature_names();
    for (size_t i = 0; i < names.size(); ++i) {
      std::cout << std::left << std::setw(36) << names[i];
      for (const StageFeatures& stage : stages) {
        std::ostringstream value;
        value << std::setprecision(4) << stage.values[i];
        std::cout << " " << std::setw(12) << value.str();
      }
      std::cout << "\n";
    }
  });
}

void add_list(CLI::App& parent) {
  CLI::App* cmd = parent.add_subcommand("list", "The cost models stored in a database, oldest first");
  static std::string db_path = "ingot.db";
  cmd->add_option("--db", db_path, "Database file")->capture_default_str();
  cmd->callback([] {
    Database db = Database::open_existing(db_path);
    for (const CostModelRecord& m : db.cost_models())
      std::cout << "model " << m.id << "  " << m.created_at << "  " << m.target << "  feature set "
                << m.feature_set_version << "  " << m.sample_count << " samples  " << m.trained_on << "  "
                << m.metrics_json << "\n";
  });
}

}  // namespace

void add_costmodel_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("costmodel", "The learned cost model: train, eval, features, list");
  cmd->require_subcommand(1);
  add_train(*cmd);
  add_eval(*cmd);
  add_features(*cmd);
  add_list(*cmd);
}

}  // namespace ingot::cli
