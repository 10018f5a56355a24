// The stacked LSTM of the Souffle paper, unrolled into tensor expressions: `layers` layers over `steps` time
// steps, batch 1. Use it to build the LSTM program at any size; the registry exposes it to configs as "lstm".
// Every cell of a layer reads that layer's W, U and b: the weight reuse that whole-model analysis exploits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"

namespace ingot {

struct LstmSizes {
  int64_t layers = 10;
  int64_t steps = 100;
  int64_t hidden = 256;
  int64_t input = 256;  // features of X; layers after the first read the previous layer's h (hidden wide)
  // A size small enough for the interpreter in unit tests.
  static LstmSizes small() { return LstmSizes{2, 3, 8, 8}; }
};

// Placeholders: X[steps, input]; per layer l, W<l>[4*hidden, in_l] (in_0 = input, else hidden),
// U<l>[4*hidden, hidden], b<l>[4*hidden]. Gate rows are, in this order: input (i), forget (f), cell (g),
// output (o), each hidden rows long, so gate q of unit j is row q*hidden + j.
//
// The initial state is zero: computes h0[hidden] = 0 and c0[hidden] = 0, shared by every layer (computes, not
// placeholders, so that a runner feeding random inputs still runs the model as the paper defines it).
// Cell (l, t) reads x = X[t, :] for l = 0, else h_l{l-1}_t{t}; h_prev / c_prev are the cell (l, t-1)'s, or
// h0 / c0 at t = 0. It is four computes:
//   wx_l{l}_t{t}[g] = sum_k W<l>[g, k] * x[k]
//   uh_l{l}_t{t}[g] = sum_k U<l>[g, k] * h_prev[k]
//   c_l{l}_t{t}[j]  = sigmoid(pre(f, j)) * c_prev[j] + sigmoid(pre(i, j)) * tanh(pre(g, j))
//   h_l{l}_t{t}[j]  = sigmoid(pre(o, j)) * tanh(c_l{l}_t{t}[j])
// with pre(q, j) = wx[q*hidden + j] + uh[q*hidden + j] + b<l>[q*hidden + j]. The gate pre-activations are
// folded into c and h (each gate is read by exactly one of them), so a cell needs no separate gate tensor.
//
// The program's only output is the last layer's h at the last step, h_l{layers-1}_t{steps-1}[hidden]; it
// depends on every cell, so nothing is dead. Program name "lstm"; 4 * layers * steps + 2 computes.
// Throws std::invalid_argument when a size is not positive.
Program lstm(const LstmSizes& sizes = {});

// The weight placeholders (what parameter counts add up): W<l>, U<l>, b<l> for every layer.
std::vector<std::string> lstm_weight_names(const LstmSizes& sizes);

// Name of the compute for part `part` ("wx", "uh", "c" or "h") of cell (layer, step), e.g. "h_l0_t2".
std::string lstm_tensor_name(const std::string& part, int64_t layer, int64_t step);

// Weight ranges as PyTorch's nn.LSTM initialises them: W<l>, U<l> and b<l> uniform in +-1/sqrt(hidden); X keeps
// [-1, 1). With weights in [-1, 1) the paper-size LSTM is chaotic: float rounding differences grow tenfold
// every ten steps, and no two correct programs agree after 100 steps.
InputRanges lstm_input_ranges(const LstmSizes& sizes);

}  // namespace ingot
