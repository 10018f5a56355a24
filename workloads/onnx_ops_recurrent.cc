// ONNX recurrent operators: LSTM (forward, reverse and bidirectional; layouts 0 and 1; peepholes; clip; the
// default activations only), unrolled over its static sequence length into per-step TEs as workloads/lstm.cc
// builds its model. PyTorch exports torch.nn.LSTM as one LSTM node per layer.
#include <functional>

#include "ops/op_conventions.h"
#include "workloads/onnx_ops.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;
// Reads one [batch, hidden] state at (b, j).
using StateReader = std::function<Expr(const Expr& b, const Expr& j)>;

// ONNX stacks the gates of W, R and B as input, output, forget, cell.
enum OnnxLstmGate : int64_t { kInputGate = 0, kOutputGate = 1, kForgetGate = 2, kCellGate = 3 };

// choose(index, n, at): at(k) for the k that equals index (0 <= index < n), as a balanced tree of selects, so
// that a stacked sequence output reads any step after log2(n) comparisons.
Expr choose(const Expr& index, int64_t lo, int64_t hi, const std::function<Expr(int64_t)>& at) {
  if (hi - lo == 1) return at(lo);
  int64_t mid = lo + (hi - lo) / 2;
  return select(lt(index, Expr(mid)), choose(index, lo, mid, at), choose(index, mid, hi, at));
}

// activations, activation_alpha and activation_beta are never read, so a node that sets them (even to the
// defaults Sigmoid, Tanh, Tanh) is reported as unsupported; exporters leave them unset.
void convert_lstm(OnnxNode& node) {
  if (!is_float(node.input_dtype(0))) node.unsupported("input of a non-float type is not supported");
  const std::string direction = node.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    node.fail("direction must be forward, reverse or bidirectional, not '" + direction + "'");
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  node.require_attr_int("input_forget", 0, "coupling the input and forget gates is not supported");
  const bool batch_first = node.attr_int("layout", 0) != 0;
  const bool clipped = node.has_attr("clip");
  const double clip = node.attr_float("clip", 0.0);
  if (clipped && clip <= 0) node.fail("clip must be positive");

  const std::vector<int64_t>& xs = node.input_shape(0);
  if (xs.size() != 3) node.fail("X must have rank 3, not " + shape_to_string(xs));
  const int64_t steps = batch_first ? xs[1] : xs[0], batch = batch_first ? xs[0] : xs[1], in = xs[2];
  const std::vector<int64_t>& ws = node.input_shape(1);
  if (ws.size() != 3 || ws[0] != D || ws[2] != in || ws[1] % 4 != 0)
    node.fail("W " + shape_to_string(ws) + " must be [" + std::to_string(D) + ", 4*hidden, " + std::to_string(in) +
              "]");
  const int64_t H = node.attr_int("hidden_size", ws[1] / 4);
  if (ws[1] != 4 * H) node.fail("W " + shape_to_string(ws) + " does not match hidden_size " + std::to_string(H));
  if (node.input_shape(2) != std::vector<int64_t>{D, 4 * H, H})
    node.fail("R " + shape_to_string(node.input_shape(2)) + " must be [" + std::to_string(D) + ", " +
              std::to_string(4 * H) + ", " + std::to_string(H) + "]");
  if (node.has_input(4)) {
    // Sequences shorter than the tensor would need masking per batch row; equal lengths are the plain unroll.
    for (int64_t len : node.constant_ints(4, "sequence_lens"))
      if (len != steps)
        node.unsupported("sequence_lens other than the full length " + std::to_string(steps) + " is not supported");
  }
  const std::vector<int64_t> state_shape =
      batch_first ? std::vector<int64_t>{batch, D, H} : std::vector<int64_t>{D, batch, H};
  for (size_t i : {size_t(5), size_t(6)})
    if (node.has_input(i) && node.input_shape(i) != state_shape)
      node.fail(std::string(i == 5 ? "initial_h " : "initial_c ") + shape_to_string(node.input_shape(i)) + " must be " +
                shape_to_string(state_shape));
  if (node.has_input(7) && node.input_shape(7) != std::vector<int64_t>{D, 3 * H})
    node.fail("P " + shape_to_string(node.input_shape(7)) + " must be [" + std::to_string(D) + ", " +
              std::to_string(3 * H) + "]");
  if (node.has_input(3) && node.input_shape(3) != std::vector<int64_t>{D, 8 * H})
    node.fail("B " + shape_to_string(node.input_shape(3)) + " must be [" + std::to_string(D) + ", " +
              std::to_string(8 * H) + "]");

  Tensor X = node.input(0), W = node.input(1), R = node.input(2);
  Tensor B = node.has_input(3) ? node.input(3) : Tensor();
  Tensor P = node.has_input(7) ? node.input(7) : Tensor();
  auto initial = [&](size_t i, int64_t d) -> StateReader {
    if (!node.has_input(i)) return [](const Expr&, const Expr&) { return Expr(0.0); };
    Tensor t = node.input(i);
    return [t, d, batch_first](const Expr& b, const Expr& j) { return batch_first ? t(b, d, j) : t(d, b, j); };
  };
  auto x_at = [&](int64_t t, const Expr& b, const Expr& k) { return batch_first ? X(b, t, k) : X(t, b, k); };

  // hs[d][t]: the hidden state direction d computes for sequence position t (reverse runs t = steps-1 .. 0).
  std::vector<std::vector<Tensor>> hs(static_cast<size_t>(D), std::vector<Tensor>(static_cast<size_t>(steps)));
  std::vector<Tensor> last_c(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const std::string dir = D == 2 ? (d == 0 ? "_fw" : "_bw") : "";
    StateReader h_prev = initial(5, d), c_prev = initial(6, d);
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = reverse ? steps - 1 - s : s;
      const std::string step = dir + "_t" + std::to_string(t);
      IterVar kx = reduce_axis(in, "k");
      Tensor wx = compute(node.temp_name(step + "_wx"), {batch, 4 * H},
                          [&](const Axes& i) { return sum(W(d, i[1], kx.var) * x_at(t, i[0], kx.var), {kx}); });
      IterVar kh = reduce_axis(H, "k");
      Tensor rh = compute(node.temp_name(step + "_rh"), {batch, 4 * H},
                          [&](const Axes& i) { return sum(R(d, i[1], kh.var) * h_prev(i[0], kh.var), {kh}); });
      // The pre-activation of gate q for (b, j), with both biases, the peephole on `cell` and the clip.
      auto pre = [&](OnnxLstmGate q, const Expr& b, const Expr& j, const StateReader& cell) {
        Expr row = q == kInputGate ? j : j + q * H;
        Expr v = wx(b, row) + rh(b, row);
        if (B) v = v + B(d, row) + B(d, row + 4 * H);
        if (P && q != kCellGate) {
          // P stacks the peepholes as input, output, forget.
          int64_t p = q == kInputGate ? 0 : q == kOutputGate ? 1 : 2;
          v = v + (p ? P(d, j + p * H) : P(d, j)) * cell(b, j);
        }
        return clipped ? minimum(maximum(v, Expr(-clip)), Expr(clip)) : v;
      };
      Tensor c = compute(node.temp_name(step + "_c"), {batch, H}, [&](const Axes& i) {
        return math::sigmoid(pre(kForgetGate, i[0], i[1], c_prev)) * c_prev(i[0], i[1]) +
               math::sigmoid(pre(kInputGate, i[0], i[1], c_prev)) * math::tanh(pre(kCellGate, i[0], i[1], c_prev));
      });
      StateReader c_now = [c](const Expr& b, const Expr& j) { return c(b, j); };
      Tensor h = compute(node.temp_name(step + "_h"), {batch, H}, [&](const Axes& i) {
        return math::sigmoid(pre(kOutputGate, i[0], i[1], c_now)) * math::tanh(c(i[0], i[1]));
      });
      hs[size_t(d)][size_t(t)] = h;
      h_prev = [h](const Expr& b, const Expr& j) { return h(b, j); };
      c_prev = c_now;
      last_c[size_t(d)] = c;
    }
  }

  // The last state of each direction: position steps-1 forward, position 0 in reverse.
  auto last_h = [&](int64_t d) {
    bool reverse = direction == "reverse" || d == 1;
    return hs[size_t(d)][size_t(reverse ? 0 : steps - 1)];
  };
  auto by_direction = [&](const Expr& d, const std::function<Tensor(int64_t)>& state, const Expr& b, const Expr& j) {
    return choose(d, 0, D, [&](int64_t k) { return state(k)(b, j); });
  };
  if (node.has_output(0)) {
    std::vector<int64_t> y_shape =
        batch_first ? std::vector<int64_t>{batch, steps, D, H} : std::vector<int64_t>{steps, D, batch, H};
    node.set_output(0, compute(node.output_name(0), y_shape, [&](const Axes& i) {
                      const Expr &t = batch_first ? i[1] : i[0], &d = batch_first ? i[2] : i[1],
                                 &b = batch_first ? i[0] : i[2];
                      return choose(t, 0, steps, [&](int64_t step) {
                        return by_direction(
                            d, [&](int64_t k) { return hs[size_t(k)][size_t(step)]; }, b, i[3]);
                      });
                    }));
  }
  auto final_state = [&](size_t output, const std::function<Tensor(int64_t)>& state) {
    if (!node.has_output(output)) return;
    node.set_output(output, compute(node.output_name(output), state_shape, [&](const Axes& i) {
                      return batch_first ? by_direction(i[1], state, i[0], i[2])
                                         : by_direction(i[0], state, i[1], i[2]);
                    }));
  };
  final_state(1, last_h);
  final_state(2, [&](int64_t d) { return last_c[size_t(d)]; });
}

}  // namespace

void add_onnx_recurrent_converters(OnnxConverterMap& m) { m["LSTM"] = convert_lstm; }

}  // namespace ingot
