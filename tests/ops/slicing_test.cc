#include "ops/slicing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::offset;
using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// numpy-style positions along one axis for ONNX Slice (python's slice.indices semantics).
std::vector<int64_t> positions(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto norm = [&](int64_t v, bool is_end) {
    if (v < 0) v = v < -dim ? -1 : v + dim;
    if (step > 0) return std::clamp<int64_t>(v, 0, dim);
    (void)is_end;
    return std::clamp<int64_t>(v, -1, dim - 1);
  };
  std::vector<int64_t> out;
  for (int64_t i = norm(start, false); step > 0 ? i < norm(end, true) : i > norm(end, true); i += step)
    out.push_back(i);
  return out;
}

TEST(Slice, HandValuesWithNegativeIndicesAndSteps) {
  Tensor x = placeholder("x", {6});
  HostTensor xv = tensor_of({6}, {0, 1, 2, 3, 4, 5});
  EXPECT_THAT(values_of(run(slice("a", x, {1}, {4}), {{"x", xv}})), ElementsAre(1, 2, 3));
  EXPECT_THAT(values_of(run(slice("b", x, {-2}, {kMax}), {{"x", xv}})), ElementsAre(4, 5));
  EXPECT_THAT(values_of(run(slice("c", x, {-1}, {kMin}, {0}, {-1}), {{"x", xv}})), ElementsAre(5, 4, 3, 2, 1, 0));
  EXPECT_THAT(values_of(run(slice("d", x, {0}, {6}, {0}, {2}), {{"x", xv}})), ElementsAre(0, 2, 4));
  EXPECT_THAT(values_of(run(slice("e", x, {4}, {0}, {}, {-3}), {{"x", xv}})), ElementsAre(4, 1));
}

TEST(Slice, RandomizedAgainstPlainLoops) {
  const std::vector<int64_t> xs{5, 6, 7};
  Tensor x = placeholder("x", xs);
  HostTensor xv = random_tensor(DType::kFloat32, xs, 11);
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  std::vector<Case> cases{
      {{1, -5}, {4, kMax}, {0, 2}, {1, 2}},
      {{-1, 5, 0}, {kMin, 1, 7}, {0, 1, 2}, {-2, -1, 3}},
      {{2}, {100}, {-2}, {}},
      {{-100, 3}, {3, -1}, {2, 0}, {1, 1}},
  };
  int n = 0;
  for (const Case& c : cases) {
    Tensor y = slice("y" + std::to_string(n++), x, c.starts, c.ends, c.axes, c.steps);
    std::vector<std::vector<int64_t>> pos;
    for (int64_t d = 0; d < 3; ++d) pos.push_back(positions(xs[size_t(d)], 0, kMax, 1));
    for (size_t k = 0; k < c.starts.size(); ++k) {
      int64_t d = c.axes[k] < 0 ? c.axes[k] + 3 : c.axes[k];
      pos[size_t(d)] = positions(xs[size_t(d)], c.starts[k], c.ends[k], c.steps.empty() ? 1 : c.steps[k]);
    }
    ASSERT_EQ(y->shape, (std::vector<int64_t>{int64_t(pos[0].size()), int64_t(pos[1].size()), int64_t(pos[2].size())}));
    HostTensor out = run(y, {{"x", xv}});
    op_test::for_each_index(y->shape, [&](const std::vector<int64_t>& o) {
      EXPECT_EQ(out.get(offset(y->shape, o)),
                xv.get(offset(xs, {pos[0][size_t(o[0])], pos[1][size_t(o[1])], pos[2][size_t(o[2])]})));
    });
  }
}

TEST(Split, EqualAndGivenSizes) {
  Tensor x = placeholder("x", {2, 5});
  HostTensor xv = tensor_of({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::vector<Tensor> parts = split({"p0", "p1"}, x, 1, {2, 3});
  TensorMap out = interpret(Program(parts), {{"x", xv}});
  EXPECT_THAT(values_of(out.at("p0")), ElementsAre(0, 1, 5, 6));
  EXPECT_THAT(values_of(out.at("p1")), ElementsAre(2, 3, 4, 7, 8, 9));
  std::vector<Tensor> equal = split({"q0", "q1", "q2"}, x, -1);
  EXPECT_EQ(equal[0]->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(equal[2]->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_THAT(values_of(run(equal[2], {{"x", xv}})), ElementsAre(4, 9));
}

TEST(Concat, JoinsAlongAnAxis) {
  Tensor a = placeholder("a", {2, 1}), b = placeholder("b", {2, 2}), c = placeholder("c", {2, 1});
  Tensor y = concat("y", {a, b, c}, 1);
  ASSERT_EQ(y->shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(op_test::compute_count({y}), 1u);
  HostTensor out = run(
      y, {{"a", tensor_of({2, 1}, {1, 2})}, {"b", tensor_of({2, 2}, {3, 4, 5, 6})}, {"c", tensor_of({2, 1}, {7, 8})}});
  EXPECT_THAT(values_of(out), ElementsAre(1, 3, 4, 7, 2, 5, 6, 8));
  Tensor rows = concat("rows", {b, b}, 0);
  EXPECT_THAT(values_of(run(rows, {{"b", tensor_of({2, 2}, {3, 4, 5, 6})}})), ElementsAre(3, 4, 5, 6, 3, 4, 5, 6));
}

TEST(Pad, ConstantReflectEdgeAndCrop) {
  Tensor x = placeholder("x", {1, 3});
  TensorMap in{{"x", tensor_of({1, 3}, {1, 2, 3})}};
  EXPECT_THAT(values_of(run(pad("c", x, {0, 2, 0, 1}, PadMode::kConstant, 9), in)), ElementsAre(9, 9, 1, 2, 3, 9));
  EXPECT_THAT(values_of(run(pad("r", x, {0, 2, 0, 2}, PadMode::kReflect), in)), ElementsAre(3, 2, 1, 2, 3, 2, 1));
  EXPECT_THAT(values_of(run(pad("e", x, {0, 2, 0, 1}, PadMode::kEdge), in)), ElementsAre(1, 1, 1, 2, 3, 3));
  EXPECT_THAT(values_of(run(pad("n", x, {0, -1, 0, 1}), in)), ElementsAre(2, 3, 0));
  Tensor y = pad("rows", x, {1, 0, 0, 0});
  EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(values_of(run(y, in)), ElementsAre(0, 0, 0, 1, 2, 3));
}

TEST(SlicingErrors, SliceZeroStepAndEmpty) {
  Tensor x = placeholder("x", {4, 5});
  EXPECT_THAT([&] { slice("s", x, {0}, {4}, {0}, {0}); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("slice 's': step of axis 0 is 0")));
  EXPECT_THAT([&] { slice("s", x, {3}, {1}, {1}); }, testing::ThrowsMessage<std::invalid_argument>(HasSubstr(
                                                         "slice 's': axis 1 of input [4,5] sliced [3:1:1] is empty")));
  EXPECT_THAT(
      [&] {
        slice("s", x, {0, 1}, {1});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("must have equal lengths")));
}

TEST(SlicingErrors, SplitSizes) {
  Tensor x = placeholder("x", {4, 5});
  EXPECT_THAT(
      [&] {
        split({"a", "b"}, x, 1, {2, 2});
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("split 'a': sizes [2,2] for 2 outputs do not split axis 1 of input [4,5]")));
}

TEST(SlicingErrors, ConcatShapes) {
  Tensor a = placeholder("a", {2, 3}), b = placeholder("b", {3, 3});
  EXPECT_THAT(
      [&] {
        concat("cat", {a, b}, 1);
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("concat 'cat': input 'b' [3,3] does not match input 'a' [2,3] outside axis 1")));
}

TEST(SlicingErrors, PadCount) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_THAT(
      [&] {
        pad("p", x, {1, 1});
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("pad 'p': pads [1,1] must hold 4 values for input [2,3]")));
  EXPECT_THAT(
      [&] {
        pad("p", x, {0, 3, 0, 0}, PadMode::kReflect);
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("reflect pads [0,3,0,0] must be smaller")));
}

}  // namespace
}  // namespace ingot
