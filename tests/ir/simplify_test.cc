#include "ir/simplify.h"

#include <gtest/gtest.h>

#include <chrono>

#include "ir/tensor.h"
#include "random_int_expr.h"

namespace ingot {
namespace {

std::string simp(const Expr& e, const VarRanges& ranges = {}) { return to_string(simplify(e, ranges)); }

class Simplify : public ::testing::Test {
 protected:
  Expr x = var("x"), y = var("y"), z = var("z");                      // i64 (sums are canonicalized)
  Expr a = var("a", DType::kInt32), b = var("b", DType::kInt32);      // i32 (exercise the rule table alone)
  Expr f = var("f", DType::kFloat32), g = var("g", DType::kFloat32);  // floating point
  Expr p = var("p", DType::kBool), q = var("q", DType::kBool);
  Expr i32(int v) { return int_imm(v, DType::kInt32); }
};

// ---- Constant folding ----

TEST_F(Simplify, FoldsIntegerArithmeticWithFloorSemantics) {
  EXPECT_EQ(simp(Expr(3) + 4), "7");
  EXPECT_EQ(simp(Expr(3) * -4 - 1), "-13");
  EXPECT_EQ(simp(Expr(7) / -2), "-4");
  EXPECT_EQ(simp(Expr(-7) / 2), "-4");
  EXPECT_EQ(simp(Expr(-7) % 3), "2");
  EXPECT_EQ(simp(Expr(7) % -3), "-2");
  EXPECT_EQ(simp(minimum(Expr(3), Expr(5))), "3");
  EXPECT_EQ(simp(maximum(Expr(3), Expr(5))), "5");
  EXPECT_EQ(simp(i32(3) + i32(4)), "7i32");
  EXPECT_EQ(simp(Expr(1) / 0), "(1 / 0)");  // undefined: left alone
  EXPECT_EQ(simp(Expr(INT64_MAX) + 1), "(9223372036854775807 + 1)");
}

TEST_F(Simplify, FoldsComparisonsAndCastsOfConstants) {
  EXPECT_EQ(simp(lt(Expr(1), Expr(2))), "true");
  EXPECT_EQ(simp(ne(Expr(1), Expr(1))), "false");
  EXPECT_EQ(simp(ge(Expr(1.5), Expr(2.5))), "false");
  EXPECT_EQ(simp(cast(DType::kFloat32, Expr(3))), "3.0");
  EXPECT_EQ(simp(cast(DType::kInt32, Expr(5))), "5i32");
  EXPECT_EQ(simp(cast(DType::kInt64, Expr(-2.7))), "-2");
  EXPECT_EQ(simp(cast(DType::kBool, Expr(3))), "true");
}

TEST_F(Simplify, LeavesFloatingPointArithmeticAlone) {
  EXPECT_EQ(simp(Expr(1.5) + Expr(2.0)), "(1.5 + 2.0)");
  EXPECT_EQ(simp(f + 0.0), "(f + 0.0)");  // -0.0 + 0.0 is +0.0
  EXPECT_EQ(simp(f * 0.0), "(f * 0.0)");
  EXPECT_EQ(simp(f - f), "(f - f)");
  EXPECT_EQ(simp(f - (-0.0)), "(f - -0.0)");
  EXPECT_EQ(simp(eq(f, f)), "(f == f)");  // NaN
  EXPECT_EQ(simp(logical_not(lt(f, g))), "!(f < g)");
}

// ---- The rule table, one rule per expectation; i32 operands so that the i64 sum canonicalization does not
// get there first ----

TEST_F(Simplify, AdditionRules) {
  EXPECT_EQ(simp(a + 0), "a");
  EXPECT_EQ(simp(0 + a), "a");
  EXPECT_EQ(simp(3 + a), "(a + 3i32)");
  EXPECT_EQ(simp((a + 3) + 4), "(a + 7i32)");
  EXPECT_EQ(simp((a - 3) + 4), "(a + 1i32)");
  EXPECT_EQ(simp(a + (0 - b)), "(a - b)");
  EXPECT_EQ(simp((0 - a) + b), "(b - a)");
  EXPECT_EQ(simp((a - b) + b), "a");
  EXPECT_EQ(simp(b + (a - b)), "a");
  EXPECT_EQ(simp((a / 16) * 16 + a % 16), "a");
  EXPECT_EQ(simp(a % 16 + (a / 16) * 16), "a");
}

TEST_F(Simplify, SubtractionRules) {
  EXPECT_EQ(simp(a - 0), "a");
  EXPECT_EQ(simp(a - a), "0i32");
  EXPECT_EQ(simp(0 - (0 - a)), "a");
  EXPECT_EQ(simp((a + b) - a), "b");
  EXPECT_EQ(simp((a + b) - b), "a");
  EXPECT_EQ(simp((a + 5) - 2), "(a + 3i32)");
  EXPECT_EQ(simp(a - (a / 8) * 8), "(a % 8i32)");
}

TEST_F(Simplify, MultiplicationRules) {
  EXPECT_EQ(simp(a * 0), "0i32");
  EXPECT_EQ(simp(0 * a), "0i32");
  EXPECT_EQ(simp(a * 1), "a");
  EXPECT_EQ(simp(1 * a), "a");
  EXPECT_EQ(simp(4 * a), "(a * 4i32)");
  EXPECT_EQ(simp((a * 4) * 3), "(a * 12i32)");
  EXPECT_EQ(simp((a + 2) * 3), "((a * 3i32) + 6i32)");
}

TEST_F(Simplify, DivisionRules) {
  EXPECT_EQ(simp(a / 1), "a");
  EXPECT_EQ(simp(a / -1), "(0i32 - a)");
  EXPECT_EQ(simp((a * 8) / 4), "(a * 2i32)");
  EXPECT_EQ(simp((a * 4) / 8), "(a / 2i32)");
  EXPECT_EQ(simp((a * -4) / 8), "(a / -2i32)");  // c0 * x / (c0 * k) is x / k for either sign of c0
  EXPECT_EQ(simp((a * 8 + b) / 4), "((a * 2i32) + (b / 4i32))");
  EXPECT_EQ(simp((b + a * 8) / 4), "((b / 4i32) + (a * 2i32))");
  EXPECT_EQ(simp((a * 8 + b) / -4), "((a * -2i32) + (b / -4i32))");
  EXPECT_EQ(simp((a + 8) / 4), "((a / 4i32) + 2i32)");
  EXPECT_EQ(simp((a / 4) / 8), "(a / 32i32)");
  EXPECT_EQ(simp((a / -4) / 8), "((a / -4i32) / 8i32)");  // only for positive divisors
}

TEST_F(Simplify, DivisionRulesThatNeedRanges) {
  EXPECT_EQ(simp(a / 16, {{"a", {0, 15}}}), "0i32");
  EXPECT_EQ(simp(a / 16, {{"a", {0, 16}}}), "(a / 16i32)");
  EXPECT_EQ(simp(a / 16), "(a / 16i32)");
  EXPECT_EQ(simp(x / x, {{"x", {1, 5}}}), "1");
  EXPECT_EQ(simp(x / x, {{"x", {-1, 5}}}), "(x / x)");
  EXPECT_EQ(simp((a * 4 + b) / 16, {{"b", {0, 3}}}), "(a / 4i32)");
  EXPECT_EQ(simp((a * 4 + b) / 16, {{"b", {0, 4}}}), "(((a * 4i32) + b) / 16i32)");
  EXPECT_EQ(simp((b + a * 4) / 16, {{"b", {0, 3}}}), "(a / 4i32)");
  EXPECT_EQ(simp((b + a * 4) / 16), "((b + (a * 4i32)) / 16i32)");
}

TEST_F(Simplify, ModuloRules) {
  EXPECT_EQ(simp(a % 1), "0i32");
  EXPECT_EQ(simp(a % -1), "0i32");
  EXPECT_EQ(simp((a * 8) % 4), "0i32");
  EXPECT_EQ(simp((a * 8 + b) % 4), "(b % 4i32)");
  EXPECT_EQ(simp((b + a * 8) % 4), "(b % 4i32)");
  EXPECT_EQ(simp((a + 8) % 4), "(a % 4i32)");
  EXPECT_EQ(simp((a % 16) % 4), "(a % 4i32)");
  EXPECT_EQ(simp((a * 6) % 12), "((a % 2i32) * 6i32)");
  EXPECT_EQ(simp((a * -6) % 12), "((a % -2i32) * -6i32)");
  // x % 4 is in [0, 3] whatever x is, so a second % 16 does nothing.
  EXPECT_EQ(simp((a % 4) % 16), "(a % 4i32)");
}

TEST_F(Simplify, ModuloRulesThatNeedRanges) {
  EXPECT_EQ(simp(a % 16, {{"a", {0, 15}}}), "a");
  EXPECT_EQ(simp(a % 16, {{"a", {-1, 15}}}), "(a % 16i32)");
  EXPECT_EQ(simp((a * 4 + b) % 16, {{"b", {0, 3}}}), "(((a % 4i32) * 4i32) + b)");
  EXPECT_EQ(simp((a * 4 + b) % 16), "(((a * 4i32) + b) % 16i32)");
  EXPECT_EQ(simp((b + a * 4) % 16, {{"b", {0, 3}}}), "(b + ((a % 4i32) * 4i32))");
  EXPECT_EQ(simp((b + a * 4) % 16, {{"b", {-1, 3}}}), "((b + (a * 4i32)) % 16i32)");
}

TEST_F(Simplify, MinMaxRules) {
  EXPECT_EQ(simp(minimum(f, f)), "f");
  EXPECT_EQ(simp(maximum(a, a)), "a");
  EXPECT_EQ(simp(minimum(i32(3), a)), "min(a, 3i32)");
  EXPECT_EQ(simp(maximum(i32(3), a)), "max(a, 3i32)");
  EXPECT_EQ(simp(minimum(minimum(a, 3), 5)), "min(a, 3i32)");
  EXPECT_EQ(simp(maximum(maximum(a, 3), 5)), "max(a, 5i32)");
  EXPECT_EQ(simp(minimum(x, x + 1)), "x");
  EXPECT_EQ(simp(minimum(x + 1, x)), "x");
  EXPECT_EQ(simp(maximum(x, x + 1)), "(x + 1)");
  EXPECT_EQ(simp(maximum(x + 1, x)), "(x + 1)");
  EXPECT_EQ(simp(minimum(f, g)), "min(f, g)");
}

TEST_F(Simplify, MinMaxRulesThatNeedRanges) {
  EXPECT_EQ(simp(minimum(x, 16), {{"x", {0, 15}}}), "x");
  EXPECT_EQ(simp(minimum(x, 16), {{"x", {0, 17}}}), "min(x, 16)");
  EXPECT_EQ(simp(minimum(x, 16)), "min(x, 16)");
  EXPECT_EQ(simp(minimum(16, x), {{"x", {20, 30}}}), "16");
  EXPECT_EQ(simp(maximum(x, 0), {{"x", {0, 15}}}), "x");
  EXPECT_EQ(simp(maximum(x, 0), {{"x", {-1, 15}}}), "max(x, 0)");
  EXPECT_EQ(simp(maximum(x, y), {{"x", {0, 3}}, {"y", {3, 9}}}), "y");
  EXPECT_EQ(simp(minimum(a, b), {{"a", {0, 3}}, {"b", {3, 9}}}), "a");
}

TEST_F(Simplify, ComparisonsDecidedByDifferences) {
  EXPECT_EQ(simp(lt(x, x + 1)), "true");
  EXPECT_EQ(simp(lt(x + 1, x)), "false");
  EXPECT_EQ(simp(le(x, x)), "true");
  EXPECT_EQ(simp(le(x + 1, x)), "false");
  EXPECT_EQ(simp(gt(x + 1, x)), "true");
  EXPECT_EQ(simp(gt(x, x)), "false");
  EXPECT_EQ(simp(ge(x, x)), "true");
  EXPECT_EQ(simp(ge(x, x + 1)), "false");
  EXPECT_EQ(simp(eq(x, x)), "true");
  EXPECT_EQ(simp(eq(x, x + 1)), "false");
  EXPECT_EQ(simp(ne(x, x + 1)), "true");
  EXPECT_EQ(simp(ne(x, x)), "false");
  EXPECT_EQ(simp(eq(a, a)), "true");
}

TEST_F(Simplify, ComparisonsDecidedByRanges) {
  VarRanges r = {{"x", {0, 15}}};
  EXPECT_EQ(simp(lt(x, 16), r), "true");
  EXPECT_EQ(simp(lt(x, 15), r), "(x < 15)");
  EXPECT_EQ(simp(lt(x, 16)), "(x < 16)");
  EXPECT_EQ(simp(ge(x, 16), r), "false");
  EXPECT_EQ(simp(lt(x * 16 + y, 256), {{"x", {0, 15}}, {"y", {0, 15}}}), "true");
  EXPECT_EQ(simp(lt(x * 16 + y, 255), {{"x", {0, 15}}, {"y", {0, 15}}}), "(((x * 16) + y) < 255)");
}

TEST_F(Simplify, ComparisonsPutConstantsRight) {
  EXPECT_EQ(simp(lt(3, x)), "(x > 3)");
  EXPECT_EQ(simp(le(3, x)), "(x >= 3)");
  EXPECT_EQ(simp(gt(3, x)), "(x < 3)");
  EXPECT_EQ(simp(ge(3, x)), "(x <= 3)");
  EXPECT_EQ(simp(eq(3, x)), "(x == 3)");
  EXPECT_EQ(simp(ne(3, x)), "(x != 3)");
  EXPECT_EQ(simp(lt(x + 3, 10)), "(x < 7)");
  EXPECT_EQ(simp(le(x + 3, 10)), "(x <= 7)");
  EXPECT_EQ(simp(gt(x + 3, 10)), "(x > 7)");
  EXPECT_EQ(simp(ge(x + 3, 10)), "(x >= 7)");
  EXPECT_EQ(simp(eq(x + 3, 10)), "(x == 7)");
  EXPECT_EQ(simp(ne(x + 3, 10)), "(x != 7)");
  EXPECT_EQ(simp(lt(x - 3, 10)), "(x < 13)");
  EXPECT_EQ(simp(le(x - 3, 10)), "(x <= 13)");
  EXPECT_EQ(simp(gt(x - 3, 10)), "(x > 13)");
  EXPECT_EQ(simp(ge(x - 3, 10)), "(x >= 13)");
  EXPECT_EQ(simp(eq(x - 3, 10)), "(x == 13)");
  EXPECT_EQ(simp(ne(x - 3, 10)), "(x != 13)");
}

TEST_F(Simplify, LogicRules) {
  EXPECT_EQ(simp(logical_and(Expr(int_imm(1, DType::kBool)), p)), "p");
  Expr t = int_imm(1, DType::kBool), no = int_imm(0, DType::kBool);
  EXPECT_EQ(simp(logical_and(p, t)), "p");
  EXPECT_EQ(simp(logical_and(no, p)), "false");
  EXPECT_EQ(simp(logical_and(p, no)), "false");
  EXPECT_EQ(simp(logical_and(p, p)), "p");
  EXPECT_EQ(simp(logical_and(p, logical_not(p))), "false");
  EXPECT_EQ(simp(logical_and(logical_not(p), p)), "false");
  EXPECT_EQ(simp(logical_or(t, p)), "true");
  EXPECT_EQ(simp(logical_or(p, t)), "true");
  EXPECT_EQ(simp(logical_or(no, p)), "p");
  EXPECT_EQ(simp(logical_or(p, no)), "p");
  EXPECT_EQ(simp(logical_or(p, p)), "p");
  EXPECT_EQ(simp(logical_or(p, logical_not(p))), "true");
  EXPECT_EQ(simp(logical_or(logical_not(p), p)), "true");
  EXPECT_EQ(simp(logical_not(t)), "false");
  EXPECT_EQ(simp(logical_not(no)), "true");
  EXPECT_EQ(simp(logical_not(logical_not(p))), "p");
  EXPECT_EQ(simp(logical_not(eq(f, g))), "(f != g)");
  EXPECT_EQ(simp(logical_not(ne(f, g))), "(f == g)");
  EXPECT_EQ(simp(logical_not(lt(x, y))), "(x >= y)");
  EXPECT_EQ(simp(logical_not(le(x, y))), "(x > y)");
  EXPECT_EQ(simp(logical_not(gt(x, y))), "(x <= y)");
  EXPECT_EQ(simp(logical_not(ge(x, y))), "(x < y)");
  EXPECT_EQ(simp(logical_and(lt(x, 4), q), {{"x", {0, 3}}}), "q");
  EXPECT_EQ(simp(logical_and(p, q)), "(p && q)");
}

TEST_F(Simplify, SelectRules) {
  Expr t = int_imm(1, DType::kBool), no = int_imm(0, DType::kBool);
  EXPECT_EQ(simp(select(t, x, y)), "x");
  EXPECT_EQ(simp(select(no, x, y)), "y");
  EXPECT_EQ(simp(select(p, f, f)), "f");
  EXPECT_EQ(simp(select(logical_not(p), x, y)), "select(p, y, x)");
  EXPECT_EQ(simp(select(p, t, no)), "p");
  EXPECT_EQ(simp(select(p, no, t)), "!p");
  EXPECT_EQ(simp(select(lt(x, 16), x, 0), {{"x", {0, 15}}}), "x");
  EXPECT_EQ(simp(select(lt(x, 16), x, 0)), "select((x < 16), x, 0)");
}

TEST_F(Simplify, FloatingPointIdentitiesThatAreExact) {
  EXPECT_EQ(simp(f * 1.0), "f");
  EXPECT_EQ(simp(1.0 * f), "f");
  EXPECT_EQ(simp(f - 0.0), "f");
  EXPECT_EQ(simp(f / 1.0), "f");
  EXPECT_EQ(simp(math::exp(f * 1.0) + 0.0), "(exp(f) + 0.0)");
}

TEST_F(Simplify, CastsOfCasts) {
  EXPECT_EQ(simp(cast(DType::kInt32, cast(DType::kInt64, a))), "a");
  EXPECT_EQ(simp(cast(DType::kInt64, cast(DType::kInt32, x)), {{"x", {0, 100}}}), "x");
  EXPECT_EQ(simp(cast(DType::kInt64, cast(DType::kInt32, x))), "i64(i32(x))");
}

// ---- Canonical i64 sums ----

TEST_F(Simplify, IdentitiesOnIndexSums) {
  EXPECT_EQ(simp(x * 1 + 0), "x");
  EXPECT_EQ(simp(x - x), "0");
  EXPECT_EQ(simp(x * 0 + y), "y");
  EXPECT_EQ(simp(x / 1 + x % 1), "x");
  EXPECT_EQ(simp(0 - (0 - x)), "x");
  EXPECT_EQ(simp((x * 32 + 31) - x * 32 + 1), "32");
}

// An index fused across three axes of extents 4, 7 and 7 (x / 49, x / 7 % 7, x % 7): the middle remainder joins the
// inner one (x % 49), which then joins the quotient; not where the coefficients do not line up.
TEST_F(Simplify, AnIndexFusedAcrossThreeAxesIsPutBackTogether) {
  EXPECT_EQ(simp(((x / 49) * 7 + (x / 7) % 7) * 7 + x % 7), "x");
  EXPECT_EQ(simp((x / 7 % 7) * 7 + x % 7), "(x % 49)");
  EXPECT_EQ(simp(((x / 7 % 7) * 7 + x % 7) * 3 + y), "(y + ((x % 49) * 3))");
  EXPECT_EQ(simp((x / 7 % 7) * 8 + x % 7), "((x % 7) + (((x / 7) % 7) * 8))");
}

TEST_F(Simplify, SumsComeInCanonicalOrder) {
  EXPECT_EQ(simp(y + x), "(x + y)");
  EXPECT_EQ(simp(3 + x), "(x + 3)");
  EXPECT_EQ(simp((z + x * 2) + y * 3 - 5), "((((x * 2) + (y * 3)) + z) - 5)");
  EXPECT_EQ(simp((y + 1) * 4 - x), "(((x * -1) + (y * 4)) + 4)");
  EXPECT_EQ(simp(x - y * 2 + y + y), "x");
  // Non-affine atoms sort after variables.
  EXPECT_EQ(simp(x / 4 + y * 2 + x), "((x + (y * 2)) + (x / 4))");
}

TEST_F(Simplify, LoweringIndexBecomesACanonicalAffineSum) {
  Expr i_o = var("i_o"), i_i = var("i_i"), j_o = var("j_o"), j_i = var("j_i");
  Expr index = (i_o * 32 + i_i) * 512 + (j_o * 16 + j_i);
  EXPECT_EQ(simp(index), "((((i_i * 512) + (i_o * 16384)) + j_i) + (j_o * 16))");
  VarRanges r = {{"i_o", {0, 7}}, {"i_i", {0, 31}}, {"j_o", {0, 31}}, {"j_i", {0, 15}}};
  // Recovering the row and column of the flat index.
  EXPECT_EQ(simp(index / 512, r), "(i_i + (i_o * 32))");
  EXPECT_EQ(simp(index % 512, r), "(j_i + (j_o * 16))");
  EXPECT_EQ(simp((i_o * 32 + i_i) / 32, r), "i_o");
  EXPECT_EQ(simp((i_o * 32 + i_i) % 32, r), "i_i");
}

TEST_F(Simplify, FusedAxesSplitBack) {
  Expr fused = var("fused"), i = var("i"), j = var("j");
  EXPECT_EQ(simp((fused / 16) * 16 + fused % 16), "fused");
  EXPECT_EQ(simp(((fused / 16) * 16 + fused % 16) * 2 + 1), "((fused * 2) + 1)");
  EXPECT_EQ(simp(fused % 16 * 3 + (fused / 16) * 48 + y), "((fused * 3) + y)");
  EXPECT_EQ(simp(fused - (fused / 16) * 16), "(fused % 16)");
  EXPECT_EQ(simp((fused / 16) * 16 + fused % 8), "(((fused / 16) * 16) + (fused % 8))");
  VarRanges r = {{"j", {0, 15}}};
  EXPECT_EQ(simp((i * 16 + j) / 16, r), "i");
  EXPECT_EQ(simp((i * 16 + j) % 16, r), "j");
  EXPECT_EQ(simp((i * 16 + j) / 16), "(i + (j / 16))");
  EXPECT_EQ(simp((i * 16 + j) % 16), "(j % 16)");
}

TEST_F(Simplify, DivAndModOfLongSums) {
  Expr i = var("i"), j = var("j"), k = var("k");
  VarRanges r = {{"k", {0, 15}}};
  EXPECT_EQ(simp((i * 64 + j * 16 + k) / 16, r), "((i * 4) + j)");
  EXPECT_EQ(simp((i * 64 + j * 16 + k) % 16, r), "k");
  EXPECT_EQ(simp((i * 64 + j * 16 + k + 35) / 16, r), "((((i * 4) + j) + ((k + 3) / 16)) + 2)");
  EXPECT_EQ(simp((i * 64 + j * 16 + k + 35) % 16, r), "((k + 3) % 16)");
  EXPECT_EQ(simp((i * 64 + j * 16 + k) / 16), "(((i * 4) + j) + (k / 16))");
  // k = j * 4 + s with s in [0, 3]: divides by the factor 4 first.
  VarRanges s_range = {{"j", {0, 3}}};
  EXPECT_EQ(simp((i * 4 + j + k * 64) / 16, s_range), "((k * 4) + (i / 4))");
  EXPECT_EQ(simp((i * 4 + j + k * 64) % 16, s_range), "(j + ((i % 4) * 4))");
  EXPECT_EQ(simp((i * 4 + j + k * 64) / 16), "((k * 4) + (((i * 4) + j) / 16))");
  // Negative divisors keep floor semantics.
  EXPECT_EQ(simp((x * 8 + y) / -4), "((x * -2) + (y / -4))");
  EXPECT_EQ(simp((x * 8 + y + z * 12) % -4), "(y % -4)");
}

TEST_F(Simplify, NestedDivisions) {
  EXPECT_EQ(simp((x / 4) / 8), "(x / 32)");
  EXPECT_EQ(simp((x / 4) / -8), "((x / 4) / -8)");
  EXPECT_EQ(simp(((x * 16 + y) / 4) / 4, {{"y", {0, 15}}}), "x");
}

TEST_F(Simplify, VariablesWithOneValueBecomeConstants) { EXPECT_EQ(simp(x + y, {{"x", {3, 3}}}), "(y + 3)"); }

TEST_F(Simplify, ReductionsKnowTheirAxes) {
  IterVar k = reduce_axis(8, "k");
  Tensor t = placeholder("A", {8}, DType::kFloat32);
  Expr e = sum(t(minimum(k.var, 8) * 1), {k});
  EXPECT_EQ(simp(e), "sum(A[k], axes=[k:8])");
}

TEST_F(Simplify, ReturnsTheSameNodeWhenNothingChanges) {
  Expr e = (x * 4 + y) / 3 + minimum(x, z);
  EXPECT_TRUE(simplify(e).same_as(e)) << to_string(simplify(e));
}

TEST_F(Simplify, LongSumsAndDeepNestingStayFast) {
  Expr sum_expr = x;
  for (int n = 1; n < 300; ++n) sum_expr = sum_expr + var("v" + std::to_string(n % 50)) * (n % 7 - 3);
  Expr nested = x;
  for (int n = 0; n < 40; ++n) nested = (nested * 4 + y) / 4 + z % 4 - minimum(x, y);
  auto start = std::chrono::steady_clock::now();
  Expr s1 = simplify(sum_expr), s2 = simplify(nested, {{"y", {0, 3}}});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_TRUE(structural_equal(simplify(s1), s1));
}

// ---- Property: simplification preserves values ----

// Runs the value-preservation property on random expressions of one integer type.
void expect_values_kept(DType dtype, uint64_t seed) {
  ingot::testing::RandomIntExprs gen(seed, {"x", "y", "z"}, dtype);
  int changed = 0;
  for (int n = 0; n < 3000; ++n) {
    VarRanges ranges = gen.ranges();
    Expr e = gen.next(4);
    // Half of the time the simplifier knows the ranges; the values must agree either way.
    Expr s = simplify(e, n % 2 ? ranges : VarRanges{});
    changed += !s.same_as(e);
    ingot::testing::for_each_assignment(ranges, [&](const ingot::testing::Env& env) {
      if (::testing::Test::HasFatalFailure()) return;
      ASSERT_EQ(ingot::testing::eval_int(e, env), ingot::testing::eval_int(s, env))
          << to_string(e) << "\n  simplified to " << to_string(s);
    });
    if (::testing::Test::HasFatalFailure()) return;
    Expr again = simplify(s, n % 2 ? ranges : VarRanges{});
    EXPECT_TRUE(structural_equal(again, s)) << to_string(e) << "\n  " << to_string(s) << "\n  " << to_string(again);
  }
  EXPECT_GT(changed, 1000);
}

TEST_F(Simplify, RandomExpressionsKeepTheirValues) { expect_values_kept(DType::kInt64, 12345); }

// i32 expressions go through the rule table alone (no canonical sums), so they test the rules on their own.
TEST_F(Simplify, RandomI32ExpressionsKeepTheirValues) { expect_values_kept(DType::kInt32, 777); }

// ---- Statements ----

class SimplifyStmt : public ::testing::Test {
 protected:
  Buffer out = make_buffer("B", DType::kFloat32, {256}, MemoryScope::kGlobal);
  Buffer in = make_buffer("A", DType::kFloat32, {256}, MemoryScope::kGlobal);
  Expr i = var("i"), j = var("j");
  Stmt loop(const Expr& v, int64_t extent, Stmt body) {
    return for_loop(v, extent, LoopKind::kSerial, std::move(body));
  }
};

bool is_empty_seq(const Stmt& s) {
  auto* q = as<SeqNode>(s);
  return q && q->stmts.empty();
}

TEST_F(SimplifyStmt, SimplifiesIndicesWithLoopRanges) {
  Expr index = (i * 16 + j) / 16 * 16 + (i * 16 + j) % 16;
  Stmt s = loop(i, 16, loop(j, 16, store(out, index, load(in, (i * 16 + j) % 16 + i * 16) * 1.0)));
  EXPECT_EQ(to_string(simplify(s)),
            "for i in 0..16 {\n"
            "  for j in 0..16 {\n"
            "    B[((i * 16) + j)] = A[((i * 16) + j)]\n"
            "  }\n"
            "}\n");
}

TEST_F(SimplifyStmt, GuardThatAlwaysHoldsIsDropped) {
  Stmt s = loop(i, 16, loop(j, 16, if_then_else(lt(i * 16 + j, 256), store(out, i * 16 + j, 0.0))));
  EXPECT_EQ(to_string(simplify(s)),
            "for i in 0..16 {\n"
            "  for j in 0..16 {\n"
            "    B[((i * 16) + j)] = 0.0\n"
            "  }\n"
            "}\n");
  // Without the loop the condition is unknown and the guard stays.
  Stmt bare = if_then_else(lt(i * 16 + j, 256), store(out, i * 16 + j, 0.0));
  EXPECT_EQ(to_string(simplify(bare)), "if (((i * 16) + j) < 256) {\n  B[((i * 16) + j)] = 0.0\n}\n");
}

TEST_F(SimplifyStmt, GuardThatNeverHoldsTakesTheElseBranchOrNothing) {
  Stmt with_else = loop(i, 8, if_then_else(ge(i, 8), store(out, i, 1.0), store(out, i + 0, 2.0)));
  EXPECT_EQ(to_string(simplify(with_else)), "for i in 0..8 {\n  B[i] = 2.0\n}\n");
  // Nothing remains of the loop when its only statement is a dead branch.
  Stmt dead = loop(i, 8, loop(j, 4, if_then_else(ge(i, 8), store(out, i, 1.0))));
  Stmt simplified = simplify(dead);
  EXPECT_TRUE(is_empty_seq(simplified)) << to_string(simplified);
  Stmt mixed = seq(
      {store(out, Expr(0), 3.0), dead, allocate(make_buffer("S", DType::kFloat32, {4}, MemoryScope::kShared), dead)});
  EXPECT_EQ(to_string(simplify(mixed)), "B[0] = 3.0\n");
}

TEST_F(SimplifyStmt, BranchesKnowTheirCondition) {
  Stmt s = loop(i, 10, if_then_else(lt(i, 1), store(out, i * 4 + 1, 1.0), store(out, minimum(i, 0) + 7, 2.0)));
  EXPECT_EQ(to_string(simplify(s)),
            "for i in 0..10 {\n"
            "  if (i < 1) {\n"
            "    B[1] = 1.0\n"
            "  } else {\n"
            "    B[7] = 2.0\n"
            "  }\n"
            "}\n");
}

TEST_F(SimplifyStmt, EmptyThenBranchInvertsTheCondition) {
  Stmt dead = loop(j, 4, if_then_else(lt(j, 0), store(out, j, 1.0)));
  Stmt s = if_then_else(lt(i, 5), dead, store(out, i, 2.0));
  EXPECT_EQ(to_string(simplify(s)), "if (i >= 5) {\n  B[i] = 2.0\n}\n");
}

TEST_F(SimplifyStmt, KeepsUnchangedStatements) {
  Stmt s = loop(i, 16, seq({store(out, i, load(in, i)), barrier(BarrierKind::kBlock)}));
  EXPECT_EQ(simplify(s), s);
}

TEST_F(SimplifyStmt, LoopVariableShadowingRestoresTheOuterRange) {
  // The inner loop reuses i with a smaller extent; after it, i has the outer range again.
  Stmt s = seq({loop(i, 4, store(out, minimum(i, 3), 1.0)), store(out, minimum(i, 3), 2.0)});
  EXPECT_EQ(to_string(simplify(s, {{"i", {0, 100}}})), "for i in 0..4 {\n  B[i] = 1.0\n}\nB[min(i, 3)] = 2.0\n");
}

}  // namespace
}  // namespace ingot
