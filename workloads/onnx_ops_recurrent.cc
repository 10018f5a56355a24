// ONNX recurrent operators: LSTM (forward, reverse and bidirectional; layouts 0 and 1; peepholes; clip; the
// default activations only) and GRU (the same, linear_before_reset 0 and 1, activations without parameters),
// unrolled over the static sequence length into per-step TEs as workloads/lstm.cc builds its model, except that the
// input projection of the whole sequence is one TE (X is known before the first step). PyTorch exports torch.nn.LSTM /
// torch.nn.GRU as one node per layer.
#include <functional>
#include <optional>
#include <string>

#include "ops/op_conventions.h"
#include "workloads/onnx_ops.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;
// Reads one [batch, hidden] state at (b, j).
using StateReader = std::function<Expr(const Expr& b, const Expr& j)>;

// ONNX stacks the gates of W, R and B as input, output, forget, cell.
enum OnnxLstmGate : int64_t { kInputGate = 0, kOutputGate = 1, kForgetGate = 2, kCellGate = 3 };

// The static dimensions of a recurrent node (LSTM: 4 gates, GRU: 3) and its direction and layout.
struct RecurrentDims {
  int64_t steps = 0, batch = 0, in = 0, D = 1, H = 0;
  bool batch_first = false;
  std::string direction;
  std::optional<double> clip;  // bounds every activation's input
  bool reverse(int64_t d) const { return direction == "reverse" || d == 1; }
  // initial_h, Y_h (and LSTM's initial_c, Y_c): [D, batch, H], or [batch, D, H] with layout=1.
  std::vector<int64_t> state_shape() const {
    return batch_first ? std::vector<int64_t>{batch, D, H} : std::vector<int64_t>{D, batch, H};
  }
};

// Reads direction, layout, clip and hidden_size, checks X, W ([D, gates*H, in]), R ([D, gates*H, H]), the optional
// initial_h (input 5) and sequence_lens (input 4: only the full length for every batch entry).
RecurrentDims read_recurrent_dims(OnnxNode& node, int64_t gates) {
  if (!is_float(node.input_dtype(0))) node.unsupported("input of a non-float type is not supported");
  RecurrentDims r;
  r.direction = node.attr_string("direction", "forward");
  if (r.direction != "forward" && r.direction != "reverse" && r.direction != "bidirectional")
    node.fail("direction must be forward, reverse or bidirectional, not '" + r.direction + "'");
  r.D = r.direction == "bidirectional" ? 2 : 1;
  r.batch_first = node.attr_int("layout", 0) != 0;
  if (node.has_attr("clip")) r.clip = node.attr_float("clip", 0.0);
  if (r.clip && *r.clip <= 0) node.fail("clip must be positive");
  const std::vector<int64_t>& xs = node.input_shape(0);
  if (xs.size() != 3) node.fail("X must have rank 3, not " + shape_to_string(xs));
  r.steps = r.batch_first ? xs[1] : xs[0];
  r.batch = r.batch_first ? xs[0] : xs[1];
  r.in = xs[2];
  const std::vector<int64_t>& ws = node.input_shape(1);
  const std::string g = std::to_string(gates);
  if (ws.size() != 3 || ws[0] != r.D || ws[2] != r.in || ws[1] % gates != 0)
    node.fail("W " + shape_to_string(ws) + " must be [" + std::to_string(r.D) + ", " + g + "*hidden, " +
              std::to_string(r.in) + "]");
  r.H = node.attr_int("hidden_size", ws[1] / gates);
  if (ws[1] != gates * r.H)
    node.fail("W " + shape_to_string(ws) + " does not match hidden_size " + std::to_string(r.H));
  if (node.input_shape(2) != std::vector<int64_t>{r.D, gates * r.H, r.H})
    node.fail("R " + shape_to_string(node.input_shape(2)) + " must be [" + std::to_string(r.D) + ", " +
              std::to_string(gates * r.H) + ", " + std::to_string(r.H) + "]");
  if (node.has_input(3) && node.input_shape(3) != std::vector<int64_t>{r.D, 2 * gates * r.H})
    node.fail("B " + shape_to_string(node.input_shape(3)) + " must be [" + std::to_string(r.D) + ", " +
              std::to_string(2 * gates * r.H) + "]");
  if (node.has_input(4)) {
    // Sequences shorter than the tensor would need masking per batch row; equal lengths are the plain unroll.
    for (int64_t len : node.constant_ints(4, "sequence_lens"))
      if (len != r.steps)
        node.unsupported("sequence_lens other than the full length " + std::to_string(r.steps) + " is not supported");
  }
  if (node.has_input(5) && node.input_shape(5) != r.state_shape())
    node.fail("initial_h " + shape_to_string(node.input_shape(5)) + " must be " + shape_to_string(r.state_shape()));
  return r;
}

// Direction d's slice of a state input (initial_h, initial_c), zeros when the input is absent.
StateReader initial_state(OnnxNode& node, size_t i, const RecurrentDims& r, int64_t d) {
  if (!node.has_input(i)) return [](const Expr&, const Expr&) { return Expr(0.0); };
  Tensor t = node.input(i);
  bool batch_first = r.batch_first;
  return [t, d, batch_first](const Expr& b, const Expr& j) { return batch_first ? t(b, d, j) : t(d, b, j); };
}

Expr clip_to(const Expr& v, std::optional<double> clip) {
  return clip ? minimum(maximum(v, Expr(-*clip)), Expr(*clip)) : v;
}

// The input projection of every step at once, [steps x batch, rows] (row t x batch + b): W(d) x_t for all t as one
// GEMM, since X is known before the first step. The weight is read once for the sequence instead of once per step (a
// per-step GEMV loads a weight element per multiply-add; ONNX Runtime projects the sequence at once too). Its rows
// are one axis so that the GEMM's register tiles take several steps: as [steps, batch, rows] with batch 1 every
// tile had one row and the fixed schedule took dot products along k (0.33 ms a layer of the peers' ONNX LSTM against
// 0.15-0.17 ms as a panel of 4 vectors x 5 rows, Intel Xeon, 2 threads).
Tensor input_projection(OnnxNode& node, const RecurrentDims& r, const Tensor& X, const Tensor& W, int64_t d,
                        int64_t rows, const std::string& dir) {
  IterVar k = reduce_axis(r.in, "k");
  return compute(node.temp_name(dir + "_wx"), {r.steps * r.batch, rows}, [&](const Axes& i) {
    Expr t = r.batch == 1 ? i[0] : i[0] / r.batch, b = r.batch == 1 ? Expr(int64_t(0)) : i[0] % r.batch;
    Expr x = r.batch_first ? X(b, t, k.var) : X(t, b, k.var);
    return sum(W(d, i[1], k.var) * x, {k});
  });
}

// The projection of step t and batch row b (input_projection's row t x batch + b).
Expr projected(const Tensor& wx, const RecurrentDims& r, const Expr& t, const Expr& b, const Expr& row) {
  return r.batch == 1 ? wx(t, row) : wx(t * r.batch + b, row);  // b is 0 with one batch row
}

// Output 0 (Y: every step's hidden state, [steps, D, batch, H] or [batch, steps, D, H] with layout=1) from
// hs[d][t], the state direction d computes for sequence position t.
void set_sequence_output(OnnxNode& node, const RecurrentDims& r, const std::vector<std::vector<Tensor>>& hs) {
  if (!node.has_output(0)) return;
  std::vector<int64_t> y_shape = r.batch_first ? std::vector<int64_t>{r.batch, r.steps, r.D, r.H}
                                               : std::vector<int64_t>{r.steps, r.D, r.batch, r.H};
  node.set_output(0, compute(node.output_name(0), y_shape, [&](const Axes& i) {
                    const Expr &t = r.batch_first ? i[1] : i[0], &d = r.batch_first ? i[2] : i[1],
                               &b = r.batch_first ? i[0] : i[2];
                    return choose(t, r.steps, [&](int64_t step) {
                      return choose(d, r.D, [&](int64_t k) { return hs[size_t(k)][size_t(step)](b, i[3]); });
                    });
                  }));
}

// A final-state output (Y_h, LSTM's Y_c) from each direction's last state.
void set_state_output(OnnxNode& node, size_t output, const RecurrentDims& r,
                      const std::function<Tensor(int64_t)>& state) {
  if (!node.has_output(output)) return;
  node.set_output(output, compute(node.output_name(output), r.state_shape(), [&](const Axes& i) {
                    const Expr &d = r.batch_first ? i[1] : i[0], &b = r.batch_first ? i[0] : i[1];
                    return choose(d, r.D, [&](int64_t k) { return state(k)(b, i[2]); });
                  }));
}

// activations, activation_alpha and activation_beta are never read, so a node that sets them (even to the
// defaults Sigmoid, Tanh, Tanh) is reported as unsupported; exporters leave them unset.
void convert_lstm(OnnxNode& node) {
  node.require_attr_int("input_forget", 0, "coupling the input and forget gates is not supported");
  const RecurrentDims r = read_recurrent_dims(node, 4);
  const int64_t steps = r.steps, batch = r.batch, D = r.D, H = r.H;
  if (node.has_input(6) && node.input_shape(6) != r.state_shape())
    node.fail("initial_c " + shape_to_string(node.input_shape(6)) + " must be " + shape_to_string(r.state_shape()));
  if (node.has_input(7) && node.input_shape(7) != std::vector<int64_t>{D, 3 * H})
    node.fail("P " + shape_to_string(node.input_shape(7)) + " must be [" + std::to_string(D) + ", " +
              std::to_string(3 * H) + "]");

  Tensor X = node.input(0), W = node.input(1), R = node.input(2);
  Tensor B = node.has_input(3) ? node.input(3) : Tensor();
  Tensor P = node.has_input(7) ? node.input(7) : Tensor();

  // hs[d][t]: the hidden state direction d computes for sequence position t (reverse runs t = steps-1 .. 0).
  std::vector<std::vector<Tensor>> hs(static_cast<size_t>(D), std::vector<Tensor>(static_cast<size_t>(steps)));
  std::vector<Tensor> last_c(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    const std::string dir = D == 2 ? (d == 0 ? "_fw" : "_bw") : "";
    StateReader h_prev = initial_state(node, 5, r, d), c_prev = initial_state(node, 6, r, d);
    Tensor wx = input_projection(node, r, X, W, d, 4 * H, dir);
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = r.reverse(d) ? steps - 1 - s : s;
      const std::string step = dir + "_t" + std::to_string(t);
      IterVar kh = reduce_axis(H, "k");
      Tensor rh = compute(node.temp_name(step + "_rh"), {batch, 4 * H},
                          [&](const Axes& i) { return sum(R(d, i[1], kh.var) * h_prev(i[0], kh.var), {kh}); });
      // The pre-activation of gate q for (b, j), with both biases, the peephole on `cell` and the clip.
      auto pre = [&](OnnxLstmGate q, const Expr& b, const Expr& j, const StateReader& cell) {
        Expr row = q == kInputGate ? j : j + q * H;
        Expr v = projected(wx, r, t, b, row) + rh(b, row);
        if (B) v = v + B(d, row) + B(d, row + 4 * H);
        if (P && q != kCellGate) {
          // P stacks the peepholes as input, output, forget.
          int64_t p = q == kInputGate ? 0 : q == kOutputGate ? 1 : 2;
          v = v + (p ? P(d, j + p * H) : P(d, j)) * cell(b, j);
        }
        return clip_to(v, r.clip);
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
  set_sequence_output(node, r, hs);
  // The last state of each direction: position steps-1 forward, position 0 in reverse.
  set_state_output(node, 1, r, [&](int64_t d) { return hs[size_t(d)][size_t(r.reverse(d) ? 0 : steps - 1)]; });
  set_state_output(node, 2, r, [&](int64_t d) { return last_c[size_t(d)]; });
}

// A GRU's activation function by ONNX name: the ones without alpha or beta (activation_alpha and
// activation_beta are not read, so a node that sets them is refused).
using Activation = std::function<Expr(const Expr&)>;
Activation gru_activation(OnnxNode& node, const std::string& name) {
  if (name == "Sigmoid") return [](const Expr& v) { return math::sigmoid(v); };
  if (name == "Tanh") return [](const Expr& v) { return math::tanh(v); };
  if (name == "Relu") return [](const Expr& v) { return maximum(v, Expr(0.0)); };
  if (name == "Softsign") return [](const Expr& v) { return v / (math::abs(v) + 1.0); };
  if (name == "Softplus") return [](const Expr& v) { return math::log(math::exp(v) + 1.0); };
  node.unsupported("attribute 'activations': activation " + name +
                   " is not supported (Sigmoid, Tanh, Relu, Softsign and Softplus are)");
}

// GRU (opsets 7 to 14 semantics, which 11 to 17 share): gates z (update), r (reset), h (hidden), stacked in
// that order in W, R and B (B = [Wb, Rb]):
//   z = f(W_z x + R_z h' + Wb_z + Rb_z), r = f(W_r x + R_r h' + Wb_r + Rb_r)
//   linear_before_reset = 0: n = g(W_h x + R_h (r * h') + Wb_h + Rb_h)
//   linear_before_reset = 1: n = g(W_h x + r * (R_h h' + Rb_h) + Wb_h)
//   h = (1 - z) * n + z * h'
// f and g are Sigmoid and Tanh unless `activations` says otherwise (per direction: f, g, then the reverse
// direction's f, g); clip bounds each activation's input. Unrolled into per-step TEs like LSTM, with the input
// projection of the whole sequence at once.
void convert_gru(OnnxNode& node) {
  const RecurrentDims r = read_recurrent_dims(node, 3);
  const int64_t steps = r.steps, batch = r.batch, D = r.D, H = r.H;
  const bool linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  std::vector<std::string> names = node.attr_strings("activations");
  if (names.empty())
    for (int64_t d = 0; d < D; ++d) names.insert(names.end(), {"Sigmoid", "Tanh"});
  if (int64_t(names.size()) != 2 * D)
    node.fail("activations must list 2 functions per direction (" + std::to_string(2 * D) + "), not " +
              std::to_string(names.size()));
  std::vector<Activation> activations;
  for (const std::string& name : names) activations.push_back(gru_activation(node, name));
  node.require_outputs_at_most(2, "does not exist in GRU");

  Tensor X = node.input(0), W = node.input(1), R = node.input(2);
  Tensor B = node.has_input(3) ? node.input(3) : Tensor();
  // v plus the bias of gate row `row` (z: j, r: j + H, h: j + 2H): Wb, or Rb with recurrent = true.
  auto biased = [&](const Expr& v, int64_t d, const Expr& row, bool recurrent) {
    return B ? v + B(d, recurrent ? row + 3 * H : row) : v;
  };

  std::vector<std::vector<Tensor>> hs(static_cast<size_t>(D), std::vector<Tensor>(static_cast<size_t>(steps)));
  for (int64_t d = 0; d < D; ++d) {
    const std::string dir = D == 2 ? (d == 0 ? "_fw" : "_bw") : "";
    const Activation &f = activations[size_t(2 * d)], &g = activations[size_t(2 * d + 1)];
    StateReader h_prev = initial_state(node, 5, r, d);
    Tensor wx = input_projection(node, r, X, W, d, 3 * H, dir);
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = r.reverse(d) ? steps - 1 - s : s;
      const std::string step = dir + "_t" + std::to_string(t);
      // R h' for the z and r rows, and for the h rows too when the reset gate applies after it.
      IterVar kh = reduce_axis(H, "k");
      Tensor rh = compute(node.temp_name(step + "_rh"), {batch, (linear_before_reset ? 3 : 2) * H},
                          [&](const Axes& i) { return sum(R(d, i[1], kh.var) * h_prev(i[0], kh.var), {kh}); });
      auto gate = [&](int64_t q, const Expr& b, const Expr& j) {
        Expr row = q == 0 ? j : j + q * H;
        return f(
            clip_to(biased(biased(projected(wx, r, t, b, row) + rh(b, row), d, row, false), d, row, true), r.clip));
      };
      std::function<Expr(const Expr&, const Expr&)> hidden_pre;
      if (linear_before_reset) {
        hidden_pre = [&](const Expr& b, const Expr& j) {
          Expr row = j + 2 * H;
          return biased(projected(wx, r, t, b, row), d, row, false) + gate(1, b, j) * biased(rh(b, row), d, row, true);
        };
      } else {
        Tensor reset = compute(node.temp_name(step + "_r"), {batch, H},
                               [&](const Axes& i) { return gate(1, i[0], i[1]) * h_prev(i[0], i[1]); });
        IterVar kr = reduce_axis(H, "k");
        Tensor rr = compute(node.temp_name(step + "_rr"), {batch, H}, [&, reset](const Axes& i) {
          return sum(R(d, i[1] + 2 * H, kr.var) * reset(i[0], kr.var), {kr});
        });
        hidden_pre = [&, rr](const Expr& b, const Expr& j) {
          Expr row = j + 2 * H;
          return biased(biased(projected(wx, r, t, b, row) + rr(b, j), d, row, false), d, row, true);
        };
      }
      Tensor h = compute(node.temp_name(step + "_h"), {batch, H}, [&](const Axes& i) {
        Expr z = gate(0, i[0], i[1]);
        return (1.0 - z) * g(clip_to(hidden_pre(i[0], i[1]), r.clip)) + z * h_prev(i[0], i[1]);
      });
      hs[size_t(d)][size_t(t)] = h;
      h_prev = [h](const Expr& b, const Expr& j) { return h(b, j); };
    }
  }
  set_sequence_output(node, r, hs);
  set_state_output(node, 1, r, [&](int64_t d) { return hs[size_t(d)][size_t(r.reverse(d) ? 0 : steps - 1)]; });
}

}  // namespace

void add_onnx_recurrent_converters(OnnxConverterMap& m) {
  m["LSTM"] = convert_lstm;
  m["GRU"] = convert_gru;
}

}  // namespace ingot
