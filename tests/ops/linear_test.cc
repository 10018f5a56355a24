#include "ops/linear.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_conventions.h"
#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::offset;
using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

TEST(Dense, HandValuesWithBias) {
  // x [1, 2], W [3, 2] (PyTorch layout), b [3].
  Tensor x = placeholder("x", {1, 2}), w = placeholder("w", {3, 2}), b = placeholder("b", {3});
  Tensor y = dense("y", x, w, b);
  EXPECT_EQ(op_test::compute_count({y}), 2u);
  EXPECT_TRUE(Program({y}).find("y_matmul"));
  HostTensor out = run(y, {{"x", tensor_of({1, 2}, {1, 2})},
                           {"w", tensor_of({3, 2}, {1, 0, 0, 1, 1, 1})},
                           {"b", tensor_of({3}, {10, 20, 30})}});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_THAT(values_of(out), ElementsAre(11, 22, 33));
}

TEST(Dense, WithoutBiasIsOneTEAndKeepsLeadingDims) {
  Tensor x = placeholder("x", {2, 2, 3}), w = placeholder("w", {4, 3});
  Tensor y = dense("y", x, w);
  EXPECT_EQ(op_test::compute_count({y}), 1u);
  EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 2, 4}));
}

// Plain-loop numpy matmul reference for ranks >= 2 with batch broadcasting and optional transposes.
HostTensor reference_matmul(const HostTensor& a, const HostTensor& b, bool ta, bool tb,
                            const std::vector<int64_t>& out_shape) {
  HostTensor out(DType::kFloat32, out_shape);
  const size_t ra = a.shape().size(), rb = b.shape().size(), ro = out_shape.size();
  const int64_t K = a.shape()[ta ? ra - 2 : ra - 1];
  op_test::for_each_index(out_shape, [&](const std::vector<int64_t>& o) {
    const int64_t m = o[ro - 2], n = o[ro - 1];
    double acc = 0;
    for (int64_t k = 0; k < K; ++k) {
      std::vector<int64_t> ai(ra), bi(rb);
      for (size_t d = 0; d + 2 < ra; ++d) ai[d] = a.shape()[d] == 1 ? 0 : o[d + (ro - ra)];
      for (size_t d = 0; d + 2 < rb; ++d) bi[d] = b.shape()[d] == 1 ? 0 : o[d + (ro - rb)];
      ai[ra - 2] = ta ? k : m;
      ai[ra - 1] = ta ? m : k;
      bi[rb - 2] = tb ? n : k;
      bi[rb - 1] = tb ? k : n;
      acc += a.get(offset(a.shape(), ai)) * b.get(offset(b.shape(), bi));
    }
    out.set(offset(out_shape, o), acc);
  });
  return out;
}

TEST(Matmul, BroadcastsBatchDimensionsLikeNumpy) {
  struct Case {
    std::vector<int64_t> a, b, out;
    bool ta, tb;
  };
  std::vector<Case> cases{
      {{3, 4}, {4, 5}, {3, 5}, false, false},         {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}, false, false},
      {{2, 4, 3}, {1, 4, 5}, {2, 3, 5}, true, false}, {{3, 4}, {6, 2, 4}, {6, 3, 2}, false, true},
      {{2, 4, 3}, {2, 5, 4}, {2, 3, 5}, true, true},
  };
  uint64_t seed = 10;
  for (const Case& c : cases) {
    Tensor a = placeholder("a", c.a), b = placeholder("b", c.b);
    Tensor y = matmul("y", a, b, c.ta, c.tb);
    ASSERT_EQ(y->shape, c.out);
    HostTensor av = random_tensor(DType::kFloat32, c.a, seed++), bv = random_tensor(DType::kFloat32, c.b, seed++);
    HostTensor got = run(y, {{"a", av}, {"b", bv}});
    Comparison cmp = compare(got, reference_matmul(av, bv, c.ta, c.tb, c.out));
    EXPECT_TRUE(cmp.ok) << c.a.size() << "-D a: " << cmp.message;
  }
}

TEST(Matmul, PromotesRankOneOperands) {
  Tensor v = placeholder("v", {2}), m = placeholder("m", {2, 3}), w = placeholder("w", {3});
  Tensor vm = matmul("vm", v, m);  // [2] x [2,3] -> [3]
  Tensor mw = matmul("mw", m, w);  // [2,3] x [3] -> [2]
  Tensor vv = matmul("vv", w, w);  // [3] x [3] -> []
  EXPECT_EQ(vm->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(mw->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(vv->shape, (std::vector<int64_t>{}));
  TensorMap out = interpret(
      Program({vm, mw, vv}),
      {{"v", tensor_of({2}, {1, 2})}, {"m", tensor_of({2, 3}, {1, 2, 3, 4, 5, 6})}, {"w", tensor_of({3}, {1, 0, -1})}});
  EXPECT_THAT(values_of(out.at("vm")), ElementsAre(9, 12, 15));
  EXPECT_THAT(values_of(out.at("mw")), ElementsAre(-2, -2));
  EXPECT_THAT(values_of(out.at("vv")), ElementsAre(2));
}

TEST(BatchMatmul, AttentionScoresWithTransposedKeys) {
  Tensor q = placeholder("q", {2, 3, 4}), k = placeholder("k", {2, 5, 4});
  Tensor s = batch_matmul("s", q, k, false, true);
  ASSERT_EQ(s->shape, (std::vector<int64_t>{2, 3, 5}));
  HostTensor qv = random_tensor(DType::kFloat32, {2, 3, 4}, 3), kv = random_tensor(DType::kFloat32, {2, 5, 4}, 4);
  Comparison cmp = compare(run(s, {{"q", qv}, {"k", kv}}), reference_matmul(qv, kv, false, true, {2, 3, 5}));
  EXPECT_TRUE(cmp.ok) << cmp.message;
}

TEST(Gemm, AlphaBetaTransposesAndBroadcastC) {
  Tensor a = placeholder("A", {4, 3}), b = placeholder("B", {5, 4}), c = placeholder("C", {5});
  GemmAttrs attrs{.alpha = 0.5, .beta = 2.0, .transpose_a = true, .transpose_b = true};
  Tensor y = gemm("y", a, b, c, attrs);
  ASSERT_EQ(y->shape, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(op_test::compute_count({y}), 2u);
  HostTensor av = random_tensor(DType::kFloat32, {4, 3}, 5), bv = random_tensor(DType::kFloat32, {5, 4}, 6),
             cv = random_tensor(DType::kFloat32, {5}, 7);
  HostTensor got = run(y, {{"A", av}, {"B", bv}, {"C", cv}});
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t n = 0; n < 5; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < 4; ++k) acc += av.get(k * 3 + m) * bv.get(n * 4 + k);
      EXPECT_NEAR(got.get(m * 5 + n), 0.5 * acc + 2.0 * cv.get(n), 1e-5);
    }
  Tensor no_c = gemm("z", a, b, Tensor(), attrs);
  EXPECT_EQ(op_test::compute_count({no_c}), 1u);
  HostTensor z = run(no_c, {{"A", av}, {"B", bv}});
  EXPECT_NEAR(z.get(0),
              0.5 * (av.get(0) * bv.get(0) + av.get(3) * bv.get(1) + av.get(6) * bv.get(2) + av.get(9) * bv.get(3)),
              1e-5);
}

TEST(LinearErrors, DenseInputFeaturesMismatch) {
  Tensor x = placeholder("x", {2, 3}), w = placeholder("w", {4, 5});
  EXPECT_THAT([&] { dense("fc1", x, w); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("dense 'fc1': weight 'w' [4,5] has 5 input features, input 'x' [2,3] has 3")));
}

TEST(LinearErrors, DenseBiasShape) {
  Tensor x = placeholder("x", {2, 3}), w = placeholder("w", {4, 3}), b = placeholder("b", {3});
  EXPECT_THAT([&] { dense("fc1", x, w, b); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("dense 'fc1': bias 'b' [3] must be [4]")));
}

TEST(LinearErrors, MatmulInnerDimensionMismatch) {
  Tensor a = placeholder("a", {2, 3}), b = placeholder("b", {4, 5});
  EXPECT_THAT([&] { matmul("mm", a, b); }, testing::ThrowsMessage<std::invalid_argument>(
                                               HasSubstr("matmul 'mm': a 'a' [2,3] has K=3 but b 'b' [4,5] has K=4")));
}

TEST(LinearErrors, MatmulBatchMismatch) {
  Tensor a = placeholder("a", {2, 2, 3}), b = placeholder("b", {3, 3, 4});
  EXPECT_THAT([&] { matmul("mm", a, b); }, testing::ThrowsMessage<std::invalid_argument>(
                                               HasSubstr("matmul 'mm': shapes [2] and [3] do not broadcast")));
}

TEST(LinearErrors, BatchMatmulNeedsRankThree) {
  Tensor a = placeholder("a", {2, 3}), b = placeholder("b", {3, 4});
  EXPECT_THAT([&] { batch_matmul("bmm", a, b); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("batch_matmul 'bmm': operands must be 3-D")));
}

TEST(LinearErrors, GemmCDoesNotBroadcast) {
  Tensor a = placeholder("A", {2, 3}), b = placeholder("B", {3, 4}), c = placeholder("C", {3});
  EXPECT_THAT([&] { gemm("g", a, b, c); }, testing::ThrowsMessage<std::invalid_argument>(
                                               HasSubstr("gemm 'g': shapes [3] and [2,4] do not broadcast")));
}

}  // namespace
}  // namespace ingot
