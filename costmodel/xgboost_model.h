// Gradient-boosted trees over dense float feature rows, through XGBoost's C API: train (ranking within query
// groups, or regression), predict, and save/load as XGBoost's JSON model format. The learning layer of the learned
// cost model; it knows rows of numbers only, never schedules. Every XGBoost failure is a CostModelError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ingot {

// Every failure of a cost model's learning layer: an XGBoost call that failed (with XGBoost's own message and what
// was being done), training data or parameters that are inconsistent, a model text that cannot be loaded.
class CostModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How the trees are grown. tree_method is always XGBoost's "hist" (fast, and deterministic for a fixed thread
// count); the fields are XGBoost's parameters of the same names (rounds: boosting rounds, one tree each).
struct XGBoostParams {
  std::string objective = "rank:pairwise";  // or "reg:squarederror" (kept for comparison)
  int rounds = 200;
  double eta = 0.2;
  int max_depth = 8;
  // rank:pairwise's gradients and hessians are summed over a row's pairs, so with few pairs a leaf's hessian is small
  // and XGBoost's default of 1 stops trees early; 0.1 lets them grow (held-out pairwise accuracy about +0.003 with 16
  // pairs per row, on the data set docs/costmodel.md calls the previous one).
  double min_child_weight = 0.1;
  double subsample = 1.0;
  double colsample_bytree = 1.0;
  double lambda = 1.0;
  // rank:pairwise only: how many rows of other labels each row is paired with in every round (XGBoost's default is
  // 1). More pairs per round rank held-out candidates better: 0.832-0.845 with 1 against 0.836-0.856 with 16 (with
  // min_child_weight 0.1), and 64 ranked no better (docs/costmodel.md, "Bench"); above 1 they add about 0.8 s to
  // training 10,000 rows, whatever their number.
  int num_pairsample = 16;
  // Histogram bins per column (XGBoost's max_bin; its default is 256). Finding splits scans every bin of every column
  // at every node, which dominates training: at 10,000 rows x 300 columns, depth 8, 64 bins trained 3x faster than
  // 256 with the same held-out ranking accuracy (bench/xgboost_model_bench.cc). Columns with few values use fewer.
  int max_bin = 64;
  // XGBoost's nthread, also used by predict; 0: all cores. Trained models depend on it (rank:pairwise samples pairs per
  // thread), so fix it where runs must agree. OpenMP threads spin while they wait: on cores busy with other work (the
  // builder's compiles) 2 threads trained slower than 1 (bench/xgboost_model_bench.cc on a loaded 2-core machine).
  int threads = 0;
  uint64_t seed = 0;

  // Throws CostModelError naming the first key whose value XGBoost would refuse or that cannot be meant (rounds < 1,
  // eta <= 0, a subsample outside (0, 1], max_bin < 2, a seed above INT64_MAX, another objective than the two above).
  void validate() const;
  // A flat JSON object of every field above; from_json takes such an object, fields left out keep their defaults.
  std::string to_json() const;
  // Throws CostModelError naming the bad key: an unknown key, a value of the wrong type, a value validate refuses.
  static XGBoostParams from_json(const std::string& json);
};

// Rows of one query group are contiguous; group_sizes sum to rows() (empty: all rows are one group). labels: higher
// is better (for rank:pairwise the relevance within a group; only order within a group matters). values: row-major,
// rows() x columns; NaN is a missing value, as XGBoost treats it.
struct TrainingSet {
  int columns = 0;
  std::vector<float> values;
  std::vector<float> labels;
  std::vector<unsigned> group_sizes;

  size_t rows() const { return labels.size(); }
};

// A trained booster. Movable, not copyable; a moved-from model refuses every call with CostModelError.
// XGBoost's console messages are silent unless the environment variable INGOT_XGBOOST_VERBOSITY asks for them:
// 0 silent (the default), 1 warnings, 2 information, 3 debugging; any other value is refused with CostModelError.
class XGBoostModel {
 public:
  // Throws CostModelError for an empty set, columns < 1, values.size() != rows() * columns, a NaN or infinite label,
  // group sizes of 0 or not summing to rows(), parameters validate refuses, and any failure inside XGBoost (for
  // example an infinite value). Same data, params and thread count give the same model, byte for byte.
  static XGBoostModel train(const TrainingSet& data, const XGBoostParams& params);

  // A score per row of values (rows x columns(), row-major, NaN missing); for rank:pairwise only the order of scores
  // means anything. Safe to call from several threads at once on one model (XGBoost's in-place prediction keeps its
  // output per thread; the model is configured before it is returned): each call runs XGBoost's OpenMP team of the
  // model's thread count, so concurrent callers should lower it. Row results do not depend on the thread count.
  // XGBoost keeps each calling thread's last output (4 bytes a row) until the model is destroyed by that thread or
  // the thread ends: threads that outlive many models should be the ones that destroy them.
  std::vector<float> predict(const float* values, size_t rows) const;
  // The same for a row-major matrix whose caller states its column count: refused with CostModelError unless
  // columns equals columns() and values.size() is a multiple of it.
  std::vector<float> predict(std::span<const float> values, int columns) const;

  int columns() const { return columns_; }

  // XGBoost's JSON model format (the trees, objective and base score; not the training parameters). Safe to call
  // beside predict from several threads.
  std::string to_json() const;
  // Loads to_json's text (of this XGBoost version or an older JSON one) for rows of `columns` values. Throws
  // CostModelError whose message starts "could not load the XGBoost model" for empty text, text that is not JSON
  // (garbage, truncated), JSON XGBoost refuses, or a model of another column count. XGBoost checks the trees' shape
  // when it loads them, not their meaning: a hand-edited model that still parses is trusted. The thread count is not
  // part of the model: a loaded model predicts on all cores.
  static XGBoostModel from_json(const std::string& json, int columns);

  XGBoostModel(XGBoostModel&& other) noexcept;
  XGBoostModel& operator=(XGBoostModel&& other) noexcept;
  ~XGBoostModel();

 private:
  // XGBoost's BoosterHandle is a void*; its header stays out of this one.
  struct BoosterDeleter {
    void operator()(void* booster) const;
  };
  using BoosterPointer = std::unique_ptr<void, BoosterDeleter>;

  XGBoostModel(BoosterPointer booster, int columns);
  void* booster_or_throw(const char* doing) const;

  BoosterPointer booster_;
  int columns_ = 0;
};

}  // namespace ingot
