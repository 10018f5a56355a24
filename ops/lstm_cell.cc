#include "ops/lstm_cell.h"

#include <vector>

#include "ops/op_conventions.h"

namespace ingot {

LstmCellNames LstmCellNames::from_base(const std::string& base) {
  return {base + "_wx", base + "_uh", base + "_c", base + "_h"};
}

LstmCellOutputs lstm_cell(const LstmCellNames& names, const Tensor& x, const Tensor& h_prev, const Tensor& c_prev,
                          const Tensor& W, const Tensor& U, const Tensor& b) {
  using Axes = std::vector<Expr>;
  const std::string& name = names.h;
  if (!x || !h_prev || !c_prev || !W || !U || !b)
    throw_op_error("lstm_cell", name, "every operand (x, h_prev, c_prev, W, U, b) must be non-null");
  if (x->shape.empty() || h_prev->shape.empty()) throw_op_error("lstm_cell", name, "x and h_prev must have rank >= 1");
  const int64_t in = x->shape.back(), H = h_prev->shape.back(), gates = 4 * H;
  const std::vector<int64_t> lead(x->shape.begin(), x->shape.end() - 1);
  std::vector<int64_t> state = lead;
  state.push_back(H);
  if (h_prev->shape != state || c_prev->shape != state)
    throw_op_error("lstm_cell", name,
                   "h_prev " + shape_to_string(h_prev->shape) + " and c_prev " + shape_to_string(c_prev->shape) +
                       " must both be " + shape_to_string(state) + " for x " + shape_to_string(x->shape));
  if (W->shape != std::vector<int64_t>{gates, in})
    throw_op_error("lstm_cell", name,
                   "W " + shape_to_string(W->shape) + " must be [" + std::to_string(gates) + "," + std::to_string(in) +
                       "] for x " + shape_to_string(x->shape) + " and hidden size " + std::to_string(H));
  if (U->shape != std::vector<int64_t>{gates, H})
    throw_op_error("lstm_cell", name,
                   "U " + shape_to_string(U->shape) + " must be [" + std::to_string(gates) + "," + std::to_string(H) +
                       "] for hidden size " + std::to_string(H));
  if (b->shape != std::vector<int64_t>{gates})
    throw_op_error("lstm_cell", name,
                   "b " + shape_to_string(b->shape) + " must be [" + std::to_string(gates) + "] for hidden size " +
                       std::to_string(H));

  std::vector<int64_t> gate_shape = lead;
  gate_shape.push_back(gates);
  // Reads t at the leading indices of i followed by last.
  auto at = [](const Tensor& t, const Axes& i, const Expr& last) {
    std::vector<Expr> idx(i.begin(), i.end() - 1);
    idx.push_back(last);
    return t(idx);
  };
  IterVar kx = reduce_axis(in, "k");
  Tensor wx =
      compute(names.wx, gate_shape, [&](const Axes& g) { return sum(W(g.back(), kx.var) * at(x, g, kx.var), {kx}); });
  IterVar kh = reduce_axis(H, "k");
  Tensor uh = compute(names.uh, gate_shape,
                      [&](const Axes& g) { return sum(U(g.back(), kh.var) * at(h_prev, g, kh.var), {kh}); });
  enum Gate : int64_t { kInput = 0, kForget = 1, kCell = 2, kOutput = 3 };
  auto pre = [&](Gate q, const Axes& j) {
    Expr row = q == kInput ? j.back() : j.back() + q * H;
    return at(wx, j, row) + at(uh, j, row) + b(row);
  };
  Tensor c = compute(names.c, state, [&](const Axes& j) {
    return math::sigmoid(pre(kForget, j)) * c_prev(j) + math::sigmoid(pre(kInput, j)) * math::tanh(pre(kCell, j));
  });
  Tensor h = compute(names.h, state, [&](const Axes& j) { return math::sigmoid(pre(kOutput, j)) * math::tanh(c(j)); });
  return {h, c};
}

}  // namespace ingot
