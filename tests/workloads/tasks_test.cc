// The task workloads (workloads/tasks.h): registered under "task:<block>", built at both sizes, their figures
// as the registry counts them, their sizes the paper models' blocks', and their numbers those of the small models'
// tensors they were cut from; plain-loop references where one is short (GEMMs, softmax, layer norm).
#include "workloads/tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/bert.h"
#include "workloads/efficientnet.h"
#include "workloads/lstm.h"
#include "workloads/registry.h"
#include "workloads/resnext.h"
#include "workloads/swin.h"

namespace ingot {
namespace {

const std::vector<std::string> kTaskNames = {"task:bert_ffn",
                                             "task:bert_layernorm",
                                             "task:bert_qkv",
                                             "task:bert_softmax",
                                             "task:efficientnet_depthwise",
                                             "task:efficientnet_expansion",
                                             "task:efficientnet_se",
                                             "task:lstm_cell",
                                             "task:resnext_conv1x1",
                                             "task:resnext_conv3x3_grouped",
                                             "task:swin_window_attention"};

const WorkloadInfo& info(const std::string& name) {
  const WorkloadInfo* w = find_workload(name);
  if (!w) throw std::logic_error("no workload " + name);
  return *w;
}

Program small_task(const std::string& name) { return make_workload(name, info(name).small); }

TensorMap interpret_with_ranges(const Program& program, const InputRanges& ranges, uint64_t seed) {
  return interpret(program, random_inputs(program, seed, ranges));
}

TEST(Tasks, EveryTaskIsListedByTheRegistryInNameOrder) {
  std::vector<std::string> listed;
  for (const WorkloadInfo& w : list_workloads())
    if (w.name.rfind("task:", 0) == 0) listed.push_back(w.name);
  EXPECT_EQ(listed, kTaskNames);
  std::vector<std::string> declared;
  for (const TaskWorkload& t : task_workloads()) declared.push_back(t.name);
  std::sort(declared.begin(), declared.end());
  EXPECT_EQ(declared, kTaskNames);
}

TEST(Tasks, EveryTaskBuildsAtItsSmallSizeAndRunsInTheInterpreter) {
  for (const std::string& name : kTaskNames) {
    const WorkloadInfo& w = info(name);
    EXPECT_FALSE(w.description.empty()) << name;
    Program p = small_task(name);
    EXPECT_EQ(p.name(), name);
    EXPECT_GE(p.computes().size(), 2u) << name;
    TensorMap out = interpret_with_ranges(p, w.input_ranges(w.small), 5);
    for (const Tensor& o : p.outputs()) {
      ASSERT_EQ(out.count(o->name), 1u) << name << " " << o->name;
      for (int64_t i = 0; i < out.at(o->name).num_elements(); ++i)
        ASSERT_TRUE(std::isfinite(out.at(o->name).get(i))) << name << " " << o->name << "[" << i << "]";
    }
    // Every weight is a placeholder with a stated range; the activations are the other placeholders.
    const InputRanges ranges = w.input_ranges(w.small);
    for (const std::string& weight : w.weight_names(w.small)) {
      ASSERT_TRUE(p.find(weight) && p.find(weight)->is_placeholder()) << name << " " << weight;
      EXPECT_EQ(ranges.count(weight), 1u) << name << " " << weight;
    }
  }
}

TEST(Tasks, FlopsAreCountFlopsOfTheBuiltProgram) {
  for (const std::string& name : kTaskNames) {
    const WorkloadInfo& w = info(name);
    EXPECT_EQ(w.flops({}), count_flops(make_workload(name))) << name;
    EXPECT_EQ(w.flops(w.small), count_flops(small_task(name))) << name;
  }
  // By hand: the GEMM at 2 per multiply-add, then one add per output for the bias.
  EXPECT_EQ(info("task:bert_qkv").flops({}), 2LL * 128 * 768 * 2304 + 128LL * 2304);
  // The GEMM, the bias, then GELU's 5 (x / sqrt2, erf, 1 +, * 0.5, x *).
  EXPECT_EQ(info("task:bert_ffn").flops({}), 2LL * 128 * 768 * 3072 + 128LL * 3072 * (1 + 5));
  // The convolution, the batch norm's multiply and add, the ReLU's max.
  EXPECT_EQ(info("task:resnext_conv1x1").flops({}), 2LL * 256 * 256 * 56 * 56 + 3LL * 256 * 56 * 56);
  EXPECT_EQ(info("task:resnext_conv3x3_grouped").flops({}), 2LL * 256 * 4 * 9 * 56 * 56 + 3LL * 256 * 56 * 56);
  // Two batched products of [256, 49, 49] over 32 and 49 channels dominate the window attention.
  EXPECT_GT(info("task:swin_window_attention").flops({}), 2LL * 256 * 49 * 49 * 32 * 2);
}

TEST(Tasks, ParameterCountsAddUpTheWeights) {
  auto parameters = [](const std::string& name) { return info(name).parameter_count({}); };
  EXPECT_EQ(parameters("task:bert_qkv"), 768 * 2304 + 2304);
  EXPECT_EQ(parameters("task:bert_ffn"), 768 * 3072 + 3072);
  EXPECT_EQ(parameters("task:bert_softmax"), 0);
  EXPECT_EQ(parameters("task:bert_layernorm"), 2 * 768);
  EXPECT_EQ(parameters("task:resnext_conv3x3_grouped"), 256 * 4 * 9 + 2 * 256);
  EXPECT_EQ(parameters("task:resnext_conv1x1"), 256 * 256 + 2 * 256);
  EXPECT_EQ(parameters("task:efficientnet_depthwise"), 144 * 9 + 2 * 144);
  EXPECT_EQ(parameters("task:efficientnet_expansion"), 112 * 672 + 2 * 672);
  EXPECT_EQ(parameters("task:efficientnet_se"), (144 * 6 + 6) + (6 * 144 + 144));
  EXPECT_EQ(parameters("task:lstm_cell"), 1024 * 256 + 1024 * 256 + 1024);
  EXPECT_EQ(parameters("task:swin_window_attention"), 13 * 13 * 4);
  EXPECT_EQ(info("task:lstm_cell").weight_names({}), (std::vector<std::string>{"W", "U", "b"}));
}

TEST(Tasks, ParametersReachTheBuiltProgram) {
  Program ffn = make_workload("task:bert_ffn", {{"sequence", 3}, {"hidden", 5}, {"intermediate", 7}});
  EXPECT_EQ(ffn.find("gelu")->shape, (std::vector<int64_t>{3, 7}));
  Program conv = make_workload("task:resnext_conv3x3_grouped", {{"channels", 12}, {"groups", 3}, {"map_size", 5}});
  EXPECT_EQ(conv.find("conv_weight")->shape, (std::vector<int64_t>{12, 4, 3, 3}));
  Program dw = make_workload("task:efficientnet_depthwise", {{"kernel", 5}, {"stride", 2}, {"map_size", 9}});
  EXPECT_EQ(dw.find("dw_silu")->shape, (std::vector<int64_t>{1, 144, 5, 5}));
  Program attention = make_workload("task:swin_window_attention", {{"windows", 2}, {"window", 3}});
  EXPECT_EQ(attention.find("context")->shape, (std::vector<int64_t>{8, 9, 32}));
}

TEST(Tasks, AGroupedConvolutionNeedsChannelsThatDivideAmongTheGroups) {
  try {
    make_workload("task:resnext_conv3x3_grouped", {{"channels", 250}});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "workload 'task:resnext_conv3x3_grouped': channels 250 is not a multiple of groups 64");
  }
}

// Pairs {task tensor, model tensor} whose shapes (and, at the small size, values) agree.
using TensorPairs = std::vector<std::pair<std::string, std::string>>;

void expect_same_shapes(const std::string& task, const WorkloadParams& params, const Program& model,
                        const TensorPairs& pairs) {
  Program p = make_workload(task, params);
  for (const auto& [task_tensor, model_tensor] : pairs) {
    ASSERT_TRUE(p.find(task_tensor)) << task << ": " << task_tensor;
    ASSERT_TRUE(model.find(model_tensor)) << model.name() << ": " << model_tensor;
    EXPECT_EQ(p.find(task_tensor)->shape, model.find(model_tensor)->shape) << task << ": " << task_tensor;
  }
}

TEST(Tasks, DefaultsAreThePaperModelsBlocks) {
  const Program bert_model = bert(), resnext_model = resnext(), efficientnet_model = efficientnet();
  const Program lstm_model = lstm(LstmSizes{2, 2, 256, 256}), swin_model = swin();
  expect_same_shapes("task:bert_ffn", {}, bert_model,
                     {{"hidden_states", "l0_attn_norm"}, {"ffn_in_weight", "l0_ffn_in_weight"}, {"gelu", "l0_gelu"}});
  expect_same_shapes("task:bert_softmax", {}, bert_model, {{"scores", "l0_scores"}, {"attn", "l0_attn"}});
  expect_same_shapes(
      "task:bert_layernorm", {}, bert_model,
      {{"hidden_states", "l0_attn_residual"}, {"norm_gamma", "l0_attn_norm_gamma"}, {"norm", "l0_attn_norm"}});
  expect_same_shapes("task:bert_qkv", {}, bert_model, {{"hidden_states", "embeddings"}});
  EXPECT_EQ(make_workload("task:bert_qkv").find("qkv")->shape, (std::vector<int64_t>{128, 3 * 768}));
  expect_same_shapes("task:resnext_conv3x3_grouped", {}, resnext_model,
                     {{"feature_map", "s0b1_relu1"}, {"conv_weight", "s0b1_conv2_weight"}, {"relu", "s0b1_relu2"}});
  expect_same_shapes("task:resnext_conv1x1", {}, resnext_model,
                     {{"feature_map", "s0b0_relu3"}, {"conv_weight", "s0b1_conv1_weight"}, {"relu", "s0b1_relu1"}});
  expect_same_shapes(
      "task:efficientnet_depthwise", {}, efficientnet_model,
      {{"feature_map", "s1b1_expand_silu"}, {"dw_weight", "s1b1_dw_weight"}, {"dw_silu", "s1b1_dw_silu"}});
  expect_same_shapes(
      "task:efficientnet_expansion", {}, efficientnet_model,
      {{"feature_map", "s4b0_project_bn"}, {"expand_weight", "s4b1_expand_weight"}, {"expand_silu", "s4b1_expand_silu"}});
  expect_same_shapes("task:efficientnet_se", {}, efficientnet_model,
                     {{"feature_map", "s1b1_dw_silu"},
                      {"se_reduce_weight", "s1b1_se_reduce_weight"},
                      {"se_expand_weight", "s1b1_se_expand_weight"},
                      {"se_scale", "s1b1_se_scale"}});
  expect_same_shapes("task:lstm_cell", {}, lstm_model,
                     {{"x", "h_l0_t1"}, {"W", "W1"}, {"U", "U1"}, {"b", "b1"}, {"h", "h_l1_t1"}, {"c", "c_l1_t1"}});
  expect_same_shapes("task:swin_window_attention", {}, swin_model,
                     {{"q", "s0b0_q"},
                      {"k", "s0b0_k"},
                      {"rel_bias_table", "s0b0_rel_bias_table"},
                      {"attn", "s0b0_attn"},
                      {"context", "s0b0_context"}});
}

// A small model interpreted once, with its own input ranges.
struct InterpretedModel {
  Program program;
  TensorMap inputs, values;  // placeholders; every compute
  explicit InterpretedModel(Program p, const InputRanges& ranges)
      : program(std::move(p)), inputs(random_inputs(program, 11, ranges)), values(interpret(program, inputs)) {}
  const HostTensor& at(const std::string& name) const {
    auto input = inputs.find(name);
    if (input != inputs.end()) return input->second;
    return values.at(name);
  }
};

// Runs the small task with each placeholder fed from the model tensor it stands for (`feeds`, every placeholder
// named) and checks that the task's `results` equal the model's. Both evaluate the same expressions on the same
// numbers, so they agree to the last bit but for an interpreter's freedom of summation order.
void expect_task_computes_the_model(const std::string& task, const InterpretedModel& model, const TensorPairs& feeds,
                                    const TensorPairs& results) {
  Program p = small_task(task);
  TensorMap inputs;
  for (const auto& [task_tensor, model_tensor] : feeds) inputs[task_tensor] = model.at(model_tensor);
  for (const Tensor& placeholder : p.placeholders())
    ASSERT_EQ(inputs.count(placeholder->name), 1u) << task << ": no feed for " << placeholder->name;
  TensorMap out = interpret(p, inputs);
  for (const auto& [task_tensor, model_tensor] : results) {
    Comparison c = compare(out.at(task_tensor), model.at(model_tensor), 1e-6, 1e-6);
    EXPECT_TRUE(c.ok) << task << ": " << task_tensor << " vs " << model_tensor << ": " << c.message;
  }
}

TEST(Tasks, SmallTasksComputeTheSmallModelsTensors) {
  const InterpretedModel bert_model(bert(BertSizes::small()), bert_input_ranges(BertSizes::small()));
  expect_task_computes_the_model(
      "task:bert_ffn", bert_model,
      {{"hidden_states", "l0_attn_norm"}, {"ffn_in_weight", "l0_ffn_in_weight"}, {"ffn_in_bias", "l0_ffn_in_bias"}},
      {{"gelu", "l0_gelu"}});
  expect_task_computes_the_model("task:bert_softmax", bert_model, {{"scores", "l0_scores"}},
                                 {{"scores_scaled", "l0_scores_scaled"}, {"attn", "l0_attn"}});
  expect_task_computes_the_model(
      "task:bert_layernorm", bert_model,
      {{"hidden_states", "l0_attn_residual"}, {"norm_gamma", "l0_attn_norm_gamma"}, {"norm_beta", "l0_attn_norm_beta"}},
      {{"norm", "l0_attn_norm"}});

  const InterpretedModel resnext_model(resnext(ResnextSizes::small()), resnext_input_ranges(ResnextSizes::small()));
  expect_task_computes_the_model("task:resnext_conv3x3_grouped", resnext_model,
                                 {{"feature_map", "s0b0_relu1"},
                                  {"conv_weight", "s0b0_conv2_weight"},
                                  {"conv_bn_scale", "s0b0_conv2_bn_scale"},
                                  {"conv_bn_shift", "s0b0_conv2_bn_shift"}},
                                 {{"relu", "s0b0_relu2"}});
  expect_task_computes_the_model("task:resnext_conv1x1", resnext_model,
                                 {{"feature_map", "stem_pool"},
                                  {"conv_weight", "s0b0_conv1_weight"},
                                  {"conv_bn_scale", "s0b0_conv1_bn_scale"},
                                  {"conv_bn_shift", "s0b0_conv1_bn_shift"}},
                                 {{"relu", "s0b0_relu1"}});

  const InterpretedModel efficientnet_model(efficientnet(EfficientnetSizes::small()),
                                            efficientnet_input_ranges(EfficientnetSizes::small()));
  // The small model's first block has no expansion: its depthwise convolution reads the stem.
  expect_task_computes_the_model("task:efficientnet_depthwise", efficientnet_model,
                                 {{"feature_map", "stem_silu"},
                                  {"dw_weight", "s0b0_dw_weight"},
                                  {"dw_bn_scale", "s0b0_dw_bn_scale"},
                                  {"dw_bn_shift", "s0b0_dw_bn_shift"}},
                                 {{"dw_silu", "s0b0_dw_silu"}});
  expect_task_computes_the_model("task:efficientnet_expansion", efficientnet_model,
                                 {{"feature_map", "s0b0_project_bn"},
                                  {"expand_weight", "s1b0_expand_weight"},
                                  {"expand_bn_scale", "s1b0_expand_bn_scale"},
                                  {"expand_bn_shift", "s1b0_expand_bn_shift"}},
                                 {{"expand_silu", "s1b0_expand_silu"}});
  expect_task_computes_the_model("task:efficientnet_se", efficientnet_model,
                                 {{"feature_map", "s0b0_dw_silu"},
                                  {"se_reduce_weight", "s0b0_se_reduce_weight"},
                                  {"se_reduce_bias", "s0b0_se_reduce_bias"},
                                  {"se_expand_weight", "s0b0_se_expand_weight"},
                                  {"se_expand_bias", "s0b0_se_expand_bias"}},
                                 {{"se_gate", "s0b0_se_gate"}, {"se_scale", "s0b0_se_scale"}});

  // Layer 1 at step 1: x is layer 0's h of the same step, the state is layer 1's of step 0.
  const InterpretedModel lstm_model(lstm(LstmSizes::small()), lstm_input_ranges(LstmSizes::small()));
  expect_task_computes_the_model(
      "task:lstm_cell", lstm_model,
      {{"x", "h_l0_t1"}, {"h_prev", "h_l1_t0"}, {"c_prev", "c_l1_t0"}, {"W", "W1"}, {"U", "U1"}, {"b", "b1"}},
      {{"h", "h_l1_t1"}, {"c", "c_l1_t1"}});

  const InterpretedModel swin_model(swin(SwinSizes::small()), swin_input_ranges(SwinSizes::small()));
  expect_task_computes_the_model(
      "task:swin_window_attention", swin_model,
      {{"q", "s0b0_q"}, {"k", "s0b0_k"}, {"v", "s0b0_v"}, {"rel_bias_table", "s0b0_rel_bias_table"}},
      {{"attn", "s0b0_attn"}, {"context", "s0b0_context"}});
}

// The fused projection is the model's three: its weight rows and bias are query's, key's and value's stacked.
TEST(Tasks, SmallQkvIsTheSmallModelsQueryKeyAndValue) {
  const BertSizes s = BertSizes::small();
  const InterpretedModel model(bert(s), bert_input_ranges(s));
  const int64_t hidden = s.hidden;
  HostTensor weight(DType::kFloat32, {3 * hidden, hidden}), bias(DType::kFloat32, {3 * hidden});
  const std::vector<std::string> parts = {"l0_query", "l0_key", "l0_value"};
  for (int64_t part = 0; part < 3; ++part) {
    const HostTensor& w = model.at(parts[size_t(part)] + "_weight");
    const HostTensor& b = model.at(parts[size_t(part)] + "_bias");
    for (int64_t i = 0; i < hidden * hidden; ++i) weight.set(part * hidden * hidden + i, w.get(i));
    for (int64_t i = 0; i < hidden; ++i) bias.set(part * hidden + i, b.get(i));
  }
  Program p = small_task("task:bert_qkv");
  TensorMap out = interpret(p, {{"hidden_states", model.at("embeddings")}, {"qkv_weight", weight}, {"qkv_bias", bias}});
  const HostTensor& qkv = out.at("qkv");
  for (int64_t part = 0; part < 3; ++part) {
    const HostTensor& expected = model.at(parts[size_t(part)]);
    for (int64_t row = 0; row < s.sequence; ++row)
      for (int64_t col = 0; col < hidden; ++col)
        EXPECT_NEAR(qkv.get(row * 3 * hidden + part * hidden + col), expected.get(row * hidden + col), 1e-6)
            << parts[size_t(part)] << "[" << row << ", " << col << "]";
  }
}

// y[r, n] = sum_k x[r, k] * weight[n, k] + bias[n] in double with plain loops.
std::vector<double> naive_linear(const HostTensor& x, const HostTensor& weight, const HostTensor& bias) {
  const int64_t rows = x.shape()[0], in = x.shape()[1], out = weight.shape()[0];
  std::vector<double> y(size_t(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = 0; n < out; ++n) {
      double v = bias.get(n);
      for (int64_t k = 0; k < in; ++k) v += x.get(r * in + k) * weight.get(n * in + k);
      y[size_t(r * out + n)] = v;
    }
  return y;
}

TEST(Tasks, GemmsMatchPlainLoops) {
  // Sizes where no two GEMM dimensions are equal, to catch a swapped index.
  struct GemmCase {
    std::string task;
    WorkloadParams params;
    std::string layer, output;
    bool gelu;
  };
  const std::vector<GemmCase> cases = {
      {"task:bert_qkv", {{"sequence", 5}, {"hidden", 12}}, "qkv", "qkv", false},
      {"task:bert_ffn", {{"sequence", 5}, {"hidden", 12}, {"intermediate", 20}}, "ffn_in", "gelu", true}};
  for (const GemmCase& g : cases) {
    Program p = make_workload(g.task, g.params);
    TensorMap inputs = random_inputs(p, 3, info(g.task).input_ranges(g.params));
    const HostTensor actual = interpret(p, inputs).at(g.output);
    std::vector<double> expected =
        naive_linear(inputs.at("hidden_states"), inputs.at(g.layer + "_weight"), inputs.at(g.layer + "_bias"));
    ASSERT_EQ(actual.num_elements(), int64_t(expected.size())) << g.task;
    for (size_t i = 0; i < expected.size(); ++i) {
      const double z = expected[i];
      EXPECT_NEAR(actual.get(int64_t(i)), g.gelu ? 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))) : z, 1e-5)
          << g.task << "[" << i << "]";
    }
  }
}

TEST(Tasks, SoftmaxRowsArePositiveAndSumToOne) {
  const WorkloadParams params{{"heads", 3}, {"sequence", 6}, {"head_dim", 4}};
  Program p = make_workload("task:bert_softmax", params);
  TensorMap inputs = random_inputs(p, 7);
  const HostTensor& scores = inputs.at("scores");
  const HostTensor probs = interpret(p, inputs).at("attn");
  for (int64_t row = 0; row < 3 * 6; ++row) {
    double total = 0, max_score = -1e300;
    for (int64_t j = 0; j < 6; ++j) max_score = std::max(max_score, scores.get(row * 6 + j) / 2.0);
    for (int64_t j = 0; j < 6; ++j) total += std::exp(scores.get(row * 6 + j) / 2.0 - max_score);
    double sum = 0;
    for (int64_t j = 0; j < 6; ++j) {
      const double prob = probs.get(row * 6 + j);
      EXPECT_GT(prob, 0.0);
      // scores / sqrt(head_dim 4), soft-maxed.
      EXPECT_NEAR(prob, std::exp(scores.get(row * 6 + j) / 2.0 - max_score) / total, 1e-6);
      sum += prob;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
  }
}

TEST(Tasks, LayerNormRowsHaveMeanZeroAndVarianceOneWithUnitGammaAndZeroBeta) {
  const int64_t sequence = 4, hidden = 32;
  Program p = make_workload("task:bert_layernorm", {{"sequence", sequence}, {"hidden", hidden}});
  TensorMap inputs = random_inputs(p, 9);
  for (int64_t c = 0; c < hidden; ++c) {
    inputs.at("norm_gamma").set(c, 1.0);
    inputs.at("norm_beta").set(c, 0.0);
  }
  const HostTensor y = interpret(p, inputs).at("norm");
  for (int64_t r = 0; r < sequence; ++r) {
    double mean = 0, variance = 0;
    for (int64_t c = 0; c < hidden; ++c) mean += y.get(r * hidden + c) / hidden;
    for (int64_t c = 0; c < hidden; ++c)
      variance += (y.get(r * hidden + c) - mean) * (y.get(r * hidden + c) - mean) / hidden;
    EXPECT_NEAR(mean, 0.0, 1e-5) << "row " << r;
    EXPECT_NEAR(variance, 1.0, 1e-4) << "row " << r;
  }
}

}  // namespace
}  // namespace ingot
