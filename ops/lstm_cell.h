// One LSTM cell step with workloads/lstm.cc's gate order and math: gates stacked [i, f, g, o] in W/U/b rows,
// c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g), h = sigmoid(o) * tanh(c). Use it to build recurrent models.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace ingot {

// The four TEs of a cell: wx = W x (reduction), uh = U h_prev (reduction), then c and h (element-wise, with the
// bias added to each gate pre-activation inside them, as workloads/lstm.cc does).
struct LstmCellNames {
  std::string wx, uh, c, h;
  // {base + "_wx", base + "_uh", base + "_c", base + "_h"}.
  static LstmCellNames from_base(const std::string& base);
};

struct LstmCellOutputs {
  Tensor h, c;
};

// x: [..., in]; h_prev, c_prev: [..., H] (same leading dimensions as x: none for one sequence, [B] for a batch);
// W: [4H, in]; U: [4H, H]; b: [4H]. Returns h and c, both [..., H].
LstmCellOutputs lstm_cell(const LstmCellNames& names, const Tensor& x, const Tensor& h_prev, const Tensor& c_prev,
                          const Tensor& W, const Tensor& U, const Tensor& b);
inline LstmCellOutputs lstm_cell(const std::string& base, const Tensor& x, const Tensor& h_prev, const Tensor& c_prev,
                                 const Tensor& W, const Tensor& U, const Tensor& b) {
  return lstm_cell(LstmCellNames::from_base(base), x, h_prev, c_prev, W, U, b);
}

}  // namespace ingot
