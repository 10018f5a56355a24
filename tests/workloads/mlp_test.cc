#include "workloads/mlp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "interp/interpreter.h"

namespace ingot {
namespace {

// Y = gelu(X * W1 + b1) * W2 + b2 in double precision with plain loops, independent of the TE builders.
HostTensor reference_mlp(const MlpSizes& s, const TensorMap& in) {
  const HostTensor &X = in.at("X"), &W1 = in.at("W1"), &b1 = in.at("b1"), &W2 = in.at("W2"), &b2 = in.at("b2");
  std::vector<double> a(static_cast<size_t>(s.batch * s.hidden));
  for (int64_t r = 0; r < s.batch; ++r)
    for (int64_t h = 0; h < s.hidden; ++h) {
      double z = b1.get(h);
      for (int64_t k = 0; k < s.in; ++k) z += X.get(r * s.in + k) * W1.get(k * s.hidden + h);
      a[size_t(r * s.hidden + h)] = 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
    }
  HostTensor Y(DType::kFloat32, {s.batch, s.out});
  for (int64_t r = 0; r < s.batch; ++r)
    for (int64_t o = 0; o < s.out; ++o) {
      double y = b2.get(o);
      for (int64_t h = 0; h < s.hidden; ++h) y += a[size_t(r * s.hidden + h)] * W2.get(h * s.out + o);
      Y.set(r * s.out + o, y);
    }
  return Y;
}

TEST(Mlp, SmallMatchesPlainLoops) {
  const MlpSizes s = MlpSizes::small();
  Program p = mlp(s);
  for (uint64_t seed : {1u, 2u, 3u}) {
    TensorMap in = random_inputs(p, seed);
    TensorMap out = interpret(p, in);
    Comparison c = compare(out.at("Y"), reference_mlp(s, in), 1e-4, 1e-5);
    EXPECT_TRUE(c.ok) << c.message;
  }
}

TEST(Mlp, GeluIsTheExactErfForm) {
  // The tanh approximation of GELU differs from the exact form by a few 1e-4 around |z| = 2, far above this
  // tolerance; scaling X makes such pre-activations common.
  const MlpSizes s{2, 4, 6, 3};
  Program p = mlp(s);
  TensorMap in = random_inputs(p, 7);
  for (int64_t i = 0; i < in.at("X").num_elements(); ++i) in.at("X").set(i, 3 * in.at("X").get(i));
  TensorMap out = interpret(p, in);
  const HostTensor& z1 = out.at("z1");
  const HostTensor& a1 = out.at("a1");
  for (int64_t i = 0; i < z1.num_elements(); ++i) {
    double z = z1.get(i);
    EXPECT_NEAR(a1.get(i), 0.5 * z * (1 + std::erf(z / std::sqrt(2.0))), 1e-5 * (1 + std::abs(z))) << i;
  }
}

TEST(Mlp, DefaultShapesAndNames) {
  Program p = mlp();
  EXPECT_EQ(p.name(), "mlp");
  ASSERT_EQ(p.outputs().size(), 1u);
  EXPECT_EQ(p.outputs()[0]->name, "Y");
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{128, 512}));
  std::vector<std::string> placeholders;
  for (const Tensor& t : p.placeholders()) placeholders.push_back(t->name);
  EXPECT_EQ(placeholders, (std::vector<std::string>{"X", "W1", "b1", "W2", "b2"}));
  EXPECT_EQ(p.find("W1")->shape, (std::vector<int64_t>{512, 1024}));
  EXPECT_EQ(p.find("W2")->shape, (std::vector<int64_t>{1024, 512}));
  EXPECT_EQ(p.computes().size(), 5u);
  for (const std::string& w : mlp_weight_names()) EXPECT_TRUE(p.find(w) && p.find(w)->is_placeholder()) << w;
}

TEST(Mlp, RejectsNonPositiveSizes) {
  EXPECT_THROW(mlp(MlpSizes{0, 4, 4, 4}), std::invalid_argument);
  EXPECT_THROW(mlp(MlpSizes{4, 4, -1, 4}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
