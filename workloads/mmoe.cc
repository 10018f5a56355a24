#include "workloads/mmoe.h"

#include <stdexcept>

#include "ops/elementwise.h"
#include "ops/softmax.h"
#include "workloads/model_weights.h"

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
    Tensor experts = relu("experts", weights_.linear("experts_dense", "expert", x, s.experts * units));

    std::vector<Tensor> outputs;
    for (int64_t t = 0; t < s.tasks; ++t) {
      const std::string task = std::to_string(t);
      Tensor gate = softmax("gate" + task, weights_.linear("gate" + task + "_dense", "gate" + task, x, s.experts), -1);
      IterVar e = reduce_axis(s.experts, "k");
      Tensor mix = compute("mix" + task, {s.batch, units}, [&](const Axes& i) {
        return sum(gate(i[0], e.var) * experts(i[0], e.var * units + i[1]), {e});
      });
      Tensor hidden = relu("tower" + task + "_relu", weights_.linear("tower" + task + "_hidden", mix, s.tower_units));
      outputs.push_back(sigmoid("task" + task, weights_.linear("tower" + task + "_out", hidden, 1)));
    }
    return Program(outputs, "mmoe");
  }

  const ModelWeights& weights() const { return weights_; }

 private:
  const MmoeSizes s_;
  ModelWeights weights_;
};

}  // namespace

Program mmoe(const MmoeSizes& sizes) { return MmoeBuilder(sizes).build(); }

std::vector<std::string> mmoe_weight_names(const MmoeSizes& sizes) { return weights_of<MmoeBuilder>(sizes).names(); }

InputRanges mmoe_input_ranges(const MmoeSizes& sizes) { return weights_of<MmoeBuilder>(sizes).ranges(); }

}  // namespace ingot
