#include "ops/layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::offset;
using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

// A reshape keeps the row-major element order.
void expect_same_order(const Tensor& y, const Tensor& x) {
  HostTensor xv = random_tensor(DType::kFloat32, x->shape, 3);
  HostTensor out = run(y, {{x->name, xv}});
  ASSERT_EQ(out.shape(), y->shape);
  EXPECT_EQ(values_of(out), values_of(xv)) << y->name;
}

TEST(Reshape, KeepsRowMajorOrder) {
  Tensor x = placeholder("x", {2, 3, 4});
  expect_same_order(reshape("a", x, {6, 4}), x);
  expect_same_order(reshape("b", x, {4, 3, 2}), x);
  expect_same_order(reshape("c", x, {2, -1}), x);
  expect_same_order(reshape("d", x, {0, 2, 1, 6}), x);
  expect_same_order(reshape("e", x, {24}), x);
  expect_same_order(reshape("f", x, {1, 2, 1, 12, 1}), x);
  Tensor heads = placeholder("heads", {1, 6, 8});  // [S, H*D] -> [S, H, D]
  expect_same_order(reshape("g", heads, {1, 6, 2, 4}), heads);
  EXPECT_EQ(reshape("h", x, {0, -1})->shape, (std::vector<int64_t>{2, 12}));
}

TEST(Reshape, UnchangedDimensionsReadTheOutputIndexDirectly) {
  Tensor x = placeholder("x", {2, 3, 8});
  Tensor y = reshape("y", x, {2, 3, 2, 4});
  // Only the split last dimension linearizes; the leading ones are plain reads.
  EXPECT_EQ(to_string(y->body), "x[i, j, ((l * 4) + m)]");
}

TEST(Transpose, RandomizedAgainstPlainLoops) {
  const std::vector<int64_t> xs{2, 3, 4, 5};
  Tensor x = placeholder("x", xs);
  HostTensor xv = random_tensor(DType::kFloat32, xs, 5);
  const std::vector<int64_t> perm{2, 0, 3, 1};
  Tensor y = transpose("y", x, perm);
  ASSERT_EQ(y->shape, (std::vector<int64_t>{4, 2, 5, 3}));
  HostTensor out = run(y, {{"x", xv}});
  op_test::for_each_index(y->shape, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> in(4);
    for (size_t d = 0; d < 4; ++d) in[size_t(perm[d])] = o[d];
    EXPECT_EQ(out.get(offset(y->shape, o)), xv.get(offset(xs, in)));
  });
  EXPECT_EQ(transpose("r", x)->shape, (std::vector<int64_t>{5, 4, 3, 2}));
}

TEST(Layout, FlattenSqueezeUnsqueeze) {
  Tensor x = placeholder("x", {2, 1, 3, 1});
  EXPECT_EQ(flatten("f", x)->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(flatten("f0", x, 0)->shape, (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(flatten("f4", x, 4)->shape, (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(flatten("fn", x, -1)->shape, (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(squeeze("s", x)->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(squeeze("s1", x, {-1})->shape, (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(unsqueeze("u", x, {0, -1})->shape, (std::vector<int64_t>{1, 2, 1, 3, 1, 1}));
  expect_same_order(flatten("f", x, 2), x);
  expect_same_order(squeeze("s", x), x);
  expect_same_order(unsqueeze("u", x, {0, 5}), x);
}

TEST(Layout, ExpandBroadcasts) {
  Tensor x = placeholder("x", {3, 1});
  Tensor y = expand("y", x, {2, 1, 4});
  ASSERT_EQ(y->shape, (std::vector<int64_t>{2, 3, 4}));
  HostTensor out = run(y, {{"x", tensor_of({3, 1}, {1, 2, 3})}});
  EXPECT_EQ(out.get(offset(y->shape, {1, 2, 3})), 3);
  EXPECT_EQ(out.get(offset(y->shape, {0, 1, 0})), 2);
}

TEST(LayoutErrors, ReshapeElementCount) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_THAT(
      [&] {
        reshape("r", x, {4, 2});
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("reshape 'r': input [2,3] has 6 elements but shape [4,2] has 8")));
  EXPECT_THAT(
      [&] {
        reshape("r", x, {-1, -1});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("has more than one -1")));
  EXPECT_THAT(
      [&] {
        reshape("r", x, {4, -1});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("input [2,3] cannot be reshaped to [4,-1]")));
}

TEST(LayoutErrors, TransposeBadPerm) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_THAT(
      [&] {
        transpose("t", x, {0, 0});
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("transpose 't': perm [0,0] is not a permutation of the axes of input [2,3]")));
}

TEST(LayoutErrors, SqueezeNonUnitAxis) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_THAT([&] { squeeze("s", x, {1}); }, testing::ThrowsMessage<std::invalid_argument>(
                                                 HasSubstr("squeeze 's': axis 1 of input [2,3] has size 3, not 1")));
}

TEST(LayoutErrors, ExpandIncompatible) {
  Tensor x = placeholder("x", {3, 2});
  EXPECT_THAT(
      [&] {
        expand("e", x, {3, 4});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("expand 'e': shapes [3,2] and [3,4] do not broadcast")));
}

TEST(LayoutErrors, FlattenAxis) {
  Tensor x = placeholder("x", {3, 2});
  EXPECT_THAT([&] { flatten("f", x, 3); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("flatten 'f': axis 3 is out of range")));
}

}  // namespace
}  // namespace ingot
