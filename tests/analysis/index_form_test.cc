#include "analysis/index_form.h"

#include <gtest/gtest.h>

namespace ingot {
namespace {

const Expr i = var("i"), j = var("j"), f = var("f");

// i in [0, 3], j in [0, 7], f in [0, 31].
IndexNormalizer normalizer() { return IndexNormalizer({{"i", {0, 3}}, {"j", {0, 7}}, {"f", {0, 31}}}); }

std::string key(const Expr& e) { return normalizer().normalize(e).key(); }

TEST(IndexForm, AffineExpressionsAreCollected) {
  EXPECT_EQ(key(i * 8 + j + 3 - i * 2), "6*i + 1*j + 3");
  EXPECT_EQ(key((i + 1) * 4 - 4), "4*i + 0");
  EXPECT_EQ(key(cast(DType::kInt64, cast(DType::kInt32, i)) + j - j), "1*i + 0");
  EXPECT_TRUE(normalizer().normalize(i * 8 + j).is_affine());
  EXPECT_EQ(normalizer().normalize(j).single_variable(), "j");
  EXPECT_EQ(normalizer().normalize(j + 0).single_variable(), "j");
  EXPECT_EQ(normalizer().normalize(j * 2).single_variable(), "");
}

TEST(IndexForm, DivisionAndModuloThatNeverWrapDisappear) {
  EXPECT_EQ(key((i * 8 + j) / 8), "1*i + 0");
  EXPECT_EQ(key((i * 8 + j) % 8), "1*j + 0");
  EXPECT_EQ(key((i * 16 + j + 8) / 8), "2*i + 1");  // j + 8 is in [8, 15]
  EXPECT_EQ(key(j % 8), "1*j + 0");
  EXPECT_EQ(key(j / 8), "0");
  EXPECT_EQ(key(minimum(j, 9)), "1*j + 0");  // a clamp that never takes effect
  EXPECT_EQ(key(maximum(j - 8, 0)), "0");
}

TEST(IndexForm, ReshapePairsCancel) {
  // [32] read as [4, 8]: f / 8 * 8 + f % 8 = f.
  EXPECT_EQ(key(f / 8 * 8 + f % 8), "1*f + 0");
  // [32] as [2, 4, 4], delinearised by repeated division or by the product of the inner extents.
  EXPECT_EQ(key((f / 4) / 4 * 16 + (f / 4) % 4 * 4 + f % 4), "1*f + 0");
  EXPECT_EQ(key(f / 16 * 16 + (f / 4) % 4 * 4 + f % 4), "1*f + 0");
  // A scaled pair: 3 * (8 * (f / 8) + f % 8).
  EXPECT_EQ(key(f / 8 * 24 + f % 8 * 3 + 1), "3*f + 1");
  // Coefficients that do not pair stay.
  EXPECT_FALSE(normalizer().normalize(f / 8 * 4 + f % 8).is_affine());
}

TEST(IndexForm, WrappingModuloStays) {
  // A roll: (j + 3) % 8 wraps for j >= 5.
  IndexForm roll = normalizer().normalize((j + 3) % 8);
  EXPECT_FALSE(roll.is_affine());
  EXPECT_EQ(roll.key(), "1*(1*j + 3)%8 + 0");
  EXPECT_EQ(normalizer().range(roll), (IntRange{0, 7}));
  // A product of variables and a clamp that does take effect are opaque.
  EXPECT_FALSE(normalizer().normalize(i * j).is_affine());
  EXPECT_FALSE(normalizer().normalize(minimum(j, 4)).is_affine());
  EXPECT_EQ(normalizer().range(normalizer().normalize(minimum(j, 4))), (IntRange{0, 4}));
}

TEST(IndexForm, Ranges) {
  IndexNormalizer n = normalizer();
  EXPECT_EQ(n.range(n.normalize(i * 8 + j - 2)), (IntRange{-2, 29}));
  EXPECT_EQ(n.range(n.normalize(f / 5)), (IntRange{0, 6}));
  EXPECT_EQ(n.range(n.normalize(-i)), (IntRange{-3, 0}));
  EXPECT_FALSE(n.range(n.normalize(var("unbound"))));
}

}  // namespace
}  // namespace ingot
