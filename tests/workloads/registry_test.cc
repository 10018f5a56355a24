#include "workloads/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "interp/interpreter.h"
#include "workloads/bert.h"
#include "workloads/efficientnet.h"
#include "workloads/examples.h"
#include "workloads/lstm.h"
#include "workloads/mlp.h"
#include "workloads/mmoe.h"
#include "workloads/resnext.h"
#include "workloads/scale_into_weights.h"
#include "workloads/swin.h"

namespace ingot {
namespace {

std::string error_of(const std::string& name, const WorkloadParams& params) {
  try {
    make_workload(name, params);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Registry, ListsEveryWorkloadSorted) {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : list_workloads()) names.push_back(w.name);
  // The task workloads sort between swin and two_gemm; tests/workloads/tasks_test.cc names them.
  std::vector<std::string> models_and_examples;
  for (const std::string& name : names)
    if (name.rfind("task:", 0) != 0) models_and_examples.push_back(name);
  EXPECT_EQ(models_and_examples, (std::vector<std::string>{"bert", "efficientnet", "lstm", "matmul", "matmul_bias_relu",
                                                           "mlp", "mmoe", "resnext", "softmax", "swin", "two_gemm"}));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), models_and_examples.size() + 11);
  for (const WorkloadInfo& w : list_workloads()) {
    EXPECT_FALSE(w.description.empty()) << w.name;
    EXPECT_FALSE(w.parameters.empty()) << w.name;
    EXPECT_EQ(find_workload(w.name), &w);
    EXPECT_EQ(make_workload(w.name).name(), w.name);
  }
  EXPECT_EQ(find_workload("resnet"), nullptr);
}

TEST(Registry, DefaultsAndParametersReachTheBuilders) {
  EXPECT_TRUE(make_workload("mlp").structural_equal(mlp()));
  EXPECT_TRUE(make_workload("lstm", {{"steps", 3}, {"layers", 2}}).structural_equal(lstm(LstmSizes{2, 3, 256, 256})));
  EXPECT_TRUE(make_workload("mlp", {{"batch", 4}, {"in", 16}, {"hidden", 32}, {"out", 8}})
                  .structural_equal(mlp(MlpSizes::small())));
  EXPECT_TRUE(make_workload("matmul", {{"m", 3}, {"n", 5}, {"k", 7}}).structural_equal(matmul(3, 5, 7)));
  EXPECT_TRUE(
      make_workload("two_gemm", {{"m", 2}, {"hidden", 3}, {"k", 4}, {"n", 5}}).structural_equal(two_gemm(2, 3, 4, 5)));
  EXPECT_TRUE(make_workload("softmax", {{"cols", 9}}).structural_equal(softmax(1024, 9)));
  // The examples' own default and small sizes are the registry's.
  for (const ExampleProgram& e : example_programs()) {
    EXPECT_TRUE(make_workload(e.name).structural_equal(e.make_default())) << e.name;
    EXPECT_TRUE(make_workload(e.name, find_workload(e.name)->small).structural_equal(e.make_small())) << e.name;
  }
  EXPECT_TRUE(make_workload("lstm", find_workload("lstm")->small).structural_equal(lstm(LstmSizes::small())));
}

TEST(Registry, ModelDefaultsAreThePaperSizesAndSmallIsEachModelsSmall) {
  EXPECT_TRUE(make_workload("bert").structural_equal(bert()));
  EXPECT_TRUE(make_workload("mmoe").structural_equal(mmoe()));
  // make_workload folds squeeze-excitation's scales into the projections' weights (workloads/scale_into_weights.h).
  EXPECT_TRUE(make_workload("efficientnet").structural_equal(fold_scales_into_weights(efficientnet())));
  auto small = [](const std::string& name) { return make_workload(name, find_workload(name)->small); };
  EXPECT_TRUE(small("resnext").structural_equal(resnext(ResnextSizes::small())));
  EXPECT_TRUE(
      small("efficientnet").structural_equal(fold_scales_into_weights(efficientnet(EfficientnetSizes::small()))));
  EXPECT_TRUE(small("swin").structural_equal(swin(SwinSizes::small())));
  EXPECT_TRUE(small("bert").structural_equal(bert(BertSizes::small())));
  EXPECT_TRUE(small("mmoe").structural_equal(mmoe(MmoeSizes::small())));
  // Each parameter reaches its field.
  EXPECT_TRUE(make_workload("resnext", {{"blocks3", 2}, {"groups", 32}, {"width_per_group", 8}, {"image", 64}})
                  .structural_equal(resnext(ResnextSizes{64, {3, 4, 2, 3}, 32, 8, 64, 1000})));
  EXPECT_TRUE(make_workload("swin", {{"depth3", 6}, {"embed", 96}, {"heads", 3}})
                  .structural_equal(swin(SwinSizes{224, 4, 7, 96, {2, 2, 6, 2}, 3, 4, 1000})));
  EXPECT_TRUE(make_workload("bert", {{"layers", 1}, {"sequence", 16}, {"intermediate", 64}})
                  .structural_equal(bert(BertSizes{1, 768, 12, 64, 16})));
  EXPECT_TRUE(make_workload("mmoe", {{"experts", 4}, {"tasks", 3}, {"tower_units", 5}})
                  .structural_equal(mmoe(MmoeSizes{1, 100, 4, 16, 3, 5})));
  EXPECT_EQ(find_workload("swin")->weight_names({}), swin_weight_names(SwinSizes{}));
  EXPECT_EQ(find_workload("resnext")->weight_names({{"blocks1", 1}}).size(),
            resnext_weight_names(ResnextSizes{224, {1, 4, 23, 3}, 64, 4, 64, 1000}).size());
}

TEST(Registry, ErrorsNameTheProblemAndTheKnownChoices) {
  EXPECT_EQ(error_of("mlpp", {}),
            "unknown workload 'mlpp' (known: bert, efficientnet, lstm, matmul, matmul_bias_relu, mlp, mmoe, resnext, "
            "softmax, swin, task:bert_ffn, task:bert_layernorm, task:bert_qkv, task:bert_softmax, "
            "task:efficientnet_depthwise, task:efficientnet_expansion, task:efficientnet_se, task:lstm_cell, "
            "task:resnext_conv1x1, "
            "task:resnext_conv3x3_grouped, task:swin_window_attention, two_gemm)");
  EXPECT_EQ(error_of("mlp", {{"batchh", 3}}),
            "workload 'mlp' has no parameter 'batchh' (known: batch, in, hidden, out)");
  EXPECT_EQ(error_of("lstm", {{"layers", 0}}), "workload 'lstm': parameter 'layers' must be positive, got 0");
  EXPECT_THROW(complete_workload_params("matmul", {{"q", 1}}), std::invalid_argument);
  EXPECT_EQ(complete_workload_params("matmul", {{"k", 8}}), (WorkloadParams{{"m", 512}, {"n", 512}, {"k", 8}}));
}

TEST(Registry, FlopsMatchHandCounts) {
  auto flops = [](const std::string& name, const WorkloadParams& p = {}) { return find_workload(name)->flops(p); };
  EXPECT_EQ(flops("matmul"), 2LL * 512 * 512 * 512);
  // The GEMM, then the bias add and the max of relu.
  EXPECT_EQ(flops("matmul_bias_relu"), 2LL * 512 * 512 * 512 + 2LL * 512 * 512);
  // Row max (1 per element), subtract and exp (2), row sum (1), divide (1).
  EXPECT_EQ(flops("softmax"), 5LL * 1024 * 1024);
  EXPECT_EQ(flops("two_gemm"), 2LL * 128 * 512 * 1024 + 128LL * 1024 + 2LL * 128 * 1024 * 512);
  // mm1, z1 (1 add), a1 (x / sqrt2, erf, 1 +, * 0.5, x * = 5), mm2, Y (1 add).
  const int64_t B = 128, I = 512, H = 1024, O = 512;
  EXPECT_EQ(flops("mlp"), 2 * B * I * H + B * H * (1 + 5) + 2 * B * H * O + B * O);
  EXPECT_EQ(flops("mlp"), 269287424);
  EXPECT_EQ(flops("mlp", {{"batch", 1}, {"in", 1}, {"hidden", 1}, {"out", 1}}), 2 + 6 + 2 + 1);
}

TEST(Registry, ParameterCountsAddUpTheWeights) {
  auto params = [](const std::string& name, const WorkloadParams& p = {}) {
    return find_workload(name)->parameter_count(p);
  };
  EXPECT_EQ(params("mlp"), 512 * 1024 + 1024 + 1024 * 512 + 512);
  EXPECT_EQ(params("mlp", find_workload("mlp")->small), 16 * 32 + 32 + 32 * 8 + 8);
  EXPECT_EQ(params("lstm"), 10 * (4 * 256 * (256 + 256) + 4 * 256));
  EXPECT_EQ(params("lstm"), 5253120);
  EXPECT_EQ(params("lstm", {{"layers", 2}, {"input", 10}, {"hidden", 4}}), (16 * (10 + 4) + 16) + (16 * (4 + 4) + 16));
  EXPECT_EQ(params("matmul"), 512 * 512);
  EXPECT_EQ(params("matmul_bias_relu"), 512 * 512 + 512);
  EXPECT_EQ(params("softmax"), 0);
  EXPECT_EQ(params("two_gemm"), 512 * 1024 + 1024 * 512);
  EXPECT_THROW(params("mlp", {{"nope", 1}}), std::invalid_argument);
}

TEST(Registry, SmallVariantsRunInTheInterpreter) {
  for (const WorkloadInfo& w : list_workloads()) {
    Program p = make_workload(w.name, w.small);
    TensorMap out = interpret(p, random_inputs(p, 3));
    for (const Tensor& o : p.outputs()) EXPECT_EQ(out.count(o->name), 1u) << w.name;
  }
}

}  // namespace
}  // namespace ingot
