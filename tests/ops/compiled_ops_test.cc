// Every operator family compiled by the C++ backend (default schedule) must agree with the reference
// interpreter: the TEs the ops build are valid input for lowering and printing, not only for interpretation.
#include <gtest/gtest.h>

#include <cstdint>

#include "interp/interpreter.h"
#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/gather.h"
#include "ops/layout.h"
#include "ops/linear.h"
#include "ops/lstm_cell.h"
#include "ops/norm.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/slicing.h"
#include "ops/softmax.h"
#include "ops/window.h"
#include "runtime/local_run.h"

namespace ingot {
namespace {

LocalRunOptions quick() {
  LocalRunOptions o;
  o.warmup_runs = 0;
  o.min_repeat_ms = 0;
  o.min_repeats = 1;
  o.threads = 2;
  return o;
}

void expect_compiled_matches_interpreter(const Program& p) {
  TensorMap inputs = random_inputs(p, 17);
  TensorMap expected = interpret(p, inputs);
  LocalRunResult r = local_run(p, Schedule(), inputs, expected, quick());
  for (size_t i = 0; i < r.checks.size(); ++i)
    EXPECT_TRUE(r.checks[i].ok) << p.outputs()[i]->name << ": " << r.checks[i].message;
  EXPECT_TRUE(r.correct);
}

TEST(CompiledOps, ConvolutionalPipeline) {
  Tensor x = placeholder("x", {1, 4, 9, 9});
  Tensor w = placeholder("w", {6, 2, 3, 3}), b = placeholder("b", {6});
  Tensor g = placeholder("g", {6}), be = placeholder("be", {6}), mu = placeholder("mu", {6}),
         var = placeholder("var", {6});
  Tensor var_pos = add_scalar("var_pos", abs("var_abs", var), 0.5);
  Tensor conv = conv2d("conv", x, w, b, {.stride = {1, 2}, .padding = {1, 2, 0, 1}, .groups = 2});
  Tensor bn = batch_norm("bn", conv, g, be, mu, var_pos);
  Tensor act = silu("act", bn);
  Tensor mp = max_pool2d("mp", act, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1, 1, 1}});
  Tensor ap = avg_pool2d("ap", act, {.kernel = {2, 2}, .padding = {1, 0, 0, 1}, .ceil_mode = true});
  Tensor gp = global_avg_pool2d("gp", ap);
  Tensor dw = placeholder("dw", {6, 1, 3, 3});
  Tensor depthwise = conv2d("depthwise", mp, dw, Tensor(), {.padding = {1, 1, 1, 1}, .groups = 6});
  expect_compiled_matches_interpreter(Program({gp, depthwise}, "conv_pipeline"));
}

TEST(CompiledOps, TransformerPieces) {
  Tensor x = placeholder("x", {1, 4, 4, 8});  // [B, H, W, C]
  Tensor rolled = roll("rolled", x, {-1, -1}, {1, 2});
  Tensor windows = window_partition("windows", rolled, 2);  // [4, 2, 2, 8]
  Tensor tokens = reshape("tokens", windows, {4, 4, 8});
  Tensor gamma = placeholder("gamma", {8}), beta = placeholder("beta", {8});
  Tensor ln = layer_norm("ln", tokens, gamma, beta);
  Tensor wq = placeholder("wq", {8, 8}), bq = placeholder("bq", {8});
  Tensor q = dense("q", ln, wq, bq);
  Tensor heads = transpose("heads", reshape("q_split", q, {4, 4, 2, 4}), {0, 2, 1, 3});  // [4, 2, 4, 4]
  Tensor scores = matmul("scores", heads, heads, false, true);
  Tensor table = placeholder("table", {9, 2});
  Tensor bias = gather_computed("rel_bias", table, 0, {4, 4}, [](const std::vector<Expr>& i) {
    return (i[0] / 2 - i[1] / 2 + 1) * 3 + i[0] % 2 - i[1] % 2 + 1;
  });
  Tensor bias_heads = transpose("bias_heads", bias, {2, 0, 1});  // [2, 4, 4]
  Tensor biased = add("biased", scores, bias_heads);
  Tensor attn = softmax("attn", biased, -1);
  Tensor ctx = matmul("ctx", attn, heads);
  Tensor merged = reshape("merged", transpose("ctx_t", ctx, {0, 2, 1, 3}), {4, 2, 2, 8});
  Tensor back = window_reverse("back", merged, 2, 4, 4);
  Tensor out = gelu("out", back);
  Tensor pooled = reduce_mean("pooled", out, {1, 2}, false);
  Tensor logp = log_softmax("logp", pooled);
  expect_compiled_matches_interpreter(Program({out, logp}, "transformer_pieces"));
}

TEST(CompiledOps, ShapeAndIndexOps) {
  Tensor x = placeholder("x", {3, 5});
  Tensor sliced = slice("sliced", x, {-1, 4}, {INT64_MIN, 0}, {0, 1}, {-1, -2});  // [3, 2]
  std::vector<Tensor> parts = split({"part0", "part1"}, x, 1, {2, 3});
  Tensor joined = concat("joined", {parts[1], sliced, parts[0]}, 1);
  Tensor padded = pad("padded", joined, {1, 2, 1, 0}, PadMode::kReflect);
  Tensor edged = pad("edged", padded, {0, 1, 2, 1}, PadMode::kEdge);
  Tensor zero_padded = pad("zero_padded", edged, {1, 0, 0, 1}, PadMode::kConstant, -2.0);
  Tensor gathered = gather("gathered", x, std::vector<int64_t>{2, 0, 2}, {3}, 0);
  Tensor cols = gather("cols", x, std::vector<int64_t>{4, 3}, {2}, 1);
  Tensor m = maximum("m", cols, placeholder("row", {2}));
  Tensor w = where("w", greater("gt", m, fill("half", {1}, 0.5)), m, neg("negm", m));
  Tensor mm = gemm("mm", x, x, placeholder("c", {5}), {.alpha = 2.0, .beta = 0.5, .transpose_a = true});
  Tensor mx = reduce_max("mx", mm, {0});
  expect_compiled_matches_interpreter(Program({zero_padded, gathered, w, mx}, "shape_ops"));
}

TEST(CompiledOps, IntegerIndexTensorGather) {
  Tensor table = placeholder("table", {8, 3});
  Tensor ids = placeholder("ids", {2, 2}, DType::kInt64);  // random_tensor gives integers in [0, 8)
  Tensor emb = embedding("emb", table, ids);
  expect_compiled_matches_interpreter(Program({emb}, "embedding"));
}

TEST(CompiledOps, LstmCell) {
  Tensor x = placeholder("x", {2, 3}), h = placeholder("h", {2, 4}), c = placeholder("c", {2, 4});
  Tensor W = placeholder("W", {16, 3}), U = placeholder("U", {16, 4}), b = placeholder("b", {16});
  LstmCellOutputs out = lstm_cell("cell", x, h, c, W, U, b);
  expect_compiled_matches_interpreter(Program({out.h, out.c}, "lstm_cell"));
}

}  // namespace
}  // namespace ingot
