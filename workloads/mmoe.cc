#include "workloads/mmoe.h"

#include <cmath>
#include <stdexcept>

#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/softmax.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

// Builds the model and records each weight placeholder as it is created, so the names always match the program.
class MmoeBuilder {
 public:
  explicit MmoeBuilder(const MmoeSizes& s) : s_(s) {}

  Program build() {
    const MmoeSizes& s = s_;
    if (s.batch <= 0 || s.input <= 0 || s.experts <= 0 || s.expert_units <= 0 || s.tasks <= 0 || s.tower_units <= 0)
      throw std::invalid_argument(
          "mmoe: every size (batch, input, experts, expert_units, tasks, tower_units) must be positive");
    const int64_t units = s.expert_units;
    Tensor x = placeholder("x", {s.batch, s.input});
    Tensor experts = relu("experts", linear("expert", x, s.experts * units, "experts_dense"));

    std::vector<Tensor> outputs;
    for (int64_t t = 0; t < s.tasks; ++t) {
      const std::string task = std::to_string(t);
      Tensor gate = softmax("gate" + task, linear("gate" + task, x, s.experts, "gate" + task + "_dense"), -1);
      IterVar e = reduce_axis(s.experts, "k");
      Tensor mix = compute("mix" + task, {s.batch, units}, [&](const Axes& i) {
        return sum(gate(i[0], e.var) * experts(i[0], e.var * units + i[1]), {e});
      });
      Tensor hidden = relu("tower" + task + "_relu", linear("tower" + task + "_hidden", mix, s.tower_units));
      outputs.push_back(sigmoid("task" + task, linear("tower" + task + "_out", hidden, 1)));
    }
    return Program(outputs, "mmoe");
  }

  const std::vector<std::string>& weight_names() const { return weight_names_; }
  const InputRanges& input_ranges() const { return ranges_; }

 private:
  // Linear layer with weights "<weights>_weight" [out, in] and "<weights>_bias"; the TE is named `name`
  // (default: the weights' prefix).
  Tensor linear(const std::string& weights, const Tensor& x, int64_t out, const std::string& name = "") {
    const int64_t in = x->shape.back();
    Tensor w = placeholder(weights + "_weight", {out, in}), b = placeholder(weights + "_bias", {out});
    const double bound = 1.0 / std::sqrt(double(in));
    for (const Tensor& t : {w, b}) {
      weight_names_.push_back(t->name);
      ranges_[t->name] = {-bound, bound};
    }
    return dense(name.empty() ? weights : name, x, w, b);
  }

  const MmoeSizes s_;
  std::vector<std::string> weight_names_;
  InputRanges ranges_;
};

}  // namespace

Program mmoe(const MmoeSizes& sizes) { return MmoeBuilder(sizes).build(); }

std::vector<std::string> mmoe_weight_names(const MmoeSizes& sizes) {
  MmoeBuilder builder(sizes);
  builder.build();
  return builder.weight_names();
}

InputRanges mmoe_input_ranges(const MmoeSizes& sizes) {
  MmoeBuilder builder(sizes);
  builder.build();
  return builder.input_ranges();
}

}  // namespace ingot
