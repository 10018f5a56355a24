#include "costmodel/xgboost_cost_model.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "costmodel/candidate_features.h"
#include "costmodel/features.h"
#include "ir/hash.h"

namespace ingot {
namespace {

constexpr const char* kFormat = "ingot-xgboost-cost-model";

nlohmann::json parse_model(const std::string& json) {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw CostModelError(std::string("the cost model is not JSON: ") + e.what());
  }
  if (!parsed.is_object() || parsed.value("format", "") != kFormat)
    throw CostModelError(std::string("the text is not an ingot cost model (no \"format\": \"") + kFormat + "\")");
  for (const char* key : {"feature_set_version", "columns", "samples", "params", "booster"})
    if (!parsed.contains(key)) throw CostModelError(std::string("the cost model has no \"") + key + "\"");
  if (!parsed["feature_set_version"].is_number_integer() || !parsed["columns"].is_number_integer() ||
      !parsed["samples"].is_number_integer() || !parsed["booster"].is_string())
    throw CostModelError("the cost model's feature_set_version, columns, samples or booster has the wrong type");
  return parsed;
}

}  // namespace

XGBoostCostModel::XGBoostCostModel(Target target, XGBoostCostModelOptions options)
    : target_(std::move(target)), options_(std::move(options)) {}

std::vector<double> XGBoostCostModel::predict(const Program& program, const std::vector<Schedule>& schedules) const {
  std::vector<double> scores(schedules.size(), 0.0);
  if (!model_) return scores;
  const size_t width = candidate_feature_names().size();
  std::vector<float> values;
  std::vector<size_t> valid;
  for (size_t i = 0; i < schedules.size(); ++i) {
    try {
      std::vector<float> row = candidate_features(program, schedules[i], target_);
      values.insert(values.end(), row.begin(), row.end());
      valid.push_back(i);
    } catch (const ScheduleError&) {
      scores[i] = -std::numeric_limits<double>::infinity();
    }
  }
  if (valid.empty()) return scores;
  std::vector<float> predicted = model_->predict(values.data(), values.size() / width);
  for (size_t i = 0; i < valid.size(); ++i) scores[valid[i]] = predicted[i];
  return scores;
}

void XGBoostCostModel::add_measured(const Program& program, const std::string& workload_name, const Schedule& schedule,
                                    double seconds) {
  add_sample(samples_, hash_hex(program.structural_hash()), workload_name,
             candidate_features(program, schedule, target_), seconds);
}

void XGBoostCostModel::update(const Program& program, const std::vector<MeasuredSchedule>& measured) {
  const std::string key = hash_hex(program.structural_hash());
  for (const MeasuredSchedule& m : measured) {
    if (!m.seconds) continue;
    add_sample(samples_, key, key, candidate_features(program, m.schedule, target_), *m.seconds);
  }
  if (sample_count() >= options_.warmup_samples) retrain();
}

void XGBoostCostModel::retrain() {
  if (samples_.empty()) throw std::invalid_argument("the cost model has no measured candidates to learn from");
  last_metrics_.reset();
  if (options_.holdout > 0 && sample_count() >= 10) {
    // A seed of its own per sample count: the split changes as samples come, deterministically.
    ModelEvaluation check =
        evaluate_held_out(samples_, options_.params, options_.holdout, options_.params.seed + uint64_t(sample_count()));
    if (check.overall.pairs > 0) last_metrics_ = check.overall;
  }
  model_ = XGBoostModel::train(to_training_set(samples_), options_.params);
  trained_samples_ = sample_count();
  ++generation_;
}

std::string XGBoostCostModel::to_json() const {
  if (!model_) throw std::logic_error("the cost model has not been trained, so there is nothing to save");
  nlohmann::json out;
  out["format"] = kFormat;
  out["feature_set_version"] = kFeatureSetVersion;
  out["columns"] = model_->columns();
  out["samples"] = trained_samples_;
  out["params"] = nlohmann::json::parse(options_.params.to_json());
  out["booster"] = model_->to_json();
  return out.dump();
}

int model_feature_set_version(const std::string& json) { return parse_model(json)["feature_set_version"].get<int>(); }

void XGBoostCostModel::load_json(const std::string& json) {
  nlohmann::json parsed = parse_model(json);
  const int version = parsed["feature_set_version"].get<int>();
  if (version != kFeatureSetVersion)
    throw CostModelError("the cost model was trained on feature set version " + std::to_string(version) +
                         "; this ingot computes version " + std::to_string(kFeatureSetVersion));
  const int columns = parsed["columns"].get<int>();
  if (columns != int(candidate_feature_names().size()))
    throw CostModelError("the cost model reads " + std::to_string(columns) + " features; this ingot computes " +
                         std::to_string(candidate_feature_names().size()));
  model_ = XGBoostModel::from_json(parsed["booster"].get<std::string>(), columns);
  trained_samples_ = parsed["samples"].get<int64_t>();
  ++generation_;
}

void XGBoostCostModel::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << to_json();
  out.close();
  if (!out) throw std::runtime_error("cannot write the cost model file " + path);
}

void XGBoostCostModel::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the cost model file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    load_json(text.str());
  } catch (const CostModelError& e) {
    throw CostModelError(path + ": " + e.what());
  }
}

}  // namespace ingot
