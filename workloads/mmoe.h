// Multi-gate Mixture-of-Experts (Ma et al., KDD 2018), the Souffle paper's MMoE: shared experts, one softmax gate
// and one tower per task, as tensor expressions built from ops/. Use it to build MMoE at any size; the registry
// exposes it as "mmoe".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"

namespace ingot {

struct MmoeSizes {
  int64_t batch = 1;
  int64_t input = 100;        // features of the input
  int64_t experts = 8;        // shared experts
  int64_t expert_units = 16;  // width of each expert (one dense layer + ReLU)
  int64_t tasks = 2;          // tasks, each with its own gate and tower
  int64_t tower_units = 8;    // hidden width of each task's tower
  // A size small enough for the interpreter in unit tests.
  static MmoeSizes small() { return MmoeSizes{2, 12, 3, 4, 2, 3}; }
};

// Layout of the keras-mmoe reference implementation (drawbridge/keras-mmoe, the census-income example that MMoE
// benchmarks follow): experts are one kernel, gates are softmax(dense) over the experts, towers are
// Dense(tower_units, ReLU) then a one-unit output; the output here is sigmoid (a binary task's probability).
//   experts[b, e * U + u] = relu(sum_k x[b, k] * expert_weight[e * U + u, k] + expert_bias[e * U + u])
//   gate_t[b, e]          = softmax_e(sum_k x[b, k] * gate<t>_weight[e, k] + gate<t>_bias[e])
//   mix_t[b, u]           = sum_e gate_t[b, e] * experts[b, e * U + u]
//   task<t>[b, 0]         = sigmoid(tower<t>_out(relu(tower<t>_hidden(mix_t))))
// with U = expert_units and Linear weights in [out, in] layout.
//
// Placeholders: x[batch, input], expert_weight[experts * U, input], expert_bias[experts * U]; per task t:
// gate<t>_weight[experts, input], gate<t>_bias, tower<t>_hidden_weight[tower_units, U], tower<t>_hidden_bias,
// tower<t>_out_weight[1, tower_units], tower<t>_out_bias[1]. Outputs "task0" .. "task<tasks-1>" [batch, 1];
// intermediate computes "experts", "gate<t>", "mix<t>". Program name "mmoe".
// Throws std::invalid_argument when a size is not positive.
Program mmoe(const MmoeSizes& sizes = {});

// The weight placeholders, in build order (what parameter counts add up).
std::vector<std::string> mmoe_weight_names(const MmoeSizes& sizes);

// Weight ranges as PyTorch's nn.Linear initialises them: weights and biases +-1/sqrt(fan_in); x keeps [-1, 1).
InputRanges mmoe_input_ranges(const MmoeSizes& sizes);

}  // namespace ingot
