#include "workloads/tasks.h"

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ops/lstm_cell.h"
#include "workloads/bert.h"
#include "workloads/efficientnet.h"
#include "workloads/lstm.h"
#include "workloads/model_weights.h"
#include "workloads/resnext.h"
#include "workloads/swin.h"

namespace ingot {

namespace {

// A task's outputs from complete parameters; its weights are created through `weights`, which records their names
// and ranges, so that build, weight_names and input_ranges always agree.
using BlockBuilder = std::function<std::vector<Tensor>(const WorkloadParams&, ModelWeights& weights)>;

TaskWorkload make_task(const std::string& block, std::string description, std::vector<WorkloadParameter> parameters,
                       WorkloadParams small, BlockBuilder build_block) {
  TaskWorkload task;
  task.name = "task:" + block;
  task.description = std::move(description);
  task.parameters = std::move(parameters);
  task.small = std::move(small);
  const std::string name = task.name;
  task.build = [name, build_block](const WorkloadParams& p) {
    ModelWeights weights;
    return Program(build_block(p, weights), name);
  };
  task.weight_names = [build_block](const WorkloadParams& p) {
    ModelWeights weights;
    build_block(p, weights);
    return weights.names();
  };
  task.input_ranges = [build_block](const WorkloadParams& p) {
    ModelWeights weights;
    build_block(p, weights);
    return weights.ranges();
  };
  return task;
}

// An NCHW feature map of batch 1, the input of the convolution tasks.
Tensor feature_map(const WorkloadParams& p, const std::string& channels) {
  return placeholder("feature_map", {1, p.at(channels), p.at("map_size"), p.at("map_size")});
}

std::vector<TaskWorkload> bert_tasks() {
  const BertSizes paper, small = BertSizes::small();
  const WorkloadParameter sequence{"sequence", paper.sequence, "tokens"};
  const WorkloadParameter hidden{"hidden", paper.hidden, "hidden size"};
  auto hidden_states = [](const WorkloadParams& p) {
    return placeholder("hidden_states", {p.at("sequence"), p.at("hidden")});
  };
  std::vector<TaskWorkload> tasks;
  tasks.push_back(make_task("bert_qkv",
                            "BERT-base's query, key and value projections as one GEMM with bias (768 -> 2304)",
                            {sequence, hidden}, {{"sequence", small.sequence}, {"hidden", small.hidden}},
                            [=](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
                              return {weights.linear("qkv", hidden_states(p), 3 * p.at("hidden"))};
                            }));
  tasks.push_back(
      make_task("bert_ffn", "BERT-base's feed-forward expansion: GEMM with bias (768 -> 3072), exact (erf) GELU",
                {sequence, hidden, {"intermediate", paper.intermediate, "width of the feed-forward layer"}},
                {{"sequence", small.sequence}, {"hidden", small.hidden}, {"intermediate", small.intermediate}},
                [=](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
                  return {bert_ffn_expand(weights, "", hidden_states(p), p.at("intermediate"))};
                }));
  tasks.push_back(make_task(
      "bert_softmax", "BERT-base's attention softmax: 12 heads x 128 x 128 scores, scaled by 1/sqrt(head_dim)",
      {{"heads", paper.heads, "attention heads"},
       sequence,
       {"head_dim", paper.hidden / paper.heads, "channels per head (the scores are divided by its square root)"}},
      {{"heads", small.heads}, {"sequence", small.sequence}, {"head_dim", small.hidden / small.heads}},
      [](const WorkloadParams& p, ModelWeights&) -> std::vector<Tensor> {
        Tensor scores = placeholder("scores", {p.at("heads"), p.at("sequence"), p.at("sequence")});
        return {bert_attention_probs("", scores, p.at("head_dim"))};
      }));
  tasks.push_back(make_task("bert_layernorm",
                            "BERT-base's layer norm over 768 features of 128 tokens, with gamma and beta",
                            {sequence, hidden}, {{"sequence", small.sequence}, {"hidden", small.hidden}},
                            [=](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
                              return {weights.layer_norm("norm", hidden_states(p), kBertLayerNormEpsilon)};
                            }));
  return tasks;
}

std::vector<TaskWorkload> resnext_tasks() {
  const ResnextSizes paper, small = ResnextSizes::small();
  // The first stage's maps: the stem's stride-2 convolution and stride-2 max pool quarter the image. Its 3x3
  // convolutions are width_per_group * groups wide; its blocks after the first read 4 * base channels.
  const WorkloadParameter map_size{"map_size", paper.image / 4, "height and width of the feature map"};
  std::vector<TaskWorkload> tasks;
  tasks.push_back(make_task(
      "resnext_conv3x3_grouped",
      "ResNeXt-101 64x4d's first-stage grouped 3x3 convolution (256 channels, 64 groups, 56x56), batch norm, ReLU",
      {{"channels", paper.width_per_group * paper.groups, "input and output channels"},
       {"groups", paper.groups, "groups (cardinality); channels must be a multiple"},
       map_size},
      {{"channels", small.width_per_group * small.groups}, {"groups", small.groups}, {"map_size", small.image / 4}},
      [](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
        const int64_t channels = p.at("channels"), groups = p.at("groups");
        if (channels % groups != 0)
          throw std::invalid_argument("workload 'task:resnext_conv3x3_grouped': channels " + std::to_string(channels) +
                                      " is not a multiple of groups " + std::to_string(groups));
        return {resnext_conv_bn_relu(weights, "conv", "relu", feature_map(p, "channels"), channels, 3, 1, groups)};
      }));
  // The small model's first stage has one block, whose conv1 reads the stem's base channels.
  tasks.push_back(make_task("resnext_conv1x1",
                            "ResNeXt-101 64x4d's first-stage 1x1 convolution (256 -> 256, 56x56), batch norm, ReLU",
                            {{"in_channels", 4 * paper.base, "input channels"},
                             {"out_channels", paper.width_per_group * paper.groups, "output channels"},
                             map_size},
                            {{"in_channels", small.base},
                             {"out_channels", small.width_per_group * small.groups},
                             {"map_size", small.image / 4}},
                            [](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
                              return {resnext_conv_bn_relu(weights, "conv", "relu", feature_map(p, "in_channels"),
                                                           p.at("out_channels"), 1, 1, 1)};
                            }));
  return tasks;
}

std::vector<TaskWorkload> efficientnet_tasks() {
  // The paper model's block s1b1 (stage (6, 3, 2, 24, 2) of B0, second block: stride 1): 24 input channels
  // expanded 6 times, 3x3 kernel, on the 56x56 maps the stem and s1b0 halve the image to; its squeeze-and-excitation
  // keeps 24 / 4 units. The small model (channels / 8, 32x32 image) has one block per stage; its s0b0 (expand ratio
  // 1) works on the stem's 4 channels at 16x16 with 1 squeezed unit.
  std::vector<TaskWorkload> tasks;
  tasks.push_back(make_task(
      "efficientnet_depthwise", "EfficientNet-B0's depthwise 3x3 convolution (144 channels, 56x56), batch norm, SiLU",
      {{"channels", 144, "input and output channels (one group each)"},
       {"map_size", 56, "height and width of the input feature map"},
       {"kernel", 3, "kernel height and width (padding kernel / 2)"},
       {"stride", 1, "stride"}},
      {{"channels", 4}, {"map_size", 16}, {"kernel", 3}, {"stride", 1}},
      [](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
        return {efficientnet_depthwise(weights, "", feature_map(p, "channels"), p.at("kernel"), p.at("stride"))};
      }));
  // The paper model's block s4b1: 112 channels expanded to 672 on 14 x 14 maps. The small model's s1b0 expands the
  // 2 channels of s0b0 to 12 on its 16 x 16 maps.
  tasks.push_back(make_task(
      "efficientnet_expansion", "EfficientNet-B0's 1x1 expansion convolution (112 -> 672, 14x14), batch norm, SiLU",
      {{"in_channels", 112, "input channels"},
       {"out_channels", 672, "output channels (the expanded width)"},
       {"map_size", 14, "height and width of the feature map"}},
      {{"in_channels", 2}, {"out_channels", 12}, {"map_size", 16}},
      [](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
        return {efficientnet_expansion(weights, "", feature_map(p, "in_channels"), p.at("out_channels"))};
      }));
  tasks.push_back(make_task(
      "efficientnet_se",
      "EfficientNet-B0's squeeze-and-excitation: global pool, two dense layers (144 -> 6 -> 144), SiLU, sigmoid, scale",
      {{"channels", 144, "channels of the feature map"},
       {"squeezed", 6, "units of the squeezed layer"},
       {"map_size", 56, "height and width of the feature map"}},
      {{"channels", 4}, {"squeezed", 1}, {"map_size", 16}},
      [](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
        return {efficientnet_squeeze_excitation(weights, "", feature_map(p, "channels"), p.at("squeezed"))};
      }));
  return tasks;
}

TaskWorkload lstm_cell_task() {
  const LstmSizes paper, small = LstmSizes::small();
  return make_task("lstm_cell",
                   "one cell of the paper's LSTM: GEMVs over the four stacked gates (256 hidden), then c and h",
                   {{"hidden", paper.hidden, "hidden units"},
                    {"input", paper.hidden, "features of x (layers above the first: hidden)"}},
                   {{"hidden", small.hidden}, {"input", small.hidden}},
                   [](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
                     const int64_t hidden = p.at("hidden"), input = p.at("input"), gates = 4 * hidden;
                     Tensor x = placeholder("x", {input});
                     Tensor h_prev = placeholder("h_prev", {hidden}), c_prev = placeholder("c_prev", {hidden});
                     // nn.LSTM draws every weight and bias from +-1/sqrt(hidden), as lstm_input_ranges
                     // (workloads/lstm.h) does.
                     const ValueRange range = fan_in_range(hidden);
                     Tensor W = weights.placeholder("W", {gates, input}, range);
                     Tensor U = weights.placeholder("U", {gates, hidden}, range);
                     Tensor b = weights.placeholder("b", {gates}, range);
                     LstmCellOutputs cell = lstm_cell(LstmCellNames{"wx", "uh", "c", "h"}, x, h_prev, c_prev, W, U, b);
                     // c is an output too: the next step of the layer reads it.
                     return {cell.h, cell.c};
                   });
}

TaskWorkload swin_window_attention_task() {
  const SwinSizes paper, small = SwinSizes::small();
  // The first stage: maps of image / patch, cut into windows of window x window tokens.
  auto windows = [](const SwinSizes& s) {
    const int64_t per_side = s.image / s.patch / s.window;
    return per_side * per_side;
  };
  return make_task(
      "swin_window_attention",
      "Swin-B's first-stage window attention: 64 windows x 4 heads, 7x7 tokens, q k^T + position bias, softmax, x v",
      {{"windows", windows(paper), "windows of the feature map"},
       {"heads", paper.heads, "attention heads"},
       {"window", paper.window, "window side (window^2 tokens)"},
       {"head_dim", paper.embed / paper.heads, "channels per head"}},
      {{"windows", windows(small)},
       {"heads", small.heads},
       {"window", small.window},
       {"head_dim", small.embed / small.heads}},
      [](const WorkloadParams& p, ModelWeights& weights) -> std::vector<Tensor> {
        const int64_t heads = p.at("heads"), window = p.at("window");
        const std::vector<int64_t> shape{p.at("windows") * heads, window * window, p.at("head_dim")};
        Tensor q = placeholder("q", shape), k = placeholder("k", shape), v = placeholder("v", shape);
        return {swin_window_attention(weights, "", q, k, v, heads, window, Tensor())};
      });
}

}  // namespace

const std::vector<TaskWorkload>& task_workloads() {
  static const std::vector<TaskWorkload> tasks = [] {
    std::vector<TaskWorkload> all;
    for (std::vector<TaskWorkload> group : {bert_tasks(), resnext_tasks(), efficientnet_tasks()})
      for (TaskWorkload& task : group) all.push_back(std::move(task));
    all.push_back(lstm_cell_task());
    all.push_back(swin_window_attention_task());
    return all;
  }();
  return tasks;
}

}  // namespace ingot
