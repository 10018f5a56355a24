// The fusion strategies' fixed programs of imported ONNX models, as `ingot run --workload FILE.onnx` builds them:
// two small models in the shapes the paper models export (a transformer block with multi-head attention, LayerNorm,
// an MLP and torchvision's training-mode Dropout of ratio 0; a convolution block with a grouped, a depthwise and a
// pointwise convolution, batch norm, pooling and a Gemm), under every strategy, in the AVX-512 and the AVX2 form,
// each compiled and checked against the interpreter with the model's weights.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"
#include "interp/interpreter.h"
#include "lower/kernels.h"
#include "runtime/local_run.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "tests/workloads/onnx_test_models.h"
#include "workloads/onnx_import.h"

namespace ingot {

namespace {

using testing::OnnxModelBuilder;
using testing::set_attr;

// Weights of distinct, bounded values (a softmax over them stays well spread).
HostTensor weights(const std::vector<int64_t>& shape, float scale, float offset = 0) {
  HostTensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = offset + scale * std::sin(0.7f * float(i) + 0.3f);
  return t;
}

onnx::ModelProto transformer_block() {
  OnnxModelBuilder b;
  const int64_t tokens = 8, width = 32, heads = 2, head = 16, hidden = 64;
  b.input("x", {1, tokens, width});
  for (const char* w : {"wq", "wk", "wv"}) b.initializer(w, weights({width, width}, 0.2f));
  b.initializer("bq", weights({width}, 0.1f));
  b.ints("to_heads", {1, tokens, heads, head});
  b.ints("to_tokens", {1, tokens, width});
  b.floats("scale", {}, {0.25f});
  b.floats("ratio", {}, {0.0f});
  HostTensor training(DType::kBool, {});
  training.set(0, 1);
  b.initializer("training_mode", training);
  b.initializer("gamma", weights({width}, 0.1f, 1.0f));
  b.initializer("beta", weights({width}, 0.1f));
  b.initializer("w1", weights({width, hidden}, 0.2f));
  b.initializer("b1", weights({hidden}, 0.1f));
  b.initializer("w2", weights({hidden, width}, 0.15f));
  b.node("MatMul", {"x", "wq"}, {"q0"});
  b.node("Add", {"q0", "bq"}, {"q"});
  b.node("MatMul", {"x", "wk"}, {"k"});
  b.node("MatMul", {"x", "wv"}, {"v"});
  for (const char* t : {"q", "k", "v"}) b.node("Reshape", {t, "to_heads"}, {std::string(t) + "_heads"});
  set_attr(b.node("Transpose", {"q_heads"}, {"qh"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  set_attr(b.node("Transpose", {"k_heads"}, {"kh"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  set_attr(b.node("Transpose", {"v_heads"}, {"vh"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.node("MatMul", {"qh", "kh"}, {"scores"});
  b.node("Mul", {"scores", "scale"}, {"scaled"});
  set_attr(b.node("Softmax", {"scaled"}, {"p"}), "axis", int64_t(-1));
  b.node("Dropout", {"p", "ratio", "training_mode"}, {"p_kept"});
  b.node("MatMul", {"p_kept", "vh"}, {"o"});
  set_attr(b.node("Transpose", {"o"}, {"o_tokens"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.node("Reshape", {"o_tokens", "to_tokens"}, {"attention"});
  b.node("Add", {"x", "attention"}, {"r"});
  set_attr(b.node("LayerNormalization", {"r", "gamma", "beta"}, {"ln"}), "epsilon", 1e-5f);
  b.node("MatMul", {"ln", "w1"}, {"h0"});
  b.node("Add", {"h0", "b1"}, {"h1"});
  b.node("Relu", {"h1"}, {"h"});
  b.node("MatMul", {"h", "w2"}, {"m"});
  b.node("Add", {"ln", "m"}, {"y"});
  b.output("y");
  return b.model();
}

onnx::ModelProto convolution_block() {
  OnnxModelBuilder b;
  b.input("x", {1, 8, 10, 10});
  b.initializer("wg", weights({16, 4, 3, 3}, 0.2f));
  b.initializer("bg", weights({16}, 0.1f));
  b.initializer("bn_scale", weights({16}, 0.1f, 1.0f));
  b.initializer("bn_bias", weights({16}, 0.1f));
  b.initializer("bn_mean", weights({16}, 0.05f));
  b.initializer("bn_var", weights({16}, 0.1f, 1.0f));
  b.initializer("wd", weights({16, 1, 3, 3}, 0.3f));
  b.initializer("wp", weights({8, 16, 1, 1}, 0.2f));
  b.initializer("wf", weights({4, 8}, 0.3f));
  b.initializer("bf", weights({4}, 0.1f));
  auto& grouped = b.node("Conv", {"x", "wg", "bg"}, {"c"});
  set_attr(grouped, "group", int64_t(2));
  set_attr(grouped, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("BatchNormalization", {"c", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"bn"});
  b.node("Relu", {"bn"}, {"a"});
  auto& depthwise = b.node("Conv", {"a", "wd"}, {"d"});
  set_attr(depthwise, "group", int64_t(16));
  set_attr(depthwise, "strides", std::vector<int64_t>{2, 2});
  set_attr(depthwise, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Conv", {"d", "wp"}, {"p"});
  b.node("GlobalAveragePool", {"p"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  set_attr(b.node("Gemm", {"f", "wf", "bf"}, {"y"}), "transB", int64_t(1));
  b.output("y");
  return b.model();
}

using Case = std::tuple<std::string, std::string, CpuIsa>;  // model, strategy, ISA
class EveryStrategyOnAnOnnxModel : public ::testing::TestWithParam<Case> {};

TEST_P(EveryStrategyOnAnOnnxModel, MatchesTheInterpreter) {
  auto [model, strategy, isa] = GetParam();
  ImportedModel m = import_onnx_model(model == "transformer" ? transformer_block() : convolution_block());
  const Program& p = m.program;
  const Target target = isa == CpuIsa::kAvx2 ? test_support::avx2_cpu() : test_support::avx512_cpu();
  StrategyProgram sp = make_strategy_program(p, strategy, target);
  LocalRunOptions options;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  CompileOptions compile = options.compile;
  compile.flags = cpp_flags(cpu_isa_compiler_flags(isa));
  if (host_runs(isa))
    options.compile = compile;
  else  // compiled with the ISA's flags (CompileError when it fails), run with this CPU's
    compile_cpp(compile_to_cpp_source(p, sp.schedule).source, compile);
  TensorMap inputs = random_inputs(p, 5);
  for (const auto& [name, value] : m.initializers) inputs.insert_or_assign(name, value);
  LocalRunResult r = local_run(p, sp.schedule, inputs, interpret(p, inputs), options);
  for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << model << " " << strategy << ": " << c.message;
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(kernel_traffic(r.function).kernel_count(), sp.plan.kernel_count());
}

INSTANTIATE_TEST_SUITE_P(SmallOnnxModels, EveryStrategyOnAnOnnxModel,
                         ::testing::Combine(::testing::Values("transformer", "convolution"),
                                            ::testing::Values("unfused", "rules", "subgraph", "global"),
                                            ::testing::Values(CpuIsa::kAvx512, CpuIsa::kAvx2)),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  cpu_isa_name(std::get<2>(info.param));
                         });

}  // namespace
}  // namespace ingot
