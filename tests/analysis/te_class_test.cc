#include "analysis/te_class.h"

#include <gtest/gtest.h>

#include <map>

#include "workloads/examples.h"
#include "workloads/lstm.h"

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

std::string classes_of(const std::vector<Tensor>& outputs) { return format_te_classes(Program(outputs, "p")); }

TEST(TeClass, Matmul) { EXPECT_EQ(format_te_classes(matmul(24, 20, 16)), "C: many-to-many (A: reduce, B: reduce)\n"); }

TEST(TeClass, BiasAddIsABroadcastAndReluElementwise) {
  Tensor C = placeholder("C", {8, 4}), bias = placeholder("bias", {4});
  Tensor D = compute("D", {8, 4}, [&](const Axes& i) { return C(i[0], i[1]) + bias(i[1]); });
  Tensor R = compute("R", {8, 4}, [&](const Axes& i) { return maximum(D(i[0], i[1]), 0.0); });
  EXPECT_EQ(classes_of({R}),
            "D: one-to-many (C: identity, bias: broadcast)\n"
            "R: one-to-one (D: identity)\n");
}

TEST(TeClass, BroadcastForms) {
  Tensor X = placeholder("X", {8, 4}), row = placeholder("row", {1, 4}), col = placeholder("col", {8});
  // Expand without arithmetic; a unit dimension read at 0; a leading axis; a fill that reads nothing.
  Tensor E = compute("E", {8, 4}, [&](const Axes& i) { return row(0, i[1]); });
  Tensor F = compute("F", {8, 4}, [&](const Axes& i) { return X(i[0], i[1]) * row(0, i[1]) + col(i[0]); });
  Tensor Z = compute("Z", {8, 4}, [&](const Axes&) { return Expr(0.0); });
  // Axes used out of order are a transpose, not a broadcast.
  Tensor T = compute("T", {4, 8, 2}, [&](const Axes& i) { return X(i[1], i[0]); });
  EXPECT_EQ(classes_of({E, F, Z, T}),
            "E: one-to-many (row: broadcast)\n"
            "F: one-to-many (X: identity, row: broadcast, col: broadcast)\n"
            "Z: one-to-one ()\n"
            "T: reorganize (X: remap)\n");
}

TEST(TeClass, ReorganizeReadsByAffineRemapping) {
  Tensor A = placeholder("A", {6, 8}), B = placeholder("B", {2, 8});
  Tensor transpose = compute("transpose", {8, 6}, [&](const Axes& i) { return A(i[1], i[0]); });
  Tensor flat = compute("flat", {48}, [&](const Axes& f) { return A(f[0] / 8, f[0] % 8); });
  Tensor unflat = compute("unflat", {4, 12}, [&](const Axes& i) { return flat(i[0] * 12 + i[1]); });
  Tensor regroup = compute("regroup", {3, 16}, [&](const Axes& i) {
    Expr f = i[0] * 16 + i[1];
    return A(f / 8, f % 8);
  });
  Tensor slice = compute("slice", {3, 8}, [&](const Axes& i) { return A(i[0] + 2, i[1]); });
  Tensor row = compute("row", {8}, [&](const Axes& j) { return A(3, j[0]); });
  Tensor concat =
      compute("concat", {8, 8}, [&](const Axes& i) { return select(lt(i[0], 6), A(i[0], i[1]), B(i[0] - 6, i[1])); });
  Tensor pad = compute("pad", {8, 10}, [&](const Axes& i) {
    Expr inside = logical_and(logical_and(ge(i[0], 1), le(i[0], 6)), logical_and(ge(i[1], 1), le(i[1], 8)));
    return select(inside, A(i[0] - 1, i[1] - 1), Expr(0.0));
  });
  EXPECT_EQ(classes_of({transpose, unflat, regroup, slice, row, concat, pad}),
            "transpose: reorganize (A: remap)\n"
            "flat: reorganize (A: remap)\n"
            "unflat: reorganize (flat: remap)\n"
            "regroup: reorganize (A: remap)\n"
            "slice: reorganize (A: remap)\n"
            "row: reorganize (A: remap)\n"
            "concat: reorganize (A: remap, B: remap)\n"
            "pad: reorganize (A: remap)\n");
}

TEST(TeClass, ShuffleReadsByDataOrNonAffineIndex) {
  Tensor table = placeholder("table", {100, 16}), ids = placeholder("ids", {8}, DType::kInt32);
  Tensor X = placeholder("X", {10});
  Tensor gather = compute("gather", {8, 16}, [&](const Axes& i) { return table(ids(i[0]), i[1]); });
  Tensor roll = compute("roll", {10}, [&](const Axes& i) { return X((i[0] + 3) % 10); });
  Tensor clamp = compute("clamp", {12}, [&](const Axes& i) { return X(minimum(maximum(i[0] - 1, 0), 9)); });
  // A roll written as two affine pieces is a concat of slices.
  Tensor roll2 = compute("roll2", {10}, [&](const Axes& i) { return select(lt(i[0], 7), X(i[0] + 3), X(i[0] - 7)); });
  EXPECT_EQ(classes_of({gather, roll, clamp, roll2}),
            "gather: shuffle (table: gather, ids: broadcast)\n"
            "roll: shuffle (X: non-affine)\n"
            "clamp: shuffle (X: non-affine)\n"
            "roll2: reorganize (X: remap)\n");
}

TEST(TeClass, SoftmaxPieces) {
  EXPECT_EQ(format_te_classes(softmax(6, 20)),
            "row_max: many-to-many (X: reduce)\n"
            "e: one-to-many (X: identity, row_max: broadcast)\n"
            "row_sum: many-to-many (e: reduce)\n"
            "Y: one-to-many (e: identity, row_sum: broadcast)\n");
}

TEST(TeClass, LstmCell) {
  Program p = lstm(LstmSizes::small());
  std::string text = format_te_classes(p);
  // The first cell: two matrix-vector products, then c and h, which read gate slices of wx, uh and b.
  for (const char* line :
       {"h0: one-to-one ()\n", "c0: one-to-one ()\n", "wx_l0_t0: many-to-many (W0: reduce, X: reduce)\n",
        "uh_l0_t0: many-to-many (U0: reduce, h0: reduce)\n",
        "c_l0_t0: reorganize (wx_l0_t0: remap, uh_l0_t0: remap, b0: remap, c0: identity)\n",
        "h_l0_t0: reorganize (wx_l0_t0: remap, uh_l0_t0: remap, b0: remap, c_l0_t0: identity)\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << " not in\n" << text;
  std::map<TeClass, int> counts;
  for (const Tensor& t : p.computes()) ++counts[classify_te(t)];
  EXPECT_EQ(counts,
            (std::map<TeClass, int>{{TeClass::kOneToOne, 2}, {TeClass::kManyToMany, 12}, {TeClass::kReorganize, 12}}));
}

TEST(TeClass, ReadKindsOfSingleReads) {
  Tensor A = placeholder("A", {4, 8});
  Tensor out = compute("out", {4, 8}, [&](const Axes& i) { return A(i[0], i[1]); });
  Expr i = out->axes[0].var, j = out->axes[1].var;
  EXPECT_EQ(classify_read(out, A, {i, j}), AccessKind::kIdentity);
  EXPECT_EQ(classify_read(out, A, {i + 0, j}), AccessKind::kIdentity);
  EXPECT_EQ(classify_read(out, A, {j / 2, j}), AccessKind::kNonAffine);
  EXPECT_EQ(classify_read(out, A, {(i * 8 + j) / 8, (i * 8 + j) % 8}), AccessKind::kIdentity);
}

TEST(TeClass, IntensityAgainstTheRidge) {
  Target a100 = *find_target("sm_80");
  // 512^3 GEMM: 2 * 512^3 FLOPs over three 1 MiB matrices = 85.3 FLOP/byte, above the A100's 12.5.
  EXPECT_NEAR(arithmetic_intensity(2LL * 512 * 512 * 512, 3LL * 512 * 512 * 4), 85.33, 0.01);
  EXPECT_EQ(classify_intensity(85.33, a100), Intensity::kCompute);
  // A matrix-vector product reads each weight once for 2 FLOPs: 0.5 FLOP/byte.
  EXPECT_EQ(classify_intensity(0.5, a100), Intensity::kMemory);
  EXPECT_EQ(classify_intensity(a100.ridge_flops_per_byte(), a100), Intensity::kCompute);
  EXPECT_EQ(arithmetic_intensity(10, 0), 0.0);
}

}  // namespace
}  // namespace ingot
