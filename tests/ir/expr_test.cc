#include "ir/expr.h"

#include <gtest/gtest.h>

#include "ir/functor.h"
#include "ir/program.h"
#include "ir/tensor.h"

namespace ingot {
namespace {

TEST(Expr, PrintsInfixWithParentheses) {
  Expr i = var("i"), j = var("j");
  EXPECT_EQ(to_string(i * 4 + j), "((i * 4) + j)");
  EXPECT_EQ(to_string(minimum(i, 3)), "min(i, 3)");
  EXPECT_EQ(to_string(select(lt(i, j), Expr(1.5), Expr(0.0))), "select((i < j), 1.5, 0.0)");
  EXPECT_EQ(to_string(math::exp(cast(DType::kFloat32, i))), "exp(f32(i))");
}

TEST(Expr, ImmediateTakesTheOtherOperandsType) {
  Expr x = cast(DType::kFloat32, var("i"));
  EXPECT_EQ((x + 1).dtype(), DType::kFloat32);
  EXPECT_EQ((2 * var("i")).dtype(), DType::kInt64);
}

TEST(Expr, RejectsMixedTypesNamingTheOperation) {
  Expr f = cast(DType::kFloat32, var("i"));
  try {
    (void)(f + var("j"));
    FAIL() << "mixing f32 and i64 must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("type mismatch in +: f32 vs i64"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)(f % f), std::invalid_argument);
  EXPECT_THROW((void)select(var("i"), f, f), std::invalid_argument);
}

TEST(Expr, StructuralEqualityAndHash) {
  Expr a = var("i") * 4 + 1, b = var("i") * 4 + 1, c = var("j") * 4 + 1;
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_FALSE(structural_equal(a, c));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_NE(structural_hash(a), structural_hash(c));
}

TEST(Expr, SubstituteReplacesVariablesByName) {
  Expr e = var("i") * 4 + var("j");
  EXPECT_EQ(to_string(substitute(e, {{"i", var("x") + 1}})), "(((x + 1) * 4) + j)");
  EXPECT_TRUE(substitute(e, {{"z", Expr(1)}}).same_as(e));
}

TEST(Tensor, ComputeBuildsAxesAndReduction) {
  Tensor A = placeholder("A", {4, 8}), B = placeholder("B", {8, 3});
  IterVar k = reduce_axis(8, "k");
  Tensor C = compute("C", {4, 3}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); });
  ASSERT_NE(C->reduction(), nullptr);
  EXPECT_EQ(C->axes[0].name(), "i");
  EXPECT_EQ(C->axes[1].name(), "j");
  EXPECT_EQ(C->inputs().size(), 2u);
  Program p({C}, "matmul");
  EXPECT_EQ(p.to_string(),
            "program matmul {\n"
            "  A: f32[4, 8] = placeholder\n"
            "  B: f32[8, 3] = placeholder\n"
            "  C: f32[4, 3] = compute(i, j) sum((A[i, k] * B[k, j]), axes=[k:8])\n"
            "  outputs: C\n"
            "}\n");
}

TEST(Tensor, RejectsNestedReductionAndBadRank) {
  Tensor A = placeholder("A", {4, 8});
  IterVar k = reduce_axis(8, "k");
  EXPECT_THROW(compute("C", {4}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var), {k}) + 1.0; }),
               std::invalid_argument);
  EXPECT_THROW(compute("C", {4}, [&](const std::vector<Expr>& i) { return A(i[0]); }), std::invalid_argument);
}

TEST(Program, StructuralHashSeesEveryChange) {
  auto make = [](int64_t n) {
    Tensor A = placeholder("A", {n});
    return Program({compute("B", {n}, [&](const std::vector<Expr>& i) { return A(i[0]) * 2.0; })});
  };
  EXPECT_TRUE(make(8).structural_equal(make(8)));
  EXPECT_EQ(make(8).structural_hash(), make(8).structural_hash());
  EXPECT_NE(make(8).structural_hash(), make(9).structural_hash());
}

TEST(Program, RejectsTwoTensorsWithOneName) {
  Tensor A1 = placeholder("A", {4}), A2 = placeholder("A", {4});
  Tensor C = compute("C", {4}, [&](const std::vector<Expr>& i) { return A1(i[0]) + A2(i[0]); });
  EXPECT_THROW(Program({C}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
