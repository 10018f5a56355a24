#include "analysis/access.h"

#include <gtest/gtest.h>

#include "workloads/examples.h"
#include "workloads/lstm.h"

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

// "name[lo:hi, ...] elements (kind, reads)" per input, one line each.
std::string footprints(const Tensor& compute) {
  std::string out;
  for (const TensorAccess& a : analyze_accesses(compute)) {
    out += a.tensor->name + "[";
    for (size_t d = 0; d < a.region.size(); ++d)
      out += (d ? ", " : "") + std::to_string(a.region[d].lo) + ":" + std::to_string(a.region[d].hi + 1);
    out += "] " + std::to_string(a.elements) + " elements " + std::to_string(a.bytes) + " B (" +
           access_kind_name(a.kind) + ", " + std::to_string(a.reads) + " reads)\n";
  }
  return out;
}

TEST(Access, MatmulReadsBothMatricesWhole) {
  Program p = matmul(24, 20, 16);
  EXPECT_EQ(footprints(p.find("C")),
            "A[0:24, 0:16] 384 elements 1536 B (reduce, 1 reads)\n"
            "B[0:16, 0:20] 320 elements 1280 B (reduce, 1 reads)\n");
}

// A row maximum kept as [rows, 1] (ONNX's keepdims, a softmax's) runs along memory: its innermost axis of more than
// one iteration moves the read by a row, while k walks it. With the unit axis taken as the innermost, it did not.
TEST(Access, KeptDimensionsDoNotHideAReductionAlongMemory) {
  Tensor x = placeholder("x", {12, 49});
  IterVar k = reduce_axis(49, "k");
  Tensor kept = compute("row_max", {12, 1}, [&](const Axes& i) { return max_reduce(x(i[0], k.var + i[1]), {k}); });
  EXPECT_EQ(reduction_axes_along_memory(kept), std::set<std::string>{"k"});
  Tensor scalar = compute("all_max", {1, 1}, [&](const Axes& i) { return max_reduce(x(i[0], k.var + i[1]), {k}); });
  EXPECT_TRUE(reduction_axes_along_memory(scalar).empty());
}

TEST(Access, LstmGateSlices) {
  Program p = lstm(LstmSizes::small());  // hidden 8: gates i, f, g, o are rows 0-7, 8-15, 16-23, 24-31
  // c reads gates i, f and g of wx, uh and b (three reads each, one merged region); h reads gate o.
  EXPECT_EQ(footprints(p.find("c_l0_t1")),
            "wx_l0_t1[0:24] 24 elements 96 B (remap, 3 reads)\n"
            "uh_l0_t1[0:24] 24 elements 96 B (remap, 3 reads)\n"
            "b0[0:24] 24 elements 96 B (remap, 3 reads)\n"
            "c_l0_t0[0:8] 8 elements 32 B (identity, 1 reads)\n");
  EXPECT_EQ(footprints(p.find("h_l0_t1")),
            "wx_l0_t1[24:32] 8 elements 32 B (remap, 1 reads)\n"
            "uh_l0_t1[24:32] 8 elements 32 B (remap, 1 reads)\n"
            "b0[24:32] 8 elements 32 B (remap, 1 reads)\n"
            "c_l0_t1[0:8] 8 elements 32 B (identity, 1 reads)\n");
  // Layer 0 reads one row of X per step.
  EXPECT_EQ(footprints(p.find("wx_l0_t2")),
            "W0[0:32, 0:8] 256 elements 1024 B (reduce, 1 reads)\n"
            "X[2:3, 0:8] 8 elements 32 B (reduce, 1 reads)\n");
}

TEST(Access, RegionsOfSeveralReads) {
  Tensor A = placeholder("A", {32}), M = placeholder("M", {9, 9});
  // Disjoint pieces count only what they touch; the region is their bounding interval.
  Tensor two = compute("two", {8}, [&](const Axes& i) { return A(i[0]) + A(i[0] + 16); });
  EXPECT_EQ(footprints(two), "A[0:24] 16 elements 64 B (remap, 2 reads)\n");
  // A stencil's overlapping windows merge into one interval.
  Tensor stencil = compute("stencil", {8}, [&](const Axes& i) { return A(i[0]) + A(i[0] + 1) + A(i[0] + 2); });
  EXPECT_EQ(footprints(stencil), "A[0:10] 10 elements 40 B (remap, 3 reads)\n");
  // Windows overlapping along two dimensions: the bounding box (81) over-counts the 79 elements read.
  Tensor diag = compute("diag", {8, 8}, [&](const Axes& i) { return M(i[0], i[1]) + M(i[0] + 1, i[1] + 1); });
  EXPECT_EQ(footprints(diag), "M[0:9, 0:9] 81 elements 324 B (remap, 2 reads)\n");
  // Stacked rows merge exactly.
  Tensor rows = compute("rows", {2, 9}, [&](const Axes& i) { return M(i[0], i[1]) + M(i[0] + 2, i[1]); });
  EXPECT_EQ(footprints(rows), "M[0:4, 0:9] 36 elements 144 B (remap, 2 reads)\n");
}

TEST(Access, GuardedAndDataDependentRegions) {
  Tensor A = placeholder("A", {6, 8});
  Tensor pad = compute("pad", {8, 10}, [&](const Axes& i) {
    Expr inside = logical_and(logical_and(ge(i[0], 1), le(i[0], 6)), logical_and(ge(i[1], 1), le(i[1], 8)));
    return select(inside, A(i[0] - 1, i[1] - 1), Expr(0.0));
  });
  EXPECT_EQ(footprints(pad), "A[0:6, 0:8] 48 elements 192 B (remap, 1 reads)\n");
  Tensor table = placeholder("table", {100, 16}), ids = placeholder("ids", {8}, DType::kInt32);
  Tensor gather = compute("gather", {8, 4}, [&](const Axes& i) { return table(ids(i[0]), i[1] + 4); });
  EXPECT_EQ(footprints(gather),
            "table[0:100, 4:8] 400 elements 1600 B (gather, 1 reads)\n"
            "ids[0:8] 8 elements 32 B (broadcast, 1 reads)\n");
  Tensor half = placeholder("half", {4, 4}, DType::kFloat16);
  Tensor widen = compute("widen", {4, 4}, [&](const Axes& i) { return cast(DType::kFloat32, half(i[0], i[1])); });
  EXPECT_EQ(footprints(widen), "half[0:4, 0:4] 16 elements 32 B (identity, 1 reads)\n");
  EXPECT_TRUE(analyze_accesses(A).empty());
}

}  // namespace
}  // namespace ingot
