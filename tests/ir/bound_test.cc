#include "ir/bound.h"

#include <gtest/gtest.h>

#include "ir/functor.h"
#include "ir/tensor.h"
#include "random_int_expr.h"

namespace ingot {
namespace {

std::optional<IntRange> range(int64_t lo, int64_t hi) { return IntRange{lo, hi}; }

TEST(Bound, ConstantsAndVariables) {
  EXPECT_EQ(const_bound(int_imm(5), {}), range(5, 5));
  EXPECT_EQ(const_bound(var("i"), {{"i", {0, 31}}}), range(0, 31));
}

TEST(Bound, SumsDifferencesAndProducts) {
  VarRanges r = {{"i", {0, 3}}, {"j", {0, 15}}, {"n", {-2, 5}}};
  Expr i = var("i"), j = var("j"), n = var("n");
  EXPECT_EQ(const_bound(i * 16 + j, r), range(0, 63));
  EXPECT_EQ(const_bound(i - j, r), range(-15, 3));
  EXPECT_EQ(const_bound(n * -3, r), range(-15, 6));
  // Products of two ranges take the extreme corners: [-2, 5] * [-2, 5] is [-10, 25].
  EXPECT_EQ(const_bound(n * n, r), range(-10, 25));
  EXPECT_EQ(const_bound(i * n, r), range(-6, 15));
}

TEST(Bound, FloorDivisionByConstants) {
  VarRanges r = {{"x", {-7, 9}}};
  Expr x = var("x");
  EXPECT_EQ(const_bound(x / 4, r), range(-2, 2));   // floor(-7/4) = -2, floor(9/4) = 2
  EXPECT_EQ(const_bound(x / -4, r), range(-3, 1));  // floor(9/-4) = -3, floor(-7/-4) = 1
  EXPECT_EQ(const_bound(x / 1, r), range(-7, 9));
}

TEST(Bound, FloorModuloByConstants) {
  Expr x = var("x");
  // The result follows the divisor's sign.
  EXPECT_EQ(const_bound(x % 8, {{"x", {-100, 100}}}), range(0, 7));
  EXPECT_EQ(const_bound(x % -8, {{"x", {-100, 100}}}), range(-7, 0));
  // Within one period the modulo is a shifted identity.
  EXPECT_EQ(const_bound(x % 16, {{"x", {18, 20}}}), range(2, 4));
  EXPECT_EQ(const_bound(x % 16, {{"x", {-14, -12}}}), range(2, 4));
  EXPECT_EQ(const_bound(x % -16, {{"x", {18, 20}}}), range(-14, -12));
  // A non-negative dividend never exceeds itself.
  EXPECT_EQ(const_bound(x % 16, {{"x", {0, 5}}}), range(0, 5));
  EXPECT_EQ(const_bound(x % 16, {{"x", {10, 20}}}), range(0, 15));
}

TEST(Bound, DivisionByRanges) {
  VarRanges r = {{"x", {-8, 8}}, {"d", {2, 4}}, {"m", {-4, -2}}, {"z", {-1, 1}}};
  Expr x = var("x"), d = var("d"), m = var("m"), z = var("z");
  EXPECT_EQ(const_bound(x / d, r), range(-4, 4));
  EXPECT_EQ(const_bound(x / m, r), range(-4, 4));
  EXPECT_EQ(const_bound(x % d, r), range(0, 3));
  EXPECT_EQ(const_bound(x % m, r), range(-3, 0));
  // A divisor that may be zero has no bound.
  EXPECT_EQ(const_bound(x / z, r), std::nullopt);
  EXPECT_EQ(const_bound(x % z, r), std::nullopt);
  EXPECT_EQ(const_bound(x / 0, r), std::nullopt);
}

TEST(Bound, MinMaxSelectAndCasts) {
  VarRanges r = {{"i", {0, 10}}, {"j", {5, 20}}};
  Expr i = var("i"), j = var("j");
  EXPECT_EQ(const_bound(minimum(i, j), r), range(0, 10));
  EXPECT_EQ(const_bound(maximum(i, j), r), range(5, 20));
  EXPECT_EQ(const_bound(select(lt(i, j), i - 3, j + 1), r), range(-3, 21));
  EXPECT_EQ(const_bound(cast(DType::kInt32, i + j), r), range(5, 30));
  EXPECT_EQ(const_bound(cast(DType::kInt64, cast(DType::kInt32, i)), r), range(0, 10));
  EXPECT_EQ(const_bound(cast(DType::kInt64, lt(i, j)), r), range(0, 1));
  // Out of i32's range a cast wraps, so only the whole i32 range is sound.
  EXPECT_EQ(const_bound(cast(DType::kInt32, i + int64_t{1} * 4000000000), r), range(INT32_MIN, INT32_MAX));
}

TEST(Bound, UnknownVariablesAndNonIntegerNodes) {
  Expr i = var("i"), j = var("j");
  EXPECT_EQ(const_bound(i + j, {{"i", {0, 3}}}), std::nullopt);
  EXPECT_EQ(const_bound(i % 4, {}), std::nullopt);
  EXPECT_EQ(const_bound(cast(DType::kFloat32, i), {{"i", {0, 3}}}), std::nullopt);
  EXPECT_EQ(const_bound(cast(DType::kInt64, cast(DType::kFloat32, i)), {{"i", {0, 3}}}), std::nullopt);
  EXPECT_EQ(const_bound(lt(i, 3), {{"i", {0, 3}}}), std::nullopt);
  Buffer b = make_buffer("B", DType::kInt64, {8}, MemoryScope::kGlobal);
  EXPECT_EQ(const_bound(load(b, i), {{"i", {0, 3}}}), std::nullopt);
}

TEST(Bound, OverflowGivesNullopt) {
  VarRanges r = {{"i", {0, INT64_MAX}}};
  EXPECT_EQ(const_bound(var("i") + 1, r), std::nullopt);
  EXPECT_EQ(const_bound(var("i") * 2, r), std::nullopt);
  EXPECT_EQ(const_bound(var("i") - 1, r), range(-1, INT64_MAX - 1));
}

TEST(Bound, RandomExpressionsStayWithinTheirBounds) {
  testing::RandomIntExprs gen(2024, {"x", "y", "z"});
  int bounded = 0;
  for (int n = 0; n < 4000; ++n) {
    VarRanges ranges = gen.ranges();
    Expr e = gen.next(4);
    if (n % 2) {  // two-variable expressions over x and y only
      if (uses_var(e, "z")) continue;
      ranges.erase("z");
    }
    auto b = const_bound(e, ranges);
    if (!b) continue;
    ++bounded;
    testing::for_each_assignment(ranges, [&](const testing::Env& env) {
      int64_t v = testing::eval_int(e, env);
      ASSERT_TRUE(b->lo <= v && v <= b->hi)
          << to_string(e) << " = " << v << " outside [" << b->lo << ", " << b->hi << "]";
    });
  }
  EXPECT_GT(bounded, 1000);
}

}  // namespace
}  // namespace ingot
