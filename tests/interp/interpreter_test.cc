#include "interp/interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

HostTensor make(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  HostTensor t(dtype, std::move(shape));
  EXPECT_EQ(int64_t(values.size()), t.num_elements());
  for (size_t i = 0; i < values.size(); ++i) t.set(int64_t(i), values[i]);
  return t;
}

std::vector<double> values(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get(i));
  return v;
}

// Interprets a program with the given outputs and returns the value of `name`.
std::vector<double> eval(const std::vector<Tensor>& outputs, const TensorMap& inputs, const std::string& name) {
  TensorMap out = interpret(Program(outputs), inputs);
  return values(out.at(name));
}

std::string error_of(const std::vector<Tensor>& outputs, const TensorMap& inputs) {
  try {
    interpret(Program(outputs), inputs);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no error>";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Interpreter, FloatBinaryOps) {
  Tensor A = placeholder("A", {4}), B = placeholder("B", {4});
  TensorMap in{{"A", make(DType::kFloat32, {4}, {1.5, -2, 3, 0.25})},
               {"B", make(DType::kFloat32, {4}, {2, 4, -1, 0.5})}};
  auto op = [&](const std::string& name, Expr (*f)(Expr, Expr)) {
    Tensor C = compute(name, {4}, [&](const Axes& i) { return f(A(i[0]), B(i[0])); });
    return eval({C}, in, name);
  };
  EXPECT_EQ(op("add", [](Expr a, Expr b) { return a + b; }), (std::vector<double>{3.5, 2, 2, 0.75}));
  EXPECT_EQ(op("sub", [](Expr a, Expr b) { return a - b; }), (std::vector<double>{-0.5, -6, 4, -0.25}));
  EXPECT_EQ(op("mul", [](Expr a, Expr b) { return a * b; }), (std::vector<double>{3, -8, -3, 0.125}));
  EXPECT_EQ(op("div", [](Expr a, Expr b) { return a / b; }), (std::vector<double>{0.75, -0.5, -3, 0.5}));
  EXPECT_EQ(op("min", minimum), (std::vector<double>{1.5, -2, -1, 0.25}));
  EXPECT_EQ(op("max", maximum), (std::vector<double>{2, 4, 3, 0.5}));
  // A uniform operand (an immediate) broadcast against a varying one, on either side.
  Tensor C = compute("C", {4}, [&](const Axes& i) { return 10.0 - A(i[0]) * 2.0; });
  EXPECT_EQ(eval({C}, in, "C"), (std::vector<double>{7, 14, 4, 9.5}));
}

TEST(Interpreter, IntegerDivisionAndModuloRoundTowardNegativeInfinity) {
  std::vector<double> a{-7, 7, -7, 7, 6, -6, 0, -1}, b{2, -2, -2, 2, 3, 3, -5, 4};
  Tensor A = placeholder("A", {8}, DType::kInt64), B = placeholder("B", {8}, DType::kInt64);
  TensorMap in{{"A", make(DType::kInt64, {8}, a)}, {"B", make(DType::kInt64, {8}, b)}};
  Tensor D = compute("D", {8}, [&](const Axes& i) { return A(i[0]) / B(i[0]); });
  Tensor M = compute("M", {8}, [&](const Axes& i) { return A(i[0]) % B(i[0]); });
  EXPECT_EQ(eval({D}, in, "D"), (std::vector<double>{-4, -4, 3, 3, 2, -2, 0, -1}));
  EXPECT_EQ(eval({M}, in, "M"), (std::vector<double>{1, -1, -1, 1, 0, 0, 0, 3}));
  // Constant divisors of both signs, on the axis variable itself.
  Tensor I = compute("I", {5}, [&](const Axes& i) { return (i[0] - 2) / 2 * 10 + (i[0] - 2) % -3; });
  // i-2 = -2..2: floor(x/2) = -1,-1,0,0,1; x mod -3 = -2,-1,0,-2,-1.
  EXPECT_EQ(eval({I}, {}, "I"), (std::vector<double>{-12, -11, 0, -2, 9}));
  Tensor Z = compute("Z", {8}, [&](const Axes& i) { return A(i[0]) / (B(i[0]) - 2); });
  std::string error = error_of({Z}, in);
  EXPECT_TRUE(contains(error, "compute 'Z' divides by zero")) << error;
  EXPECT_TRUE(contains(error, "i=0")) << error;
}

TEST(Interpreter, IntegerMinMaxAndI32Wraparound) {
  Tensor A = placeholder("A", {3}, DType::kInt32);
  TensorMap in{{"A", make(DType::kInt32, {3}, {-5, 7, 2147483647})}};
  Tensor C = compute("C", {3}, [&](const Axes& i) { return maximum(minimum(A(i[0]), 6), -3); });
  EXPECT_EQ(eval({C}, in, "C"), (std::vector<double>{-3, 6, 6}));
  Tensor W = compute("W", {3}, [&](const Axes& i) { return A(i[0]) + 1; });  // i32 + 1 wraps like int32_t
  EXPECT_EQ(eval({W}, in, "W"), (std::vector<double>{-4, 8, -2147483648.0}));
}

TEST(Interpreter, Comparisons) {
  Tensor A = placeholder("A", {3}), B = placeholder("B", {3});
  TensorMap in{{"A", make(DType::kFloat32, {3}, {1, 2, 3})}, {"B", make(DType::kFloat32, {3}, {2, 2, 2})}};
  auto cmp = [&](const std::string& name, Expr (*f)(Expr, Expr)) {
    Tensor C = compute(name, {3}, [&](const Axes& i) { return f(A(i[0]), B(i[0])); });
    EXPECT_EQ(C->dtype, DType::kBool);
    return eval({C}, in, name);
  };
  EXPECT_EQ(cmp("lt", lt), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(cmp("le", le), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(cmp("gt", gt), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(cmp("ge", ge), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(cmp("eq", eq), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(cmp("ne", ne), (std::vector<double>{1, 0, 1}));
  Tensor I = compute("I", {4}, [&](const Axes& i) { return lt(i[0] - 2, 0); });
  EXPECT_EQ(eval({I}, {}, "I"), (std::vector<double>{1, 1, 0, 0}));
}

TEST(Interpreter, LogicalOps) {
  Tensor A = placeholder("A", {4}, DType::kBool), B = placeholder("B", {4}, DType::kBool);
  TensorMap in{{"A", make(DType::kBool, {4}, {0, 0, 1, 1})}, {"B", make(DType::kBool, {4}, {0, 1, 0, 1})}};
  Tensor And = compute("And", {4}, [&](const Axes& i) { return logical_and(A(i[0]), B(i[0])); });
  Tensor Or = compute("Or", {4}, [&](const Axes& i) { return logical_or(A(i[0]), B(i[0])); });
  Tensor Not = compute("Not", {4}, [&](const Axes& i) { return logical_not(A(i[0])); });
  EXPECT_EQ(eval({And}, in, "And"), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(eval({Or}, in, "Or"), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(eval({Not}, in, "Not"), (std::vector<double>{1, 1, 0, 0}));
}

TEST(Interpreter, SelectPadsWithoutReadingTheUnchosenBranch) {
  Tensor X = placeholder("X", {3});
  TensorMap in{{"X", make(DType::kFloat32, {3}, {10, 20, 30})}};
  // P[i] = X[i - 1] for 1 <= i <= 3, else 0: lanes 0 and 4 read X[-1] and X[3] in the unchosen branch.
  Tensor P = compute(
      "P", {5}, [&](const Axes& i) { return select(logical_and(ge(i[0], 1), lt(i[0], 4)), X(i[0] - 1), Expr(0.0)); });
  EXPECT_EQ(eval({P}, in, "P"), (std::vector<double>{0, 10, 20, 30, 0}));
  // The same with the read in the false branch, and short-circuit && guarding a read on its right side.
  Tensor Q = compute("Q", {5}, [&](const Axes& i) {
    Expr inside = logical_and(ge(i[0], 1), lt(i[0], 4));
    return select(logical_not(inside), Expr(-1.0),
                  select(logical_and(inside, gt(X(i[0] - 1), 15.0)), X(i[0] - 1), Expr(0.0)));
  });
  EXPECT_EQ(eval({Q}, in, "Q"), (std::vector<double>{-1, 0, 20, 30, -1}));
  // Two dimensions, where the padded index is uniform across a batch (lanes run over j).
  Tensor Y = placeholder("Y", {2, 70});
  std::vector<double> y;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 70; ++c) y.push_back(r * 100 + c);
  TensorMap in2{{"Y", make(DType::kFloat32, {2, 70}, y)}};
  Tensor R = compute("R", {3, 70}, [&](const Axes& i) { return select(ge(i[0], 1), Y(i[0] - 1, i[1]), Expr(0.0)); });
  std::vector<double> want(70, 0.0);
  want.insert(want.end(), y.begin(), y.end());
  EXPECT_EQ(eval({R}, in2, "R"), want);
  // A non-affine index, out of bounds only where unused.
  Tensor S = compute("S", {6}, [&](const Axes& i) { return select(lt(i[0], 4), X(i[0] / 2 + i[0] % 2), Expr(0.0)); });
  EXPECT_EQ(eval({S}, in, "S"), (std::vector<double>{10, 20, 20, 30, 0, 0}));
}

TEST(Interpreter, Casts) {
  Tensor F = placeholder("F", {6});
  TensorMap in{{"F", make(DType::kFloat32, {6}, {2.7, -2.7, 0.0, 0.5, -0.5, 3e9})}};
  auto cast_to = [&](const std::string& name, DType t) {
    Tensor C = compute(name, {6}, [&](const Axes& i) { return cast(t, F(i[0])); });
    return eval({C}, in, name);
  };
  EXPECT_EQ(cast_to("i64", DType::kInt64), (std::vector<double>{2, -2, 0, 0, 0, 3e9}));
  EXPECT_EQ(cast_to("i32", DType::kInt32), (std::vector<double>{2, -2, 0, 0, 0, 2147483647.0}));
  EXPECT_EQ(cast_to("bool", DType::kBool), (std::vector<double>{1, 1, 0, 1, 1, 1}));

  Tensor I = placeholder("I", {3}, DType::kInt64);
  TensorMap ints{{"I", make(DType::kInt64, {3}, {-3, 4294967301.0, 0})}};
  Tensor ToF = compute("ToF", {3}, [&](const Axes& i) { return cast(DType::kFloat32, I(i[0])) * 0.5; });
  // 2^32 + 5 rounds to 2^32 in f32.
  EXPECT_EQ(eval({ToF}, ints, "ToF"), (std::vector<double>{-1.5, 2147483648.0, 0}));
  Tensor To32 = compute("To32", {3}, [&](const Axes& i) { return cast(DType::kInt32, I(i[0])); });
  EXPECT_EQ(eval({To32}, ints, "To32"), (std::vector<double>{-3, 5, 0}));  // 2^32 + 5 wraps to 5
  Tensor BoolToF = compute("BoolToF", {3}, [&](const Axes& i) { return cast(DType::kFloat32, ne(I(i[0]), 0)) + 1.0; });
  EXPECT_EQ(eval({BoolToF}, ints, "BoolToF"), (std::vector<double>{2, 2, 1}));

  // f16 keeps 10 mantissa bits, bf16 7: 1 + 2^-12 rounds to 1 in both, 1 + 2^-10 survives only in f16.
  Tensor G = placeholder("G", {2});
  TensorMap small{{"G", make(DType::kFloat32, {2}, {1 + std::ldexp(1.0, -12), 1 + std::ldexp(1.0, -10)})}};
  Tensor H = compute("H", {2}, [&](const Axes& i) { return cast(DType::kFloat16, G(i[0])); });
  Tensor Bf = compute("Bf", {2}, [&](const Axes& i) { return cast(DType::kBFloat16, G(i[0])); });
  EXPECT_EQ(eval({H}, small, "H"), (std::vector<double>{1, 1 + std::ldexp(1.0, -10)}));
  EXPECT_EQ(eval({Bf}, small, "Bf"), (std::vector<double>{1, 1}));
  // Arithmetic in f16 rounds after every operation: 1 + 2^-12 + 2^-12 stays 1.
  Tensor H2 = compute("H2", {2}, [&](const Axes& i) {
    Expr tiny = float_imm(std::ldexp(1.0, -12), DType::kFloat16);
    return H(i[0]) + tiny + tiny;
  });
  EXPECT_EQ(eval({H2}, small, "H2"), (std::vector<double>{1, 1 + std::ldexp(1.0, -10)}));
}

TEST(Interpreter, MathFunctionsInFloatPrecision) {
  std::vector<float> xs{0.0f, 0.5f, -1.25f, 2.0f};
  Tensor X = placeholder("X", {4});
  TensorMap in{{"X", make(DType::kFloat32, {4}, {xs.begin(), xs.end()})}};
  auto check = [&](const std::string& name, Expr (*f)(Expr), float (*expected)(float)) {
    Tensor C = compute(name, {4}, [&](const Axes& i) { return f(math::abs(X(i[0])) + 1.0); });
    std::vector<double> got = eval({C}, in, name);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_FLOAT_EQ(float(got[i]), expected(std::fabs(xs[i]) + 1.0f)) << name;
  };
  check("exp", math::exp, [](float x) { return std::exp(x); });
  check("log", math::log, [](float x) { return std::log(x); });
  check("tanh", math::tanh, [](float x) { return std::tanh(x); });
  check("sigmoid", math::sigmoid, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
  check("sqrt", math::sqrt, [](float x) { return std::sqrt(x); });
  check("rsqrt", math::rsqrt, [](float x) { return 1.0f / std::sqrt(x); });
  check("erf", math::erf, [](float x) { return std::erf(x); });
  // Hand values.
  Tensor H = compute("H", {9}, [&](const Axes& i) {
    Expr x = cast(DType::kFloat32, i[0]);
    Expr v = select(eq(i[0], 0), math::exp(x), Expr(0.0));
    v = select(eq(i[0], 1), math::log(x), v);
    v = select(eq(i[0], 2), math::tanh(x - 2.0), v);
    v = select(eq(i[0], 3), math::sigmoid(x - 3.0), v);
    v = select(eq(i[0], 4), math::sqrt(x), v);
    v = select(eq(i[0], 5), math::rsqrt(x - 1.0), v);
    v = select(eq(i[0], 6), math::erf(x - 6.0), v);
    v = select(eq(i[0], 7), math::pow(x - 5.0, Expr(10.0)), v);
    return select(eq(i[0], 8), math::abs(2.0 - x), v);
  });
  EXPECT_EQ(eval({H}, {}, "H"), (std::vector<double>{1, 0, 0, 0.5, 2, 0.5, 0, 1024, 6}));
  Tensor AbsI = compute("AbsI", {3}, [&](const Axes& i) { return math::abs(i[0] - 1); });
  EXPECT_EQ(eval({AbsI}, {}, "AbsI"), (std::vector<double>{1, 0, 1}));
}

TEST(Interpreter, ReductionsOverOneAxis) {
  Tensor A = placeholder("A", {2, 3});
  TensorMap in{{"A", make(DType::kFloat32, {2, 3}, {1, -2, 3, 4, 5, -6})}};
  IterVar k = reduce_axis(3, "k");
  Tensor S = compute("S", {2}, [&](const Axes& i) { return sum(A(i[0], k.var), {k}); });
  Tensor Mx = compute("Mx", {2}, [&](const Axes& i) { return max_reduce(A(i[0], k.var), {k}); });
  Tensor Mn = compute("Mn", {2}, [&](const Axes& i) { return min_reduce(A(i[0], k.var), {k}); });
  EXPECT_EQ(eval({S}, in, "S"), (std::vector<double>{2, 3}));
  EXPECT_EQ(eval({Mx}, in, "Mx"), (std::vector<double>{3, 5}));
  EXPECT_EQ(eval({Mn}, in, "Mn"), (std::vector<double>{-2, -6}));
  // Column sums: the reduce axis is the outer one.
  IterVar r = reduce_axis(2, "r");
  Tensor Col = compute("Col", {3}, [&](const Axes& j) { return sum(A(r.var, j[0]), {r}); });
  EXPECT_EQ(eval({Col}, in, "Col"), (std::vector<double>{5, 3, -3}));
  // Integer reductions.
  Tensor I = placeholder("I", {4}, DType::kInt64);
  TensorMap ints{{"I", make(DType::kInt64, {4}, {5, -9, 2, 7})}};
  IterVar q = reduce_axis(4, "q");
  Tensor IS = compute("IS", {}, [&](const Axes&) { return sum(I(q.var), {q}); });
  Tensor IM = compute("IM", {}, [&](const Axes&) { return max_reduce(I(q.var), {q}); });
  Tensor IN = compute("IN", {}, [&](const Axes&) { return min_reduce(I(q.var), {q}); });
  EXPECT_EQ(eval({IS}, ints, "IS"), (std::vector<double>{5}));
  EXPECT_EQ(eval({IM}, ints, "IM"), (std::vector<double>{7}));
  EXPECT_EQ(eval({IN}, ints, "IN"), (std::vector<double>{-9}));
}

TEST(Interpreter, ReductionsOverTwoAxes) {
  Tensor A = placeholder("A", {2, 2, 3});
  TensorMap in{{"A", make(DType::kFloat32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, 7})}};
  IterVar r = reduce_axis(2, "r"), k = reduce_axis(3, "k");
  Tensor S = compute("S", {2}, [&](const Axes& i) { return sum(A(i[0], r.var, k.var), {r, k}); });
  Tensor Mx = compute("Mx", {2}, [&](const Axes& i) { return max_reduce(A(i[0], r.var, k.var), {r, k}); });
  Tensor Mn = compute("Mn", {2}, [&](const Axes& i) { return min_reduce(A(i[0], r.var, k.var), {r, k}); });
  EXPECT_EQ(eval({S}, in, "S"), (std::vector<double>{21, -8}));
  EXPECT_EQ(eval({Mx}, in, "Mx"), (std::vector<double>{6, 7}));
  EXPECT_EQ(eval({Mn}, in, "Mn"), (std::vector<double>{1, -5}));
  // Everything into a scalar.
  IterVar a = reduce_axis(2, "a");
  Tensor All = compute("All", {}, [&](const Axes&) { return sum(A(a.var, r.var, k.var), {a, r, k}); });
  EXPECT_EQ(eval({All}, in, "All"), (std::vector<double>{13}));
}

// Sums of {1e8, 1, -1e8, 1} along every path the interpreter has: lanes over outputs (a source that varies over
// them or not; products with either or both operands varying), lanes over the reduce steps (beyond one batch of
// lanes), and the fused product path there. One value per path.
std::vector<double> sums_of_a_cancelling_row(InterpretOptions options) {
  std::vector<double> v{1e8, 1, -1e8, 1};
  // Many outputs, short reduction: lanes are outputs.
  Tensor A = placeholder("A", {100, 4}), Ones = placeholder("Ones", {100, 4}), V = placeholder("V", {4});
  std::vector<double> rows;
  for (int i = 0; i < 100; ++i) rows.insert(rows.end(), v.begin(), v.end());
  IterVar k = reduce_axis(4, "k");
  Tensor S = compute("S", {100}, [&](const Axes& i) { return sum(A(i[0], k.var), {k}); });
  Tensor SP = compute("SP", {100}, [&](const Axes& i) { return sum(A(i[0], k.var) * 1.0, {k}); });
  Tensor SB = compute("SB", {100}, [&](const Axes& i) { return sum(Expr(1.0) * A(i[0], k.var), {k}); });
  Tensor SV = compute("SV", {100}, [&](const Axes& i) { return sum(A(i[0], k.var) * Ones(i[0], k.var), {k}); });
  Tensor SU = compute("SU", {100}, [&](const Axes&) { return sum(V(k.var), {k}); });
  // One output, long reduction (lanes are reduce steps, beyond one batch of lanes).
  std::vector<double> lng(1000, 0.0);
  std::copy(v.begin(), v.end(), lng.begin() + 600);
  Tensor B = placeholder("B", {1000});
  IterVar q = reduce_axis(1000, "q");
  Tensor T = compute("T", {1}, [&](const Axes&) { return sum(B(q.var), {q}); });
  Tensor P = compute("P", {1}, [&](const Axes&) { return sum(B(q.var) * 1.0, {q}); });
  TensorMap out = interpret(Program({S, SP, SB, SV, SU, T, P}),
                            {{"A", make(DType::kFloat32, {100, 4}, rows)},
                             {"Ones", make(DType::kFloat32, {100, 4}, std::vector<double>(400, 1.0))},
                             {"V", make(DType::kFloat32, {4}, v)},
                             {"B", make(DType::kFloat32, {1000}, lng)}},
                            options);
  std::vector<double> sums;
  for (const char* name : {"S", "SP", "SB", "SV", "SU"}) {
    EXPECT_EQ(values(out.at(name)), std::vector<double>(100, out.at(name).get(0))) << name;
    sums.push_back(out.at(name).get(0));
  }
  for (const char* name : {"T", "P"}) sums.push_back(out.at(name).get(0));
  return sums;
}

// f32 sums run in reduce-axis order in f32, whichever axis the lanes are spread over: (1e8 + 1) rounds back
// to 1e8, so the in-order result is 1 where a double or pairwise sum would give 2.
TEST(Interpreter, SumAccumulatesInOrderInFloat) {
  EXPECT_EQ(sums_of_a_cancelling_row({}), std::vector<double>(7, 1.0));
}

// With wide sums the same sums run in double, rounded once when stored: 2 on every path.
TEST(Interpreter, WideSumsAccumulateInDoubleOnEveryPath) {
  EXPECT_EQ(sums_of_a_cancelling_row({.wide_sums = true}), std::vector<double>(7, 2.0));
}

// Wide sums change f32 sums only: a maximum, an integer sum and a bf16 sum (rounded to bf16 after every step, as
// generated code does) are the same as without, with lanes over the reduce steps (one output) and over 64 outputs.
TEST(Interpreter, WideSumsLeaveOtherReductionsAlone) {
  for (const int64_t outputs : {1, 64}) {
    Tensor A = placeholder("A", {4}), H = placeholder("H", {4}, DType::kBFloat16);
    Tensor I = placeholder("I", {4}, DType::kInt64);
    TensorMap in{{"A", make(DType::kFloat32, {4}, {1e8, 1, -1e8, 1})},
                 {"H", make(DType::kBFloat16, {4}, {256, 1, -256, 1})},
                 {"I", make(DType::kInt64, {4}, {5, -9, 2, 7})}};
    IterVar k = reduce_axis(4, "k");
    Tensor Mx = compute("Mx", {outputs}, [&](const Axes&) { return max_reduce(A(k.var), {k}); });
    Tensor HS = compute("HS", {outputs}, [&](const Axes&) { return sum(H(k.var), {k}); });
    Tensor IS = compute("IS", {outputs}, [&](const Axes&) { return sum(I(k.var), {k}); });
    TensorMap narrow = interpret(Program({Mx, HS, IS}), in),
              wide = interpret(Program({Mx, HS, IS}), in, {.wide_sums = true});
    // 256 + 1 rounds back to 256 in bf16 (8 significant bits).
    EXPECT_EQ(values(narrow.at("HS")), std::vector<double>(size_t(outputs), 1.0));
    for (const char* name : {"Mx", "HS", "IS"})
      EXPECT_EQ(values(wide.at(name)), values(narrow.at(name))) << name << " " << outputs;
  }
}

// A large compute's rows are split among threads; every element is computed as on one thread, so the results are
// bit for bit the same on any number of threads, for lanes over outputs and over reduce steps, and a read out of
// bounds is reported as on one thread (the first row that makes it).
TEST(Interpreter, ThreadsGiveTheSameResultsBitForBit) {
  Tensor A = placeholder("A", {96, 200}), B = placeholder("B", {200, 80}), R = placeholder("R", {4, 80000});
  TensorMap in{{"A", random_tensor(DType::kFloat32, {96, 200}, 1)},
               {"B", random_tensor(DType::kFloat32, {200, 80}, 2)},
               {"R", random_tensor(DType::kFloat32, {4, 80000}, 3)}};
  IterVar k = reduce_axis(200, "k"), q = reduce_axis(80000, "q");
  Tensor C = compute("C", {96, 80}, [&](const Axes& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); });
  Tensor RS = compute("RS", {4}, [&](const Axes& i) { return sum(R(i[0], q.var), {q}); });
  // Each compute below has at least 2^18 element steps (output elements x reduce steps), so it is split among threads:
  // no reduction, rows of three axes with the lanes along the middle one (the innermost is short), a bf16 output;
  Tensor X = placeholder("X", {64, 512, 8});
  in.emplace("X", random_tensor(DType::kFloat32, {64, 512, 8}, 4));
  Tensor E = compute("E", {64, 512, 8}, [&](const Axes& i) { return X(i[0], i[1], i[2]) * 3.0 + 1.0; });
  Tensor H = compute("H", {64, 512, 8}, [&](const Axes& i) { return cast(DType::kBFloat16, E(i[0], i[1], i[2])); });
  // a single row whose lanes come in batches (a matrix-vector product at batch 1);
  Tensor W = placeholder("W", {128, 4096}), V = placeholder("V", {128});
  in.emplace("W", random_tensor(DType::kFloat32, {128, 4096}, 5));
  in.emplace("V", random_tensor(DType::kFloat32, {128}, 6));
  IterVar m = reduce_axis(128, "m");
  Tensor G = compute("G", {1, 4096}, [&](const Axes& i) { return sum(V(m.var) * W(m.var, i[1]), {m}); });
  // a read whose lanes are far apart, tiled along the reduce axis.
  Tensor WT = placeholder("WT", {2048, 256});
  in.emplace("WT", random_tensor(DType::kFloat32, {2048, 256}, 7));
  IterVar r = reduce_axis(256, "r");
  Tensor T = compute("T", {2048}, [&](const Axes& i) { return sum(WT(i[0], r.var) * V(r.var % 128), {r}); });
  const Program p({C, RS, H, G, T});
  const TensorMap one = interpret(p, in, {.threads = 1});
  for (const int threads : {2, 3, 7}) {
    const TensorMap many = interpret(p, in, {.threads = threads});
    for (const char* name : {"C", "RS", "E", "H", "G", "T"})
      EXPECT_EQ(std::memcmp(one.at(name).data(), many.at(name).data(), one.at(name).num_bytes()), 0)
          << name << " on " << threads << " threads";
  }
  // Rows 60 and on read A out of bounds.
  Tensor Bad = compute("Bad", {96, 80}, [&](const Axes& i) {
    return sum(A(select(ge(i[0], 60), i[0] + 40, i[0]), k.var) * B(k.var, i[1]), {k});
  });
  auto error_on = [&](int threads) {
    try {
      interpret(Program({Bad}), in, {.threads = threads});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_on(1), ::testing::HasSubstr("i=60"));
  EXPECT_EQ(error_on(3), error_on(1));
}

// outputs_only returns the outputs alone; their values are the same.
TEST(Interpreter, OutputsOnlyReturnsTheOutputs) {
  Tensor A = placeholder("A", {4});
  Tensor D = compute("D", {4}, [&](const Axes& i) { return A(i[0]) * 2.0; });
  Tensor E = compute("E", {4}, [&](const Axes& i) { return D(i[0]) + 1.0; });
  Tensor F = compute("F", {4}, [&](const Axes& i) { return D(i[0]) + E(i[0]); });
  TensorMap in{{"A", make(DType::kFloat32, {4}, {1, 2, 3, 4})}};
  const TensorMap all = interpret(Program({E, F}), in);
  const TensorMap outputs = interpret(Program({E, F}), in, {.outputs_only = true});
  EXPECT_EQ(all.size(), 3u);
  ASSERT_EQ(outputs.size(), 2u);
  for (const char* name : {"E", "F"}) EXPECT_EQ(values(outputs.at(name)), values(all.at(name))) << name;
}

TEST(Interpreter, MatmulBiasRelu) {
  Tensor A = placeholder("A", {2, 3}), W = placeholder("W", {3, 2}), b = placeholder("b", {2});
  TensorMap in{{"A", make(DType::kFloat32, {2, 3}, {1, 2, 3, -1, 0, 1})},
               {"W", make(DType::kFloat32, {3, 2}, {1, -1, 0, 2, -2, 1})},
               {"b", make(DType::kFloat32, {2}, {0.5, -10})}};
  IterVar k = reduce_axis(3, "k");
  Tensor M = compute("M", {2, 2}, [&](const Axes& i) { return sum(A(i[0], k.var) * W(k.var, i[1]), {k}); });
  Tensor Y = compute("Y", {2, 2}, [&](const Axes& i) { return maximum(M(i[0], i[1]) + b(i[1]), Expr(0.0)); });
  TensorMap out = interpret(Program({Y}), in);
  // M = [[1 - 6, -1 + 4 + 3], [-1 - 2, 1 + 1]] = [[-5, 6], [-3, 2]].
  EXPECT_EQ(values(out.at("M")), (std::vector<double>{-5, 6, -3, 2}));
  EXPECT_EQ(values(out.at("Y")), (std::vector<double>{0, 0, 0, 0}));
  in["b"] = make(DType::kFloat32, {2}, {5.5, -1});
  EXPECT_EQ(eval({Y}, in, "Y"), (std::vector<double>{0.5, 5, 2.5, 1}));
}

TEST(Interpreter, SoftmaxInFourComputes) {
  Tensor X = placeholder("X", {2, 3});
  std::vector<float> x{1, 2, 3, -1, -1, 0.5f};
  TensorMap in{{"X", make(DType::kFloat32, {2, 3}, {x.begin(), x.end()})}};
  IterVar k1 = reduce_axis(3, "k"), k2 = reduce_axis(3, "k");
  Tensor Max = compute("Max", {2}, [&](const Axes& i) { return max_reduce(X(i[0], k1.var), {k1}); });
  Tensor E = compute("E", {2, 3}, [&](const Axes& i) { return math::exp(X(i[0], i[1]) - Max(i[0])); });
  Tensor Sum = compute("Sum", {2}, [&](const Axes& i) { return sum(E(i[0], k2.var), {k2}); });
  Tensor Y = compute("Y", {2, 3}, [&](const Axes& i) { return E(i[0], i[1]) / Sum(i[0]); });
  TensorMap out = interpret(Program({Y}), in);
  EXPECT_EQ(values(out.at("Max")), (std::vector<double>{3, 0.5}));
  for (int r = 0; r < 2; ++r) {
    float m = r == 0 ? 3.0f : 0.5f, e[3], s = 0;
    for (int c = 0; c < 3; ++c) s += e[c] = std::exp(x[size_t(r * 3 + c)] - m);
    EXPECT_EQ(out.at("Sum").get(r), double(s));
    double total = 0;
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(out.at("Y").get(r * 3 + c), double(e[c] / s));
      total += out.at("Y").get(r * 3 + c);
    }
    EXPECT_NEAR(total, 1.0, 1e-6);
  }
}

TEST(Interpreter, ChainOfComputesReturnsEveryIntermediate) {
  Tensor A = placeholder("A", {2, 2});
  TensorMap in{{"A", make(DType::kFloat32, {2, 2}, {1, 2, 3, 4})}};
  Tensor B = compute("B", {2, 2}, [&](const Axes& i) { return A(i[0], i[1]) * 2.0; });
  Tensor T = compute("T", {2, 2}, [&](const Axes& i) { return B(i[1], i[0]) + A(i[0], i[1]); });  // B transposed
  IterVar k = reduce_axis(2, "k");
  Tensor R = compute("R", {2}, [&](const Axes& i) { return sum(T(i[0], k.var), {k}); });
  Tensor N = compute("N", {2}, [&](const Axes& i) { return cast(DType::kInt64, R(i[0])) % 7; });
  TensorMap out = interpret(Program({N}), in);
  EXPECT_EQ(out.size(), 4u);
  EXPECT_EQ(values(out.at("B")), (std::vector<double>{2, 4, 6, 8}));
  EXPECT_EQ(values(out.at("T")), (std::vector<double>{3, 8, 7, 12}));
  EXPECT_EQ(values(out.at("R")), (std::vector<double>{11, 19}));
  EXPECT_EQ(values(out.at("N")), (std::vector<double>{4, 5}));
  EXPECT_EQ(out.at("N").dtype(), DType::kInt64);
}

TEST(Interpreter, ShortInnermostAxisAndScalarOutputs) {
  // Lanes go along the long outer axis when the innermost one is short.
  Tensor C = compute("C", {300, 2}, [&](const Axes& i) { return cast(DType::kFloat32, i[0] * 2 - i[1]); });
  std::vector<double> got = eval({C}, {}, "C");
  ASSERT_EQ(got.size(), 600u);
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(got[size_t(i * 2)], i * 2);
    EXPECT_EQ(got[size_t(i * 2 + 1)], i * 2 - 1);
  }
  Tensor S = compute("S", {}, [&](const Axes&) { return Expr(2.5) * 2.0; });
  EXPECT_EQ(eval({S}, {}, "S"), std::vector<double>{5});
}

// A 1-D convolution with zero padding: guarded reads inside a reduction, with lanes over outputs and over
// reduce steps.
TEST(Interpreter, PaddedConvolutionInsideReduction) {
  for (int64_t n : {4, 600}) {
    Tensor X = placeholder("X", {n}), Wt = placeholder("Wt", {3});
    std::vector<double> x(size_t(n), 0.0);
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = double(i % 5) - 2;
    TensorMap in{{"X", make(DType::kFloat32, {n}, x)}, {"Wt", make(DType::kFloat32, {3}, {1, 10, 100})}};
    IterVar k = reduce_axis(3, "k");
    Tensor Y = compute("Y", {n}, [&](const Axes& i) {
      Expr at = i[0] + k.var - 1;
      return sum(select(logical_and(ge(at, 0), lt(at, n)), X(at), Expr(0.0)) * Wt(k.var), {k});
    });
    std::vector<double> got = eval({Y}, in, "Y");
    for (int64_t i = 0; i < n; ++i) {
      double want = 0;
      for (int64_t kk = 0; kk < 3; ++kk) {
        int64_t at = i + kk - 1;
        want += (at >= 0 && at < n ? x[size_t(at)] : 0.0) * std::pow(10.0, double(kk));
      }
      EXPECT_EQ(got[size_t(i)], want) << "n=" << n << " i=" << i;
    }
  }
  // Lanes over a long reduction: the sum of X[q - 5] over q in [0, 700), padded.
  Tensor X = placeholder("X", {600});
  IterVar q = reduce_axis(700, "q");
  Tensor Z = compute("Z", {2}, [&](const Axes& i) {
    Expr at = q.var - 5 + i[0];
    return sum(select(logical_and(ge(at, 0), lt(at, 600)), X(at), Expr(0.0)), {q});
  });
  TensorMap in{{"X", make(DType::kFloat32, {600}, std::vector<double>(600, 1.0))}};
  EXPECT_EQ(eval({Z}, in, "Z"), (std::vector<double>{600, 600}));
}

TEST(Interpreter, Matmul128MatchesNaiveLoop) {
  const int64_t n = 128;
  Tensor A = placeholder("A", {n, n}), B = placeholder("B", {n, n});
  IterVar k = reduce_axis(n, "k");
  Tensor C = compute("C", {n, n}, [&](const Axes& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); });
  Program program({C});
  TensorMap in = random_inputs(program, 42);
  HostTensor got = interpret(program, in).at("C");
  HostTensor want(DType::kFloat32, {n, n});
  const float *a = in.at("A").f32(), *b = in.at("B").f32();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t kk = 0; kk < n; ++kk) acc += a[i * n + kk] * b[kk * n + j];
      want.f32()[i * n + j] = acc;
    }
  Comparison c = compare(got, want, 1e-5, 1e-6);
  EXPECT_TRUE(c.ok) << c.message;
}

// W[i, k] * x[k] with lanes over i: the strided read is loaded in tiles of reduce steps; sizes that are not
// multiples of the lane batch or the tile exercise the reloads.
TEST(Interpreter, MatrixVectorProductMatchesNaiveLoop) {
  const int64_t m = 300, n = 70;
  Tensor W = placeholder("W", {m, n}), x = placeholder("x", {n});
  IterVar k = reduce_axis(n, "k");
  Tensor y = compute("y", {m}, [&](const Axes& i) { return sum(W(i[0], k.var) * x(k.var), {k}); });
  Program program({y});
  TensorMap in = random_inputs(program, 3);
  HostTensor got = interpret(program, in).at("y");
  for (int64_t i = 0; i < m; ++i) {
    float acc = 0;
    for (int64_t kk = 0; kk < n; ++kk) acc += in.at("W").f32()[i * n + kk] * in.at("x").f32()[kk];
    EXPECT_NEAR(got.get(i), acc, 1e-5) << "i=" << i;
  }
}

TEST(Interpreter, MissingOrMisshapedInputNamesThePlaceholder) {
  Tensor A = placeholder("Aweights", {2, 2});
  Tensor C = compute("C", {2, 2}, [&](const Axes& i) { return A(i[0], i[1]) + 1.0; });
  std::string missing = error_of({C}, {});
  EXPECT_TRUE(contains(missing, "no input for placeholder 'Aweights'")) << missing;
  std::string shape = error_of({C}, {{"Aweights", HostTensor(DType::kFloat32, {2, 3})}});
  EXPECT_TRUE(contains(shape, "'Aweights'")) << shape;
  EXPECT_TRUE(contains(shape, "f32[2, 3]")) << shape;
  EXPECT_TRUE(contains(shape, "f32[2, 2]")) << shape;
  std::string dtype = error_of({C}, {{"Aweights", HostTensor(DType::kInt64, {2, 2})}});
  EXPECT_TRUE(contains(dtype, "'Aweights' is i64[2, 2]")) << dtype;
}

TEST(Interpreter, OutOfBoundsReadNamesTensorComputeAndIndex) {
  Tensor X = placeholder("X", {3, 4});
  TensorMap in{{"X", HostTensor(DType::kFloat32, {3, 4})}};
  Tensor C = compute("Shifted", {3, 4}, [&](const Axes& i) { return X(i[0], i[1] + 1); });
  std::string error = error_of({C}, in);
  EXPECT_TRUE(contains(error, "compute 'Shifted' reads 'X' at [0, 4], outside its shape [3, 4]")) << error;
  EXPECT_TRUE(contains(error, "i=0, j=3")) << error;
  // In a reduction, and through a non-affine index.
  IterVar k = reduce_axis(4, "k");
  Tensor R = compute("R", {3}, [&](const Axes& i) { return sum(X(i[0] * 2, k.var), {k}); });
  error = error_of({R}, in);
  EXPECT_TRUE(contains(error, "compute 'R' reads 'X' at [4, 0]")) << error;
  EXPECT_TRUE(contains(error, "i=2, k=0")) << error;
  Tensor D = compute("D", {3, 4}, [&](const Axes& i) { return X(i[0], (i[1] + 5) / 2); });
  error = error_of({D}, in);
  EXPECT_TRUE(contains(error, "compute 'D' reads 'X' at [0, 4]")) << error;
  // A select whose chosen branch is out of bounds is still an error.
  Tensor S = compute("S", {3, 4}, [&](const Axes& i) { return select(ge(i[1], 3), X(i[0], i[1] + 1), Expr(0.0)); });
  error = error_of({S}, in);
  EXPECT_TRUE(contains(error, "compute 'S' reads 'X' at [0, 4]")) << error;
}

TEST(Interpreter, UnboundVariableIsRejected) {
  Tensor C = compute("C", {2}, [&](const Axes& i) { return i[0] + var("z"); });
  std::string error = error_of({C}, {});
  EXPECT_TRUE(contains(error, "'z'")) << error;
}

TEST(Interpreter, RandomInputsAreDeterministicPerSeed) {
  Tensor A = placeholder("A", {4, 5}), B = placeholder("B", {7}, DType::kInt64);
  Tensor C = compute("C", {4, 5}, [&](const Axes& i) { return A(i[0], i[1]) + cast(DType::kFloat32, B(i[1])); });
  Program program({C});
  TensorMap first = random_inputs(program, 11), again = random_inputs(program, 11), other = random_inputs(program, 12);
  ASSERT_EQ(first.size(), 2u);
  for (const char* name : {"A", "B"}) {
    const HostTensor &x = first.at(name), &y = again.at(name), &z = other.at(name);
    EXPECT_EQ(x.shape(), program.find(name)->shape);
    EXPECT_EQ(x.dtype(), program.find(name)->dtype);
    EXPECT_EQ(std::memcmp(x.data(), y.data(), x.num_bytes()), 0) << name;
    EXPECT_NE(std::memcmp(x.data(), z.data(), x.num_bytes()), 0) << name;
  }
  // Placeholder n gets seed + n.
  HostTensor b = random_tensor(DType::kInt64, {7}, 12);
  EXPECT_EQ(std::memcmp(first.at("B").data(), b.data(), b.num_bytes()), 0);
  EXPECT_EQ(interpret(program, first).at("C").num_elements(), 20);
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

// A program too large for the machine is refused before anything is allocated, naming what it needs, its largest
// tensor and what the machine has (here a given 1 GB; 0 reads this machine's memory).
TEST(Interpreter, ProgramsLargerThanTheMemoryAreRefusedBeforeAllocating) {
  Tensor x = placeholder("x", {100000, 100000});
  Tensor y = compute("y", {100000, 100000}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) * 2.0; });
  Program p({y}, "huge");
  EXPECT_DOUBLE_EQ(program_tensor_bytes(p), 8e10);
  EXPECT_THAT([&] { check_program_fits_memory(p, 1e9); },
              testing::ThrowsMessage<MemoryNeedError>(testing::HasSubstr(
                  "program 'huge' needs 80.0 GB for its tensors (the largest, 'x' f32[100000, 100000]: 40.0 GB), "
                  "this machine has 1.0 GB")));
  // 2^62 elements of three tensors: past 64 bits, still a clear refusal.
  Tensor z = placeholder("z", {int64_t(1) << 31, int64_t(1) << 31});
  Program absurd({compute("w", {int64_t(1) << 31, int64_t(1) << 31},
                          [&](const std::vector<Expr>& i) { return z(i[0], i[1]) + 1.0; })},
                 "absurd");
  EXPECT_THROW(random_inputs(absurd, 1), MemoryNeedError);
  EXPECT_THROW(interpret(absurd, {}), MemoryNeedError);
  Tensor a = placeholder("a", {4});
  EXPECT_NO_THROW(check_program_fits_memory(
      Program({compute("b", {4}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0; })}, "tiny")));
}

}  // namespace
}  // namespace ingot
