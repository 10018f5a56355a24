// merge_horizontal and find_horizontal_groups: a hand-built Before/Expected merge, the interpreter on merged
// programs (hand-built and every model's small variant), the groups found in the models, and the rejections.
#include "transform/horizontal_fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/interpreter.h"
#include "tests/transform/same_outputs.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using Axes = std::vector<Expr>;
using Groups = std::vector<std::vector<std::string>>;

// Q, K, V projections of one input (K written with other axis names), read by one element-wise output.
Program qkv() {
  Tensor X = placeholder("X", {2, 3});
  auto projection = [&](const std::string& name, std::vector<std::string> axes, const std::string& k_name) {
    Tensor W = placeholder("W" + name, {3, 4});
    IterVar k = reduce_axis(3, k_name);
    return compute(
        name, {2, 4}, [&](const Axes& i) { return sum(X(i[0], k.var) * W(k.var, i[1]), {k}); }, axes);
  };
  Tensor Q = projection("Q", {}, "k");
  Tensor K = projection("K", {"a", "b"}, "r");
  Tensor V = projection("V", {}, "k");
  Tensor S = compute("S", {2, 4}, [&](const Axes& i) { return Q(i[0], i[1]) + K(i[0], i[1]) * V(i[1] / 2, i[0]); });
  return Program({S}, "qkv");
}

TEST(HorizontalFusion, MergesQkvIntoOneTeWithALeadingGroupAxis) {
  Program before = qkv();
  EXPECT_EQ(find_horizontal_groups(before), (Groups{{"Q", "K", "V"}}));
  Program after = merge_horizontal(before, {{"Q", "K", "V"}});
  EXPECT_EQ(after.to_string(),
            "program qkv {\n"
            "  X: f32[2, 3] = placeholder\n"
            "  WQ: f32[3, 4] = placeholder\n"
            "  WK: f32[3, 4] = placeholder\n"
            "  WV: f32[3, 4] = placeholder\n"
            "  Q_hmerge: f32[3, 2, 4] = compute(g, i, j) sum(select((g == 0), (X[i, k] * WQ[k, j]), "
            "select((g == 1), (X[i, k] * WK[k, j]), (X[i, k] * WV[k, j]))), axes=[k:3])\n"
            "  S: f32[2, 4] = compute(i, j) (Q_hmerge[0, i, j] + (Q_hmerge[1, i, j] * Q_hmerge[2, (j / 2), i]))\n"
            "  outputs: S\n"
            "}\n");
  expect_same_outputs(before, after);
  // A group of two, in the order given: the merged TE is named after its first member.
  Program pair = merge_horizontal(before, {{"V", "Q"}});
  EXPECT_TRUE(pair.find("V_hmerge"));
  EXPECT_TRUE(pair.find("K"));
  EXPECT_FALSE(pair.find("Q"));
  expect_same_outputs(before, pair);
}

TEST(HorizontalFusion, MergesElementwiseTesAndRenamesAClashingGroupAxis) {
  Tensor X = placeholder("X", {3, 2});
  Tensor a = compute("a", {3, 2}, [&](const Axes& i) { return X(i[0], i[1]) * 2.0; }, {"g", "h"});
  Tensor b = compute("b", {3, 2}, [&](const Axes& i) { return math::exp(X(i[0], i[1])); });
  Tensor out = compute("out", {3, 2}, [&](const Axes& i) { return a(i[0], i[1]) - b(i[0], i[1]); });
  Program before({out}, "pair");
  // find_horizontal_groups pairs reductions only; element-wise TEs are for vertical fusion.
  EXPECT_TRUE(find_horizontal_groups(before).empty());
  Program after = merge_horizontal(before, {{"a", "b"}});
  EXPECT_EQ(tensor_definition(after.find("a_hmerge")),
            "a_hmerge: f32[2, 3, 2] = compute(g1, g, h) select((g1 == 0), (X[g, h] * 2.0), exp(X[g, h]))");
  expect_same_outputs(before, after);
}

TEST(HorizontalFusion, RejectsWhatCannotMerge) {
  Program p = qkv();
  auto message = [&](const Groups& groups) {
    try {
      merge_horizontal(p, groups);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"Q"}}).find("at least two members"), std::string::npos);
  EXPECT_NE(message({{"Q", "nope"}}).find("'nope' is not a tensor"), std::string::npos);
  EXPECT_NE(message({{"Q", "X"}}).find("'X' is a placeholder"), std::string::npos);
  EXPECT_NE(message({{"Q", "S"}}).find("'S' is a program output"), std::string::npos);
  EXPECT_NE(message({{"Q", "Q"}}).find("appears twice"), std::string::npos);
  EXPECT_NE(message({{"Q", "K"}, {"K", "V"}}).find("'K' belongs to two groups"), std::string::npos);

  Tensor X = placeholder("X", {4});
  IterVar k = reduce_axis(4, "k");
  Tensor total = compute("total", {1}, [&](const Axes&) { return sum(X(k.var), {k}); });
  IterVar k2 = reduce_axis(4, "k");
  Tensor peak = compute("peak", {1}, [&](const Axes&) { return max_reduce(X(k2.var), {k2}); });
  Tensor scaled = compute("scaled", {4}, [&](const Axes& i) { return X(i[0]) / total(0); });
  IterVar k3 = reduce_axis(4, "k");
  Tensor again = compute("again", {1}, [&](const Axes&) { return sum(scaled(k3.var), {k3}); });
  IterVar k4 = reduce_axis(4, "k");
  Tensor sumsq = compute("sumsq", {1}, [&](const Axes&) { return sum(X(k4.var) * X(k4.var), {k4}); });
  Tensor twice = compute("twice", {4}, [&](const Axes& i) { return X(i[0]) * 2.0; });
  Tensor as_int = compute("as_int", {4}, [&](const Axes& i) { return cast(DType::kInt64, X(i[0])); });
  Tensor total_hmerge = compute("total_hmerge", {1}, [&](const Axes&) { return Expr(1.0); });
  Tensor out = compute("out", {4}, [&](const Axes& i) {
    return again(0) + peak(0) + sumsq(0) + twice(i[0]) + cast(DType::kFloat32, as_int(i[0])) + total_hmerge(0);
  });
  Program q({out}, "bad");
  auto bad = [&](const Groups& groups) {
    try {
      merge_horizontal(q, groups);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(bad({{"again", "total"}}).find("'again' depends on 'total'"), std::string::npos);
  EXPECT_NE(bad({{"scaled", "total"}}).find("'total' has shape [1], unlike 'scaled' [4]"), std::string::npos);
  EXPECT_NE(bad({{"twice", "as_int"}}).find("'as_int' has dtype i64"), std::string::npos);
  EXPECT_NE(bad({{"peak", "again"}}).find("'again' has reduction (sum over 4), unlike 'peak' (max over 4)"),
            std::string::npos);
  EXPECT_NE(bad({{"twice", "scaled"}}).find("no error"), std::string::npos);
  EXPECT_NE(bad({{"total", "sumsq"}}).find("the merged name 'total_hmerge' is taken"), std::string::npos);
  EXPECT_NE(bad({{"again", "twice"}}).find("'twice' has shape [4]"), std::string::npos);
}

TEST(HorizontalFusion, RejectsGroupsThatReadEachOther) {
  // {A, B} and {C, D} are each independent, but C reads A and B reads D: no order computes both merged TEs.
  Tensor X = placeholder("X", {2});
  Tensor A = compute("A", {2}, [&](const Axes& i) { return X(i[0]) + 1.0; });
  Tensor D = compute("D", {2}, [&](const Axes& i) { return X(i[0]) * 3.0; });
  Tensor C = compute("C", {2}, [&](const Axes& i) { return A(i[0]) * 2.0; });
  Tensor B = compute("B", {2}, [&](const Axes& i) { return D(i[0]) - 1.0; });
  Tensor out = compute("out", {2}, [&](const Axes& i) { return B(i[0]) + C(i[0]); });
  Program p({out}, "cycle");
  try {
    merge_horizontal(p, {{"A", "B"}, {"C", "D"}});
    ADD_FAILURE() << "merged groups that read each other";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("each read the other's results"), std::string::npos) << e.what();
  }
  // Either group alone is fine; applied one after the other, the second then depends on itself.
  Program first = merge_horizontal(p, {{"A", "B"}});
  expect_same_outputs(p, first);
  EXPECT_THROW(merge_horizontal(first, {{"C", "D"}}), std::invalid_argument);
  expect_same_outputs(p, merge_horizontal(p, {{"C", "D"}}));
}

TEST(HorizontalFusion, FindsQkvGatesAndLstmWavefronts) {
  Program bert = make_workload("bert", find_workload("bert")->small);
  EXPECT_EQ(find_horizontal_groups(bert), (Groups{{"l0_query_matmul", "l0_key_matmul", "l0_value_matmul"},
                                                  {"l1_query_matmul", "l1_key_matmul", "l1_value_matmul"}}));
  Program merged = merge_horizontal(bert, find_horizontal_groups(bert));
  EXPECT_EQ(merged.computes().size(), bert.computes().size() - 4);  // one TE per layer instead of three
  EXPECT_EQ(merged.find("l0_query_matmul_hmerge")->shape[0], 3);

  Program mmoe = make_workload("mmoe", find_workload("mmoe")->small);
  Groups gates = find_horizontal_groups(mmoe, {.require_common_input = true});
  EXPECT_EQ(gates.size(), 2u);  // the gates' dense layers read x, the mixes read experts; towers share nothing
  EXPECT_EQ(gates[0], (std::vector<std::string>{"gate0_dense_matmul", "gate1_dense_matmul"}));

  // LSTM: depth-equal reductions are one wavefront diagonal; a cell's wx and uh share one.
  Program lstm = make_workload("lstm", find_workload("lstm")->small);
  bool cell_together = false;
  for (const auto& group : find_horizontal_groups(lstm)) {
    bool wx = std::find(group.begin(), group.end(), "wx_l1_t1") != group.end();
    bool uh = std::find(group.begin(), group.end(), "uh_l1_t1") != group.end();
    cell_together |= wx && uh;
    if (wx) {
      EXPECT_TRUE(uh) << "wx_l1_t1 without uh_l1_t1";
    }
  }
  EXPECT_TRUE(cell_together);
}

TEST(HorizontalFusion, SmallModelsKeepTheirOutputsWithFewerTes) {
  for (const std::string name : {"lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"}) {
    SCOPED_TRACE(name);
    const WorkloadInfo* info = find_workload(name);
    ASSERT_NE(info, nullptr);
    Program before = make_workload(name, info->small);
    Groups groups = find_horizontal_groups(before);
    size_t removed = 0;
    for (const auto& g : groups) removed += g.size() - 1;
    Program after = merge_horizontal(before, groups);
    EXPECT_EQ(after.computes().size(), before.computes().size() - removed);
    if (name == "lstm" || name == "mmoe" || name == "bert") {
      EXPECT_GT(removed, 0u);
    }
    expect_same_outputs(before, after, workload_input_ranges(name, info->small));
  }
}

}  // namespace
}  // namespace ingot
