// Horizontal batching: computes alike up to one read become one compute over a stacked read, with the same values.
#include "ir/horizontal_batch.h"

#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "workloads/lstm.h"

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

// Two layers of three steps without a recurrence: p_t = W x_t, q_t = tanh(p_t), r_t = V q_t, out = r_0 + r_1 + r_2.
Program two_projections() {
  Tensor X = placeholder("X", {3, 4});
  Tensor W = placeholder("W", {6, 4});
  Tensor V = placeholder("V", {6, 6});
  std::vector<Tensor> r;
  for (int64_t t = 0; t < 3; ++t) {
    IterVar k = reduce_axis(4, "k");
    Tensor p =
        compute("p" + std::to_string(t), {6}, [&](const Axes& g) { return sum(W(g[0], k.var) * X(t, k.var), {k}); });
    Tensor q = compute("q" + std::to_string(t), {6}, [&](const Axes& j) { return math::tanh(p(j[0])); });
    IterVar k2 = reduce_axis(6, "k");
    r.push_back(
        compute("r" + std::to_string(t), {6}, [&](const Axes& g) { return sum(V(g[0], k2.var) * q(k2.var), {k2}); }));
  }
  Tensor out = compute("out", {6}, [&](const Axes& g) { return r[0](g[0]) + r[1](g[0]) + r[2](g[0]); });
  return Program({out}, "two_projections");
}

TEST(HorizontalBatch, FindsTheProjectionsOfEachLayerButNotMapsWithoutASharedWeight) {
  const std::vector<BatchGroup> groups = batchable_groups(two_projections());
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], (BatchGroup{"p0_batched", "p0_stacked", {"p0", "p1", "p2"}}));
  EXPECT_EQ(groups[1], (BatchGroup{"r0_batched", "r0_stacked", {"r0", "r1", "r2"}}));
  // The q maps differ in their read of p and share no tensor: a stacked copy of p would cost more than it saves.
}

TEST(HorizontalBatch, BatchedProgramReadsAStackedOperandAndItsReadersTheBatchedCompute) {
  const Program before = two_projections();
  // The p_t read rows of X one apart: the batched compute reads X there, nothing is stacked.
  const Program after = batch_computes(before, BatchGroup{"P", "Xs", {"p0", "p1", "p2"}});
  EXPECT_FALSE(after.find("Xs"));
  EXPECT_EQ(tensor_definition(after.find("P")), "P: f32[3, 6] = compute(b, i) sum((W[i, k] * X[b, k]), axes=[k:4])");
  EXPECT_EQ(tensor_definition(after.find("q1")), "q1: f32[6] = compute(i) tanh(P[1, i])");
  EXPECT_FALSE(after.find("p1"));
  // The r_t read three different maps: those are stacked.
  const Program both = batch_computes(after, BatchGroup{"R", "Qs", {"r0", "r1", "r2"}});
  EXPECT_EQ(tensor_definition(both.find("Qs")),
            "Qs: f32[3, 6] = compute(i, j) select((i < 1), q0[j], select((i < 2), q1[j], q2[j]))");
  EXPECT_EQ(tensor_definition(both.find("R")), "R: f32[3, 6] = compute(b, i) sum((V[i, k] * Qs[b, k]), axes=[k:6])");
  EXPECT_EQ(tensor_definition(both.find("out")), "out: f32[6] = compute(i) ((R[0, i] + R[1, i]) + R[2, i])");
  // The inputs stay the same tensors; the outputs the same names.
  ASSERT_EQ(after.outputs().size(), 1u);
  EXPECT_EQ(after.outputs()[0]->name, "out");
}

TEST(HorizontalBatch, BatchedLstmComputesWhatTheLstmComputes) {
  const LstmSizes sizes{.layers = 2, .steps = 5, .hidden = 8, .input = 6};
  const Program lstm_program = lstm(sizes);
  const std::vector<BatchGroup> groups = batchable_groups(lstm_program);
  // Each layer's input projections, one group per layer; the recurrent products depend on one another.
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members.front(), "wx_l0_t0");
  EXPECT_EQ(groups[1].members.back(), "wx_l1_t4");
  // Layer 0's weight is 32 x 6, layer 1's 32 x 8: two kinds.
  EXPECT_NE(batch_group_kind(lstm_program, groups[0]), batch_group_kind(lstm_program, groups[1]));
  Program batched = lstm_program;
  for (const BatchGroup& g : groups) batched = batch_computes(batched, g);
  const TensorMap inputs = random_inputs(lstm_program, 7);
  const TensorMap expected = interpret(lstm_program, inputs);
  const TensorMap got = interpret(batched, inputs);
  const std::string out = lstm_program.outputs()[0]->name;
  ASSERT_TRUE(got.count(out));
  const Comparison c = compare(got.at(out), expected.at(out), 1e-5, 1e-6);
  EXPECT_TRUE(c.ok) << c.message;
}

TEST(HorizontalBatch, LayersOfTheSameShapeAreOneKind) {
  const Program lstm_program = lstm(LstmSizes{.layers = 3, .steps = 4, .hidden = 8, .input = 8});
  const std::vector<BatchGroup> groups = batchable_groups(lstm_program);
  ASSERT_EQ(groups.size(), 3u);
  // Layer 0 reads rows of X, the others each step's h, all of the same shape: one kind.
  EXPECT_EQ(batch_group_kind(lstm_program, groups[0]), batch_group_kind(lstm_program, groups[1]));
  EXPECT_EQ(batch_group_kind(lstm_program, groups[1]), batch_group_kind(lstm_program, groups[2]));
  EXPECT_EQ(batch_group_kind(lstm_program, groups[0]),
            "4 x f32[i:32,] reads f32 (k,) sum((f32_32_8[i, k] * ingot_batch_hole), axes=[k:8])");
}

// Projections of one input by three weights (attention's Q, K and V) differ in the weight they read: stacking weights
// would copy them at every run, so they are not offered.
TEST(HorizontalBatch, DoesNotStackWeights) {
  Tensor x = placeholder("x", {8});
  std::vector<Tensor> projections;
  for (const char* w : {"Wq", "Wk", "Wv"}) {
    Tensor W = placeholder(w, {8, 8});
    IterVar k = reduce_axis(8, "k");
    projections.push_back(
        compute(std::string("p") + w, {8}, [&](const Axes& g) { return sum(W(g[0], k.var) * x(k.var), {k}); }));
  }
  Tensor out = compute(
      "out", {8}, [&](const Axes& g) { return projections[0](g[0]) + projections[1](g[0]) + projections[2](g[0]); });
  const Program p({out}, "qkv");
  EXPECT_TRUE(batchable_groups(p).empty());
  // batch_computes itself still takes them, as a schedule says.
  const Program batched = batch_computes(p, BatchGroup{"P", "Ws", {"pWq", "pWk", "pWv"}});
  EXPECT_TRUE(batched.find("Ws"));
}

TEST(HorizontalBatch, RefusesWhatItCannotBatch) {
  const Program p = two_projections();
  auto refusal = [&](const BatchGroup& g) {
    try {
      batch_computes(p, g);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(refusal({"B", "S", {"p0", "r0"}}),
            "batch B: the members are not the same up to one read with the same variables");
  EXPECT_EQ(refusal({"B", "S", {"p0", "q0"}}),
            "batch B: the members are not the same up to one read with the same variables");
  EXPECT_EQ(refusal({"B", "S", {"p0"}}), "batch B: needs two or more members");
  EXPECT_EQ(refusal({"B", "S", {"p0", "nope"}}), "batch B: no compute 'nope'");
  EXPECT_EQ(refusal({"B", "S", {"p0", "X"}}), "batch B: 'X' is an input, not a compute");
  EXPECT_EQ(refusal({"q0", "S", {"p0", "p1"}}), "batch q0: the name 'q0' is taken");
  EXPECT_EQ(refusal({"B", "S", {"p0", "p0"}}), "batch B: 'p0' is named twice");
  EXPECT_THROW(batch_group_kind(p, {"B", "S", {"p0", "nope"}}), std::invalid_argument);
  EXPECT_THROW(batch_group_kind(p, {"B", "S", {}}), std::invalid_argument);
}

TEST(HorizontalBatch, RefusesMembersThatReadOneAnother) {
  // h_t = tanh(U h_{t-1}): alike up to the read of the step before, and each reads the last.
  Tensor U = placeholder("U", {4, 4});
  Tensor h = compute("h0", {4}, [&](const Axes&) { return Expr(1.0); });
  std::vector<std::string> steps;
  for (int t = 1; t <= 3; ++t) {
    IterVar k = reduce_axis(4, "k");
    Tensor prev = h;
    h = compute("h" + std::to_string(t), {4}, [&](const Axes& g) { return sum(U(g[0], k.var) * prev(k.var), {k}); });
    steps.push_back(h->name);
  }
  Tensor out = compute("out", {4}, [&](const Axes& g) { return math::tanh(h(g[0])); });
  const Program p({out}, "chain");
  EXPECT_TRUE(batchable_groups(p).empty());
  steps.pop_back();  // h3 reads h2, which reads h1
  EXPECT_THROW(batch_computes(p, BatchGroup{"B", "S", steps}), std::invalid_argument);
}

TEST(HorizontalBatch, ScheduleDecisionsApplyInOrderAndNameTheOneThatFails) {
  const Program p = two_projections();
  Schedule s;
  s.batch("P", {"p0", "p1", "p2"}, "Xs").batch("R", {"r0", "r1", "r2"}, "Qs");
  EXPECT_EQ(batch_groups_of(s).size(), 2u);
  const Program batched = batched_program(p, s);
  EXPECT_TRUE(batched.find("P"));
  EXPECT_TRUE(batched.find("R"));
  EXPECT_EQ(Schedule::from_json(s.to_json()), s);
  Schedule bad;
  bad.batch("P", {"p0", "p1"}, "Xs").batch("P2", {"p1", "p2"}, "Xs2");  // p1 is gone after the first
  try {
    batched_program(p, bad);
    FAIL() << "no error";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()), "decision #1 (batch P2 [p1, p2] stacking Xs2): batch P2: no compute 'p1'");
  }
}

}  // namespace
}  // namespace ingot
