// XGBoostModel and XGBoostParams over XGBoost's C API (Debian's libxgboost 1.7): every call's status checked and
// turned into CostModelError, the training matrix and booster held by RAII, XGBoost's console kept quiet.
// Used by the learned cost model to train, predict, save and load.
#include "costmodel/xgboost_model.h"

#include <xgboost/c_api.h>

#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

namespace ingot {

namespace {

constexpr const char* kVerbosityVariable = "INGOT_XGBOOST_VERBOSITY";
constexpr std::string_view kLoadFailure = "could not load the XGBoost model: ";
constexpr const char* kKnownObjectives[] = {"rank:pairwise", "reg:squarederror"};

// Turns a failed XGBoost call (a nonzero status) into CostModelError with XGBoost's message and what it was for.
// XGBoost's message starts with a time stamp and may end with a stack trace into the library: both are cut.
void check_xgboost(int status, std::string_view doing) {
  if (status == 0) return;
  std::string_view message = XGBGetLastError();
  if (message.starts_with('[') && message.find("] ") != std::string_view::npos)
    message.remove_prefix(message.find("] ") + 2);
  message = message.substr(0, message.find("Stack trace:"));
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.remove_suffix(1);
  throw CostModelError("XGBoost failed while " + std::string(doing) + ": " + std::string(message));
}

[[noreturn]] void refuse_load(const std::string& why) { throw CostModelError(std::string(kLoadFailure) + why); }

[[noreturn]] void refuse_param(const std::string& key, const std::string& rule, const std::string& got) {
  throw CostModelError("XGBoost params: " + key + " must be " + rule + ", got " + got);
}

struct MatrixDeleter {
  void operator()(void* matrix) const { XGDMatrixFree(matrix); }
};
using MatrixPointer = std::unique_ptr<void, MatrixDeleter>;

// The verbosity INGOT_XGBOOST_VERBOSITY asks for; 0 (silent) when it is unset or empty.
int requested_verbosity() {
  const char* text = std::getenv(kVerbosityVariable);
  if (text == nullptr || *text == '\0') return 0;
  const std::string_view value(text);
  if (value.size() == 1 && value[0] >= '0' && value[0] <= '3') return value[0] - '0';
  throw CostModelError(std::string(kVerbosityVariable) +
                       " must be 0 (silent), 1 (warnings), 2 (information) or 3 (debugging), got '" +
                       std::string(value) + "'");
}

// XGBoost's global configuration, verbosity included, is kept per thread: every thread that calls XGBoost sets it
// once (again only when the variable changed).
int quiet_xgboost_in_this_thread() {
  const int verbosity = requested_verbosity();
  thread_local int applied_verbosity = -1;
  if (applied_verbosity != verbosity) {
    const std::string config = "{\"verbosity\": " + std::to_string(verbosity) + "}";
    check_xgboost(XGBSetGlobalConfig(config.c_str()), "setting its verbosity");
    applied_verbosity = verbosity;
  }
  return verbosity;
}

// Shortest text that reads back as the same double: XGBoost takes every parameter as text.
std::string number_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

void set_booster_parameter(void* booster, const char* name, const std::string& value) {
  check_xgboost(XGBoosterSetParam(booster, name, value.c_str()),
                std::string("setting the parameter ") + name + " = " + value);
}

// Every field of params, as XGBoost names it, and the console verbosity; tree_method is always hist.
void set_booster_parameters(void* booster, const XGBoostParams& params, int verbosity) {
  set_booster_parameter(booster, "verbosity", std::to_string(verbosity));
  set_booster_parameter(booster, "objective", params.objective);
  set_booster_parameter(booster, "tree_method", "hist");
  set_booster_parameter(booster, "eta", number_text(params.eta));
  set_booster_parameter(booster, "max_depth", std::to_string(params.max_depth));
  set_booster_parameter(booster, "min_child_weight", number_text(params.min_child_weight));
  set_booster_parameter(booster, "subsample", number_text(params.subsample));
  set_booster_parameter(booster, "colsample_bytree", number_text(params.colsample_bytree));
  set_booster_parameter(booster, "lambda", number_text(params.lambda));
  if (params.objective == "rank:pairwise")
    set_booster_parameter(booster, "num_pairsample", std::to_string(params.num_pairsample));
  set_booster_parameter(booster, "max_bin", std::to_string(params.max_bin));
  set_booster_parameter(booster, "nthread", std::to_string(params.threads));
  set_booster_parameter(booster, "seed", std::to_string(params.seed));
}

void check_training_set(const TrainingSet& data) {
  if (data.columns < 1)
    throw CostModelError("training set: columns must be at least 1, got " + std::to_string(data.columns));
  if (data.rows() == 0) throw CostModelError("training set: it is empty (no labels)");
  if (data.values.size() != data.rows() * size_t(data.columns))
    throw CostModelError("training set: " + std::to_string(data.values.size()) + " values for " +
                         std::to_string(data.rows()) + " labels x " + std::to_string(data.columns) +
                         " columns (expected " + std::to_string(data.rows() * size_t(data.columns)) + ")");
  for (size_t row = 0; row < data.labels.size(); ++row)
    if (!std::isfinite(data.labels[row]))
      throw CostModelError("training set: the label of row " + std::to_string(row) + " is " +
                           (std::isnan(data.labels[row]) ? "NaN" : "infinite") + "; labels must be finite");
  uint64_t grouped_rows = 0;
  for (size_t group = 0; group < data.group_sizes.size(); ++group) {
    if (data.group_sizes[group] == 0)
      throw CostModelError("training set: group " + std::to_string(group) + " has no rows");
    grouped_rows += data.group_sizes[group];
  }
  if (!data.group_sizes.empty() && grouped_rows != data.rows())
    throw CostModelError("training set: the group sizes sum to " + std::to_string(grouped_rows) + ", not to the " +
                         std::to_string(data.rows()) + " rows");
}

int read_int(const nlohmann::json& value, const std::string& key) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() ? value.get<uint64_t>() <= uint64_t(std::numeric_limits<int>::max())
                                   : value.get<int64_t>() >= std::numeric_limits<int>::min())
      return int(value.get<int64_t>());
    throw CostModelError("XGBoost params: " + key + " is out of range, got " + value.dump());
  }
  throw CostModelError("XGBoost params: " + key + " must be an integer, got " + value.dump() + " (" +
                       value.type_name() + ")");
}

double read_double(const nlohmann::json& value, const std::string& key) {
  if (value.is_number()) return value.get<double>();
  throw CostModelError("XGBoost params: " + key + " must be a number, got " + value.dump() + " (" + value.type_name() +
                       ")");
}

}  // namespace

void XGBoostParams::validate() const {
  bool known_objective = false;
  for (const char* name : kKnownObjectives) known_objective |= objective == name;
  if (!known_objective) refuse_param("objective", "\"rank:pairwise\" or \"reg:squarederror\"", "\"" + objective + "\"");
  if (rounds < 1) refuse_param("rounds", "at least 1", std::to_string(rounds));
  if (!(std::isfinite(eta) && eta > 0)) refuse_param("eta", "a finite number above 0", number_text(eta));
  if (max_depth < 1) refuse_param("max_depth", "at least 1", std::to_string(max_depth));
  if (!(std::isfinite(min_child_weight) && min_child_weight >= 0))
    refuse_param("min_child_weight", "a finite number of at least 0", number_text(min_child_weight));
  if (!(subsample > 0 && subsample <= 1)) refuse_param("subsample", "in (0, 1]", number_text(subsample));
  if (!(colsample_bytree > 0 && colsample_bytree <= 1))
    refuse_param("colsample_bytree", "in (0, 1]", number_text(colsample_bytree));
  if (!(std::isfinite(lambda) && lambda >= 0))
    refuse_param("lambda", "a finite number of at least 0", number_text(lambda));
  if (num_pairsample < 1) refuse_param("num_pairsample", "at least 1", std::to_string(num_pairsample));
  if (max_bin < 2) refuse_param("max_bin", "at least 2", std::to_string(max_bin));
  if (threads < 0) refuse_param("threads", "at least 0 (0: all cores)", std::to_string(threads));
  // XGBoost keeps its seed as a signed 64-bit integer.
  if (seed > uint64_t(std::numeric_limits<int64_t>::max()))
    refuse_param("seed", "at most " + std::to_string(std::numeric_limits<int64_t>::max()), std::to_string(seed));
}

std::string XGBoostParams::to_json() const {
  nlohmann::json json = {{"objective", objective},
                         {"rounds", rounds},
                         {"eta", eta},
                         {"max_depth", max_depth},
                         {"min_child_weight", min_child_weight},
                         {"subsample", subsample},
                         {"colsample_bytree", colsample_bytree},
                         {"lambda", lambda},
                         {"num_pairsample", num_pairsample},
                         {"max_bin", max_bin},
                         {"threads", threads},
                         {"seed", seed}};
  return json.dump();
}

XGBoostParams XGBoostParams::from_json(const std::string& text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    throw CostModelError(std::string("XGBoost params: not valid JSON: ") + error.what());
  }
  if (!json.is_object())
    throw CostModelError(std::string("XGBoost params: expected a JSON object, got ") + json.type_name());
  XGBoostParams params;
  for (const auto& [key, value] : json.items()) {
    if (key == "objective") {
      if (!value.is_string())
        throw CostModelError("XGBoost params: objective must be a string, got " + value.dump() + " (" +
                             value.type_name() + ")");
      params.objective = value.get<std::string>();
    } else if (key == "rounds") {
      params.rounds = read_int(value, key);
    } else if (key == "eta") {
      params.eta = read_double(value, key);
    } else if (key == "max_depth") {
      params.max_depth = read_int(value, key);
    } else if (key == "min_child_weight") {
      params.min_child_weight = read_double(value, key);
    } else if (key == "subsample") {
      params.subsample = read_double(value, key);
    } else if (key == "colsample_bytree") {
      params.colsample_bytree = read_double(value, key);
    } else if (key == "lambda") {
      params.lambda = read_double(value, key);
    } else if (key == "num_pairsample") {
      params.num_pairsample = read_int(value, key);
    } else if (key == "max_bin") {
      params.max_bin = read_int(value, key);
    } else if (key == "threads") {
      params.threads = read_int(value, key);
    } else if (key == "seed") {
      if (!value.is_number_unsigned())
        throw CostModelError("XGBoost params: seed must be an integer of at least 0, got " + value.dump());
      params.seed = value.get<uint64_t>();
    } else {
      throw CostModelError("XGBoost params: unknown key '" + key +
                           "' (known: objective, rounds, eta, max_depth, min_child_weight, subsample, "
                           "colsample_bytree, lambda, num_pairsample, max_bin, threads, seed)");
    }
  }
  params.validate();
  return params;
}

void XGBoostModel::BoosterDeleter::operator()(void* booster) const { XGBoosterFree(booster); }

XGBoostModel::XGBoostModel(BoosterPointer booster, int columns) : booster_(std::move(booster)), columns_(columns) {}

XGBoostModel::XGBoostModel(XGBoostModel&& other) noexcept
    : booster_(std::move(other.booster_)), columns_(std::exchange(other.columns_, 0)) {}

XGBoostModel& XGBoostModel::operator=(XGBoostModel&& other) noexcept {
  booster_ = std::move(other.booster_);
  columns_ = std::exchange(other.columns_, 0);
  return *this;
}

XGBoostModel::~XGBoostModel() = default;

void* XGBoostModel::booster_or_throw(const char* doing) const {
  if (!booster_) throw CostModelError(std::string("cannot ") + doing + ": the XGBoost model was moved from");
  return booster_.get();
}

XGBoostModel XGBoostModel::train(const TrainingSet& data, const XGBoostParams& params) {
  check_training_set(data);
  params.validate();
  const int verbosity = quiet_xgboost_in_this_thread();

  DMatrixHandle raw_matrix = nullptr;
  check_xgboost(XGDMatrixCreateFromMat_omp(data.values.data(), data.rows(), bst_ulong(data.columns),
                                           std::numeric_limits<float>::quiet_NaN(), &raw_matrix, params.threads),
                "creating the training matrix");
  const MatrixPointer matrix(raw_matrix);
  check_xgboost(XGDMatrixSetFloatInfo(matrix.get(), "label", data.labels.data(), data.labels.size()),
                "setting the training labels");
  if (!data.group_sizes.empty())
    check_xgboost(XGDMatrixSetUIntInfo(matrix.get(), "group", data.group_sizes.data(), data.group_sizes.size()),
                  "setting the query groups");

  const DMatrixHandle cached[] = {matrix.get()};
  BoosterHandle raw_booster = nullptr;
  check_xgboost(XGBoosterCreate(cached, 1, &raw_booster), "creating the booster");
  BoosterPointer booster(raw_booster);
  set_booster_parameters(booster.get(), params, verbosity);
  for (int round = 0; round < params.rounds; ++round)
    check_xgboost(XGBoosterUpdateOneIter(booster.get(), round, matrix.get()),
                  "boosting round " + std::to_string(round) + " of " + std::to_string(params.rounds));
  return XGBoostModel(std::move(booster), data.columns);
}

std::vector<float> XGBoostModel::predict(const float* values, size_t rows) const {
  void* booster = booster_or_throw("predict");
  if (rows == 0) return {};
  if (values == nullptr) throw CostModelError("predict: no values for " + std::to_string(rows) + " rows");
  quiet_xgboost_in_this_thread();

  // numpy's __array_interface__, which XGBoost reads for dense input: where the floats are, their shape and type.
  const char* float_type = std::endian::native == std::endian::little ? "<f4" : ">f4";
  const std::string array_interface = "{\"data\": [" + std::to_string(reinterpret_cast<uintptr_t>(values)) +
                                      ", true], \"shape\": [" + std::to_string(rows) + ", " + std::to_string(columns_) +
                                      "], \"typestr\": \"" + float_type + "\", \"version\": 3}";
  // Type 0: the objective's transformed prediction; all trees; NaN is missing.
  static const char kPredictConfig[] =
      "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, \"strict_shape\": false, "
      "\"cache_id\": 0, \"missing\": NaN}";
  const bst_ulong* shape = nullptr;
  bst_ulong dimensions = 0;
  const float* scores = nullptr;
  check_xgboost(XGBoosterPredictFromDense(booster, array_interface.c_str(), kPredictConfig, nullptr, &shape,
                                          &dimensions, &scores),
                "predicting " + std::to_string(rows) + " rows");
  if (dimensions != 1 || shape[0] != rows)
    throw CostModelError("XGBoost predicted " + std::to_string(dimensions == 0 ? 0 : shape[0]) + " values in " +
                         std::to_string(dimensions) + " dimensions for " + std::to_string(rows) +
                         " rows; expected one score per row");
  // XGBoost keeps its output per thread until the next call: copy it now.
  return std::vector<float>(scores, scores + rows);
}

std::vector<float> XGBoostModel::predict(std::span<const float> values, int columns) const {
  booster_or_throw("predict");
  if (columns != columns_)
    throw CostModelError("predict: rows of " + std::to_string(columns) + " columns given to a model of " +
                         std::to_string(columns_) + " columns");
  if (values.size() % size_t(columns) != 0)
    throw CostModelError("predict: " + std::to_string(values.size()) + " values are not whole rows of " +
                         std::to_string(columns) + " columns");
  return predict(values.data(), values.size() / size_t(columns));
}

std::string XGBoostModel::to_json() const {
  void* booster = booster_or_throw("save the model");
  quiet_xgboost_in_this_thread();
  bst_ulong length = 0;
  const char* text = nullptr;
  check_xgboost(XGBoosterSaveModelToBuffer(booster, "{\"format\": \"json\"}", &length, &text),
                "saving the model as JSON");
  return std::string(text, length);
}

XGBoostModel XGBoostModel::from_json(const std::string& json, int columns) {
  if (columns < 1) refuse_load("columns must be at least 1, got " + std::to_string(columns));
  const size_t start = json.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) refuse_load("the text is empty");
  // XGBoost reads text that does not start with '{' as its old binary format, unchecked: only a well-formed JSON
  // object reaches it, so garbage and truncated text are refused here, with the parser's position.
  if (!nlohmann::json::accept(json)) {
    try {
      const nlohmann::json parsed = nlohmann::json::parse(json);
    } catch (const nlohmann::json::parse_error& error) {
      refuse_load(std::string("the text is not JSON (corrupt or truncated): ") + error.what());
    }
    refuse_load("the text is not JSON (corrupt or truncated)");
  }
  if (json[start] != '{') refuse_load("the text is not a JSON object");
  const std::string_view model_text = std::string_view(json).substr(start);
  try {
    const int verbosity = quiet_xgboost_in_this_thread();
    BoosterHandle raw_booster = nullptr;
    check_xgboost(XGBoosterCreate(nullptr, 0, &raw_booster), "creating the booster");
    BoosterPointer booster(raw_booster);
    set_booster_parameter(booster.get(), "verbosity", std::to_string(verbosity));
    check_xgboost(XGBoosterLoadModelFromBuffer(booster.get(), model_text.data(), model_text.size()),
                  "reading the model");
    // Also configures the booster, so that concurrent predict calls find it ready.
    bst_ulong model_columns = 0;
    check_xgboost(XGBoosterGetNumFeature(booster.get(), &model_columns), "reading the model's column count");
    if (model_columns != bst_ulong(columns))
      refuse_load("it was trained on rows of " + std::to_string(model_columns) + " columns, not " +
                  std::to_string(columns));
    return XGBoostModel(std::move(booster), columns);
  } catch (const CostModelError& error) {
    if (std::string_view(error.what()).starts_with(kLoadFailure)) throw;
    refuse_load(error.what());
  }
}

}  // namespace ingot
