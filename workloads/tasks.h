// Task workloads: single blocks cut out of the Souffle paper's models (a BERT GEMM, a ResNeXt grouped
// convolution, an LSTM cell, a Swin window attention, ...), each built by its model's own code at the model's
// sizes. They tune in seconds per candidate, so a cost-model data set can cover many kinds of stage; the registry
// (workloads/registry.h) lists each as "task:<block>".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"
#include "workloads/registry.h"

namespace ingot {

// A task as the registry declares it; the registry adds the figures it derives (FLOPs, parameter counts).
// build, weight_names and input_ranges take complete parameters (every parameter present, each positive).
struct TaskWorkload {
  std::string name;  // "task:<block>"; also the program's name
  std::string description;
  std::vector<WorkloadParameter> parameters;  // defaults: the block's sizes in the paper model
  WorkloadParams small;                       // the block's sizes in the model's small variant
  std::function<Program(const WorkloadParams&)> build;
  std::function<std::vector<std::string>(const WorkloadParams&)> weight_names;
  // Weights as their model initialises them (workloads/model_weights.h); activations keep [-1, 1).
  std::function<InputRanges(const WorkloadParams&)> input_ranges;
};

// The tasks, batch 1, fp32. Defaults are the block's sizes in the paper model, small its sizes in the model's small
// variant, so that a task computes what the model's tensors named below compute (tests/workloads/tasks_test.cc
// checks both). The block's input activations are placeholders; weights are named as in the model without the
// block prefix ("s0b1_conv2_weight" is "conv_weight").
//   task:bert_qkv          layer 0's query, key and value projections as one GEMM with bias: hidden_states
//                          [sequence, hidden] -> qkv [sequence, 3 hidden] (the model's l0_query, l0_key, l0_value)
//   task:bert_ffn          l0_ffn_in and l0_gelu: [sequence, hidden] x [hidden, intermediate] with bias and GELU
//                          (bert_ffn_expand, workloads/bert.h)
//   task:bert_softmax      l0_scores_scaled and l0_attn: scores [heads, sequence, sequence] / sqrt(head_dim),
//                          soft-maxed over the last axis (bert_attention_probs)
//   task:bert_layernorm    l0_attn_norm: layer norm of [sequence, hidden] with gamma and beta, BERT's epsilon
//   task:resnext_conv3x3_grouped  the grouped 3x3 convolution of the first stage with its folded batch norm and
//                          ReLU (s0b1_conv2, resnext_conv_bn_relu in workloads/resnext.h)
//   task:resnext_conv1x1   a 1x1 convolution of the first stage with batch norm and ReLU (paper: s0b1_conv1,
//                          small: s0b0_conv1, the only first-stage block there)
//   task:efficientnet_depthwise  a depthwise convolution with batch norm and SiLU (paper: s1b1_dw, small: s0b0_dw;
//                          efficientnet_depthwise in workloads/efficientnet.h)
//   task:efficientnet_expansion  a 1x1 expansion with batch norm and SiLU (paper: s4b1_expand, 112 -> 672 on 14 x
//                          14; small: s1b0_expand; efficientnet_expansion)
//   task:efficientnet_se   the same block's squeeze-and-excitation as task:efficientnet_depthwise's
//                          (efficientnet_squeeze_excitation)
//   task:lstm_cell         one cell of a layer above the first (ops/lstm_cell.h: workloads/lstm.cc's math): W x and
//                          U h_prev over the four stacked gates, then c and h, both outputs
//   task:swin_window_attention  s0b0's attention inside its windows (unshifted): q k^T, relative position bias,
//                          softmax, times v (swin_window_attention, workloads/swin.h)
const std::vector<TaskWorkload>& task_workloads();

}  // namespace ingot
