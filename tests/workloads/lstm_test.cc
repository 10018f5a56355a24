#include "workloads/lstm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Every layer's h at every step ([layer][step][unit]), computed in double with plain loops from the
// placeholders alone: the recurrence written out directly, independent of the TE builders.
std::vector<std::vector<std::vector<double>>> reference_lstm(const LstmSizes& s, const TensorMap& in) {
  const int64_t H = s.hidden;
  std::vector<std::vector<std::vector<double>>> hs(static_cast<size_t>(s.layers));
  for (int64_t l = 0; l < s.layers; ++l) {
    const HostTensor &W = in.at("W" + std::to_string(l)), &U = in.at("U" + std::to_string(l)),
                     &b = in.at("b" + std::to_string(l));
    const int64_t n_in = l == 0 ? s.input : H;
    std::vector<double> h(static_cast<size_t>(H), 0.0), c(static_cast<size_t>(H), 0.0);
    for (int64_t t = 0; t < s.steps; ++t) {
      std::vector<double> x(static_cast<size_t>(n_in));
      for (int64_t k = 0; k < n_in; ++k)
        x[size_t(k)] = l == 0 ? in.at("X").get(t * s.input + k) : hs[size_t(l - 1)][size_t(t)][size_t(k)];
      std::vector<double> gate(static_cast<size_t>(4 * H));
      for (int64_t g = 0; g < 4 * H; ++g) {
        double v = b.get(g);
        for (int64_t k = 0; k < n_in; ++k) v += W.get(g * n_in + k) * x[size_t(k)];
        for (int64_t k = 0; k < H; ++k) v += U.get(g * H + k) * h[size_t(k)];
        gate[size_t(g)] = v;
      }
      std::vector<double> h_new(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        double i_gate = sigmoid(gate[size_t(j)]), f_gate = sigmoid(gate[size_t(H + j)]);
        double g_gate = std::tanh(gate[size_t(2 * H + j)]), o_gate = sigmoid(gate[size_t(3 * H + j)]);
        c[size_t(j)] = f_gate * c[size_t(j)] + i_gate * g_gate;
        h_new[size_t(j)] = o_gate * std::tanh(c[size_t(j)]);
      }
      h = h_new;
      hs[size_t(l)].push_back(h);
    }
  }
  return hs;
}

void expect_matches_reference(const LstmSizes& s, uint64_t seed, const InputRanges& ranges = {}) {
  Program p = lstm(s);
  TensorMap in = random_inputs(p, seed, ranges);
  TensorMap out = interpret(p, in);
  auto hs = reference_lstm(s, in);
  for (int64_t l = 0; l < s.layers; ++l)
    for (int64_t t = 0; t < s.steps; ++t) {
      HostTensor expected(DType::kFloat32, {s.hidden});
      for (int64_t j = 0; j < s.hidden; ++j) expected.set(j, hs[size_t(l)][size_t(t)][size_t(j)]);
      Comparison c = compare(out.at(lstm_tensor_name("h", l, t)), expected, 1e-4, 1e-5);
      EXPECT_TRUE(c.ok) << "layer " << l << " step " << t << ": " << c.message;
    }
  ASSERT_EQ(p.outputs().size(), 1u);
  EXPECT_EQ(p.outputs()[0]->name, lstm_tensor_name("h", s.layers - 1, s.steps - 1));
}

TEST(Lstm, SmallMatchesPlainLoops) {
  for (uint64_t seed : {1u, 5u}) expect_matches_reference(LstmSizes::small(), seed);
}

// The paper-size LSTM with PyTorch's weight ranges is well conditioned: the interpreter (float) agrees with
// double-precision plain loops at every layer and step. With weights in [-1, 1) it does not (the recurrence
// is chaotic: the float and double answers part after about 30 steps), which is why the registry gives the
// LSTM its framework's ranges.
TEST(Lstm, PaperSizeWithFrameworkWeightRangesMatchesPlainLoops) {
  const LstmSizes paper;
  InputRanges ranges = lstm_input_ranges(paper);
  ASSERT_EQ(ranges.size(), size_t(3 * paper.layers));
  EXPECT_EQ(ranges.at("U3"), (ValueRange{-1.0 / 16, 1.0 / 16}));
  EXPECT_EQ(workload_input_ranges("lstm"), ranges);
  expect_matches_reference(paper, 1, ranges);
}

TEST(Lstm, InputWidthDifferentFromHiddenMatchesPlainLoops) {
  expect_matches_reference(LstmSizes{3, 2, 4, 7}, 11);
  Program p = lstm(LstmSizes{3, 2, 4, 7});
  EXPECT_EQ(p.find("W0")->shape, (std::vector<int64_t>{16, 7}));
  EXPECT_EQ(p.find("W1")->shape, (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(p.find("U2")->shape, (std::vector<int64_t>{16, 4}));
}

TEST(Lstm, EveryCellOfALayerReadsTheSameWeights) {
  const LstmSizes s = LstmSizes::small();
  Program p = lstm(s);
  for (int64_t l = 0; l < s.layers; ++l) {
    Tensor W = p.find("W" + std::to_string(l)), U = p.find("U" + std::to_string(l));
    for (int64_t t = 0; t < s.steps; ++t) {
      std::vector<Tensor> wx_inputs = p.find(lstm_tensor_name("wx", l, t))->inputs();
      std::vector<Tensor> uh_inputs = p.find(lstm_tensor_name("uh", l, t))->inputs();
      EXPECT_TRUE(wx_inputs[0].same_as(W)) << l << " " << t;
      EXPECT_TRUE(uh_inputs[0].same_as(U)) << l << " " << t;
    }
  }
}

TEST(Lstm, PaperSizeStructureFlopsAndParameters) {
  Program p = lstm();
  EXPECT_EQ(p.name(), "lstm");
  // 4 computes per cell (wx, uh, c, h) for 10 layers x 100 steps, plus the zero initial state h0 and c0.
  EXPECT_EQ(p.computes().size(), 4u * 10 * 100 + 2);
  // X and W, U, b per layer.
  EXPECT_EQ(p.placeholders().size(), 1u + 3 * 10);
  EXPECT_EQ(p.outputs()[0]->name, "h_l9_t99");
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{256}));

  // Per cell: two GEMVs of 1024 x 256 at 2 FLOPs a multiply-add; c: three gate pre-activations (2 adds each),
  // sigmoid, sigmoid, tanh, then f*c + i*g (3) = 12 per unit; h: pre-activation (2), sigmoid, tanh, multiply
  // = 5 per unit.
  const int64_t per_cell = 2 * (2 * 1024 * 256) + (12 + 5) * 256;
  EXPECT_EQ(per_cell, 1052928);
  EXPECT_EQ(count_flops(p), 1000 * per_cell);
  const WorkloadInfo* info = find_workload("lstm");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->flops({}), 1052928000);
  // One bias vector per layer: 10 * (4*256*(256+256) + 4*256) = 10 * (524288 + 1024).
  EXPECT_EQ(info->parameter_count({}), 5253120);
  EXPECT_EQ(info->weight_names({}).size(), 30u);
}

TEST(Lstm, TensorNamesAreUniqueAndDocumented) {
  Program p = lstm(LstmSizes::small());
  std::set<std::string> names;
  for (const Tensor& t : p.tensors()) EXPECT_TRUE(names.insert(t->name).second) << t->name;
  for (const char* part : {"wx", "uh", "c", "h"}) EXPECT_TRUE(p.find(lstm_tensor_name(part, 1, 2))) << part;
  EXPECT_EQ(lstm_tensor_name("c", 3, 14), "c_l3_t14");
  EXPECT_TRUE(p.find("h0") && !p.find("h0")->is_placeholder());
}

TEST(Lstm, RejectsNonPositiveSizes) {
  EXPECT_THROW(lstm(LstmSizes{0, 1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(lstm(LstmSizes{1, 1, 1, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
