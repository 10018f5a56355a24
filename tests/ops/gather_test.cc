#include "ops/gather.h"

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

const HostTensor kData = tensor_of({3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});

TEST(Gather, IndexTensorsOfBothIntegerTypesWithNegativeIndices) {
  Tensor data = placeholder("data", {3, 4});
  for (DType t : {DType::kInt64, DType::kInt32}) {
    Tensor idx = placeholder("idx", {2, 2}, t);
    Tensor rows = gather("rows", data, idx, 0), cols = gather("cols", data, idx, 1);
    ASSERT_EQ(rows->shape, (std::vector<int64_t>{2, 2, 4}));
    ASSERT_EQ(cols->shape, (std::vector<int64_t>{3, 2, 2}));
    TensorMap out = interpret(Program({rows, cols}), {{"data", kData}, {"idx", tensor_of({2, 2}, {2, 0, -1, 1}, t)}});
    EXPECT_THAT(values_of(out.at("rows")), ElementsAre(20, 21, 22, 23, 0, 1, 2, 3, 20, 21, 22, 23, 10, 11, 12, 13));
    EXPECT_THAT(values_of(out.at("cols")), ElementsAre(2, 0, 3, 1, 12, 10, 13, 11, 22, 20, 23, 21));
  }
}

TEST(Gather, ConstantIndices) {
  Tensor data = placeholder("data", {3, 4});
  // Scalar index drops the axis (x[:, 0]); a range is an affine read; an arbitrary list a select tree.
  Tensor first_col = gather("c0", data, std::vector<int64_t>{0}, {}, 1);
  Tensor stride = gather("st", data, std::vector<int64_t>{3, 1}, {2}, 1);
  Tensor shuffled = gather("sh", data, std::vector<int64_t>{2, -3, 1, 2, 0}, {5}, 0);
  EXPECT_EQ(first_col->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(to_string(stride->body), "data[i, ((j * -2) + 3)]");
  TensorMap out = interpret(Program({first_col, stride, shuffled}), {{"data", kData}});
  EXPECT_THAT(values_of(out.at("c0")), ElementsAre(0, 10, 20));
  EXPECT_THAT(values_of(out.at("st")), ElementsAre(3, 1, 13, 11, 23, 21));
  std::vector<double> sh = values_of(out.at("sh"));
  const std::vector<int64_t> rows{2, 0, 1, 2, 0};
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(sh[size_t(r * 4 + c)], 10.0 * double(rows[size_t(r)]) + double(c));
}

TEST(Gather, ComputedIndicesForSwinRelativePositionBias) {
  const int64_t ws = 2, N = ws * ws, heads = 3;
  Tensor table = placeholder("table", {(2 * ws - 1) * (2 * ws - 1), heads});
  Tensor bias = gather_computed("bias", table, 0, {N, N}, [&](const std::vector<Expr>& i) {
    return (i[0] / ws - i[1] / ws + (ws - 1)) * (2 * ws - 1) + i[0] % ws - i[1] % ws + (ws - 1);
  });
  ASSERT_EQ(bias->shape, (std::vector<int64_t>{N, N, heads}));
  HostTensor tv = random_tensor(DType::kFloat32, table->shape, 41);
  HostTensor out = run(bias, {{"table", tv}});
  // Swin's relative_position_index computed with plain loops.
  for (int64_t a = 0; a < N; ++a)
    for (int64_t b = 0; b < N; ++b) {
      const int64_t dh = a / ws - b / ws + ws - 1, dw = a % ws - b % ws + ws - 1;
      const int64_t index = dh * (2 * ws - 1) + dw;
      for (int64_t h = 0; h < heads; ++h) EXPECT_EQ(out.get(offset(bias->shape, {a, b, h})), tv.get(index * heads + h));
    }
}

TEST(Gather, EmbeddingLookup) {
  Tensor table = placeholder("emb", {3, 4}), ids = placeholder("ids", {1, 2}, DType::kInt64);
  Tensor y = embedding("tok", table, ids);
  ASSERT_EQ(y->shape, (std::vector<int64_t>{1, 2, 4}));
  HostTensor out = run(y, {{"emb", kData}, {"ids", tensor_of({1, 2}, {1, 1}, DType::kInt64)}});
  EXPECT_THAT(values_of(out), ElementsAre(10, 11, 12, 13, 10, 11, 12, 13));
}

TEST(GatherErrors, FloatIndexTensor) {
  Tensor data = placeholder("data", {3, 4}), idx = placeholder("idx", {2});
  EXPECT_THAT([&] { gather("g", data, idx); }, testing::ThrowsMessage<std::invalid_argument>(HasSubstr(
                                                   "gather 'g': indices 'idx' must be int32 or int64, not f32")));
}

TEST(GatherErrors, ConstantIndexOutOfRange) {
  Tensor data = placeholder("data", {3, 4});
  EXPECT_THAT([&] { gather("g", data, std::vector<int64_t>{4}, {1}, 1); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("gather 'g': index 4 is out of range for axis 1 of data [3,4]")));
  EXPECT_THAT(
      [&] {
        gather("g", data, std::vector<int64_t>{0, 1, 2}, {2}, 0);
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("3 indices do not fill indices shape [2]")));
}

TEST(GatherErrors, TooManyUnstructuredConstants) {
  Tensor data = placeholder("data", {8});
  std::vector<int64_t> many(5000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = int64_t(i * i % 8);
  EXPECT_THAT([&] { gather("g", data, many, {5000}); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("exceed 4096")));
}

TEST(GatherErrors, EmbeddingTableRank) {
  Tensor table = placeholder("emb", {3}), ids = placeholder("ids", {2}, DType::kInt64);
  EXPECT_THAT([&] { embedding("e", table, ids); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("embedding 'e': table [3] must be 2-D")));
}

}  // namespace
}  // namespace ingot
