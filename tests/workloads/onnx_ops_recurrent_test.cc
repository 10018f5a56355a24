// ONNX LSTM and GRU import (workloads/onnx_ops_recurrent.cc) against direct loop implementations of ONNX's
// equations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "interp/interpreter.h"
#include "onnx_test_models.h"
#include "workloads/onnx_import.h"

namespace ingot {
namespace {

using ::testing::HasSubstr;
using testing::OnnxModelBuilder;
using testing::set_attr;
using testing::unsupported_error;

HostTensor random_tensor(const std::vector<int64_t>& shape, std::mt19937& rng, float scale = 0.5f) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  HostTensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = dist(rng);
  return t;
}

struct LstmCase {
  int64_t steps = 3, batch = 2, input = 4, hidden = 3;
  std::string direction = "forward";
  bool batch_first = false, bias = true, initial_state = true, peepholes = false;
  float clip = 0;  // 0: no clip
};

struct LstmData {
  HostTensor x, w, r, b, h0, c0, p;
};

LstmData make_data(const LstmCase& c, int64_t directions, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t H = c.hidden;
  std::vector<int64_t> xs =
      c.batch_first ? std::vector<int64_t>{c.batch, c.steps, c.input} : std::vector<int64_t>{c.steps, c.batch, c.input};
  std::vector<int64_t> ss =
      c.batch_first ? std::vector<int64_t>{c.batch, directions, H} : std::vector<int64_t>{directions, c.batch, H};
  return {random_tensor(xs, rng, 1.0f),
          random_tensor({directions, 4 * H, c.input}, rng),
          random_tensor({directions, 4 * H, H}, rng),
          random_tensor({directions, 8 * H}, rng),
          random_tensor(ss, rng, 1.0f),
          random_tensor(ss, rng, 1.0f),
          random_tensor({directions, 3 * H}, rng)};
}

struct LstmResult {
  std::vector<float> y, y_h, y_c;  // in ONNX's layout for the case
};

// ONNX's LSTM equations with the default activations, written as plain loops: gates i, o, f, c in W/R/B rows.
LstmResult reference_lstm(const LstmCase& c, const LstmData& d, int64_t directions) {
  const int64_t T = c.steps, N = c.batch, I = c.input, H = c.hidden;
  auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  auto x_at = [&](int64_t t, int64_t n, int64_t k) {
    return c.batch_first ? d.x.f32()[(n * T + t) * I + k] : d.x.f32()[(t * N + n) * I + k];
  };
  auto state_index = [&](int64_t dir, int64_t n, int64_t j) {
    return c.batch_first ? (n * directions + dir) * H + j : (dir * N + n) * H + j;
  };
  LstmResult out;
  out.y.assign(size_t(T * directions * N * H), 0);
  out.y_h.assign(size_t(directions * N * H), 0);
  out.y_c.assign(size_t(directions * N * H), 0);
  for (int64_t dir = 0; dir < directions; ++dir) {
    bool reverse = c.direction == "reverse" || dir == 1;
    std::vector<float> h(size_t(N * H), 0), cell(size_t(N * H), 0);
    if (c.initial_state)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < H; ++j) {
          h[size_t(n * H + j)] = d.h0.f32()[state_index(dir, n, j)];
          cell[size_t(n * H + j)] = d.c0.f32()[state_index(dir, n, j)];
        }
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = reverse ? T - 1 - s : s;
      std::vector<float> next_h(h.size()), next_c(cell.size());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < H; ++j) {
          float pre[4];
          for (int64_t q = 0; q < 4; ++q) {
            int64_t row = q * H + j;
            float v = 0;
            for (int64_t k = 0; k < I; ++k) v += d.w.f32()[(dir * 4 * H + row) * I + k] * x_at(t, n, k);
            for (int64_t k = 0; k < H; ++k) v += d.r.f32()[(dir * 4 * H + row) * H + k] * h[size_t(n * H + k)];
            if (c.bias) v += d.b.f32()[dir * 8 * H + row] + d.b.f32()[dir * 8 * H + 4 * H + row];
            pre[q] = v;
          }
          auto clipped = [&](float v) { return c.clip > 0 ? std::min(std::max(v, -c.clip), c.clip) : v; };
          float c_prev = cell[size_t(n * H + j)];
          auto peep = [&](int64_t p, float state) {
            return c.peepholes ? d.p.f32()[dir * 3 * H + p * H + j] * state : 0;
          };
          float i_gate = sigmoid(clipped(pre[0] + peep(0, c_prev)));
          float f_gate = sigmoid(clipped(pre[2] + peep(2, c_prev)));
          float c_new = f_gate * c_prev + i_gate * std::tanh(clipped(pre[3]));
          float o_gate = sigmoid(clipped(pre[1] + peep(1, c_new)));
          next_c[size_t(n * H + j)] = c_new;
          next_h[size_t(n * H + j)] = o_gate * std::tanh(c_new);
        }
      h = next_h;
      cell = next_c;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < H; ++j) {
          int64_t y_index =
              c.batch_first ? ((n * T + t) * directions + dir) * H + j : ((t * directions + dir) * N + n) * H + j;
          out.y[size_t(y_index)] = h[size_t(n * H + j)];
        }
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < H; ++j) {
        out.y_h[size_t(state_index(dir, n, j))] = h[size_t(n * H + j)];
        out.y_c[size_t(state_index(dir, n, j))] = cell[size_t(n * H + j)];
      }
  }
  return out;
}

// The LSTM node as a one-node model; X is the model input, the rest initializers. Y, Y_h, Y_c are outputs.
OnnxModelBuilder lstm_model(const LstmCase& c, const LstmData& d, int opset = 17) {
  OnnxModelBuilder b(opset);
  b.input("X", d.x.shape());
  b.initializer("W", d.w);
  b.initializer("R", d.r);
  std::vector<std::string> inputs = {"X", "W", "R", c.bias ? "B" : "", "", "", "", ""};
  if (c.bias) b.initializer("B", d.b);
  if (c.initial_state) {
    b.initializer("initial_h", d.h0);
    b.initializer("initial_c", d.c0);
    inputs[5] = "initial_h";
    inputs[6] = "initial_c";
  }
  if (c.peepholes) {
    b.initializer("P", d.p);
    inputs[7] = "P";
  }
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  onnx::NodeProto& n = b.node("LSTM", inputs, {"Y", "Y_h", "Y_c"}, "lstm");
  set_attr(n, "hidden_size", c.hidden);
  if (c.direction != "forward") set_attr(n, "direction", c.direction);
  if (c.batch_first) set_attr(n, "layout", int64_t(1));
  if (c.clip > 0) set_attr(n, "clip", c.clip);
  for (const char* o : {"Y", "Y_h", "Y_c"}) b.output(o);
  return b;
}

void expect_near(const HostTensor& actual, const std::vector<float>& expected, const std::string& what) {
  ASSERT_EQ(actual.num_elements(), int64_t(expected.size())) << what;
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.f32()[i], expected[i], 1e-5f) << what << " element " << i;
}

void check_case(const LstmCase& c) {
  const int64_t directions = c.direction == "bidirectional" ? 2 : 1;
  LstmData d = make_data(c, directions, 7);
  ImportedModel m = import_onnx_model(lstm_model(c, d).model());
  TensorMap results = interpret(m.program, m.feeds({d.x}));
  LstmResult expected = reference_lstm(c, d, directions);
  const int64_t T = c.steps, N = c.batch, H = c.hidden;
  EXPECT_EQ(m.outputs[0].shape,
            c.batch_first ? std::vector<int64_t>({N, T, directions, H}) : std::vector<int64_t>({T, directions, N, H}));
  expect_near(results.at(m.outputs[0].tensor_name), expected.y, "Y");
  expect_near(results.at(m.outputs[1].tensor_name), expected.y_h, "Y_h");
  expect_near(results.at(m.outputs[2].tensor_name), expected.y_c, "Y_c");
}

TEST(OnnxLstm, ForwardWithBiasAndInitialStateMatchesTheEquations) { check_case(LstmCase{}); }

TEST(OnnxLstm, DefaultsWithoutBiasOrInitialStateStartFromZero) {
  LstmCase c;
  c.bias = false;
  c.initial_state = false;
  check_case(c);
}

TEST(OnnxLstm, ReverseRunsFromTheLastStep) {
  LstmCase c;
  c.direction = "reverse";
  check_case(c);
}

TEST(OnnxLstm, BidirectionalStacksBothDirections) {
  LstmCase c;
  c.direction = "bidirectional";
  check_case(c);
}

// The computes of a program whose names end with `suffix`, as "name [shape]".
std::vector<std::string> computes_ending_with(const Program& p, const std::string& suffix) {
  std::vector<std::string> out;
  for (const Tensor& t : p.computes()) {
    if (t->name.size() < suffix.size() || t->name.compare(t->name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string text = t->name + " [";
    for (size_t i = 0; i < t->shape.size(); ++i) text += (i ? ", " : "") + std::to_string(t->shape[i]);
    out.push_back(text + "]");
  }
  return out;
}

// X is known before the first step, so each direction projects the whole sequence at once: one [steps x batch, 4H]
// TE (the weight read once), not one GEMV per step.
TEST(OnnxLstm, EachDirectionProjectsTheWholeSequenceInOneTe) {
  LstmCase c;
  c.direction = "bidirectional";
  c.batch_first = true;
  LstmData d = make_data(c, 2, 7);
  ImportedModel m = import_onnx_model(lstm_model(c, d).model());
  EXPECT_THAT(computes_ending_with(m.program, "_wx"),
              ::testing::UnorderedElementsAre("Y_fw_wx [6, 12]", "Y_bw_wx [6, 12]"));
  check_case(c);
}

TEST(OnnxLstm, BatchFirstLayoutWithPeepholesAndClip) {
  LstmCase c;
  c.direction = "bidirectional";
  c.batch_first = true;
  c.peepholes = true;
  c.clip = 0.4f;
  check_case(c);
}

TEST(OnnxLstm, StackedLayersAsPyTorchExportsThem) {
  // Two layers: the second reads the first's Y with the direction axis squeezed, and only the top layer's
  // last hidden state is an output, as torch.onnx.export writes torch.nn.LSTM(num_layers=2).
  LstmCase c;
  c.hidden = 4;  // the second layer's input is the first layer's hidden state
  LstmData first = make_data(c, 1, 11), second = make_data(c, 1, 12);
  OnnxModelBuilder b;
  b.input("X", first.x.shape());
  for (const auto& [suffix, data] : {std::pair<std::string, const LstmData*>{"0", &first}, {"1", &second}}) {
    b.initializer("W" + suffix, data->w);
    b.initializer("R" + suffix, data->r);
    b.initializer("B" + suffix, data->b);
  }
  b.ints("axis1", {1});
  set_attr(b.node("LSTM", {"X", "W0", "R0", "B0"}, {"Y0"}, "layer0"), "hidden_size", c.hidden);
  b.node("Squeeze", {"Y0", "axis1"}, {"X1"});
  set_attr(b.node("LSTM", {"X1", "W1", "R1", "B1"}, {"", "Y_h"}, "layer1"), "hidden_size", c.hidden);
  b.output("Y_h");
  ImportedModel m = import_onnx_model(b.model());
  HostTensor y_h = interpret(m.program, m.feeds({first.x})).at(m.outputs[0].tensor_name);

  LstmCase plain = c;
  plain.initial_state = false;
  LstmResult layer0 = reference_lstm(plain, first, 1);
  LstmData top = second;
  top.x = HostTensor(DType::kFloat32, {c.steps, c.batch, c.hidden});
  for (size_t i = 0; i < layer0.y.size(); ++i) top.x.f32()[i] = layer0.y[i];
  expect_near(y_h, reference_lstm(plain, top, 1).y_h, "Y_h");
}

TEST(OnnxLstm, RejectsWhatItDoesNotImplement) {
  LstmCase c;
  LstmData d = make_data(c, 1, 3);
  {
    OnnxModelBuilder b = lstm_model(c, d);
    auto* a = b.mutable_model().mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const char* f : {"Relu", "Tanh", "Tanh"}) a->add_strings(f);
    EXPECT_THAT(unsupported_error(b.model()),
                HasSubstr("node 'lstm' (LSTM): attribute 'activations' is not supported"));
  }
  {
    OnnxModelBuilder b = lstm_model(c, d);
    set_attr(*b.mutable_model().mutable_graph()->mutable_node(0), "input_forget", int64_t(1));
    EXPECT_THAT(unsupported_error(b.model()), HasSubstr("input_forget=1 is not supported"));
  }
  {
    OnnxModelBuilder b = lstm_model(c, d);
    HostTensor lens(DType::kInt32, {c.batch});
    lens.i32()[0] = int32_t(c.steps);
    lens.i32()[1] = int32_t(c.steps - 1);
    b.initializer("lens", lens);
    auto* n = b.mutable_model().mutable_graph()->mutable_node(0);
    n->set_input(4, "lens");
    EXPECT_THAT(unsupported_error(b.model()), HasSubstr("sequence_lens other than the full length 3 is not supported"));
  }
}

TEST(OnnxLstm, FullSequenceLengthsAreAccepted) {
  LstmCase c;
  LstmData d = make_data(c, 1, 5);
  OnnxModelBuilder b = lstm_model(c, d);
  HostTensor lens(DType::kInt32, {c.batch});
  for (int64_t n = 0; n < c.batch; ++n) lens.i32()[n] = int32_t(c.steps);
  b.initializer("lens", lens);
  b.mutable_model().mutable_graph()->mutable_node(0)->set_input(4, "lens");
  ImportedModel m = import_onnx_model(b.model());
  TensorMap results = interpret(m.program, m.feeds({d.x}));
  expect_near(results.at(m.outputs[1].tensor_name), reference_lstm(c, d, 1).y_h, "Y_h");
}

// ---- GRU ---------------------------------------------------------------------------------------------------

struct GruCase {
  int64_t steps = 3, batch = 2, input = 4, hidden = 3;
  std::string direction = "forward";
  bool batch_first = false, bias = true, initial_state = true, linear_before_reset = false;
  bool y = true, y_h = true;             // which outputs the node has
  std::vector<std::string> activations;  // empty: the attribute is not set
  float clip = 0;                        // 0: no clip
};

struct GruData {
  HostTensor x, w, r, b, h0;
};

GruData make_gru_data(const GruCase& c, int64_t directions, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t H = c.hidden;
  std::vector<int64_t> xs =
      c.batch_first ? std::vector<int64_t>{c.batch, c.steps, c.input} : std::vector<int64_t>{c.steps, c.batch, c.input};
  std::vector<int64_t> ss =
      c.batch_first ? std::vector<int64_t>{c.batch, directions, H} : std::vector<int64_t>{directions, c.batch, H};
  return {random_tensor(xs, rng, 1.0f), random_tensor({directions, 3 * H, c.input}, rng),
          random_tensor({directions, 3 * H, H}, rng), random_tensor({directions, 6 * H}, rng),
          random_tensor(ss, rng, 1.0f)};
}

// ONNX's GRU equations as plain loops: gates z, r, h in W/R/B rows; B = [Wb, Rb].
LstmResult reference_gru(const GruCase& c, const GruData& d, int64_t directions) {
  const int64_t T = c.steps, N = c.batch, I = c.input, H = c.hidden;
  auto activation = [&](size_t k, float v) -> float {
    if (c.clip > 0) v = std::min(std::max(v, -c.clip), c.clip);
    std::string name = c.activations.empty() ? (k % 2 == 0 ? "Sigmoid" : "Tanh") : c.activations[k];
    if (name == "Sigmoid") return 1.0f / (1.0f + std::exp(-v));
    if (name == "Tanh") return std::tanh(v);
    if (name == "Relu") return std::max(v, 0.0f);
    ADD_FAILURE() << "no reference for " << name;
    return 0;
  };
  auto x_at = [&](int64_t t, int64_t n, int64_t k) {
    return c.batch_first ? d.x.f32()[(n * T + t) * I + k] : d.x.f32()[(t * N + n) * I + k];
  };
  auto state_index = [&](int64_t dir, int64_t n, int64_t j) {
    return c.batch_first ? (n * directions + dir) * H + j : (dir * N + n) * H + j;
  };
  auto w = [&](int64_t dir, int64_t row, int64_t k) { return d.w.f32()[(dir * 3 * H + row) * I + k]; };
  auto r = [&](int64_t dir, int64_t row, int64_t k) { return d.r.f32()[(dir * 3 * H + row) * H + k]; };
  auto wb = [&](int64_t dir, int64_t row) { return c.bias ? d.b.f32()[dir * 6 * H + row] : 0.0f; };
  auto rb = [&](int64_t dir, int64_t row) { return c.bias ? d.b.f32()[dir * 6 * H + 3 * H + row] : 0.0f; };
  LstmResult out;
  out.y.assign(size_t(T * directions * N * H), 0);
  out.y_h.assign(size_t(directions * N * H), 0);
  for (int64_t dir = 0; dir < directions; ++dir) {
    const size_t f = size_t(2 * dir), g = f + 1;
    bool reverse = c.direction == "reverse" || dir == 1;
    std::vector<float> h(size_t(N * H), 0);
    if (c.initial_state)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < H; ++j) h[size_t(n * H + j)] = d.h0.f32()[state_index(dir, n, j)];
    for (int64_t s = 0; s < T; ++s) {
      int64_t t = reverse ? T - 1 - s : s;
      std::vector<float> next(h.size());
      for (int64_t n = 0; n < N; ++n) {
        // Wx + Wb and Rh' + Rb for every gate row.
        std::vector<float> wx(size_t(3 * H)), rh(size_t(3 * H));
        for (int64_t row = 0; row < 3 * H; ++row) {
          float a = wb(dir, row), b = rb(dir, row);
          for (int64_t k = 0; k < I; ++k) a += w(dir, row, k) * x_at(t, n, k);
          for (int64_t k = 0; k < H; ++k) b += r(dir, row, k) * h[size_t(n * H + k)];
          wx[size_t(row)] = a;
          rh[size_t(row)] = b;
        }
        std::vector<float> z(static_cast<size_t>(H)), reset(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          z[size_t(j)] = activation(f, wx[size_t(j)] + rh[size_t(j)]);
          reset[size_t(j)] = activation(f, wx[size_t(H + j)] + rh[size_t(H + j)]);
        }
        for (int64_t j = 0; j < H; ++j) {
          float pre = wx[size_t(2 * H + j)];
          if (c.linear_before_reset) {
            pre += reset[size_t(j)] * rh[size_t(2 * H + j)];
          } else {
            float v = rb(dir, 2 * H + j);
            for (int64_t k = 0; k < H; ++k) v += r(dir, 2 * H + j, k) * reset[size_t(k)] * h[size_t(n * H + k)];
            pre += v;
          }
          float candidate = activation(g, pre);
          next[size_t(n * H + j)] = (1 - z[size_t(j)]) * candidate + z[size_t(j)] * h[size_t(n * H + j)];
        }
      }
      h = next;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < H; ++j) {
          int64_t y_index =
              c.batch_first ? ((n * T + t) * directions + dir) * H + j : ((t * directions + dir) * N + n) * H + j;
          out.y[size_t(y_index)] = h[size_t(n * H + j)];
        }
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < H; ++j) out.y_h[size_t(state_index(dir, n, j))] = h[size_t(n * H + j)];
  }
  return out;
}

OnnxModelBuilder gru_model(const GruCase& c, const GruData& d) {
  OnnxModelBuilder b;
  b.input("X", d.x.shape());
  b.initializer("W", d.w);
  b.initializer("R", d.r);
  std::vector<std::string> inputs = {"X", "W", "R", c.bias ? "B" : "", "", c.initial_state ? "initial_h" : ""};
  if (c.bias) b.initializer("B", d.b);
  if (c.initial_state) b.initializer("initial_h", d.h0);
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  onnx::NodeProto& n = b.node("GRU", inputs, {c.y ? "Y" : "", c.y_h ? "Y_h" : ""}, "gru");
  set_attr(n, "hidden_size", c.hidden);
  if (c.direction != "forward") set_attr(n, "direction", c.direction);
  if (c.batch_first) set_attr(n, "layout", int64_t(1));
  if (c.linear_before_reset) set_attr(n, "linear_before_reset", int64_t(1));
  if (c.clip > 0) set_attr(n, "clip", c.clip);
  if (!c.activations.empty()) {
    auto* a = n.add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& f : c.activations) a->add_strings(f);
  }
  if (c.y) b.output("Y");
  if (c.y_h) b.output("Y_h");
  return b;
}

void check_gru(const GruCase& c) {
  const int64_t directions = c.direction == "bidirectional" ? 2 : 1;
  GruData d = make_gru_data(c, directions, 9);
  ImportedModel m = import_onnx_model(gru_model(c, d).model());
  TensorMap results = interpret(m.program, m.feeds({d.x}));
  LstmResult expected = reference_gru(c, d, directions);
  size_t next = 0;
  if (c.y) {
    const int64_t T = c.steps, N = c.batch, H = c.hidden;
    EXPECT_EQ(m.outputs[next].shape, c.batch_first ? std::vector<int64_t>({N, T, directions, H})
                                                   : std::vector<int64_t>({T, directions, N, H}));
    expect_near(results.at(m.outputs[next++].tensor_name), expected.y, "Y");
  }
  if (c.y_h) expect_near(results.at(m.outputs[next].tensor_name), expected.y_h, "Y_h");
}

TEST(OnnxGru, ForwardWithBiasAndInitialStateMatchesTheEquations) { check_gru(GruCase{}); }

TEST(OnnxGru, TheInputProjectionOfTheSequenceIsOneTe) {
  GruCase c;
  GruData d = make_gru_data(c, 1, 7);
  ImportedModel m = import_onnx_model(gru_model(c, d).model());
  EXPECT_THAT(computes_ending_with(m.program, "_wx"), ::testing::ElementsAre("Y_wx [6, 9]"));
  check_gru(c);
}

TEST(OnnxGru, LinearBeforeResetAppliesTheResetGateAfterTheRecurrentProduct) {
  GruCase c;
  c.linear_before_reset = true;
  check_gru(c);
}

TEST(OnnxGru, DefaultsWithoutBiasOrInitialStateStartFromZero) {
  GruCase c;
  c.bias = false;
  c.initial_state = false;
  check_gru(c);
}

TEST(OnnxGru, ReverseWithClipRunsFromTheLastStep) {
  GruCase c;
  c.direction = "reverse";
  c.linear_before_reset = true;
  c.clip = 0.3f;
  check_gru(c);
}

TEST(OnnxGru, BidirectionalBatchFirstStacksBothDirections) {
  GruCase c;
  c.direction = "bidirectional";
  c.batch_first = true;
  check_gru(c);
}

TEST(OnnxGru, EitherOutputMayBeAbsent) {
  GruCase only_state;
  only_state.y = false;
  check_gru(only_state);
  GruCase only_sequence;
  only_sequence.y_h = false;
  only_sequence.direction = "bidirectional";
  check_gru(only_sequence);
}

TEST(OnnxGru, ActivationsWithoutParametersAreHonoured) {
  GruCase c;
  c.direction = "bidirectional";
  c.activations = {"Sigmoid", "Relu", "Sigmoid", "Tanh"};
  check_gru(c);
}

TEST(OnnxGru, RejectsWhatItDoesNotImplement) {
  GruCase c;
  GruData d = make_gru_data(c, 1, 3);
  {
    GruCase hard = c;
    hard.activations = {"HardSigmoid", "Tanh"};
    EXPECT_THAT(unsupported_error(gru_model(hard, d).model()),
                HasSubstr("node 'gru' (GRU): attribute 'activations': activation HardSigmoid is not supported"));
  }
  {
    OnnxModelBuilder b = gru_model(c, d);
    auto* a = b.mutable_model().mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("activation_alpha");
    a->set_type(onnx::AttributeProto::FLOATS);
    a->add_floats(0.5f);
    EXPECT_THAT(unsupported_error(b.model()),
                HasSubstr("node 'gru' (GRU): attribute 'activation_alpha' is not supported"));
  }
  {
    OnnxModelBuilder b = gru_model(c, d);
    HostTensor lens(DType::kInt32, {c.batch});
    lens.i32()[0] = int32_t(c.steps);
    lens.i32()[1] = int32_t(c.steps - 1);
    b.initializer("lens", lens);
    auto* n = b.mutable_model().mutable_graph()->mutable_node(0);
    n->set_input(4, "lens");
    EXPECT_THAT(unsupported_error(b.model()), HasSubstr("sequence_lens other than the full length 3 is not supported"));
  }
}

}  // namespace
}  // namespace ingot
