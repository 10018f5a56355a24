#include "ir/affine.h"

#include <gtest/gtest.h>

#include "ir/tensor.h"
#include "random_int_expr.h"

namespace ingot {
namespace {

TEST(Affine, CollectsCoefficientsAndConstant) {
  Expr i = var("i"), j = var("j");
  auto form = as_affine((i * 4 + j) * 2 - i + 3);
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(form->coeffs, (std::map<std::string, int64_t>{{"i", 7}, {"j", 2}}));
  EXPECT_EQ(form->constant, 3);
}

TEST(Affine, ConstantOnEitherSideOfAProduct) {
  Expr i = var("i");
  auto form = as_affine(3 * (i + 1) + (2 + 3) * i);
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(form->coeffs, (std::map<std::string, int64_t>{{"i", 8}}));
  EXPECT_EQ(form->constant, 3);
}

TEST(Affine, LikeTermsCancel) {
  Expr x = var("x");
  auto form = as_affine((x * 32 + 31) - (x * 32) + 1);
  ASSERT_TRUE(form.has_value());
  EXPECT_TRUE(form->coeffs.empty());
  EXPECT_EQ(form->constant, 32);
  EXPECT_EQ(*form, (AffineForm{{}, 32}));
  EXPECT_EQ(to_string(to_expr(*form)), "32");
}

TEST(Affine, NonAffineGivesNullopt) {
  Expr i = var("i"), j = var("j");
  EXPECT_FALSE(as_affine(i * j).has_value());
  EXPECT_FALSE(as_affine(i / 4).has_value());
  EXPECT_FALSE(as_affine(i % 4 + j).has_value());
  EXPECT_FALSE(as_affine(minimum(i, j)).has_value());
  EXPECT_FALSE(as_affine(select(lt(i, j), i, j)).has_value());
  EXPECT_FALSE(as_affine(cast(DType::kFloat32, i)).has_value());
  EXPECT_FALSE(as_affine(float_imm(1.0)).has_value());
  Tensor a = placeholder("A", {8}, DType::kInt64);
  EXPECT_FALSE(as_affine(a(i) + 1).has_value());
  Buffer b = make_buffer("B", DType::kInt64, {8}, MemoryScope::kGlobal);
  EXPECT_FALSE(as_affine(load(b, i)).has_value());
}

TEST(Affine, OverflowGivesNullopt) {
  Expr i = var("i");
  EXPECT_FALSE(as_affine(i * int_imm(INT64_MAX) * 2).has_value());
  EXPECT_FALSE(as_affine(int_imm(INT64_MAX) + 1).has_value());
}

TEST(Affine, ToExprIsCanonical) {
  EXPECT_EQ(to_string(to_expr(AffineForm{{{"j", 1}, {"i", 4}}, 3})), "(((i * 4) + j) + 3)");
  EXPECT_EQ(to_string(to_expr(AffineForm{{{"i", 1}}, 0})), "i");
  EXPECT_EQ(to_string(to_expr(AffineForm{{{"a", 2}, {"b", -1}, {"c", -3}}, -5})), "((((a * 2) - b) - (c * 3)) - 5)");
  EXPECT_EQ(to_string(to_expr(AffineForm{{{"a", -1}}, 7})), "((a * -1) + 7)");
  EXPECT_EQ(to_string(to_expr(AffineForm{})), "0");
  EXPECT_EQ(to_expr(AffineForm{{{"i", 2}}, 1}).dtype(), DType::kInt64);
}

TEST(Affine, RoundTrips) {
  std::vector<AffineForm> forms = {
      {{}, 0}, {{}, -7}, {{{"i", 1}}, 0}, {{{"i", -1}}, 0}, {{{"i", 4}, {"j", 1}}, 3}, {{{"a", -2}, {"z", 5}}, -9},
  };
  for (const AffineForm& f : forms) {
    auto back = as_affine(to_expr(f));
    ASSERT_TRUE(back.has_value()) << to_string(to_expr(f));
    EXPECT_EQ(*back, f) << to_string(to_expr(f));
  }
  // Expression -> form -> expression -> form is stable, and the canonical expression prints the same.
  Expr i = var("i"), j = var("j"), k = var("k");
  for (Expr e : {(i + j) * 3 - j, k - (i - 2) * 5, (j * 16 + i) * 512 + (k * 16 + 3) - 1, i - i}) {
    auto form = as_affine(e);
    ASSERT_TRUE(form.has_value()) << to_string(e);
    Expr canonical = to_expr(*form);
    auto again = as_affine(canonical);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, *form) << to_string(e);
    EXPECT_EQ(to_string(to_expr(*again)), to_string(canonical));
  }
}

TEST(Affine, RandomAffineExpressionsKeepTheirValue) {
  testing::RandomIntExprs gen(7, {"x", "y", "z"});
  int checked = 0;
  for (int n = 0; n < 3000; ++n) {
    Expr e = gen.next(4);
    auto form = as_affine(e);
    if (!form) continue;
    ++checked;
    Expr canonical = to_expr(*form);
    VarRanges ranges = gen.ranges();
    testing::for_each_assignment(ranges, [&](const testing::Env& env) {
      ASSERT_EQ(testing::eval_int(e, env), testing::eval_int(canonical, env)) << to_string(e);
    });
  }
  EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace ingot
