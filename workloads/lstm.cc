#include "workloads/lstm.h"

#include <cmath>
#include <stdexcept>

namespace ingot {

std::string lstm_tensor_name(const std::string& part, int64_t layer, int64_t step) {
  return part + "_l" + std::to_string(layer) + "_t" + std::to_string(step);
}

std::vector<std::string> lstm_weight_names(const LstmSizes& sizes) {
  std::vector<std::string> names;
  for (int64_t l = 0; l < sizes.layers; ++l)
    for (const char* w : {"W", "U", "b"}) names.push_back(w + std::to_string(l));
  return names;
}

InputRanges lstm_input_ranges(const LstmSizes& sizes) {
  const double bound = 1.0 / std::sqrt(double(sizes.hidden));
  InputRanges ranges;
  for (const std::string& w : lstm_weight_names(sizes)) ranges[w] = {-bound, bound};
  return ranges;
}

Program lstm(const LstmSizes& s) {
  if (s.layers <= 0 || s.steps <= 0 || s.hidden <= 0 || s.input <= 0)
    throw std::invalid_argument("lstm: every size (layers, steps, hidden, input) must be positive");
  using Axes = std::vector<Expr>;
  const int64_t H = s.hidden, gates = 4 * H;
  enum Gate : int64_t { kInput = 0, kForget = 1, kCell = 2, kOutput = 3 };

  Tensor X = placeholder("X", {s.steps, s.input});
  Tensor h0 = compute("h0", {H}, [](const Axes&) { return Expr(0.0); });
  Tensor c0 = compute("c0", {H}, [](const Axes&) { return Expr(0.0); });

  // h_below[t]: the input sequence of the layer being built (null for layer 0, which reads X).
  std::vector<Tensor> h_below(s.steps);
  for (int64_t l = 0; l < s.layers; ++l) {
    const int64_t in = l == 0 ? s.input : H;
    Tensor W = placeholder("W" + std::to_string(l), {gates, in});
    Tensor U = placeholder("U" + std::to_string(l), {gates, H});
    Tensor b = placeholder("b" + std::to_string(l), {gates});
    Tensor h_prev = h0, c_prev = c0;
    for (int64_t t = 0; t < s.steps; ++t) {
      IterVar kx = reduce_axis(in, "k");
      Tensor wx = compute(lstm_tensor_name("wx", l, t), {gates}, [&](const Axes& g) {
        Expr x = l == 0 ? X(t, kx.var) : h_below[t](kx.var);
        return sum(W(g[0], kx.var) * x, {kx});
      });
      IterVar kh = reduce_axis(H, "k");
      Tensor uh = compute(lstm_tensor_name("uh", l, t), {gates},
                          [&](const Axes& g) { return sum(U(g[0], kh.var) * h_prev(kh.var), {kh}); });
      auto pre = [&](Gate q, const Expr& j) {
        Expr row = q == kInput ? j : j + q * H;
        return wx(row) + uh(row) + b(row);
      };
      Tensor c = compute(lstm_tensor_name("c", l, t), {H}, [&](const Axes& j) {
        return math::sigmoid(pre(kForget, j[0])) * c_prev(j[0]) +
               math::sigmoid(pre(kInput, j[0])) * math::tanh(pre(kCell, j[0]));
      });
      Tensor h = compute(lstm_tensor_name("h", l, t), {H},
                         [&](const Axes& j) { return math::sigmoid(pre(kOutput, j[0])) * math::tanh(c(j[0])); });
      h_below[t] = h;
      h_prev = h;
      c_prev = c;
    }
  }
  return Program({h_below[s.steps - 1]}, "lstm");
}

}  // namespace ingot
