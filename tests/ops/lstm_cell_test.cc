#include "ops/lstm_cell.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/elementwise.h"
#include "tests/ops/op_test_util.h"
#include "workloads/lstm.h"

namespace ingot {
namespace {

using op_test::run;
using op_test::values_of;
using testing::HasSubstr;

// Two steps of one layer built from cells equal workloads/lstm.cc's program on the same inputs.
TEST(LstmCell, MatchesTheLstmWorkload) {
  LstmSizes sizes;
  sizes.layers = 1;
  sizes.steps = 2;
  sizes.hidden = 4;
  sizes.input = 3;
  Program reference = lstm(sizes);
  TensorMap inputs = random_inputs(reference, 5);
  TensorMap expected = interpret(reference, inputs);

  Tensor X = placeholder("X", {2, 3});
  Tensor W = placeholder("W0", {16, 3}), U = placeholder("U0", {16, 4}), b = placeholder("b0", {16});
  Tensor h = fill("h0", {4}, 0.0), c = fill("c0", {4}, 0.0);
  for (int64_t t = 0; t < 2; ++t) {
    Tensor x_t = compute("x_t" + std::to_string(t), {3}, [&](const std::vector<Expr>& i) { return X(t, i[0]); });
    LstmCellOutputs next = lstm_cell("cell" + std::to_string(t), x_t, h, c, W, U, b);
    h = next.h;
    c = next.c;
  }
  EXPECT_EQ(h->name, "cell1_h");
  EXPECT_EQ(c->name, "cell1_c");
  TensorMap ins{{"X", inputs.at("X")}, {"W0", inputs.at("W0")}, {"U0", inputs.at("U0")}, {"b0", inputs.at("b0")}};
  TensorMap got = interpret(Program({h, c}), ins);
  Comparison ch = compare(got.at("cell1_h"), expected.at(lstm_tensor_name("h", 0, 1)));
  Comparison cc = compare(got.at("cell1_c"), expected.at(lstm_tensor_name("c", 0, 1)));
  EXPECT_TRUE(ch.ok) << ch.message;
  EXPECT_TRUE(cc.ok) << cc.message;
}

// A batched cell against the gate equations in plain loops.
TEST(LstmCell, BatchedAgainstPlainLoops) {
  const int64_t B = 2, in = 3, H = 2;
  Tensor x = placeholder("x", {B, in}), hp = placeholder("hp", {B, H}), cp = placeholder("cp", {B, H});
  Tensor W = placeholder("W", {4 * H, in}), U = placeholder("U", {4 * H, H}), b = placeholder("b", {4 * H});
  LstmCellOutputs out = lstm_cell(LstmCellNames{"wx", "uh", "c", "h"}, x, hp, cp, W, U, b);
  Program p({out.h});
  EXPECT_EQ(p.computes().size(), 4u);
  TensorMap in_values = random_inputs(p, 9);
  TensorMap got = interpret(p, in_values);
  auto v = [&](const char* t, int64_t i) { return in_values.at(t).get(i); };
  auto sig = [](double z) { return 1 / (1 + std::exp(-z)); };
  for (int64_t n = 0; n < B; ++n)
    for (int64_t j = 0; j < H; ++j) {
      double gate[4];
      for (int64_t q = 0; q < 4; ++q) {
        const int64_t row = q * H + j;
        double z = v("b", row);
        for (int64_t k = 0; k < in; ++k) z += v("W", row * in + k) * v("x", n * in + k);
        for (int64_t k = 0; k < H; ++k) z += v("U", row * H + k) * v("hp", n * H + k);
        gate[q] = z;
      }
      const double c = sig(gate[1]) * v("cp", n * H + j) + sig(gate[0]) * std::tanh(gate[2]);
      const double h = sig(gate[3]) * std::tanh(c);
      EXPECT_NEAR(got.at("c").get(n * H + j), c, 1e-5);
      EXPECT_NEAR(got.at("h").get(n * H + j), h, 1e-5);
    }
}

TEST(LstmCellErrors, WeightShape) {
  Tensor x = placeholder("x", {3}), h = placeholder("h", {4}), c = placeholder("c", {4});
  Tensor W = placeholder("W", {16, 2}), U = placeholder("U", {16, 4}), b = placeholder("b", {16});
  EXPECT_THAT([&] { lstm_cell("cell", x, h, c, W, U, b); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("lstm_cell 'cell_h': W [16,2] must be [16,3] for x [3] and hidden size 4")));
}

TEST(LstmCellErrors, StateShape) {
  Tensor x = placeholder("x", {2, 3}), h = placeholder("h", {4}), c = placeholder("c", {2, 4});
  Tensor W = placeholder("W", {16, 3}), U = placeholder("U", {16, 4}), b = placeholder("b", {16});
  EXPECT_THAT([&] { lstm_cell("cell", x, h, c, W, U, b); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("h_prev [4] and c_prev [2,4] must both be [2,4] for x [2,3]")));
}

}  // namespace
}  // namespace ingot
