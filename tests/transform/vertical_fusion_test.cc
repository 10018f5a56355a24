// fold_vertical: hand-built Before/Expected programs, the interpreter on folded programs (hand-built and every
// model's small variant), and the cases that must not fold.
#include "transform/vertical_fusion.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/interpreter.h"
#include "tests/transform/same_outputs.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

// transpose -> matmul -> bias add -> relu: the transpose becomes the matmul's load index; the bias add and relu
// become one element-wise TE reading the matmul.
Program matmul_epilogue() {
  Tensor A = placeholder("A", {4, 3});
  Tensor B = placeholder("B", {4, 5});
  Tensor bias = placeholder("bias", {5});
  Tensor At = compute("At", {3, 4}, [&](const Axes& i) { return A(i[1], i[0]); });
  IterVar k = reduce_axis(4, "k");
  Tensor C = compute("C", {3, 5}, [&](const Axes& i) { return sum(At(i[0], k.var) * B(k.var, i[1]), {k}); });
  Tensor D = compute("D", {3, 5}, [&](const Axes& i) { return C(i[0], i[1]) + bias(i[1]); });
  Tensor E = compute("E", {3, 5}, [&](const Axes& i) { return maximum(D(i[0], i[1]), 0.0); });
  return Program({E}, "epilogue");
}

TEST(VerticalFusion, FoldsDataMovementIntoReductionAndEpilogueIntoOneTe) {
  Program before = matmul_epilogue();
  FoldReport report;
  Program after = fold_vertical(before, {}, &report);
  EXPECT_EQ(report.folded, (std::vector<std::string>{"At", "D"}));
  EXPECT_EQ(after.to_string(),
            "program epilogue {\n"
            "  A: f32[4, 3] = placeholder\n"
            "  B: f32[4, 5] = placeholder\n"
            "  C: f32[3, 5] = compute(i, j) sum((A[k, i] * B[k, j]), axes=[k:4])\n"
            "  bias: f32[5] = placeholder\n"
            "  E: f32[3, 5] = compute(i, j) max((C[i, j] + bias[j]), 0.0)\n"
            "  outputs: E\n"
            "}\n");
  expect_same_outputs(before, after);
}

TEST(VerticalFusion, ComposesReshapeOfTransposeOfPadIntoIndices) {
  Tensor X = placeholder("X", {2, 3});
  Tensor P =
      compute("P", {2, 4}, [&](const Axes& i) { return select(lt(i[1], 3), X(i[0], minimum(i[1], 2)), Expr(0.0)); });
  Tensor T = compute("T", {4, 2}, [&](const Axes& i) { return P(i[1], i[0]); });
  Tensor R = compute("R", {8}, [&](const Axes& i) { return T(i[0] / 2, i[0] % 2); });
  IterVar k = reduce_axis(8, "k");
  Tensor S = compute("S", {1}, [&](const Axes&) { return sum(R(k.var) * R(k.var), {k}); });
  Program before({S}, "chain");
  Program after = fold_vertical(before);
  EXPECT_EQ(vertical_fold_candidates(before), (std::vector<std::string>{"P", "T", "R"}));
  ASSERT_EQ(after.computes().size(), 1u);
  EXPECT_EQ(tensor_definition(after.outputs()[0]),
            "S: f32[1] = compute(i) sum((select(((k / 2) < 3), X[(k % 2), min((k / 2), 2)], 0.0) * "
            "select(((k / 2) < 3), X[(k % 2), min((k / 2), 2)], 0.0)), axes=[k:8])");
  expect_same_outputs(before, after);
}

TEST(VerticalFusion, KeepsArithmeticReadBySeveralOrByReductionOrBroadcast) {
  Tensor X = placeholder("X", {4, 4});
  Tensor Y = placeholder("Y", {4});
  // Scaled is read by a reduction: folding it would recompute the scale per reduction step.
  Tensor scaled = compute("scaled", {4, 4}, [&](const Axes& i) { return X(i[0], i[1]) * 2.0; });
  IterVar k = reduce_axis(4, "k");
  Tensor rows = compute("rows", {4}, [&](const Axes& i) { return sum(scaled(i[0], k.var), {k}); });
  // shifted is read by two readers.
  Tensor shifted = compute("shifted", {4}, [&](const Axes& i) { return rows(i[0]) + Y(i[0]); });
  Tensor a = compute("a", {4}, [&](const Axes& i) { return shifted(i[0]) * 3.0; });
  Tensor b = compute("b", {4}, [&](const Axes& i) { return math::exp(shifted(i[0])); });
  // inv is read by a broadcast: each element would be recomputed four times.
  Tensor inv = compute("inv", {4}, [&](const Axes& i) { return 1.0 / (a(i[0]) + b(i[0]) + 5.0); });
  Tensor out = compute("out", {4, 4}, [&](const Axes& i) { return X(i[0], i[1]) * inv(i[0]); });
  Program before({out}, "kept");
  FoldReport report;
  Program after = fold_vertical(before, {}, &report);
  // Only a and b fold (each into inv, its sole element-wise reader of the same size).
  EXPECT_EQ(report.folded, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(tensor_definition(after.find("inv")),
            "inv: f32[4] = compute(i) (1.0 / (((shifted[i] * 3.0) + exp(shifted[i])) + 5.0))");
  for (const char* kept : {"scaled", "rows", "shifted", "inv", "out"}) EXPECT_TRUE(after.find(kept)) << kept;
  expect_same_outputs(before, after);
}

TEST(VerticalFusion, NeverFoldsOutputsAndOptionsSwitchRulesOff) {
  Tensor X = placeholder("X", {3});
  Tensor copy = compute("copy", {3}, [&](const Axes& i) { return X(2 - i[0]); });
  Tensor twice = compute("twice", {3}, [&](const Axes& i) { return copy(i[0]) * 2.0; });
  Tensor out = compute("out", {3}, [&](const Axes& i) { return twice(i[0]) + copy(i[0]); });
  Program before({out, copy}, "outputs");
  Program after = fold_vertical(before);
  EXPECT_EQ(vertical_fold_candidates(before), (std::vector<std::string>{"twice"}));
  EXPECT_TRUE(after.find("copy"));
  EXPECT_EQ(after.outputs()[1]->name, "copy");
  expect_same_outputs(before, after);

  Program p = matmul_epilogue();
  EXPECT_EQ(vertical_fold_candidates(p, {.fold_data_movement = false}), (std::vector<std::string>{"D"}));
  EXPECT_EQ(vertical_fold_candidates(p, {.fold_arithmetic = false}), (std::vector<std::string>{"At"}));
  EXPECT_TRUE(fold_vertical(p, {false, false}).structural_equal(p));
}

TEST(VerticalFusion, SmallModelsKeepTheirOutputsWithFewerTes) {
  for (const std::string name : {"lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"}) {
    SCOPED_TRACE(name);
    const WorkloadInfo* info = find_workload(name);
    ASSERT_NE(info, nullptr);
    Program before = make_workload(name, info->small);
    FoldReport report;
    Program after = fold_vertical(before, {}, &report);
    EXPECT_FALSE(report.folded.empty());
    EXPECT_EQ(after.computes().size() + report.folded.size(), before.computes().size());
    EXPECT_EQ(after.placeholders().size(), before.placeholders().size());
    expect_same_outputs(before, after, workload_input_ranges(name, info->small));
    // On the models one pass reaches the fixed point: a second finds nothing more to fold.
    EXPECT_TRUE(vertical_fold_candidates(after).empty());
  }
}

}  // namespace
}  // namespace ingot
